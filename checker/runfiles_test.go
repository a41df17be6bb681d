package checker

import (
	"context"
	"strings"
	"testing"

	"github.com/redline-dev/redline/history"
)

// Two entries sharing one op index are garbage (issue 36, class 6): the
// run-files checker flags them with both entries raw, and the verdict
// is never valid.
func TestRunFilesFlagsDuplicateIndices(t *testing.T) {
	var h hist
	h.call(0, "add", "s", 1, 0, history.OK, nil, 10)
	h.call(1, "add", "s", 2, 20, history.OK, nil, 30)
	ops := h.done()
	ops[2].Index = 0 // process 1's invocation takes process 0's index
	r := check(t, RunFiles(RunFilesOptions{}), ops)
	wantValid(t, r, Unknown)
	if n := typed[*RunFilesFigures](t, r).DuplicateIndices; n != 1 {
		t.Fatalf("duplicate_indices = %d, want 1", n)
	}
	why := r.Why()
	if !strings.Contains(why, "op index 0") || !strings.Contains(why, "entries 1 and 3") {
		t.Fatalf("why %q does not name index 0 and the two entries", why)
	}
	// A whole history, every index once: nothing to flag (not "valid":
	// the files are no verdict of their own).
	if r := check(t, RunFiles(RunFilesOptions{}), h.done()); r.NotApplicable == "" {
		t.Fatalf("a whole history: %v %v, want not applicable", r.Valid, r.Figures)
	}
}

// A history torn mid-line is a prefix: the run-files checker says so,
// the verdict is unknown and the caveat reaches the verdict line.
func TestRunFilesSaysATornHistory(t *testing.T) {
	var h hist
	h.call(0, "add", "s", 1, 0, history.OK, nil, 10)
	ops := h.done()
	r := check(t, RunFiles(RunFilesOptions{Torn: &TornLine{Line: 3, Text: `{"index":2,"ti`}}), ops)
	wantValid(t, r, Unknown)
	if !typed[*RunFilesFigures](t, r).Torn || !strings.Contains(r.Why(), "line 3") || !strings.Contains(r.Why(), "torn") {
		t.Fatalf("figures %v: want torn, naming line 3", r.Figures)
	}
	s := Run(context.Background(), ops, []Checker{Set(), RunFiles(RunFilesOptions{Torn: &TornLine{Line: 3}})}, nil)
	if s.Valid == Valid {
		t.Fatalf("a torn history checked valid: %v", s.Checkers)
	}
	if c := strings.Join(s.Caveats(), "; "); !strings.Contains(c, "torn") {
		t.Fatalf("caveats %q do not say the history is torn", c)
	}
}

