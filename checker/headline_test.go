package checker

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/redline-dev/redline/history"
)

// stored is r, the result of checker name, as a reader of results.json
// gets it back: typed figures read back by the checker's name, the others
// a Map (numbers float64, lists []any).
func stored(t *testing.T, name string, r Result) Result {
	t.Helper()
	b, err := json.Marshal(Summary{Checkers: map[string]Result{name: r}})
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back.Checkers[name]
}

// TestHeadlineFreshAndStored: a result's typed figures read the same from
// the result just computed and from it read back from results.json, and
// say what they hold.
func TestHeadlineFreshAndStored(t *testing.T) {
	var h hist
	h.nemesis(1000, "start-partition", "n1")
	h.call(0, "add", "s", 1, 1100, history.OK, nil, 1150)
	h.call(0, "add", "s", 2, 1200, history.OK, nil, 1250)
	h.nemesis(2000, "stop-partition", "n1")
	h.nemesis(3000, "final-reads")
	h.call(1, "read", "s", nil, 3100, history.OK, []int{2}, 3200)
	ops := h.done()

	set := check(t, Set(), ops)
	rpo := check(t, RPO(RPOOptions{Kind: "set"}), ops)
	perf := check(t, Perf(), ops)
	cov := check(t, Coverage(CoverageOptions{Requested: []string{"partition"}}), ops)
	for name, r := range map[string]Result{"set": set, "rpo": rpo, "perf": perf, "coverage": cov} {
		back := stored(t, name, r)
		if !reflect.DeepEqual(r.Counts(), back.Counts()) {
			t.Errorf("%s: counts %+v, stored %+v", name, r.Counts(), back.Counts())
		}
		f1, ok1 := FiguresAs[*RPOFigures](r)
		f2, ok2 := FiguresAs[*RPOFigures](back)
		if ok1 != ok2 || !reflect.DeepEqual(f1, f2) {
			t.Errorf("%s: rpo %+v %v, stored %+v %v", name, f1, ok1, f2, ok2)
		}
		if !reflect.DeepEqual(r.Ops(), back.Ops()) {
			t.Errorf("%s: ops %+v, stored %+v", name, r.Ops(), back.Ops())
		}
		if !reflect.DeepEqual(r.Coverage(), back.Coverage()) {
			t.Errorf("%s: coverage %+v, stored %+v", name, r.Coverage(), back.Coverage())
		}
	}

	// The set lost the acknowledged add of 1, and says what that means.
	lost := set.Counts().Lost
	if lost == nil || lost.Value != 1 || lost.Name != "lost" || lost.Why != DescribeFigure("lost") || lost.Why == "" {
		t.Fatalf("set counts %+v", set.Counts().List())
	}
	if l := set.Counts().List(); len(l) == 0 || l[0] != *lost {
		t.Fatalf("set counts %+v: lost first", l)
	}
	if c := perf.Counts(); c.Lost != nil || c.Lost.N() != 0 || len(c.List()) != 0 {
		t.Fatalf("perf counts %+v", c.List())
	}
	f, ok := FiguresAs[*RPOFigures](rpo)
	if !ok || f.Kind != "set" || f.Lost != 1 || len(f.PerWindow) != 1 || f.PerWindow[0].Lost != 1 || f.PerWindow[0].Fault != "partition" ||
		f.RPOMs == nil || *f.RPOMs != 50 || f.BoundMs != nil || f.PerWindow[0].AckedFromS == nil {
		t.Fatalf("rpo %+v (figures %v)", f, rpo.Figures)
	}
	if _, ok := FiguresAs[*RPOFigures](set); ok {
		t.Fatal("the set checker's result has no RPO figures")
	}
	opsOf := perf.Ops()
	if len(opsOf) != 2 || opsOf[0].F != "add" || opsOf[0].OK != 2 || opsOf[1].F != "read" || opsOf[0].Latency.P99 == nil {
		t.Fatalf("perf ops %+v", opsOf)
	}
	if c := cov.Coverage(); len(c) != 1 || c[0].Kind != "partition" || c[0].Summary == "" || c[0].Windows != 1 {
		t.Fatalf("coverage %+v (figures %v)", c, cov.Figures)
	}
	if set.Ops() != nil || set.Coverage() != nil {
		t.Fatal("the set checker's result has no perf or coverage figures")
	}
}
