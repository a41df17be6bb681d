package clusteradmin_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// An abort-stable move (opened to be undone) whose importing side got
// keys by ASK writes is finished, not undone: undoing needs the owner
// STABLE before the keys come back (a MIGRATING owner answers their
// RESTORE-ASKING with ASK), and in that gap the owner answers a read of
// such a key with nil. A client reads those keys all through the repair;
// the old undo (7475dca's order) let it read nil, the CI run of
// 2026-12-02 saw it as a stale read and a write there as a second copy.
func TestRepairOfAnAbortStableNeverServesAKeyAsMissing(t *testing.T) {
	onEachServer(t, abortStableNeverServesMissing)
}

func abortStableNeverServesMissing(t *testing.T, binary string) {
	c, mover, adm, _ := startMoverOn(t, 3, 0, binary)
	ctx := context.Background()
	tp, err := adm.Topology(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	prim := tp.Primaries()
	a, b := prim[0], prim[1]
	slot := a.Slots[0]
	keys := keysInSlot("undo", slot, 16)
	for _, k := range keys[:8] {
		mustDo(t, adm, a.Node.Addr, "set", k, "on-a")
	}
	if err := mover.OpenMigration(ctx, slot, a, b, true); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys[8:] {
		if err := adm.Pipe(ctx, b.Node.Addr, [][]any{{"asking"}, {"set", k, "on-b"}}, nil); err != nil {
			t.Fatal(err)
		}
	}

	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.addrs(), MaxRedirects: 8})
	defer cc.Close()
	var stop atomic.Bool
	var missing, reads atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; !stop.Load(); i++ {
				k := keys[i%len(keys)]
				rctx, cancel := context.WithTimeout(ctx, time.Second)
				_, err := cc.Get(rctx, k).Result()
				cancel()
				if err == redis.Nil {
					missing.Add(1)
				} else if err == nil {
					reads.Add(1)
				}
			}
		}()
	}
	time.Sleep(200 * time.Millisecond) // readers under way on the open slot
	how, err := mover.RepairSlot(ctx, slot)
	time.Sleep(200 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	if reads.Load() == 0 {
		t.Fatal("no read succeeded during the repair: the test saw nothing")
	}
	if m := missing.Load(); m > 0 {
		t.Fatalf("%d reads of %d found an existing key missing during the repair", m, m+reads.Load())
	}
	if err != nil || how != "finished" {
		t.Fatalf("repair: %q, %v; want the move finished onto %s", how, err, b.Node.Name)
	}
	ownedEverywhere(t, c, slot, b.ID)
	if n := countKeys(t, adm, b.Node.Addr, slot); n != int64(len(keys)) {
		t.Fatalf("%s holds %d keys of slot %d, want all %d", b.Node.Name, n, slot, len(keys))
	}
}
