package clusteradmin_test

// The slot mover's own tests, on a cluster of local redis-server processes
// (clusteradmin/localcluster).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/clusteradmin/localcluster"
	"github.com/redline-dev/redline/history"
)

// nodes is a cluster known by its nodes (n1, n2, ... in address order),
// as an external cluster is.
type nodes []cluster.Node

func (c nodes) Nodes() []cluster.Node       { return slices.Clone(c) }
func (c nodes) Close(context.Context) error { return nil }
func (c nodes) addrs() []string {
	var out []string
	for _, n := range c {
		out = append(out, n.Addr)
	}
	return out
}

// startMover starts n redis-server processes (node timeout 1 s), forms a
// cluster with replicas per primary and returns it with a mover of its
// slots, the admin connections it sends through and its journal.
func startMover(t *testing.T, n, replicas int) (nodes, *clusteradmin.SlotMover, *clusteradmin.Admin, *clusteradmin.Journal) {
	t.Helper()
	return startMoverOn(t, n, replicas, "")
}

// startMoverOn is startMover on the server binary given ("": redis-server).
func startMoverOn(t *testing.T, n, replicas int, binary string) (nodes, *clusteradmin.SlotMover, *clusteradmin.Admin, *clusteradmin.Journal) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	lc, err := localcluster.Start(ctx, t.TempDir(), n, replicas, time.Second, binary)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lc.Stop)
	ns, err := cluster.ExternalNodes(lc.Addrs)
	if err != nil {
		t.Fatal(err)
	}
	adm := &clusteradmin.Admin{Log: t.Logf}
	t.Cleanup(adm.Close)
	j, _ := clusteradmin.OpenJournal("")
	return nodes(ns), clusteradmin.NewSlotMover(nodes(ns), adm, j, t.Logf), adm, j
}

// keysInSlot is the first n keys prefix:0, prefix:1, ... in slot.
func keysInSlot(prefix string, slot, n int) []string {
	var keys []string
	for i := 0; len(keys) < n; i++ {
		if k := fmt.Sprintf("%s:%d", prefix, i); history.Keyslot(k) == slot {
			keys = append(keys, k)
		}
	}
	return keys
}

