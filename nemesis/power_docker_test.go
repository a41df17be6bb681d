package nemesis_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/docker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/nemesis"
)

// TestDockerPowerAndDisk runs the power and disk faults against real Redis
// (Debian's redis-server in containers, appendonly yes, appendfsync no)
// whose data directories go through docker/faultfs: a power cut of a shard
// (its primary and its replica at once) loses acknowledged writes of that
// shard's keys and only of those; a full disk under a primary makes it
// refuse writes (MISCONF), and it accepts them again once the disk has room.
// A cluster started without the layer cannot take either fault.
func TestDockerPowerAndDisk(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	r, err := docker.New(docker.Options{Log: t.Logf, Form: clusteradmin.Form})
	if err != nil {
		t.Fatalf("this test needs Docker: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	cl, err := r.StartCluster(ctx, cluster.Spec{Target: "redis", Nodes: 6, Replicas: 1, NodeTimeout: time.Second,
		AppendOnly: true, FaultFS: true, ServerConfig: []string{"appendfsync no"},
		Name: fmt.Sprintf("nemesis-power-%d", time.Now().UnixNano()%1e6)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close(context.Background()) })
	nem, err := nemesis.New([]string{"power", "disk"}, cl, nemesis.Options{Interval: 2 * time.Second, Seed: 1, NodeTimeout: time.Second, Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	rec := &nemesis.MemRecorder{}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs(), DisableIdentity: true, MaxRedirects: 3, Protocol: 2})
	defer cc.Close()
	owner := map[string]string{} // key -> its primary's address when written
	for i := range 300 {
		k := fmt.Sprintf("k%d", i)
		if err := cc.Set(ctx, k, i, 0).Err(); err != nil {
			t.Fatal(err)
		}
		m, err := cc.MasterForKey(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		owner[k] = m.Options().Addr
	}

	stop := nem.FireForTest(ctx, rec, nemesis.Step{Fault: "power", Mode: "shard", Seed: 5})
	inv := rec.Last("start-power", history.Invoke)
	struck := inv.NodeList()
	d := nemesis.DetailOf(t, rec.Last("start-power", history.Info))
	if d["error"] != nil {
		t.Fatalf("power cut: %v", d["error"])
	}
	t.Logf("power cut of %v: %v", struck, d["lost"])
	if len(struck) != 2 {
		t.Fatalf("a shard of a 3+3 cluster is 2 nodes, the cut struck %v", struck)
	}
	addrOf := map[string]string{}
	for _, n := range cl.Nodes() {
		addrOf[n.Name] = n.Addr
	}
	shard := map[string]bool{addrOf[struck[0]]: true, addrOf[struck[1]]: true}
	if err := stop(ctx); err != nil {
		t.Fatalf("power on: %v", err)
	}
	cctx, ccancel := context.WithTimeout(ctx, 60*time.Second)
	defer ccancel()
	if err := clusteradmin.WaitConverged(cctx, cluster.Credentials{}, cl.Addrs()); err != nil {
		t.Fatalf("after the power cut: %v", err)
	}
	lost, inShard := 0, 0
	for k, addr := range owner {
		got, err := cc.Get(ctx, k).Result()
		switch {
		case err == redis.Nil:
			lost++
			if !shard[addr] {
				t.Errorf("%s was lost, but its primary %s had power", k, addr)
			}
		case err != nil:
			t.Fatalf("GET %s: %v", k, err)
		case got == "":
			t.Fatalf("GET %s: empty", k)
		}
		if shard[addr] {
			inShard++
		}
	}
	t.Logf("power cut of a shard with appendfsync no: %d of the shard's %d acknowledged writes lost", lost, inShard)
	if inShard == 0 || lost != inShard {
		t.Fatalf("lost %d of the shard's %d acknowledged writes, want all (written well within the 30 s writeback)", lost, inShard)
	}

	stop = nem.FireForTest(ctx, rec, nemesis.Step{Fault: "disk", Mode: "full", Seed: 2})
	full := rec.Last("start-disk", history.Invoke).NodeList()
	if len(full) != 1 {
		t.Fatalf("disk full struck %v", full)
	}
	var key string
	for k, addr := range owner {
		if addr == addrOf[full[0]] {
			key = k
		}
	}
	c := cluster.AdminClient(addrOf[full[0]])
	defer c.Close()
	nemesis.Eventually(t, 20*time.Second, func() string {
		err := c.Set(ctx, key, "during", 0).Err()
		if err != nil && strings.Contains(err.Error(), "MISCONF") {
			t.Logf("SET during the full disk: %v", err)
			return ""
		}
		return fmt.Sprintf("SET %s on %s with a full disk: %v, want MISCONF", key, full[0], err)
	})
	if err := stop(ctx); err != nil {
		t.Fatalf("disk repaired: %v", err)
	}
	nemesis.Eventually(t, 20*time.Second, func() string {
		if err := c.Set(ctx, key, "after", 0).Err(); err != nil {
			return fmt.Sprintf("SET %s on %s after the disk has room: %v", key, full[0], err)
		}
		return ""
	})
	if err := nem.Heal(ctx, rec); err != nil {
		t.Fatalf("heal: %v", err)
	}

	// Without the layer neither fault can be caused, and New says so.
	plain, err := r.StartCluster(ctx, cluster.Spec{Target: "redis", Nodes: 3, NodeTimeout: time.Second,
		Name: fmt.Sprintf("nemesis-nopower-%d", time.Now().UnixNano()%1e6)})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close(context.Background())
	if _, err := nemesis.New([]string{"power"}, plain, nemesis.Options{Interval: time.Second}); err == nil || !strings.Contains(err.Error(), "FUSE") {
		t.Fatalf("power on a cluster without the FUSE layer: %v", err)
	}
}
