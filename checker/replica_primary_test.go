package checker

import (
	"reflect"
	"strings"
	"testing"

	"github.com/redline-dev/redline/history"
)

// Issue 36, class 2: a read a replica served says where a key's replica
// is, not its primary. The slot -> primary view (shardViews) must not take
// it for the shard's primary; each consumer is tested here.

const n3 = "10.0.0.3:6379" // n1's replica

// replicaCoverageHistory: counter key c:a lives on primary n1 (adds every
// 100 ms); a replica, n3, serves reads of it too, the last op before the
// kill of victim being such a read.
func replicaCoverageHistory(victim string) []history.Op {
	var h hist
	h.nodesEvent(map[string]string{"n1": n1, "n2": n2, "n3": n3})
	p := 0
	for t := int64(0); t < 9000; t += 100 {
		if t < 5000 || t >= 7000 {
			h.call(p, "add", "c:a", 1, t, history.OK, nil, t+5)
			h.on(n1)
		}
		h.call(p+1, "read", "c:a", nil, t+40, history.OK, nil, t+45).SetReplica(true)
		h.on(n3)
		p += 2
	}
	h.nemesis(5000, "start-kill", victim)
	h.nemesis(7000, "stop-kill", victim)
	h.nemesis(9000, "final-reads")
	return h.done()
}

func TestCoverageKillOfAReplicaIsNoEvidence(t *testing.T) {
	opts := CoverageOptions{Requested: []string{"kill"}, Workloads: map[string]string{"counter": "c:"}}
	r := check(t, Coverage(opts), replicaCoverageHistory("n3"))
	if f := typed[*CoverageFigures](t, r); !reflect.DeepEqual(f.NoEvidence, []string{"kill"}) {
		t.Fatalf("a kill of replica n3 counted as evidence: no_evidence %v, per_kind %+v", f.NoEvidence, f.PerKind)
	}
}

func TestCoverageKillOfThePrimaryIsEvidenceDespiteReplicaReads(t *testing.T) {
	opts := CoverageOptions{Requested: []string{"kill"}, Workloads: map[string]string{"counter": "c:"}}
	r := check(t, Coverage(opts), replicaCoverageHistory("n1"))
	f := typed[*CoverageFigures](t, r)
	if got := f.NoEvidence; len(got) != 0 {
		t.Fatalf("the kill of primary n1 is missed: no_evidence %v", got)
	}
	if kill := f.PerKind["kill"]; !reflect.DeepEqual(kill.Primaries, []string{"n1"}) {
		t.Fatalf("kill coverage %+v, want primary n1", kill)
	}
}

// A counter's loss revealed after a kill of its primary n2 goes to that
// kill's window, although the last op before the kill was a replica read.
func TestCounterRPOChargesTheKilledPrimaryDespiteReplicaReads(t *testing.T) {
	var h hist
	h.nodesEvent(map[string]string{"n1": n1, "n2": n2, "n3": n3})
	h.call(0, "add", "a", 1, 0, history.OK, nil, 10)
	h.on(n2)
	h.call(0, "add", "a", 1, 100, history.OK, nil, 110)
	h.on(n2)
	h.call(1, "read", "a", nil, 200, history.OK, 2, 210).SetReplica(true)
	h.on(n3)
	h.nemesis(1000, "start-kill", "n2")
	h.nemesis(2000, "stop-kill", "n2")
	h.nemesis(4900, "final-reads")
	h.call(1, "read", "a", nil, 5000, history.OK, 0, 5010)
	h.on(n2)
	r := check(t, RPO(), h.done())
	if r.NotApplicable != "" {
		t.Fatalf("rpo n/a: %s", r.NotApplicable)
	}
	f := typed[*RPOFigures](t, r)
	if f.PerWindow[0].Lost != 2 || f.Outside.Lost != 0 {
		t.Fatalf("the kill of n2 is not charged: window %+v, outside %+v", f.PerWindow[0], f.Outside)
	}
}

