//go:build plantedbugs

package server

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/server/cluster"
	"github.com/redline-dev/redline/server/internal/planted"
)

// The planted-bug study's defects, each shown to change what the server
// does (go test -tags plantedbugs ./server/ -run Planted). Each test runs
// its scenario with the defect off (what the shipped server does) and on.

func plant(t *testing.T, b planted.Bug) {
	t.Helper()
	planted.Set(b, true)
	t.Cleanup(func() { planted.Set(b, false) })
}

// replicaPair is a primary and a replica of it, in sync.
func replicaPair(t *testing.T) (m, r *Server, mc, rc *redis.Client) {
	t.Helper()
	m, r = startExtServer(t), startExtServer(t)
	mc, rc = newClient(t, m, 2), newClient(t, r, 2)
	host, port, _ := strings.Cut(m.Addr().String(), ":")
	if err := rc.Do(ctx, "replicaof", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	waitSynced(t, mc, rc)
	return
}

// waitSynced waits until the replica's link is up and its offset is the
// primary's.
func waitSynced(t *testing.T, mc, rc *redis.Client) {
	t.Helper()
	field := func(info, k string) string {
		for _, l := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(l, k+":"); ok {
				return v
			}
		}
		return ""
	}
	waitFor(t, "replica in sync", 15*time.Second, func() bool {
		mi, ri := mc.Info(ctx, "replication").Val(), rc.Info(ctx, "replication").Val()
		return field(ri, "master_link_status") == "up" && field(ri, "slave_repl_offset") == field(mi, "master_repl_offset")
	})
}

func TestPlantedReplSkipIncrby(t *testing.T) {
	for _, on := range []bool{false, true} {
		if on {
			plant(t, planted.ReplSkipIncrby)
		}
		_, _, mc, rc := replicaPair(t)
		mc.IncrBy(ctx, "c", 5)
		mc.Set(ctx, "after", 1, 0) // a later write the replica does get
		waitFor(t, "later write replicated", 10*time.Second, func() bool { return rc.Get(ctx, "after").Val() == "1" })
		got := rc.Get(ctx, "c").Val()
		if want := map[bool]string{false: "5", true: ""}[on]; got != want {
			t.Fatalf("defect %v: the replica's counter is %q, want %q", on, got, want)
		}
	}
}

func TestPlantedReplicaReorder(t *testing.T) {
	for _, on := range []bool{false, true} {
		if on {
			plant(t, planted.ReplicaReorder)
		}
		_, _, mc, rc := replicaPair(t)
		stale := 0
		for i := 0; i < 50; i++ {
			k := "k" + strconv.Itoa(i)
			p := mc.Pipeline()
			p.Set(ctx, k, "first", 0)
			p.Set(ctx, k, "second", 0)
			if _, err := p.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		waitSynced(t, mc, rc)
		for i := 0; i < 50; i++ {
			if rc.Get(ctx, "k"+strconv.Itoa(i)).Val() != "second" {
				stale++
			}
		}
		if on != (stale > 0) {
			t.Fatalf("defect %v: %d of 50 keys end with the older write on the replica", on, stale)
		}
		t.Logf("defect %v: %d of 50 keys end with the older write on the replica", on, stale)
	}
}

func TestPlantedPsyncWrongOffset(t *testing.T) {
	for _, on := range []bool{false, true} {
		if on {
			plant(t, planted.PsyncWrongOffset)
		}
		_, _, mc, rc := replicaPair(t)
		for i := 0; i < 10; i++ {
			mc.IncrBy(ctx, "c", 1)
		}
		waitSynced(t, mc, rc)
		// Break the link: the replica reconnects with PSYNC.
		if err := mc.Do(ctx, "client", "kill", "type", "replica").Err(); err != nil {
			t.Fatal(err)
		}
		// The defect's replica ends one command ahead of its primary's
		// offset, so wait for the value rather than equal offsets.
		want := map[bool]string{false: "10", true: "11"}[on]
		mc.Set(ctx, "after", 1, 0)
		waitFor(t, "the replica reconnected", 10*time.Second, func() bool {
			return rc.Get(ctx, "after").Val() == "1" && strings.Contains(rc.Info(ctx, "replication").Val(), "master_link_status:up")
		})
		got := rc.Get(ctx, "c").Val()
		if got != want {
			t.Fatalf("defect %v: the replica's counter is %s after a partial resync, want %s (the primary's is %s)", on, got, want, mc.Get(ctx, "c").Val())
		}
	}
}

func TestPlantedWaitEarlyAck(t *testing.T) {
	for _, on := range []bool{false, true} {
		if on {
			plant(t, planted.WaitEarlyAck)
		}
		s := startExtServer(t)
		repl := syncAsReplica(t, s.Addr().String()) // reads, never acknowledges
		_ = repl
		c := newClient(t, s, 2)
		c.Set(ctx, "k", "v", 0)
		n, err := c.Do(ctx, "wait", 1, 200).Int()
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{false: 0, true: 1}[on]; n != want {
			t.Fatalf("defect %v: WAIT 1 counted %d replicas of one that never acknowledged, want %d", on, n, want)
		}
	}
}

func TestPlantedExecIgnoresWatch(t *testing.T) {
	for _, on := range []bool{false, true} {
		if on {
			plant(t, planted.ExecIgnoresWatch)
		}
		s := startServer(t)
		a, b := newClient(t, s, 2), newClient(t, s, 2)
		err := a.Watch(ctx, func(tx *redis.Tx) error {
			b.Set(ctx, "w", "changed", 0)
			_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, "w", "tx", 0)
				return nil
			})
			return err
		}, "w")
		if on != (err == nil) {
			t.Fatalf("defect %v: EXEC after the watched key changed: %v", on, err)
		}
	}
}

