package checker

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/redline-dev/redline/history"
)

// handoffHistory writes keys a, b (acknowledged before the move) and
// c (acknowledged during it) on one slot, then a migrate step whose
// completion carries placements.
func handoffHistory(t *testing.T, places []map[string]any) []history.Op {
	t.Helper()
	const msec = int64(1e6)
	var ops []history.Op
	add := func(op history.Op) {
		op.Index = int64(len(ops))
		ops = append(ops, op)
	}
	write := func(at int64, p history.Process, key string) {
		add(history.Op{Time: at, Process: p, Type: history.Invoke, F: "write", Key: key, Value: []byte("1")})
		add(history.Op{Time: at + msec, Process: p, Type: history.OK, F: "write", Key: key, Value: []byte("1")})
	}
	write(0, 1, "{s}a")
	write(2*msec, 1, "{s}b")
	b, _ := json.Marshal(map[string]any{"method": "atomic", "placement": places})
	add(history.Op{Time: 10 * msec, Process: history.Nemesis, Type: history.Invoke, F: "start-migrate"})
	write(12*msec, 2, "{s}c")
	add(history.Op{Time: 50 * msec, Process: history.Nemesis, Type: history.OK, F: "start-migrate", Ext: history.NewExt(history.Ext{Detail: b})})
	return ops
}

func TestHandoffClean(t *testing.T) {
	sl := history.Keyslot("{s}a")
	ops := handoffHistory(t, []map[string]any{{"slot": sl, "from": "n1", "to": "n2", "method": "atomic", "state": "done",
		"before": []string{"{s}a", "{s}b"}, "src": []string{}, "dst": []string{"{s}a", "{s}b", "{s}c"}}})
	r := Handoff().Check(context.Background(), NewHistory(ops))
	if r.Valid != Valid || typed[*HandoffFigures](t, r).AnomalousKeys != 0 {
		t.Fatalf("clean handoff: %v %v", r.Valid, r.Figures)
	}
	// A canceled task leaves every key on the source: also clean.
	ops = handoffHistory(t, []map[string]any{{"slot": sl, "from": "n1", "to": "n2", "method": "atomic", "state": "canceled",
		"before": []string{"{s}a", "{s}b"}, "src": []string{"{s}a", "{s}b", "{s}c"}, "dst": []string{}}})
	if r := Handoff().Check(context.Background(), NewHistory(ops)); r.Valid != Valid {
		t.Fatalf("canceled handoff: %v %v", r.Valid, r.Figures)
	}
	// No migrate step: nothing to judge, so no verdict at all (never
	// "valid with zero handoffs"), and Run leaves it out of the verdict.
	if r := Handoff().Check(context.Background(), NewHistory(ops[:4])); r.NotApplicable == "" {
		t.Fatalf("no handoff: %v %v, want not applicable", r.Valid, r.Figures)
	}
	s := Run(context.Background(), ops[:4], []Checker{Handoff()}, nil)
	if s.Valid != Unknown || s.NotApplicable["handoff"] == "" {
		t.Fatalf("summary of a run whose only checker had nothing to judge: %+v", s)
	}
}

func TestHandoffBothAndNeither(t *testing.T) {
	sl := history.Keyslot("{s}a")
	// a on both sides; b (acknowledged before the move, absent from the
	// source's "before" list) on neither; c (written during the move) on
	// neither is not this checker's to judge.
	ops := handoffHistory(t, []map[string]any{{"slot": sl, "from": "n1", "to": "n2", "method": "atomic", "state": "done",
		"before": []string{"{s}a"}, "src": []string{"{s}a"}, "dst": []string{"{s}a"}}})
	r := Handoff().Check(context.Background(), NewHistory(ops))
	if r.Valid != Invalid {
		t.Fatalf("verdict %v, want invalid: %v", r.Valid, r.Figures)
	}
	a := typed[*HandoffFigures](t, r).ByMethod["atomic"]
	if a.Both != 1 || a.Neither != 1 || typed[*HandoffFigures](t, r).AnomalousKeys != 2 {
		t.Fatalf("figures %v: want both 1 ({s}a), neither 1 ({s}b)", r.Figures)
	}
	if r.Values()["first"] == "" {
		t.Fatal("no first anomaly named")
	}
	// Classic placements are judged the same way, under their own method.
	ops = handoffHistory(t, []map[string]any{{"slot": sl, "from": "n1", "to": "n2", "state": "moved",
		"before": []string{"{s}a", "{s}b"}, "src": []string{"{s}b"}, "dst": []string{}}})
	r = Handoff().Check(context.Background(), NewHistory(ops))
	if c := typed[*HandoffFigures](t, r).ByMethod["classic"]; r.Valid != Invalid || c.Neither != 1 || c.Both != 0 {
		t.Fatalf("classic: %v %v", r.Valid, r.Figures)
	}
}