// Topology samples out of time order are read in time order (before, the
// file's order made the attribution invent a new owner) and the disorder
// is flagged, in the attribution and by the run-files checker.
func TestTopologySamplesAreReadInTimeOrder(t *testing.T) {
	k1 := keyIn(t, "r:", 0, 5460)
	h := &hist{}
	start(h)
	h.call(0, "write", k1, 1, 100, history.OK, nil, 110)
	h.servedBy(addr1)
	h.event(200, history.Invoke, "start-kill", []string{"n1"}, map[string]any{"mode": "primary"})
	h.event(210, history.Info, "start-kill", []string{"n1"}, map[string]any{"mode": "primary"})
	h.call(0, "write", k1, 2, 300, history.Fail, nil, 310)
	h.withErr("CLUSTERDOWN The cluster is down")
	h.call(2, "write", k1, 3, 2600, history.Fail, nil, 2610)
	h.withErr("CLUSTERDOWN The cluster is down")
	nodes := func(n1, n4 string) string {
		return id1 + " " + addr1 + "@16379 " + n1 + "\n" +
			id2 + " " + addr2 + "@16379 master - 0 0 2 connected 5461-16383\n" +
			id4 + " " + addr4 + "@16379 " + n4 + "\n"
	}
	n1owns := nodes("master - 0 0 1 connected 0-5460", "slave "+id1+" 0 0 1 connected")
	n4owns := nodes("master,fail - 0 0 1 connected", "master - 0 0 3 connected 0-5460")
	// In time order n1, n4, n1: n1 owns the slots at the end. In file
	// order n1, n1, n4: "n4 owns them by the end", which never was.
	topo := []TopologySample{
		{Time: 0, ClusterNodes: n1owns},
		{Time: 3000 * msec, ClusterNodes: n1owns},
		{Time: 1000 * msec, ClusterNodes: n4owns},
	}
	un := unservedOf(t, h, nil, topo...)
	if len(un) != 1 {
		t.Fatalf("want n1's shard unserved, got %+v", un)
	}
	a := un[0]
	if strings.Contains(a.Why, "sampled topology shows") {
		t.Fatalf("a new owner invented from samples out of order: %s", a.Why)
	}
	got := strings.Join(a.Unserved.Topology, " | ")
	if i, j := strings.Index(got, "at 1s"), strings.Index(got, "at 3s"); i < 0 || j < 0 || i > j {
		t.Fatalf("samples not in time order: %q", got)
	}
	if !strings.Contains(got, "out of time order") {
		t.Fatalf("the disorder is not said: %q", got)
	}
	r := check(t, RunFiles(RunFilesOptions{Topology: topo}), h.done())
	wantValid(t, r, Unknown)
	if !strings.Contains(r.Why(), "topology") || !strings.Contains(r.Why(), "sample 3") {
		t.Fatalf("run-files does not flag the topology's disorder: %v", r.Figures)
	}
	// Two samples of one instant that disagree are a contradiction.
	topo = []TopologySample{{Time: 0, ClusterNodes: n1owns}, {Time: 1000 * msec, ClusterNodes: n1owns}, {Time: 1000 * msec, ClusterNodes: n4owns}}
	r = check(t, RunFiles(RunFilesOptions{Topology: topo}), h.done())
	if r.Valid == Valid || !strings.Contains(r.Why(), "contradict") {
		t.Fatalf("contradicting samples: %v %v", r.Valid, r.Figures)
	}
}

// An op index given to two ops: the attribution does not pick one of
// them and name it (before, the last one silently won, here an add to
// another key).
func TestAttributionRefusesADuplicateIndex(t *testing.T) {
	key, other := keyIn(t, "s:", 0, 5460), keyIn(t, "s:", 5461, 16383)
	h := &hist{}
	start(h)
	h.call(0, "add", key, 7, 100, history.OK, nil, 110)
	h.servedBy(addr1)
	h.call(1, "add", other, 9, 120, history.OK, nil, 130)
	h.servedBy(addr2)
	h.event(4000, history.Info, "final-reads", nil, nil)
	h.call(1<<21, "read", key, nil, 4100, history.OK, []int{}, 4110)
	h.servedBy(addr1)
	h.call(1<<21+1, "read", other, nil, 4100, history.OK, []int{9}, 4110)
	h.servedBy(addr2)
	setCensus(h, 4200, key, map[string][]string{"n1": {}})
	ops := h.done()
	var addIdx int64 = -1
	for i := range ops {
		if ops[i].F == "add" && ops[i].Key == key && ops[i].Type == history.Invoke {
			addIdx = ops[i].Index
		}
	}
	for i := range ops {
		if ops[i].F == "add" && ops[i].Key == other && ops[i].Type == history.Invoke {
			ops[i].Index = addIdx
		}
	}
	s := Run(context.Background(), ops, []Checker{Set(Scope{KeyPrefix: "s:"})}, nil)
	if s.Valid != Invalid {
		t.Fatalf("want the lost add found: %v", s.Checkers)
	}
	at := Attribute(ops, s, nil)
	if len(at) == 0 {
		t.Fatal("no attribution")
	}
	a := at[0]
	if a.Ack != nil && a.Ack.Value == "9" {
		t.Fatalf("the attribution named the other op sharing index %d: %+v", addIdx, a.Ack)
	}
	if a.Verdict != AttrUnknown || !strings.Contains(a.Why, "index "+itoa(int(addIdx))) || !strings.Contains(a.Why, "two") {
		t.Fatalf("want unknown naming the duplicate index %d, got %s: %s", addIdx, a.Verdict, a.Why)
	}
}
