package checker

import (
	"context"
	"strings"
	"testing"

	"github.com/redline-dev/redline/history"
)

func unservedOf(t *testing.T, h *hist, logs []LogLine, topo ...TopologySample) []Attribution {
	t.Helper()
	ops := h.done()
	s := Run(context.Background(), ops, []Checker{RTO()}, nil)
	var out []Attribution
	for _, a := range AttributeWithTopology(ops, s, logs, topo) {
		if a.Kind == "unserved" {
			if a.Unserved == nil {
				t.Fatalf("unserved attribution without its figures: %+v", a)
			}
			out = append(out, a)
		}
	}
	return out
}

// n1 (serving slots 0-5460) is killed; its keys get CLUSTERDOWN and a
// timeout until n4, its replica, serves them: the fault did it, with the
// promotion named. n2's shard kept serving: no attribution for it.
func TestAttributeUnservedKillWithPromotion(t *testing.T) {
	k1, k2 := keyIn(t, "r:", 0, 5460), keyIn(t, "r:", 5461, 16383)
	h := &hist{}
	start(h)
	h.call(0, "write", k1, 1, 100, history.OK, nil, 110)
	h.servedBy(addr1)
	h.call(1, "write", k2, 1, 100, history.OK, nil, 110)
	h.servedBy(addr2)
	h.event(200, history.Invoke, "start-kill", []string{"n1"}, map[string]any{"mode": "primary"})
	h.event(210, history.Info, "start-kill", []string{"n1"}, map[string]any{"mode": "primary"})
	h.call(0, "write", k1, 2, 300, history.Fail, nil, 310)
	h.withErr("CLUSTERDOWN The cluster is down")
	h.call(0, "write", k1, 3, 400, history.Info, nil, 1400)
	h.withErr("i/o timeout")
	h.call(1, "write", k2, 2, 500, history.OK, nil, 510)
	h.servedBy(addr2)
	h.call(0, "write", k1, 4, 2500, history.OK, nil, 2510)
	h.servedBy(addr4)
	h.event(3000, history.Invoke, "stop-kill", []string{"n1"}, nil)
	h.event(3010, history.Info, "stop-kill", []string{"n1"}, nil)
	logs := []LogLine{
		{Node: "n4", Time: 2400 * msec, Text: "Failover election won for epoch 7"},
		{Node: "n2", Time: 2450 * msec, Text: "Cluster state changed: ok"},
	}
	un := unservedOf(t, h, logs)
	if len(un) != 1 {
		t.Fatalf("want one unserved shard (n1's), got %d: %+v", len(un), un)
	}
	a := un[0]
	u := a.Unserved
	if a.Verdict != FaultOutage || !strings.Contains(u.Shard, "n1") || !u.Recovered || u.Window != 0 {
		t.Fatalf("want the fault's outage of n1's shard, recovered: %+v %+v", a, u)
	}
	if u.FromS != 0.3 || u.ToS != 2.51 {
		t.Errorf("span %v-%v s, want 0.3-2.51 (first failed call .. first served one)", u.FromS, u.ToS)
	}
	if u.Errors["CLUSTERDOWN"] != 1 || u.Errors["timeout"] != 1 {
		t.Errorf("errors %v, want CLUSTERDOWN x1 and timeout x1", u.Errors)
	}
	if !strings.Contains(a.Why, "n4") || !strings.Contains(a.Why, "promoted") || len(u.Topology) == 0 || !strings.Contains(u.Topology[0], "n4") {
		t.Errorf("the promotion of n4 is not named: %s / %v", a.Why, u.Topology)
	}
	if len(a.Logs) != 1 || !strings.Contains(a.Logs[0], "election won") {
		t.Errorf("want n4's election line only (n2 is not of the shard), got %v", a.Logs)
	}
	if len(a.Faults) != 1 || !strings.Contains(a.Faults[0], "kill") {
		t.Errorf("faults %v", a.Faults)
	}
}

