package nemesis

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/history"
)

// recordingCluster adds a Partitioner and a Clock that only record calls.
type recordingCluster struct {
	*localCluster
	mu      sync.Mutex
	cuts    map[string][]string
	clients map[string]bool
	heals   int
	offsets map[string][]time.Duration
}

func (r *recordingCluster) Cut(_ context.Context, node string, peers []string, clients bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cuts[node] = append(r.cuts[node], peers...)
	r.clients[node] = clients
	return nil
}

func (r *recordingCluster) Heal(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.heals++
	r.cuts, r.clients = map[string][]string{}, map[string]bool{}
	return nil
}

func (r *recordingCluster) SetClockOffset(_ context.Context, node string, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.offsets[node] = append(r.offsets[node], d)
	return nil
}

func TestPartitionAndClockCallTheRuntime(t *testing.T) {
	c := startLocal(t, 6, 1)
	rc := &recordingCluster{localCluster: c, cuts: map[string][]string{}, clients: map[string]bool{}, offsets: map[string][]time.Duration{}}
	nem, err := New([]string{"partition", "clock"}, rc, Options{Interval: time.Second, Seed: 1,
		NodeTimeout: testNodeTimeout, PartitionClients: true, Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	// New probes the clock with a zero offset on the first node.
	if offs := rc.offsets["n1"]; !slices.Equal(offs, []time.Duration{0}) {
		t.Fatalf("clock probe: %v", rc.offsets)
	}
	rc.offsets = map[string][]time.Duration{}
	rec := &memRecorder{}
	ctx := context.Background()
	a := nem.fire(ctx, rec, Step{Fault: "partition", Mode: "isolate-primary", Seed: 5})
	if a == nil || len(rc.cuts) != 6 {
		t.Fatalf("isolate-primary cut %v", rc.cuts)
	}
	isolated := a.detail["minority"].([]string)[0]
	if len(rc.cuts[isolated]) != 5 || !rc.clients[isolated] {
		t.Fatalf("isolated %s: cut from %v, clients %v", isolated, rc.cuts[isolated], rc.clients[isolated])
	}
	for node, peers := range rc.cuts {
		if node != isolated && (!slices.Equal(peers, []string{isolated}) || rc.clients[node]) {
			t.Fatalf("%s cut from %v (clients %v), want only %s", node, peers, rc.clients[node], isolated)
		}
	}
	if err := nem.finish(ctx, rec, a); err != nil || rc.heals != 1 || len(rc.cuts) != 0 {
		t.Fatalf("stop: %v, heals %d", err, rc.heals)
	}

	a = nem.fire(ctx, rec, Step{Fault: "clock", Mode: "strobe", Seed: 6})
	time.Sleep(1200 * time.Millisecond)
	if err := nem.finish(ctx, rec, a); err != nil {
		t.Fatal(err)
	}
	node := a.nodes[0]
	offs := rc.offsets[node]
	// Strobing: at least three changes, alternating, ending at zero.
	if len(offs) < 4 || offs[len(offs)-1] != 0 || offs[0] == 0 || offs[1] != 0 {
		t.Fatalf("strobe offsets of %s: %v", node, offs)
	}
	a = nem.fire(ctx, rec, Step{Fault: "clock", Mode: "bump", Seed: 7})
	node = a.nodes[0]
	if offs := rc.offsets[node]; offs[len(offs)-1] == 0 {
		t.Fatalf("bump left offset 0: %v", offs)
	}
	// Heal resets what was left skewed (the bump is still pending).
	if err := nem.Heal(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if offs := rc.offsets[node]; offs[len(offs)-1] != 0 {
		t.Fatalf("heal left %s at %v", node, offs[len(offs)-1])
	}
}

// TestRunFollowsThePlanAndHeals runs a real schedule with traffic, checks that
// the recorded faults follow Plan and that Heal leaves a converged cluster with
// every key intact.
func TestRunFollowsThePlanAndHeals(t *testing.T) { runFollowsThePlan(t, planSeed()) }

// planSeed is the seed of TestRunFollowsThePlanAndHeals: 99 until the
// schedule gave each kind its share and each kind's first step a primary
// (issue 23); seed 99's plan now has its own test,
// TestHealAfterKillOfStormDestination. REDLINE_PLAN_SEED overrides.
func planSeed() int64 {
	if s := os.Getenv("REDLINE_PLAN_SEED"); s != "" {
		n, _ := strconv.ParseInt(s, 10, 64)
		return n
	}
	return 100
}

// TestHealAfterKillOfStormDestination is the schedule of seed 99: pause,
// failover force n5 over n2, storm, kill n5, storm, failover takeover n2
// over n5, pause, kill of a majority of primaries. Read from its runs'
// AOFs and logs (issue 22): the FORCE left n2 (the old primary, now a
// replica) needing a full sync, which redis-server delays 5 s
// (repl-diskless-sync-delay); the storm moved keys onto n5; the kill of
// n5 restarted that sync; the TAKEOVER then promoted n2 while it still had
// nothing of n5's since the FORCE, and n5 full-synced from it: the keys
// moved onto n5 in between were gone (2-3 of 1,000 in 3 of 3 runs), and
// n2 held old copies of keys n5 had moved away. The loss is the fault's
// (TAKEOVER skips the catch-up, as documented): the failover records the
// replica's sync state (replica_in_sync), and the test accepts a missing
// key only in a shard that such a failover struck. The old copies met the
// end phase as conflicting copies (the owner's traffic:1 279, n2's 20):
// it stopped, slots left IMPORTING (3 of 4 runs), until
// SetAsideConflicts; the end phase must now heal. In one CI run (2026-12-03)
// the TAKEOVER left n5 a primary of the slots the storm had just given it,
// with stale keys of the ones it lost; the kill of a majority restarted it
// and Redis's start-up check set ~360 slots IMPORTING from n2 itself: the
// end phase stopped at them ("not by redline") until the kill fault
// adopted what a restart opens (TestKillAdoptsTheImportsItsRestartOpens).
func TestHealAfterKillOfStormDestination(t *testing.T) { runFollowsThePlan(t, 99) }

func runFollowsThePlan(t *testing.T, seed int64) {
	c := startLocal(t, 6, 1)
	pc := procCluster{c}
	want := fillKeys(t, c, 1000)
	names := []string{"kill", "pause", "migrate", "failover"}
	nem, err := New(names, pc, Options{Interval: 1500 * time.Millisecond, Seed: seed, NodeTimeout: testNodeTimeout, Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	rec := &memRecorder{}
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Second)
	defer cancel()
	// Traffic on other keys while faults go on; errors are expected.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.addrs(), DisableIdentity: true,
			ReadTimeout: 500 * time.Millisecond, MaxRedirects: 8})
		defer cc.Close()
		for i := 0; ctx.Err() == nil; i++ {
			cc.Incr(ctx, fmt.Sprintf("traffic:%d", i%200))
		}
	}()
	if err := nem.Run(ctx, rec); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err := nem.Heal(context.Background(), rec); err != nil {
		t.Fatalf("heal: %v", err)
	}
	if nem.Current() != "" {
		t.Fatalf("Current = %q after heal", nem.Current())
	}
	ops := rec.all()
	var fired []string
	open := ""
	for i, op := range ops {
		if op.Process != history.Nemesis {
			t.Fatalf("entry %d is not a nemesis entry", i)
		}
		d := detailOf(t, op)
		switch {
		case op.Type == history.Invoke:
			if open != "" {
				t.Fatalf("entry %d: %s invoked while %s is open", i, op.F, open)
			}
			open = op.F
			if len(op.F) > 6 && op.F[:6] == "start-" {
				fired = append(fired, op.F[6:]+"/"+d["mode"].(string))
			}
		case op.Type == history.Info && open != "":
			if op.F != open {
				t.Fatalf("entry %d: %s completes open %s", i, op.F, open)
			}
			open = ""
		case op.Type == history.Info && d["skipped"] != nil:
			fired = append(fired, op.F[6:]+"/"+d["mode"].(string))
		default:
			t.Fatalf("entry %d: unexpected %+v", i, op)
		}
	}
	if open != "" {
		t.Fatalf("history ends with %s open", open)
	}
	if len(fired) < 3 {
		t.Fatalf("only %d faults fired in 12 s at a 1.5 s interval: %v", len(fired), fired)
	}
	for i, st := range Plan(names, seed, len(fired)) {
		if fired[i] != st.Fault+"/"+st.Mode {
			t.Fatalf("fault %d was %s, plan says %s/%s (fired %v)", i, fired[i], st.Fault, st.Mode, fired)
		}
	}
	last := ops[len(ops)-1]
	if last.F != "heal" || detailOf(t, last)["converged"] != true {
		t.Fatalf("last entry %s %s", last.F, last.DetailRaw())
	}
	t.Logf("faults fired: %v", fired)
	checkKeysLostOnlyToUnsyncedPromotions(t, c, want, ops)
}

// checkKeysLostOnlyToUnsyncedPromotions reads every key of want back; a
// key that is missing or different must be served at the end by a node of
// a shard in which a FORCE or TAKEOVER promoted a replica that was not in
// sync (the failover's replica_in_sync: false): what such a replica lacked
// is lost by design. Any other loss fails the test.
func checkKeysLostOnlyToUnsyncedPromotions(t *testing.T, c *localCluster, want map[string]string, ops []history.Op) {
	t.Helper()
	struck := map[string]bool{} // node names of the shards such failovers struck
	var shards []string
	for i, op := range ops {
		if op.F != "start-failover" || op.Type != history.Info || i == 0 {
			continue
		}
		d, inv := detailOf(t, op), detailOf(t, ops[i-1])
		if d["replica_in_sync"] != false || d["promoted"] != true {
			continue
		}
		for _, k := range []string{"replica", "primary"} {
			if n, ok := inv[k].(string); ok {
				struck[n] = true
			}
		}
		shards = append(shards, fmt.Sprintf("%v over %v (link %v, %v bytes behind)", inv["replica"], inv["primary"], d["replica_link"], d["replica_lag_bytes"]))
	}
	ctx := context.Background()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.addrs(), DisableIdentity: true, MaxRedirects: 8})
	defer cc.Close()
	slots, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, n := range c.Nodes() {
		names[n.Addr] = n.Name
	}
	ownerOf := func(slot int) string {
		for _, r := range slots {
			if slot >= int(r.Start) && slot <= int(r.End) && len(r.Nodes) > 0 {
				return names[r.Nodes[0].Addr]
			}
		}
		return ""
	}
	var lost []string
	for k, v := range want {
		got, err := cc.Get(ctx, k).Result()
		if err == nil && got == v {
			continue
		}
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatalf("GET %s: %v", k, err)
		}
		owner := ownerOf(history.Keyslot(k))
		if !struck[owner] {
			t.Fatalf("GET %s = %q (%v), want %q; its slot's owner %s is in no shard an unsynced FORCE/TAKEOVER struck (%v)", k, got, err, v, owner, shards)
		}
		lost = append(lost, k+" on "+owner)
	}
	if len(lost) > 0 {
		t.Logf("%d of %d keys lost to promotions of replicas not in sync (%s): %v", len(lost), len(want), strings.Join(shards, "; "), lost)
	}
}
