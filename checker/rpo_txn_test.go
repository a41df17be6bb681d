package checker

import (
	"strings"
	"testing"

	"github.com/redline-dev/redline/history"
)

// The txn workload's RPO is a list-append RPO: its bank keys (transfers
// and read-alls) are no appends, and it cannot judge them. A run with no
// append has no RPO to measure (issue 36, class 7): before, the bank keys
// on the partitioned node made the window count, and the run reported a
// measured RPO of 0.
func TestRPOListAppendIgnoresBankKeys(t *testing.T) {
	const n1, n2 = "10.0.0.1:6379", "10.0.0.2:6379"
	bank := func(h *hist) {
		h.call(0, "init", "{t}", map[string]int{"{t}a": 50, "{t}b": 50}, 0, history.OK, nil, 1)
		h.on(n1)
		h.nemesis(100, "start-partition", "n1")
		h.call(0, "transfer", "{t}", map[string]any{"from": "{t}a", "to": "{t}b", "amount": 5}, 110, history.OK, nil, 120)
		h.on(n1)
		h.nemesis(200, "stop-partition", "n1")
		h.nemesis(300, "final-reads")
		h.call(1, "read-all", "{t}", nil, 310, history.OK, map[string]int{"{t}a": 50, "{t}b": 50}, 320)
		h.on(n1)
	}
	var h hist
	h.nodesEvent(map[string]string{"n1": n1, "n2": n2})
	bank(&h)
	r := check(t, RPO(RPOOptions{Kind: "list-append"}), h.done())
	if r.NotApplicable == "" || !strings.Contains(r.NotApplicable, "append") {
		t.Fatalf("txn run without an append: %v %v (n/a %q), want not applicable naming the missing appends", r.Valid, r.Figures, r.NotApplicable)
	}
	// With appends on n2 only: the window on n1 touched bank keys, no
	// list; the RPO of the lists is no figure about that window.
	var g hist
	g.nodesEvent(map[string]string{"n1": n1, "n2": n2})
	bank(&g)
	g.txn(2, 10, 20, history.OK, app("{l}x", 1))
	g.on(n2)
	g.txn(2, 305, 308, history.OK, rd("{l}x", 1))
	g.on(n2)
	r = check(t, RPO(RPOOptions{Kind: "list-append"}), g.done())
	if r.NotApplicable == "" {
		t.Fatalf("list-append rpo whose only window touched bank keys alone: %v %v, want not applicable", r.Valid, r.Figures)
	}
}
