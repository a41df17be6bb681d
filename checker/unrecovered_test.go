package checker

import (
	"strings"
	"testing"

	"github.com/redline-dev/redline/history"
)

// notServedAgain is the issue 36 (class 8) ending: every node killed,
// the kill stopped and the end phase could not heal everything; n1's
// shard answers CLUSTERDOWN before, during and after the fault, through
// the final reads, and is never served again. With stillKilled the kill
// never stops (the run ended inside the fault).
func notServedAgain(t *testing.T, stillKilled bool) (*hist, string) {
	t.Helper()
	k1 := keyIn(t, "r:", 0, 5460)
	h := &hist{}
	start(h)
	h.call(0, "write", k1, 1, 100, history.OK, nil, 110)
	h.servedBy(addr1)
	all := []string{"n1", "n2", "n3", "n4", "n5", "n6"}
	h.event(200, history.Invoke, "start-kill", all, map[string]any{"mode": "all"})
	h.event(210, history.Info, "start-kill", all, map[string]any{"mode": "all"})
	h.call(0, "write", k1, 2, 300, history.Fail, nil, 310)
	h.withErr("CLUSTERDOWN The cluster is down")
	if !stillKilled {
		h.event(1000, history.Invoke, "stop-kill", all, nil)
		h.event(1010, history.Info, "stop-kill", all, nil)
	}
	h.call(1, "write", k1, 3, 2000, history.Fail, nil, 2010)
	h.withErr("CLUSTERDOWN The cluster is down")
	if !stillKilled {
		h.event(3000, history.Invoke, "heal", nil, nil)
		h.event(33000, history.Info, "heal", nil, map[string]any{"end_phase": map[string]any{"healed": false, "slots_checked": 0,
			"problems": []any{map[string]any{"kind": "not-converged", "what": "cluster did not converge within 30s"}}}})
		h.event(33100, history.Info, history.FinalReads, nil, nil)
		h.call(2, "read", k1, nil, 33200, history.Fail, nil, 33210)
		h.withErr("CLUSTERDOWN The cluster is down")
	}
	return h, k1
}

// An outage that outlasts the fault that caused it, through the final
// reads, is no expected outage: the attribution says "not recovered",
// and the RTO checker calls the shard's RTO unbounded and the run
// invalid, naming the op that failed after the fault ended.
func TestOutageNotRecoveredAfterTheFaultIsNoExpectedOutage(t *testing.T) {
	h, _ := notServedAgain(t, false)
	un := unservedOf(t, h, nil)
	if len(un) != 1 {
		t.Fatalf("want n1's shard unserved, got %+v", un)
	}
	a := un[0]
	if a.Verdict == FaultOutage || strings.Contains(a.Why, "expected outage") {
		t.Fatalf("an outage past the end of its fault called expected: %s: %s", a.Verdict, a.Why)
	}
	if a.Verdict != NotRecovered || !strings.Contains(a.Why, "not recovered") || a.Unserved.Recovered {
		t.Fatalf("want verdict %q saying \"not recovered\", got %s: %s", NotRecovered, a.Verdict, a.Why)
	}
	if VerdictWords(a.Verdict) == "unknown" {
		t.Errorf("verdict %q has no words", a.Verdict)
	}
	ops := h.done()
	r := check(t, RTO(), ops)
	wantValid(t, r, Invalid)
	f := typed[*RTOFigures](t, r)
	if n := f.NotRecovered; n != 1 {
		t.Errorf("not_recovered = %d, want 1", n)
	}
	first := f.First
	// The failure after the fault's end that shows it: the read of the
	// final reads, op index of its invocation.
	var idx int64 = -1
	for _, op := range ops {
		if op.F == "read" && op.Type == history.Invoke {
			idx = op.Index
		}
	}
	if !strings.Contains(first, "op "+itoa(int(idx))) || !strings.Contains(first, "unbounded") {
		t.Errorf("first %q does not name op %d and an unbounded RTO", first, idx)
	}
}

// An outage that ends with the history while its fault still holds is
// the fault's (nothing says it outlasted it): not a "not recovered".
func TestOutageInsideItsFaultIsNotCalledUnrecovered(t *testing.T) {
	h, _ := notServedAgain(t, true)
	un := unservedOf(t, h, nil)
	if len(un) != 1 || un[0].Verdict != FaultOutage {
		t.Fatalf("want the fault's outage, got %+v", un)
	}
	r := check(t, RTO(), h.done())
	if r.Valid == Invalid {
		t.Fatalf("an outage inside a fault still in force made rto invalid: %v", r.Figures)
	}
}
