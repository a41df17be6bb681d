package checker

import (
	"strings"
	"testing"

	"github.com/redline-dev/redline/history"
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

// A counter's loss is judged over the stretch where it first showed, not
// near the final read: increments lost under a partition at 200-300 ms show
// at a read at 400 ms; many more increments follow (the last acknowledged
// just before the final read, well after every fault); a later kill at
// 2000-2100 ms touched nothing. The attribution names the partition, never
// the kill, and says where the loss first showed. A figure that names a read
// that is not there, or an op of another key, leaves the final read's
// stretch (no invented evidence).
func TestAttributeCounterJudgesWhereTheLossFirstShowed(t *testing.T) {
	build := func() *hist {
		key := keyIn(t, "c:", 0, 5460)
		h := &hist{}
		start(h)
		h.call(0, "add", key, 1, 100, history.OK, nil, 110)
		h.servedBy(addr1)
		h.call(1, "read", key, nil, 150, history.OK, 1, 160) // holds the 1 acknowledged
		h.servedBy(addr1)
		h.event(200, history.Info, "start-partition", []string{"n1"}, nil)
		h.call(0, "add", key, 1, 210, history.OK, nil, 220) // acknowledged, then lost
		h.servedBy(addr1)
		h.event(300, history.Info, "stop-partition", []string{"n1"}, nil)
		h.call(1, "read", key, nil, 400, history.OK, 1, 410) // the loss shows: 1 < 2
		h.servedBy(addr4)
		for i := int64(0); i < 20; i++ {
			h.call(0, "add", key, 1, 500+100*i, history.OK, nil, 510+100*i)
			h.servedBy(addr4)
		}
		h.event(2000, history.Info, "start-kill", []string{"n2"}, nil)
		h.event(2100, history.Info, "stop-kill", []string{"n2"}, nil)
		h.call(0, "add", key, 1, 3990, history.OK, nil, 3995)
		h.servedBy(addr4)
		h.event(4000, history.Info, "final-reads", nil, nil)
		h.call(1<<21, "read", key, nil, 4100, history.OK, 22, 4110) // 23 acknowledged
		h.servedBy(addr4)
		v := "22"
		h.event(4200, history.Info, history.CensusEvent, nil, history.Census{Prefix: "c:", Nodes: []history.CensusNode{
			{Name: "n4", Addr: addr4, ID: id4, Role: "primary", View: view(id4, addr4, id1, addr1),
				Keys: map[string]history.CensusKey{key: {Type: "string", Value: &v}}},
			{Name: "n2", Addr: addr2, ID: id2, Role: "primary", View: view(id4, addr4, id1, addr1)},
			{Name: "n1", Addr: addr1, ID: id1, Role: "replica", Primary: id4, View: view(id4, addr4, id1, addr1)},
		}})
		return h
	}
	at := attribute(t, build(), Counter(Scope{KeyPrefix: "c:"}))
	if len(at) != 1 || at[0].Kind != "lost-increment" {
		t.Fatalf("want one lost-increment attribution, got %+v", at)
	}
	a := at[0]
	joined := strings.Join(a.Faults, " | ")
	if !strings.Contains(joined, "partition") || strings.Contains(joined, "kill") {
		t.Fatalf("faults %q: want the partition the loss followed, not the later kill (why: %s)", joined, a.Why)
	}
	if !strings.Contains(a.Why, "first showed at op") {
		t.Fatalf("why does not say where the loss first showed: %s", a.Why)
	}
}
