package checker

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/redline-dev/redline/history"
)

func strp(s string) *string { return &s }

// replicaPairCensus is a census of one shard: primary p1 and its replica
// r1, both at offset 500 of replication id "abc", link up, the wait for
// sync done; both hold counter c:a = 5 and set c:s = {1, 2}.
func replicaPairCensus() history.Census {
	keys := func() map[string]history.CensusKey {
		return map[string]history.CensusKey{
			"c:a": {Type: "string", Value: strp("5"), Len: 1},
			"c:s": {Type: "set", Members: []string{"1", "2"}, Len: 2},
		}
	}
	return history.Census{Prefix: "c:", ReplicaSync: &history.ReplicaSync{InSync: true, WaitedMS: 12, Attempts: 1}, Nodes: []history.CensusNode{
		{Name: "p1", ID: "id-p1", Addr: "10.0.0.1:6379", Role: "primary", Keys: keys(),
			Repl: &history.CensusRepl{Replid: "abc", Offset: 500, OffsetAfter: 500}},
		{Name: "r1", ID: "id-r1", Addr: "10.0.0.3:6379", Role: "replica", Primary: "id-p1", Keys: keys(),
			Repl: &history.CensusRepl{Replid: "abc", Offset: 500, OffsetAfter: 500, Link: "up"}},
	}}
}

func replicaCensusOps(c history.Census) []history.Op {
	var h hist
	h.call(0, "add", "c:a", 5, 0, history.OK, nil, 10)
	h.call(0, "read", "c:a", nil, 20, history.OK, 5, 30)
	return withCensus(h.done(), c)
}

func replicaOf(c *history.Census) *history.CensusNode { return &c.Nodes[1] }

// Gaps psync-wrong-offset and rdb-drop-sets (docs/planted-bugs.md): a
// replica in sync with its primary by the census' own record must hold its
// primary's keys; a set it dropped or a counter it applied twice is a
// replica-divergence.
func TestReplicaCensusFindsADivergentReplica(t *testing.T) {
	rc := ReplicaCensus(Scope{CensusExpected: "test"})
	wantValid(t, check(t, rc, replicaCensusOps(replicaPairCensus())), Valid)

	c := replicaPairCensus()
	delete(replicaOf(&c).Keys, "c:s") // rdb-drop-sets
	r := check(t, rc, replicaCensusOps(c))
	wantValid(t, r, Invalid)
	if typed[*ReplicaCensusFigures](t, r).DivergedKeys != 1 || !strings.Contains(r.Why(), "c:s") || !strings.Contains(r.Why(), "missing on the replica") {
		t.Fatalf("figures %v", r.Figures)
	}
	if _, ok := fig[map[string]any](t, r, "anomalies")[ReplicaDivergence]; !ok {
		t.Fatalf("no %s class: %v", ReplicaDivergence, r.Figures)
	}

	c = replicaPairCensus()
	replicaOf(&c).Keys["c:a"] = history.CensusKey{Type: "string", Value: strp("6"), Len: 1} // psync-wrong-offset
	r = check(t, rc, replicaCensusOps(c))
	wantValid(t, r, Invalid)
	if !strings.Contains(r.Why(), `"5" on the primary, "6" on the replica`) {
		t.Fatalf("why %q", r.Why())
	}

	c = replicaPairCensus()
	replicaOf(&c).Keys["c:x"] = history.CensusKey{Type: "string", Value: strp("1")}
	wantValid(t, check(t, rc, replicaCensusOps(c)), Invalid)
}

// The replication record can lie: each lie, alone, leaves the replica
// unjudged (unknown, named), never valid, even where the keys agree; and
// where the keys differ, a lie never makes it valid either.
func TestReplicaCensusLiesAreNeverValid(t *testing.T) {
	lies := map[string]func(c *history.Census){
		"never synced": func(c *history.Census) {
			c.ReplicaSync = &history.ReplicaSync{WaitedMS: 30000, Why: "not in sync after 30s: r1 is at offset 400 of abc, its primary p1 at 500 of abc"}
			replicaOf(c).Repl.Offset, replicaOf(c).Repl.OffsetAfter = 400, 400
		},
		"garbage: negative offset": func(c *history.Census) { replicaOf(c).Repl.Offset, replicaOf(c).Repl.OffsetAfter = -1, -1 },
		"garbage: primary unknown": func(c *history.Census) { replicaOf(c).Primary = "id-nobody" },
		"contradiction: in sync, offsets differ": func(c *history.Census) {
			replicaOf(c).Repl.Offset, replicaOf(c).Repl.OffsetAfter = 480, 480
		},
		"contradiction: other replication id": func(c *history.Census) { replicaOf(c).Repl.Replid = "def" },
		"contradiction: link down":            func(c *history.Census) { replicaOf(c).Repl.Link = "down" },
		"torn: offset_after lost":             func(c *history.Census) { replicaOf(c).Repl.OffsetAfter = 0 },
		"out of order: offset went back":      func(c *history.Census) { c.Nodes[0].Repl.OffsetAfter = 450 },
		"missing: replica's record":           func(c *history.Census) { replicaOf(c).Repl = nil },
		"missing: the wait's record":          func(c *history.Census) { c.ReplicaSync = nil },
		"missing: a node's answer": func(c *history.Census) {
			c.Nodes = append(c.Nodes, history.CensusNode{Name: "r2", Error: "dial tcp: i/o timeout"})
		},
	}
	for name, lie := range lies {
		for _, diverged := range []bool{false, true} {
			c := replicaPairCensus()
			if diverged {
				delete(replicaOf(&c).Keys, "c:s")
			}
			lie(&c)
			r := check(t, ReplicaCensus(Scope{CensusExpected: "test"}), replicaCensusOps(c))
			if r.NotApplicable != "" || r.Valid == Valid {
				t.Errorf("%s (diverged %v): %v %q %v", name, diverged, r.Valid, r.NotApplicable, r.Figures)
			}
		}
	}
	// Torn or garbage JSON: the census entry does not decode.
	ops := replicaCensusOps(replicaPairCensus())
	raw, _ := json.Marshal(replicaPairCensus())
	ops[len(ops)-1].SetDetail(raw[:len(raw)/2])
	wantValid(t, check(t, ReplicaCensus(Scope{CensusExpected: "test"}), ops), Unknown)
	b := []byte(strings.Replace(string(raw), `"offset":500`, `"offset":"five hundred"`, 1))
	ops[len(ops)-1].SetDetail(b)
	wantValid(t, check(t, ReplicaCensus(Scope{CensusExpected: "test"}), ops), Unknown)
}

// A census without any replication record (an older redline's) or
// without a replica has nothing to judge.
func TestReplicaCensusNotApplicable(t *testing.T) {
	c := replicaPairCensus()
	c.ReplicaSync = nil
	for i := range c.Nodes {
		c.Nodes[i].Repl = nil
	}
	if r := check(t, ReplicaCensus(), replicaCensusOps(c)); r.NotApplicable == "" {
		t.Fatalf("old census: %v %v", r.Valid, r.Figures)
	}
	c = replicaPairCensus()
	c.Nodes = c.Nodes[:1]
	if r := check(t, ReplicaCensus(), replicaCensusOps(c)); r.NotApplicable == "" {
		t.Fatalf("no replica: %v %v", r.Valid, r.Figures)
	}
}