// The unserved shard is named by its primary n1, not by the replica n4
// whose read was the last op served before the kill; a read n4 served
// while every write still failed is no promotion.
func TestAttributeUnservedNamesThePrimaryNotAReplica(t *testing.T) {
	k1 := keyIn(t, "r:", 0, 5460)
	h := &hist{}
	start(h)
	h.call(0, "write", k1, 1, 100, history.OK, nil, 110)
	h.servedBy(addr1)
	h.call(1, "read", k1, nil, 150, history.OK, 1, 160).SetReplica(true)
	h.servedBy(addr4)
	h.event(200, history.Info, "start-kill", []string{"n1"}, map[string]any{"mode": "primary"})
	h.call(0, "write", k1, 2, 300, history.Fail, nil, 310)
	h.withErr("CLUSTERDOWN The cluster is down")
	h.call(1, "read", k1, nil, 400, history.OK, 1, 410).SetReplica(true)
	h.servedBy(addr4)
	h.call(0, "write", k1, 3, 500, history.Fail, nil, 510)
	h.withErr("CLUSTERDOWN The cluster is down")
	h.call(1, "read", k1, nil, 600, history.OK, 1, 610).SetReplica(true)
	h.servedBy(addr4)
	h.call(0, "write", k1, 4, 2500, history.OK, nil, 2510)
	h.servedBy(addr1)
	h.event(3000, history.Info, "stop-kill", []string{"n1"}, nil)
	un := unservedOf(t, h, nil)
	if len(un) != 1 {
		t.Fatalf("want one unserved shard (n1's), got %d: %+v", len(un), un)
	}
	a, u := un[0], un[0].Unserved
	if !strings.Contains(u.Shard, "n1") || strings.Contains(u.Shard, "n4") {
		t.Fatalf("the shard is named %q, want its primary n1: %+v", u.Shard, a)
	}
	if a.Verdict != FaultOutage || !strings.Contains(a.Why, "n1") {
		t.Fatalf("want the kill of n1 as the cause: %s %s", a.Verdict, a.Why)
	}
	if strings.Contains(a.Why, "promoted") || strings.Contains(strings.Join(u.Topology, " "), "n4") {
		t.Fatalf("a replica read taken for a promotion: %s / %v", a.Why, u.Topology)
	}
	if u.ToS != 2.51 {
		t.Fatalf("served again at %v s, want 2.51 (n1's write, not n4's read)", u.ToS)
	}
}

// The RTO of n1's shard runs until a primary serves its slots again, not
// until a replica answers a read; the shard is n1, not the replica n3 whose
// read came last before the fault.
func TestRTOIsNotEndedByAReplicaRead(t *testing.T) {
	var h hist
	h.nodesEvent(map[string]string{"n1": n1, "n2": n2, "n3": n3})
	h.call(0, "write", "a", 1, 0, history.OK, nil, 10)
	h.on(n1)
	h.call(1, "read", "a", nil, 20, history.OK, 1, 30).SetReplica(true)
	h.on(n3)
	h.nemesis(100, "start-kill", "n1")
	h.call(0, "write", "a", 2, 200, history.Fail, nil, 210)
	h.withErr("CLUSTERDOWN")
	h.call(1, "read", "a", nil, 300, history.OK, 1, 310).SetReplica(true)
	h.on(n3)
	h.call(0, "write", "a", 3, 800, history.OK, nil, 810)
	h.on(n1)
	h.nemesis(1000, "stop-kill", "n1")
	r := check(t, RTO(), h.done())
	wantValid(t, r, Valid)
	f := typed[*RTOFigures](t, r)
	shards := f.PerWindow[0].Shards
	if _, ok := shards[n3]; ok {
		t.Fatalf("the shard is named by the replica: %+v", shards)
	}
	if _, ok := shards[n1]; !ok {
		t.Fatalf("the primary's shard is missing: %+v", shards)
	}
	if q := f.RTOMs; val(q.Max) != 710.0 {
		t.Fatalf("rto %+v, want 710 ms (the primary's write at 810 ms), not ended by the replica read", q)
	}
	if q := f.KeyRTOMs; val(q.Max) != 710.0 {
		t.Fatalf("key rto %+v, want 710 ms", q)
	}
}