// mustDo sends one admin command and fails the test on an error.
func mustDo(t *testing.T, adm *clusteradmin.Admin, addr string, args ...any) any {
	t.Helper()
	v, err := adm.Do(context.Background(), addr, 5*time.Second, args...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// countKeys is CLUSTER COUNTKEYSINSLOT slot on the node at addr.
func countKeys(t *testing.T, adm *clusteradmin.Admin, addr string, slot int) int64 {
	t.Helper()
	n, _ := mustDo(t, adm, addr, "cluster", "countkeysinslot", slot).(int64)
	return n
}

// slotKeys groups the test keys by slot.
func slotKeys(want map[string]string) map[int][]string {
	out := map[int][]string{}
	for k := range want {
		out[history.Keyslot(k)] = append(out[history.Keyslot(k)], k)
	}
	return out
}

// TestHealReassertsOnlyItsOwnLostSlot builds the end state of the epoch
// race by hand: redline moved an empty slot from a to b, then b and c
// route it back to a while a routes it to b, so no primary claims it.
// The end phase gives it back to b (the journalled destination) the way
// redis-cli finishes a migration; a slot redline never moved and that is
// left in the same state is not touched.
func TestHealReassertsOnlyItsOwnLostSlot(t *testing.T) {
	c, mover, adm, journal := startMover(t, 3, 0)
	ctx := context.Background()
	tp, err := adm.Topology(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	prim := tp.Primaries()
	a, b, other := prim[0], prim[1], prim[2]
	ours, theirs := a.Slots[0], a.Slots[1]
	if _, err := mover.MoveSlots(ctx, []int{ours}, a, b, prim); err != nil {
		t.Fatal(err)
	}
	if err := clusteradmin.WaitClusterConverged(ctx, cluster.Credentials{}, c, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	admin := func(addr string, args ...any) { mustDo(t, adm, addr, args...) }
	// ours: b and other route it to a, a routes it to b.
	admin(b.Node.Addr, "cluster", "setslot", ours, "node", a.ID)
	admin(other.Node.Addr, "cluster", "setslot", ours, "node", a.ID)
	// theirs (never moved by redline): a gives it to b, nobody else knows.
	admin(a.Node.Addr, "cluster", "setslot", theirs, "node", b.ID)
	claimed := func(slot int) string {
		tp, _ := adm.Topology(ctx, c)
		for _, m := range tp.Members {
			if m.Primary && slices.Contains(m.Slots, slot) {
				return m.ID
			}
		}
		return ""
	}
	if claimed(ours) != "" || claimed(theirs) != "" {
		t.Fatalf("setup: slot %d claimed by %q, slot %d by %q", ours, claimed(ours), theirs, claimed(theirs))
	}
	done, err := mover.ReassertMoves(ctx)
	if err != nil || len(done) != 1 || done[0].Slot != ours {
		t.Fatalf("reasserted %v: %v", done, err)
	}
	ownedEverywhere(t, c, ours, b.ID)
	if claimed(theirs) != "" {
		t.Fatalf("slot %d, never moved by redline, was claimed by %s", theirs, claimed(theirs))
	}
	steps := journal.Steps()
	if last := steps[len(steps)-1]; last.Kind != "reassert" || last.State != "done" || last.To != b.ID {
		t.Fatalf("journal ends with %+v", last)
	}
	// Put theirs back so that the cluster is whole again for the cleanup.
	admin(a.Node.Addr, "cluster", "setslot", theirs, "node", a.ID)
}

// ownedEverywhere waits until every node says slot belongs to id.
func ownedEverywhere(t *testing.T, c nodes, slot int, id string) {
	t.Helper()
	localcluster.Eventually(t, 20*time.Second, func() string {
		for _, n := range c {
			text, err := clusteradmin.ClusterNodesText(context.Background(), cluster.Credentials{}, n.Addr)
			if err != nil {
				return err.Error()
			}
			ls, err := cluster.ParseNodes(text)
			if err != nil {
				return err.Error()
			}
			if o := cluster.OwnerOf(ls, slot); o != id {
				return fmt.Sprintf("%s says slot %d belongs to %q, want %s", n.Name, slot, o, id)
			}
		}
		return ""
	})
}

// TestMoveKeysNeverOverwritesADifferentCopy builds what a source failover
// leaves on Redis 7.0 (findings F007/F004): the destination a holds a key's
// full copy, and b, another primary, a fresh partial copy of the same key
// (written there with ASKING into an importing slot). Moving b's keys to a
// must not replace a's copy: it stops with ErrConflictingCopies and both
// copies stay. An equal copy (a MIGRATE repeated after a lost reply) is
// replaced harmlessly and leaves b.
func TestMoveKeysNeverOverwritesADifferentCopy(t *testing.T) {
	c, mover, adm, _ := startMover(t, 3, 0)
	ctx := context.Background()
	tp, err := adm.Topology(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	prim := tp.Primaries()
	a, b := prim[0], prim[1]
	slot := a.Slots[0]
	key := keysInSlot("conflict", slot, 1)[0]
	mustDo(t, adm, a.Node.Addr, "sadd", key, "1", "2", "3")
	mustDo(t, adm, b.Node.Addr, "cluster", "setslot", slot, "importing", a.ID)
	if err := adm.Pipe(ctx, b.Node.Addr, [][]any{{"asking"}, {"sadd", key, "4"}}, nil); err != nil {
		t.Fatal(err)
	}
	_, _, err = mover.MoveKeys(ctx, slot, b, a, 0)
	if !errors.Is(err, clusteradmin.ErrConflictingCopies) {
		t.Fatalf("MoveKeys of a different copy: %v, want ErrConflictingCopies", err)
	}
	if n, _ := mustDo(t, adm, a.Node.Addr, "scard", key).(int64); n != 3 {
		t.Fatalf("the destination's copy has %d members after the refused move, want its 3", n)
	}
	if countKeys(t, adm, b.Node.Addr, slot) != 1 {
		t.Fatalf("the other copy left b")
	}
	// Now an equal copy on b: replaced harmlessly, b emptied.
	if err := adm.Pipe(ctx, b.Node.Addr, [][]any{{"asking"}, {"del", key}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := adm.Pipe(ctx, b.Node.Addr, [][]any{{"asking"}, {"sadd", key, "1", "2", "3"}}, nil); err != nil {
		t.Fatal(err)
	}
	moved, empty, err := mover.MoveKeys(ctx, slot, b, a, 0)
	if err != nil || moved != 1 || !empty {
		t.Fatalf("MoveKeys of an equal copy: moved %d empty %v: %v", moved, empty, err)
	}
	if n, _ := mustDo(t, adm, a.Node.Addr, "scard", key).(int64); n != 3 || countKeys(t, adm, b.Node.Addr, slot) != 0 {
		t.Fatalf("after the equal copy's move: a has %d members, b %d keys", n, countKeys(t, adm, b.Node.Addr, slot))
	}
	mustDo(t, adm, b.Node.Addr, "cluster", "setslot", slot, "stable")
}

// TestMoveKeysSetsAsideADifferentCopy: on a cluster redline created
// (SetAsideConflicts) a key with different copies on both sides keeps the
// destination's copy and gets the source's beside it on the destination,
// in the same slot, with its TTL, journalled; the slot's other keys move.
// The seed-99 schedule of TestHealAfterKillOfStormDestination needs it: a
// TAKEOVER promoted a replica that had not resynced with its primary, so
// it still held traffic keys its primary had already migrated away, with
// older values; the end phase met them (n2 20, the owner n1 279) and
// stopped with ErrConflictingCopies, leaving the slot IMPORTING.
func TestMoveKeysSetsAsideADifferentCopy(t *testing.T) {
	c, mover, adm, j := startMover(t, 3, 0)
	mover.SetAsideConflicts = true
	ctx := context.Background()
	tp, err := adm.Topology(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	prim := tp.Primaries()
	a, b := prim[0], prim[1]
	slot := a.Slots[0]
	keys := keysInSlot("conflict", slot, 2)
	key, other := keys[0], keys[1]
	mustDo(t, adm, a.Node.Addr, "set", key, "279")
	mustDo(t, adm, b.Node.Addr, "cluster", "setslot", slot, "importing", a.ID)
	if err := adm.Pipe(ctx, b.Node.Addr, [][]any{{"asking"}, {"set", key, "20", "px", 600000}, {"asking"}, {"set", other, "x"}}, nil); err != nil {
		t.Fatal(err)
	}
	moved, empty, err := mover.MoveKeys(ctx, slot, b, a, 0)
	if err != nil || !empty {
		t.Fatalf("MoveKeys with a different copy set aside: moved %d empty %v: %v", moved, empty, err)
	}
	aside := history.AsideName(key, b.Node.Name)
	if history.Keyslot(aside) != slot {
		t.Fatalf("%s is in slot %d, not %d", aside, history.Keyslot(aside), slot)
	}
	if v := mustDo(t, adm, a.Node.Addr, "get", key); v != "279" {
		t.Fatalf("the destination's copy of %s is %v, want its own 279", key, v)
	}
	if v := mustDo(t, adm, a.Node.Addr, "get", aside); v != "20" {
		t.Fatalf("the source's copy set aside as %s is %v, want 20", aside, v)
	}
	if ttl, _ := mustDo(t, adm, a.Node.Addr, "pttl", aside).(int64); ttl <= 0 || ttl > 600000 {
		t.Fatalf("the set-aside copy's TTL is %d ms, want the source's (<= 600000)", ttl)
	}
	if v := mustDo(t, adm, a.Node.Addr, "get", other); v != "x" || countKeys(t, adm, b.Node.Addr, slot) != 0 {
		t.Fatalf("the slot's other key: %v on the destination, %d keys left on the source", v, countKeys(t, adm, b.Node.Addr, slot))
	}
	var step *clusteradmin.Step
	for _, s := range j.Steps() {
		if s.Kind == "set-aside" {
			step = &s
		}
	}
	if step == nil || step.State != "done" || len(step.Keys) != 1 || step.Keys[0] != key || step.Aside[0] != aside {
		t.Fatalf("journal: set-aside step %+v", step)
	}

	// The key forks again on the same node: its copy gets the next name,
	// and the first set-aside copy survives (RESTORE REPLACE under the
	// same name destroyed it).
	if err := adm.Pipe(ctx, b.Node.Addr, [][]any{{"asking"}, {"set", key, "21"}}, nil); err != nil {
		t.Fatal(err)
	}
	if moved, empty, err := mover.MoveKeys(ctx, slot, b, a, 0); err != nil || !empty {
		t.Fatalf("the second set-aside: moved %d empty %v: %v", moved, empty, err)
	}
	second := history.AsideName(key, b.Node.Name+"-2")
	if v := mustDo(t, adm, a.Node.Addr, "get", aside); v != "20" {
		t.Fatalf("the first set-aside copy %s is %v after the second, want 20", aside, v)
	}
	if v := mustDo(t, adm, a.Node.Addr, "get", second); v != "21" {
		t.Fatalf("the second set-aside copy %s is %v, want 21", second, v)
	}
	if k, from, ok := history.AsideOf(second, "conflict:"); !ok || k != key || from != b.Node.Name+"-2" {
		t.Fatalf("AsideOf(%s) = %q %q %v", second, k, from, ok)
	}
	mustDo(t, adm, b.Node.Addr, "cluster", "setslot", slot, "stable")
}

// TestMoveKeysSkipsAKeyTheMigratingSourceNoLongerHas: comparing copies
// after BUSYKEY asks the source for each key of the batch; a key that
// moved meanwhile is answered with ASK by a MIGRATING source (even after
// ASKING), which stopped a repair in F004's rerun ("DUMP ... ASK 12437").
func TestMoveKeysSkipsAKeyTheMigratingSourceNoLongerHas(t *testing.T) {
	c, mover, adm, _ := startMover(t, 3, 0)
	ctx := context.Background()
	tp, err := adm.Topology(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	prim := tp.Primaries()
	a, b := prim[0], prim[1]
	slot := a.Slots[0]
	key := keysInSlot("gone", slot, 1)[0]
	mustDo(t, adm, b.Node.Addr, "cluster", "setslot", slot, "importing", a.ID)
	mustDo(t, adm, a.Node.Addr, "cluster", "setslot", slot, "migrating", b.ID)
	defer func() {
		mustDo(t, adm, a.Node.Addr, "cluster", "setslot", slot, "stable")
		mustDo(t, adm, b.Node.Addr, "cluster", "setslot", slot, "stable")
	}()
	conflicts, err := clusteradmin.DifferingCopies(mover, ctx, a, b, []any{key})
	if err != nil || len(conflicts) != 0 {
		t.Fatalf("a key the migrating source does not have: conflicts %v, %v", conflicts, err)
	}
}

// TestRepairGivesTheImportingDestinationAnOwner builds what a failover of
// the source's shard mid-move leaves on Redis 7.0 (finding F007, end phase
// not healed): the destination b, IMPORTING the slot, has no owner of it
// in its own slot map (its peers drop a primary's slots when it turns
// replica, and an importing node takes no owner of the slot from gossip),
// so b is cluster_state:fail and refuses RESTORE-ASKING with "CLUSTERDOWN
// Hash slot not served" for as long as the slot stays open. CLUSTER
// DELSLOTS on b forces that map. The repair (keys on both sides: finish on
// b) must first give the slot its owner back on b, journalled, then move
// the keys; the old repair retried MIGRATE for 5 s and left it open.
//
// It runs on redis-server and, when REDLINE_BINARY is set, on reference
// server processes (the reference follows Redis 7.0 here).
func TestRepairGivesTheImportingDestinationAnOwner(t *testing.T) {
	onEachServer(t, repairGivesAnOwner)
}

// onEachServer runs test on redis-server and, when REDLINE_BINARY is set
// (make test sets it), on the reference server.
func onEachServer(t *testing.T, test func(t *testing.T, binary string)) {
	t.Run("redis-server", func(t *testing.T) { test(t, "") })
	bin := os.Getenv("REDLINE_BINARY")
	if bin == "" {
		t.Log("REDLINE_BINARY is not set: not run on the reference server")
		return
	}
	t.Run("reference", func(t *testing.T) {
		// localcluster starts a redis-server-style binary; the reference
		// server is the "server" subcommand of redline.
		wrapper := filepath.Join(t.TempDir(), "reference-server")
		if err := os.WriteFile(wrapper, []byte("#!/bin/sh\nexec \""+bin+"\" server \"$@\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		test(t, wrapper)
	})
}

func repairGivesAnOwner(t *testing.T, binary string) {
	c, mover, adm, journal := startMoverOn(t, 3, 0, binary)
	ctx := context.Background()
	tp, err := adm.Topology(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	prim := tp.Primaries()
	a, b := prim[0], prim[1]
	slot := a.Slots[0]
	keys := keysInSlot("orphan", slot, 4)
	for _, k := range keys[:3] {
		mustDo(t, adm, a.Node.Addr, "set", k, "on-a")
	}
	if err := mover.OpenMigration(ctx, slot, a, b, false); err != nil {
		t.Fatal(err)
	}
	if err := adm.Pipe(ctx, b.Node.Addr, [][]any{{"asking"}, {"set", keys[3], "on-b"}}, nil); err != nil {
		t.Fatal(err)
	}
	mustDo(t, adm, b.Node.Addr, "cluster", "delslots", slot)
	localcluster.Eventually(t, 10*time.Second, func() string {
		info, _ := mustDo(t, adm, b.Node.Addr, "cluster", "info").(string)
		if !strings.Contains(info, "cluster_state:fail") {
			return "setup: b is not cluster_state:fail after losing the slot's owner"
		}
		return ""
	})
	how, err := mover.RepairSlot(ctx, slot)
	if err != nil || how != "finished" {
		t.Fatalf("repair: %q, %v", how, err)
	}
	ownedEverywhere(t, c, slot, b.ID)
	if n := countKeys(t, adm, b.Node.Addr, slot); n != 4 {
		t.Fatalf("b holds %d keys of slot %d, want 4", n, slot)
	}
	assigned := false
	for _, s := range journal.Steps() {
		if s.Kind == "assign" && s.State == "done" && s.From == a.ID && s.To == b.ID && slices.Equal(s.Slots, []int{slot}) {
			assigned = true
		}
	}
	if !assigned {
		t.Fatalf("no journalled assign step of slot %d to %s on %s: %+v", slot, a.Node.Name, b.Node.Name, journal.Steps())
	}
}
