package checker

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/redline-dev/redline/history"
)

// Issue 23: the measuring checkers that measured nothing say not
// applicable (or unknown where they should have measured), never valid.

func TestPerfAndRTOWithoutOpsAreNotApplicable(t *testing.T) {
	var h hist
	h.nemesis(100, "start-partition", "n1")
	h.nemesis(200, "stop-partition", "n1")
	ops := h.done()
	for _, c := range []Checker{Perf(), RTO()} {
		if r := check(t, c, ops); r.NotApplicable == "" {
			t.Errorf("%s with no client op: %v %v, want not applicable", c.Name(), r.Valid, r.Figures)
		}
	}
}

func TestRPOWithoutEvidence(t *testing.T) {
	// No op at all: nothing to measure.
	var empty hist
	empty.nemesis(100, "start-partition", "n1")
	empty.nemesis(200, "stop-partition", "n1")
	if r := check(t, RPO(), empty.done()); r.NotApplicable == "" {
		t.Fatalf("rpo with no op: %v %v, want not applicable", r.Valid, r.Figures)
	}
	// Ops but no read: it should have measured and cannot.
	var unread hist
	unread.call(0, "add", "s", 1, 0, history.OK, nil, 10)
	unread.call(0, "read", "s", nil, 20, history.Fail, nil, 30)
	if r := check(t, RPO(), unread.done()); r.NotApplicable != "" || r.Valid != Unknown {
		t.Fatalf("rpo with no successful read: %v (n/a %q), want unknown", r.Valid, r.NotApplicable)
	}
	// A set on n2, one partition of node, nothing lost.
	partitionOf := func(node string) []history.Op {
		var h hist
		h.nodesEvent(map[string]string{"n1": n1, "n2": n2})
		h.call(0, "add", "s", 1, 0, history.OK, nil, 10)
		h.on(n2)
		h.nemesis(100, "start-partition", node)
		h.call(0, "add", "s", 2, 110, history.OK, nil, 120)
		h.on(n2)
		h.nemesis(200, "stop-partition", node)
		h.nemesis(300, "final-reads")
		h.call(1, "read", "s", nil, 310, history.OK, []int{1, 2}, 320)
		h.on(n2)
		return h.done()
	}
	// The only window cut n1, every key lived on n2.
	if r := check(t, RPO(), partitionOf("n1")); r.NotApplicable == "" {
		t.Fatalf("rpo whose only window touched no key, nothing lost: %v %v, want not applicable", r.Valid, r.Figures)
	}
	// The window on n2: measured, 0 lost.
	r := check(t, RPO(), partitionOf("n2"))
	if r.NotApplicable != "" || typed[*RPOFigures](t, r).Lost != 0 {
		t.Fatalf("rpo of a window on the keys' node: %v (n/a %q)", r.Figures, r.NotApplicable)
	}
}

// A migration with no acknowledged write of the workload around it
// measured no pause.
func TestWritePauseWithNothingMeasuredIsNotApplicable(t *testing.T) {
	var h hist
	h.call(0, "write", "k1", 1, 0, history.OK, nil, 10)
	d, _ := json.Marshal(map[string]any{"moved": []map[string]any{{"slot": history.Keyslot("other"), "from": "n1", "to": "n2", "keys": 0}}})
	h.ops = append(h.ops,
		history.Op{Time: 100 * msec, Process: history.Nemesis, Type: history.Invoke, F: "start-migrate"},
		history.Op{Time: 200 * msec, Process: history.Nemesis, Type: history.Info, F: "start-migrate", Ext: history.NewExt(history.Ext{Detail: d})})
	h.call(0, "write", "k1", 1, 300, history.OK, nil, 310)
	if r := WritePause().Check(context.Background(), NewHistory(h.done())); r.NotApplicable == "" {
		t.Fatalf("write-pause with 0 measured: %v %v, want not applicable", r.Valid, r.Figures)
	}
}

// A moved slot that held none of the workload's keys says nothing of its
// handoff.
func TestHandoffOfAnEmptySlotIsNotApplicable(t *testing.T) {
	sl := history.Keyslot("{elsewhere}x")
	ops := handoffHistory(t, []map[string]any{{"slot": sl, "from": "n1", "to": "n2", "method": "atomic", "state": "done",
		"before": []string{}, "src": []string{}, "dst": []string{}}})
	if r := Handoff().Check(context.Background(), NewHistory(ops)); r.NotApplicable == "" {
		t.Fatalf("handoff of a slot without keys: %v %v, want not applicable", r.Valid, r.Figures)
	}
	// Another prefix's keys on the slot are not this workload's either.
	ops = handoffHistory(t, []map[string]any{{"slot": sl, "from": "n1", "to": "n2", "method": "atomic", "state": "done",
		"before": []string{"other:{elsewhere}x"}, "src": []string{}, "dst": []string{"other:{elsewhere}x"}}})
	if r := Handoff(Scope{KeyPrefix: "{s}"}).Check(context.Background(), NewHistory(ops)); r.NotApplicable == "" {
		t.Fatalf("handoff of a slot with another workload's keys: %v %v, want not applicable", r.Valid, r.Figures)
	}
}