// TestHandoffUnmeasured: a slot whose lists could not be read is not
// judged, and with nothing measured the verdict is unknown.
func TestHandoffUnmeasured(t *testing.T) {
	sl := history.Keyslot("{s}a")
	ops := handoffHistory(t, []map[string]any{{"slot": sl, "from": "n1", "to": "n2", "method": "atomic",
		"before": []string{"{s}a"}, "error": "n2: connection refused"}})
	r := Handoff().Check(context.Background(), NewHistory(ops))
	if r.Valid != Unknown || typed[*HandoffFigures](t, r).ByMethod["atomic"].Unmeasured != 1 {
		t.Fatalf("%v %v", r.Valid, r.Figures)
	}
	// A key deleted by a client is not gone.
	ops = handoffHistory(t, []map[string]any{{"slot": sl, "from": "n1", "to": "n2", "method": "atomic",
		"before": []string{"{s}a", "{s}b"}, "src": []string{}, "dst": []string{"{s}a"}}})
	ops = append(ops, history.Op{Index: int64(len(ops)), Time: 60e6, Process: 3, Type: history.Invoke, F: "del", Key: "{s}b"},
		history.Op{Index: int64(len(ops) + 1), Time: 61e6, Process: 3, Type: history.OK, F: "del", Key: "{s}b"})
	if r := Handoff().Check(context.Background(), NewHistory(ops)); r.Valid != Valid {
		t.Fatalf("deleted key counted: %v %v", r.Valid, r.Figures)
	}
}

// TestHandoffSkipsReadOnlyOps: a key only a registered read-only op named
// (a workload's probe of the server) was never written, so finding it on
// neither side is no loss; the same op name unregistered is a write.
func TestHandoffSkipsReadOnlyOps(t *testing.T) {
	sl := history.Keyslot("{s}a")
	ops := handoffHistory(t, []map[string]any{{"slot": sl, "from": "n1", "to": "n2", "method": "atomic", "state": "done",
		"before": []string{"{s}a", "{s}b"}, "src": []string{}, "dst": []string{"{s}a", "{s}b", "{s}c"}}})
	probe := func(name string) []history.Op {
		out := append([]history.Op(nil), ops...)
		n := int64(len(out))
		out = append(out, history.Op{Index: n, Time: 60e6, Process: 3, Type: history.Invoke, F: name, Key: "{s}probe"},
			history.Op{Index: n + 1, Time: 61e6, Process: 3, Type: history.OK, F: name, Key: "{s}probe"})
		// The probe runs before the move in a real run: put it first.
		return append(out[n:], out[:n]...)
	}
	reindex := func(ops []history.Op) []history.Op {
		for i := range ops {
			ops[i].Index = int64(i)
			if i < 2 {
				ops[i].Time = int64(i) * 1e5
			}
		}
		return ops
	}
	if r := Handoff().Check(context.Background(), NewHistory(reindex(probe("test-unregistered-probe")))); r.Valid != Invalid {
		t.Fatalf("an unregistered op is a write: want invalid, got %v %v", r.Valid, r.Figures)
	}
	_ = ReadOnlyOps("test-read-only-probe")
	if r := Handoff().Check(context.Background(), NewHistory(reindex(probe("test-read-only-probe")))); r.Valid != Valid {
		t.Fatalf("a read-only op writes nothing: want valid, got %v %v", r.Valid, r.Figures)
	}
}
