package checker

import (
	"strings"
	"testing"

	"github.com/redline-dev/redline/history"
)

// replicaFlagHistory: p writes 1 then 2 through the primary P; a read
// begun after the second write ended returns the replaced 1 and says a
// replica served it, from node from; then P acknowledges a write of 3
// and reads it back.
func replicaFlagHistory(from string) []history.Op {
	const P = "10.0.0.1:6379"
	var h hist
	h.call(0, "write", "k", 1, 0, history.OK, nil, 1)
	h.ops[len(h.ops)-1].Node = P
	h.call(0, "write", "k", 2, 2, history.OK, nil, 3)
	h.ops[len(h.ops)-1].Node = P
	h.call(1, "read", "k", nil, 4, history.OK, 1, 5)
	h.ops[len(h.ops)-1].Node = from
	h.ops[len(h.ops)-1].SetReplica(true)
	h.call(0, "write", "k", 3, 6, history.OK, nil, 7)
	h.ops[len(h.ops)-1].Node = P
	h.call(0, "read", "k", nil, 8, history.OK, 3, 9)
	h.ops[len(h.ops)-1].Node = P
	return h.done()
}

// A stale read the slot's primary served, flagged as a replica's, was
// left out of the search: valid. The node acknowledged the slot's writes
// just before and just after it with nobody else in between: it was the
// primary, the flag is a lie, and the read is judged as the primary's
// (issue 36, adversary gap). The same read from another node (a replica)
// stays allowed.
func TestReplicaFlagOfThePrimaryIsNotBelieved(t *testing.T) {
	r := check(t, Linearizable(), replicaFlagHistory("10.0.0.1:6379"))
	wantValid(t, r, Invalid)
	if n := typed[*LinearizableFigures](t, r).ReplicaFlagContradicted; n != 1 {
		t.Fatalf("replica_flag_contradicted = %v, want 1", r.Values()["replica_flag_contradicted"])
	}
	if s, _ := r.Values()["replica_flag_first"].(string); !strings.Contains(s, "10.0.0.1:6379") {
		t.Fatalf("replica_flag_first does not name the primary: %q", s)
	}
	r = check(t, Linearizable(), replicaFlagHistory("10.0.0.2:6379"))
	wantValid(t, r, Valid)
	if _, ok := r.Values()["replica_flag_contradicted"]; ok {
		t.Fatalf("an honest replica read was taken for a lie: %v", r.Figures)
	}
}