// A journalled migration of the key's slot, left failed, overlaps TRYAGAIN
// and ASK answers on it, with no fault at all: an admin step did it.
func TestAttributeUnservedAdminStep(t *testing.T) {
	key := keyIn(t, "r:", 0, 5460)
	slot := history.Keyslot(key)
	h := &hist{}
	start(h)
	h.call(0, "write", key, 1, 100, history.OK, nil, 110)
	h.servedBy(addr1)
	h.event(300, history.Info, "journal", nil, map[string]any{"seq": 5, "state": "begin", "kind": "migrate", "slots": []int{slot}, "from": id1, "to": id2})
	h.call(0, "write", key, 2, 400, history.Fail, nil, 410)
	h.withErr("TRYAGAIN Multiple keys request during rehashing of slot")
	h.call(0, "write", key, 3, 500, history.Fail, nil, 510)
	h.withErr("ASK 1234 10.0.0.2:6379")
	h.event(900, history.Info, "journal", nil, map[string]any{"seq": 5, "state": "failed", "kind": "migrate", "slots": []int{slot}, "from": id1, "to": id2, "error": "ERR boom"})
	h.call(0, "write", key, 4, 1000, history.OK, nil, 1010)
	h.servedBy(addr2)
	un := unservedOf(t, h, []LogLine{{Node: "n9", Time: 450 * msec, Text: "slot " + itoa(slot) + " importing"}})
	if len(un) != 1 {
		t.Fatalf("want one unserved shard, got %+v", un)
	}
	a := un[0]
	if a.Verdict != AdminOutage || a.Unserved.Window != -1 || len(a.Steps) != 1 || !a.Steps[0].Touches || a.Steps[0].Seq != 5 {
		t.Fatalf("want admin step #5 blamed, outside every window: %+v %+v", a, a.Unserved)
	}
	if !strings.Contains(a.Why, "#5") || !strings.Contains(a.Why, "ERR boom") {
		t.Errorf("why: %s", a.Why)
	}
	if a.Unserved.Errors["TRYAGAIN"] != 1 || a.Unserved.Errors["ASK"] != 1 {
		t.Errorf("errors %v", a.Unserved.Errors)
	}
	if len(a.Logs) != 1 {
		t.Errorf("want the line naming the slot, got %v", a.Logs)
	}
}

// n1's keys time out while a fault strikes only n2, and no step is
// journalled; then an outage never recovers with no fault in the history
// at all: both unknown, neither blamed on the fault.
func TestAttributeUnservedNoEvidence(t *testing.T) {
	k1, k2 := keyIn(t, "r:", 0, 5460), keyIn(t, "r:", 5461, 16383)
	h := &hist{}
	start(h)
	h.call(0, "write", k1, 1, 100, history.OK, nil, 110)
	h.servedBy(addr1)
	h.call(1, "write", k2, 1, 100, history.OK, nil, 110)
	h.servedBy(addr2)
	h.event(200, history.Invoke, "start-pause", []string{"n2"}, nil)
	h.event(210, history.Info, "start-pause", []string{"n2"}, nil)
	h.call(0, "write", k1, 2, 300, history.Info, nil, 1300)
	h.withErr("context deadline exceeded")
	h.call(0, "write", k1, 3, 1500, history.OK, nil, 1510)
	h.servedBy(addr1)
	h.call(1, "write", k2, 2, 1600, history.OK, nil, 1610)
	h.servedBy(addr2)
	h.event(2000, history.Invoke, "stop-pause", []string{"n2"}, nil)
	h.event(2010, history.Info, "stop-pause", []string{"n2"}, nil)
	un := unservedOf(t, h, nil)
	if len(un) != 1 || un[0].Verdict != AttrUnknown || !strings.Contains(un[0].Why, "other nodes") {
		t.Fatalf("want one unknown outage of n1's shard, got %+v", un)
	}
	if un[0].Unserved.Errors["timeout"] != 1 {
		t.Errorf("errors %v", un[0].Unserved.Errors)
	}

	h = &hist{}
	start(h)
	h.call(0, "write", k1, 1, 100, history.OK, nil, 110)
	h.servedBy(addr1)
	h.call(0, "write", k1, 2, 300, history.Fail, nil, 310)
	h.withErr("CLUSTERDOWN Hash slot not served")
	un = unservedOf(t, h, nil)
	if len(un) != 1 || un[0].Verdict != AttrUnknown || un[0].Unserved.Recovered || !strings.Contains(un[0].Why, "not in the history") {
		t.Fatalf("want an unknown, unrecovered outage, got %+v", un)
	}
}

