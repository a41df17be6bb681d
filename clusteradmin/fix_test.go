package clusteradmin

import (
	"fmt"
	"strings"
	"testing"

	"github.com/redline-dev/redline/cluster"
)

// Six nodes: a (primary, the move's source) with replica ra; b (the
// move's destination, failed over: now a replica) and rb (its promoted
// replica); c with replica rc, a bystander.
var fixIDs = map[string]string{
	"a": strings.Repeat("a", 40), "ra": strings.Repeat("1", 40),
	"b": strings.Repeat("b", 40), "rb": strings.Repeat("2", 40),
	"c": strings.Repeat("c", 40), "rc": strings.Repeat("3", 40),
}

var fixOrder = []string{"a", "ra", "b", "rb", "c", "rc"}

// fixTopology builds a topology from hand-made CLUSTER NODES texts, one per
// node, as each node reports itself; open gives each node's own open
// states as CLUSTER NODES prints them ("[100->-<id>]").
func fixTopology(t *testing.T, open map[string]string) *Topology {
	t.Helper()
	role := map[string]string{"a": "master -", "ra": "slave " + fixIDs["a"], "b": "slave " + fixIDs["rb"],
		"rb": "master -", "c": "master -", "rc": "slave " + fixIDs["c"]}
	slots := map[string]string{"a": " 0-5460", "rb": " 5461-10922", "c": " 10923-16383"}
	var nodes []cluster.Node
	var views [][]cluster.NodeInfo
	var texts []string
	for i, me := range fixOrder {
		var b strings.Builder
		for j, n := range fixOrder {
			flags := strings.Fields(role[n])[0]
			if n == me {
				flags = "myself," + flags
			}
			fmt.Fprintf(&b, "%s 127.0.0.1:%d@%d %s %s 0 0 %d connected%s", fixIDs[n], 7000+j, 17000+j, flags,
				strings.Fields(role[n])[1], j+1, slots[n])
			if n == me && open[n] != "" {
				b.WriteString(" " + open[n])
			}
			b.WriteString("\n")
		}
		ls, err := cluster.ParseNodes(b.String())
		if err != nil {
			t.Fatalf("%s: %v\n%s", me, err, b.String())
		}
		nodes = append(nodes, cluster.Node{Name: me, Addr: fmt.Sprintf("127.0.0.1:%d", 7000+i)})
		views = append(views, ls)
		texts = append(texts, b.String())
	}
	tp, err := topologyFrom(nodes, views, texts)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// theMove is redline's record of moving slot 100 from a to b, with the
// shards journalled when it began.
var theMove = openSlot{Slot: 100, Src: fixIDs["a"], Dst: fixIDs["b"],
	SrcShard: []string{fixIDs["a"], fixIDs["ra"]}, DstShard: []string{fixIDs["b"], fixIDs["rb"]}}

// TestValkeyReplicatedStatesAreRedlines: Valkey 8 replicates CLUSTER
// SETSLOT to replicas and, when the destination's replica is promoted,
// re-points the states at it (valkey-io/valkey#445). After b's failover
// mid-move, slot 100 is MIGRATING on a and its replica ra to rb, and
// IMPORTING on rb and on b (now a replica) from a. Matched by node id
// alone, rb's and ra's states were "not by redline" and the end phase
// repaired nothing (issue 22: 14 states on 7 slots, run still VALID);
// matched by the move's shards they are redline's. A user's own open
// slot (200, c -> a) stays foreign.
func TestValkeyReplicatedStatesAreRedlines(t *testing.T) {
	mig := func(slot int, to string) string { return fmt.Sprintf("[%d->-%s]", slot, fixIDs[to]) }
	imp := func(slot int, from string) string { return fmt.Sprintf("[%d-<-%s]", slot, fixIDs[from]) }
	tp := fixTopology(t, map[string]string{
		"a":  mig(100, "rb") + " " + imp(200, "c"),
		"ra": mig(100, "rb"),
		"rb": imp(100, "a"),
		"b":  imp(100, "a"),
		"c":  mig(200, "a"),
	})
	if m, _ := tp.ByID(fixIDs["ra"]); m.Primary || m.Migrating[100] != fixIDs["rb"] {
		t.Fatalf("the replica's own line was not read: %+v", m)
	}
	found := foreignStates(tp, map[int]openSlot{100: theMove})
	if len(found) != 2 {
		t.Fatalf("found %d foreign states, want the two of slot 200:\n%s", len(found), strings.Join(found, "\n"))
	}
	for _, f := range found {
		if !strings.HasPrefix(f, "slot 200 ") {
			t.Fatalf("redline's own replicated state reported as foreign: %s", f)
		}
	}
	// Matched by node id only (the record without shards), as before.
	byID := theMove
	byID.SrcShard, byID.DstShard = nil, nil
	if n := len(foreignStates(tp, map[int]openSlot{100: byID})); n != 2+3 {
		t.Fatalf("without shards %d foreign states, want 5: slot 100 on a (its peer rb is not the recorded destination), ra and rb, and slot 200 twice", n)
	}

	// Where the slot goes: the move is open on both sides of the shards
	// (case 1): finished on the destination's promoted replica.
	c := &slotCensus{Slot: 100, Claimers: []NodeState{mustByID(t, tp, "a")}, Keys: map[string]int64{fixIDs["a"]: 2, fixIDs["rb"]: 3}}
	k, why, err := decideKeeper(c, tp, theMove, true)
	if err != nil || k.ID != fixIDs["rb"] || !strings.Contains(why, "case 1") {
		t.Fatalf("keeper %s (%s), %v: want rb", k.Node.Name, why, err)
	}
}

func mustByID(t *testing.T, tp *Topology, name string) NodeState {
	t.Helper()
	m, ok := tp.ByID(fixIDs[name])
	if !ok {
		t.Fatalf("no node %s", name)
	}
	return m
}

// TestDecideKeeperGoesWhereTheKeysAre covers redis-cli --cluster fix's
// decision on Redis 7.0, where a failover drops the migration states.
func TestDecideKeeperGoesWhereTheKeysAre(t *testing.T) {
	tp := fixTopology(t, map[string]string{"a": fmt.Sprintf("[100->-%s]", fixIDs["b"])})
	a, rb := mustByID(t, tp, "a"), mustByID(t, tp, "rb")
	cases := []struct {
		name   string
		c      *slotCensus
		rec    openSlot
		known  bool
		keeper string
	}{
		// The run: every key migrated to b before b failed over;
		// rb has them (replicated), a still claims the slot.
		{"all keys on the promoted destination", &slotCensus{Claimers: []NodeState{a}, Keys: map[string]int64{rb.ID: 5}}, theMove, true, "rb"},
		// Interrupted before any key moved: undone onto the source.
		{"all keys still on the source", &slotCensus{Claimers: []NodeState{a}, Keys: map[string]int64{a.ID: 5}}, theMove, true, "a"},
		// Keys on both sides of redline's move: finish it.
		{"keys on both sides", &slotCensus{Claimers: []NodeState{a}, Keys: map[string]int64{a.ID: 9, rb.ID: 1}}, theMove, true, "rb"},
		// Not redline's move: the primary with most keys, as redis-cli.
		{"someone else's, keys on both", &slotCensus{Claimers: []NodeState{a}, Keys: map[string]int64{a.ID: 9, rb.ID: 1}}, openSlot{}, false, "a"},
		// Empty slot of redline's move: finished on the destination.
		{"no keys, redline's move", &slotCensus{Claimers: []NodeState{a}, Keys: map[string]int64{}}, theMove, true, "rb"},
		// abort-stable: undone (stays with its owner).
		{"no keys, opened to be undone", &slotCensus{Claimers: []NodeState{a}, Keys: map[string]int64{}},
			func() openSlot { o := theMove; o.Stable = true; return o }(), true, "a"},
		// Nobody claims it and nobody has keys: to the destination.
		{"orphan, no keys", &slotCensus{Keys: map[string]int64{}}, theMove, true, "rb"},
	}
	for _, tc := range cases {
		tc.c.Slot = 100
		k, why, err := decideKeeper(tc.c, tp, tc.rec, tc.known)
		if err != nil || k.ID != fixIDs[tc.keeper] {
			t.Errorf("%s: keeper %q (%s), %v; want %s", tc.name, k.Node.Name, why, err, tc.keeper)
		}
	}
	// Nothing known and nothing anywhere: no decision, said so.
	if _, _, err := decideKeeper(&slotCensus{Slot: 100, Keys: map[string]int64{}}, tp, openSlot{}, false); err == nil {
		t.Fatal("an orphan slot with no record and no keys got a keeper")
	}
}

// abort-stable meant to undo, but ASK writes put keys on the importing
// side: undoing would need the owner STABLE before they come back (a
// MIGRATING owner answers their RESTORE-ASKING with ASK), and in that gap
// it serves them as missing; the CI run of 2026-12-02 read a stale value
// there and a write made a second copy. The move is finished instead,
// whoever holds more keys; with no keys on the target it is still undone.
func TestDecideKeeperFinishesAnAbortStableWithKeysOnTheTarget(t *testing.T) {
	tp := fixTopology(t, map[string]string{"a": fmt.Sprintf("[100->-%s]", fixIDs["c"]), "c": fmt.Sprintf("[100-<-%s]", fixIDs["a"])})
	a, c := mustByID(t, tp, "a"), mustByID(t, tp, "c")
	undo := openSlot{Slot: 100, Src: a.ID, Dst: c.ID, SrcShard: []string{a.ID, fixIDs["ra"]}, DstShard: []string{c.ID, fixIDs["rc"]}, Stable: true}
	for _, known := range []bool{true, false} {
		k, why, err := decideKeeper(&slotCensus{Slot: 100, Claimers: []NodeState{a}, Keys: map[string]int64{a.ID: 13, c.ID: 11}}, tp, undo, known)
		if err != nil || k.ID != c.ID || !strings.Contains(why, "MIGRATING to c") {
			t.Fatalf("known=%v: keeper %q (%s), %v; want c (finish the move)", known, k.Node.Name, why, err)
		}
	}
	k, why, err := decideKeeper(&slotCensus{Slot: 100, Claimers: []NodeState{a}, Keys: map[string]int64{a.ID: 13}}, tp, undo, true)
	if err != nil || k.ID != a.ID {
		t.Fatalf("no keys on the target: keeper %q (%s), %v; want a (undone)", k.Node.Name, why, err)
	}
}