func TestPlantedRDBDropSets(t *testing.T) {
	for _, on := range []bool{false, true} {
		if on {
			plant(t, planted.RDBDropSets)
		}
		s := startServer(t, "--enable-debug-command", "yes")
		c := newClient(t, s, 2)
		c.SAdd(ctx, "s", 1, 2, 3)
		c.Set(ctx, "str", "v", 0)
		if err := c.Do(ctx, "debug", "reload").Err(); err != nil {
			t.Fatal(err)
		}
		n := c.SCard(ctx, "s").Val()
		if c.Get(ctx, "str").Val() != "v" || on != (n == 0) {
			t.Fatalf("defect %v: after DEBUG RELOAD the set has %d members, the string %q", on, n, c.Get(ctx, "str").Val())
		}
	}
}

func TestPlantedMigrateLoseLastKey(t *testing.T) {
	for _, on := range []bool{false, true} {
		if on {
			plant(t, planted.MigrateLoseLastKey)
		}
		src, dst := startServer(t), startServer(t)
		sc, dc := newClient(t, src, 2), newClient(t, dst, 2)
		sc.Set(ctx, "a", 1, 0)
		sc.Set(ctx, "b", 2, 0)
		host, port, _ := strings.Cut(dst.Addr().String(), ":")
		if err := sc.Do(ctx, "migrate", host, port, "", 0, 5000, "keys", "a", "b").Err(); err != nil {
			t.Fatal(err)
		}
		srcKeys, dstKeys := sc.DBSize(ctx).Val(), dc.DBSize(ctx).Val()
		if want := map[bool]int64{false: 2, true: 1}[on]; srcKeys != 0 || dstKeys != want {
			t.Fatalf("defect %v: after MIGRATE of 2 keys the source has %d, the target %d (want 0 and %d)", on, srcKeys, dstKeys, want)
		}
	}
}

func TestPlantedFailoverNoPause(t *testing.T) {
	for _, on := range []bool{false, true} {
		if on {
			plant(t, planted.FailoverNoPause)
		}
		s, c := startOneNodeCluster(t)
		s.Lock()
		s.applyEvent(cluster.Event{Kind: cluster.EventPauseWrites, Until: time.Now().Add(2 * time.Second)})
		s.Unlock()
		done := make(chan error, 1)
		go func() { done <- c.Set(ctx, "{a}k", "v", 0).Err() }()
		select {
		case err := <-done:
			if !on {
				t.Fatalf("a write during the manual failover's pause was served: %v", err)
			}
		case <-time.After(500 * time.Millisecond):
			if on {
				t.Fatal("the write waited although the defect serves writes during the pause")
			}
			<-done
		}
	}
}
