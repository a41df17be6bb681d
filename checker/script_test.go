package checker

import (
	"encoding/json"
	"testing"

	"github.com/redline-dev/redline/history"
)

// scriptHistory: SCRIPT LOAD acknowledged by A and B, an EVALSHA on A,
// then (after the events) an EVALSHA refused with NOSCRIPT by node.
func scriptHistory(node string, events func(h *hist)) []history.Op {
	h := &hist{}
	h.call(0, "load", "k1", nil, 1, history.OK, nil, 2).Node = "A"
	h.call(0, "load", "k2", nil, 3, history.OK, nil, 4).Node = "B"
	h.call(1, "add", "k1", 2, 5, history.OK, 2, 6).Node = "A"
	if events != nil {
		events(h)
	}
	h.call(1, "add", "k1", 3, 20, history.Fail, 3, 21).Node = node
	h.withErr("NOSCRIPT No matching script. Please use EVAL.")
	return h.done()
}

func journalFailover(h *hist, t int64) {
	op := history.Op{Time: t * msec, Process: history.Nemesis, Type: history.Info, F: "journal"}
	d, _ := json.Marshal(map[string]any{"seq": 1, "state": "done", "kind": "failover", "from": "a", "to": "c"})
	op.SetDetail(d)
	h.ops = append(h.ops, op)
}

func TestScriptNoscriptFromPromotedReplicaIsDocumented(t *testing.T) {
	r := check(t, Script(), scriptHistory("C", func(h *hist) { journalFailover(h, 10) }))
	wantValid(t, r, Valid)
	if typed[*ScriptFigures](t, r).NoscriptAfterFailover != 1 || typed[*ScriptFigures](t, r).NoscriptLostCache != 0 {
		t.Fatalf("figures %v", r.Figures)
	}
	if typed[*ScriptFigures](t, r).NotLoadedNodes[0] != "C" {
		t.Fatalf("figures %v", r.Figures)
	}
}

func TestScriptCacheLostWithoutRestartIsAnAnomaly(t *testing.T) {
	r := check(t, Script(), scriptHistory("A", nil))
	wantValid(t, r, Invalid)
	if typed[*ScriptFigures](t, r).NoscriptLostCache != 1 {
		t.Fatalf("figures %v", r.Figures)
	}
	// A kill of that node in between explains it: a restart empties the
	// cache (script_cause_test.go: only that node's, only in between).
	r = check(t, Script(), scriptHistory("A", func(h *hist) {
		h.ops = append(h.ops, history.Op{Time: 10 * msec, Process: history.Nemesis, Type: history.Invoke, F: "start-kill",
			Ext: history.NewExt(history.Ext{Nodes: []string{"A"}})})
	}))
	wantValid(t, r, Valid)
}

func TestScriptNoEvidenceIsUnknown(t *testing.T) {
	h := &hist{}
	h.call(0, "load", "k1", nil, 1, history.OK, nil, 2).Node = "A"
	wantValid(t, check(t, Script(), h.done()), Unknown)
	h = &hist{}
	h.call(1, "add", "k1", 2, 5, history.Fail, 2, 6).Node = "A"
	h.withErr("NOSCRIPT No matching script.")
	wantValid(t, check(t, Script(), h.done()), Unknown)
}
