package checker

import (
	"strings"
	"testing"

	"github.com/redline-dev/redline/harness/history"
)

// Issue 36, class 4: a counter's attribution judges the census against
// the acknowledged total (what the final read had to hold), not the last
// increment; a key whose only anomaly is a value above every increment is
// not a lost increment.

// counterAttrHistory: three increments of 2 acknowledged by n1 (total 6),
// the final read answers final, the census finds census on n1, the slot's
// owner at the end.
func counterAttrHistory(t *testing.T, final int64, census string) *hist {
	key := keyIn(t, "c:", 0, 5460)
	h := &hist{}
	start(h)
	for i := int64(0); i < 3; i++ {
		h.call(0, "add", key, 2, 100+20*i, history.OK, nil, 110+20*i)
		h.servedBy(addr1)
	}
	h.event(200, history.Info, "start-kill", []string{"n1"}, nil)
	h.event(3000, history.Info, "stop-kill", []string{"n1"}, nil)
	h.event(4000, history.Info, "final-reads", nil, nil)
	h.call(1<<21, "read", key, nil, 4100, history.OK, final, 4110)
	h.servedBy(addr1)
	v := census
	h.event(4200, history.Info, history.CensusEvent, nil, history.Census{Prefix: "c:", Nodes: []history.CensusNode{
		{Name: "n1", Addr: addr1, ID: id1, Role: "primary", View: view(id1, addr1, id4, addr4),
			Keys: map[string]history.CensusKey{key: {Type: "string", Value: &v}}},
		{Name: "n2", Addr: addr2, ID: id2, Role: "primary", View: view(id1, addr1, id4, addr4)},
		{Name: "n4", Addr: addr4, ID: id4, Role: "replica", Primary: id1, View: view(id1, addr1, id4, addr4)},
	}})
	return h
}

func TestAttributeCounterComparesTheAcknowledgedTotal(t *testing.T) {
	for _, tc := range []struct {
		name, census, holds, verdict string
	}{
		// The owner holds all 6: the read missed what is there.
		{"owner holds the total", "6", "yes", AttrUnknown},
		// The owner holds 2, the last increment's delta, not the total.
		{"owner holds the last delta", "2", "no", ServerLost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := attribute(t, counterAttrHistory(t, 2, tc.census), Counter(Scope{KeyPrefix: "c:"}))
			if len(at) != 1 {
				t.Fatalf("want one attribution, got %+v", at)
			}
			a := at[0]
			if a.Kind != "lost-increment" || len(a.Copy) != 1 || a.Copy[0].Holds != tc.holds || a.Verdict != tc.verdict {
				t.Fatalf("kind %s, copies %+v, verdict %s (%s): want holds %s, verdict %s", a.Kind, a.Copy, a.Verdict, a.Why, tc.holds, tc.verdict)
			}
			if !strings.Contains(a.Why, "6") {
				t.Fatalf("why does not name the acknowledged total 6: %s", a.Why)
			}
		})
	}
}

func TestAttributeCounterUnexpectedIsNoLostIncrement(t *testing.T) {
	h := counterAttrHistory(t, 9, "9") // 3 above every increment sent
	at := attribute(t, h, Counter(Scope{KeyPrefix: "c:"}))
	if len(at) != 1 {
		t.Fatalf("want one attribution, got %+v", at)
	}
	a := at[0]
	if a.Kind == "lost-increment" || a.Kind != "unexpected-increment" {
		t.Fatalf("kind %q, want unexpected-increment: %+v", a.Kind, a)
	}
	if a.Miss == nil || !strings.Contains(a.Why, "op ") || strings.Contains(a.Why, "lost") || a.Verdict == ServerLost {
		t.Fatalf("an excess must be named by its read and never called a loss: verdict %s, why %s, miss %+v", a.Verdict, a.Why, a.Miss)
	}
}