// A window whose shards all kept serving attributes nothing.
func TestAttributeUnservedNoneWhenServed(t *testing.T) {
	key := keyIn(t, "r:", 0, 5460)
	h := &hist{}
	start(h)
	h.call(0, "write", key, 1, 100, history.OK, nil, 110)
	h.servedBy(addr1)
	h.event(200, history.Invoke, "start-kill", []string{"n1"}, nil)
	h.call(0, "write", key, 2, 300, history.OK, nil, 310)
	h.servedBy(addr1)
	if un := unservedOf(t, h, nil); len(un) != 0 {
		t.Fatalf("want no unserved attribution, got %+v", un)
	}
}

// The shard of n1 stops serving under a kill and is not served again
// before the history ends; only the sampled topology (topology.jsonl)
// shows n1 marked failed and its replica n4 owning the slots: the
// attribution names both, with their times.
func TestAttributeUnservedReadsTheSampledTopology(t *testing.T) {
	k1, k2 := keyIn(t, "r:", 0, 5460), keyIn(t, "r:", 5461, 16383)
	slot := itoa(history.Keyslot(k1))
	h := &hist{}
	start(h)
	h.call(0, "write", k1, 1, 100, history.OK, nil, 110)
	h.servedBy(addr1)
	h.call(1, "write", k2, 1, 100, history.OK, nil, 110)
	h.servedBy(addr2)
	h.event(200, history.Invoke, "start-kill", []string{"n1"}, map[string]any{"mode": "primary"})
	h.event(210, history.Info, "start-kill", []string{"n1"}, map[string]any{"mode": "primary"})
	h.call(0, "write", k1, 2, 300, history.Fail, nil, 310)
	h.withErr("CLUSTERDOWN The cluster is down")
	h.call(2, "write", k1, 3, 2600, history.Fail, nil, 2610)
	h.withErr("CLUSTERDOWN The cluster is down")
	h.call(1, "write", k2, 2, 2700, history.OK, nil, 2710)
	h.servedBy(addr2)
	// n1's and n4's lines as CLUSTER NODES has them; n2 serves the rest.
	nodes := func(n1, n4 string) string {
		return id1 + " " + addr1 + "@16379 " + n1 + "\n" +
			id2 + " " + addr2 + "@16379 master - 0 0 2 connected 5461-16383\n" +
			id4 + " " + addr4 + "@16379 " + n4 + "\n"
	}
	before := nodes("master - 0 0 1 connected 0-5460", "slave "+id1+" 0 0 1 connected")
	topo := []TopologySample{
		{Time: 0, ClusterNodes: before},
		{Time: 1500 * msec, ClusterNodes: nodes("master,fail - 0 0 1 connected 0-5460", "slave "+id1+" 0 0 1 connected")},
		{Time: 2000 * msec, ClusterNodes: nodes("master,fail - 0 0 1 connected", "master - 0 0 3 connected 0-5460")},
		{Time: 2100 * msec, ClusterNodes: nodes("master,fail - 0 0 1 connected", "master - 0 0 3 connected 0-5460")},
		{Time: 9000 * msec, ClusterNodes: before}, // long after: not read
	}
	un := unservedOf(t, h, nil, topo...)
	if len(un) != 1 {
		t.Fatalf("want n1's shard unserved, got %+v", un)
	}
	a, u := un[0], un[0].Unserved
	got := strings.Join(u.Topology, " | ")
	for _, w := range []string{
		"sampled topology at 0s: slot " + slot + " owned by n1",
		"sampled topology at 1.5s: slot " + slot + " owned by n1",
		"marked failed",
		"sampled topology at 2s: slot " + slot + " owned by n4",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("topology %q lacks %q", got, w)
		}
	}
	if strings.Contains(got, "at 9s") || strings.Contains(got, "at 2.1s") {
		t.Errorf("a sample after the first one past the outage, or an unchanged one, was read: %q", got)
	}
	if !strings.Contains(a.Why, "sampled topology shows n4") {
		t.Errorf("why does not name n4 from the sampled topology: %s", a.Why)
	}
}
