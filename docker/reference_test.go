package docker

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
)

// TestReferenceCluster starts the reference flavour (the static redline
// binary FROM scratch, $REDLINE_BINARY: run `make build` first), checks that
// the cluster formed, SIGKILLs a primary, waits for its replica to be
// promoted with the data, and restarts the killed node, which must rejoin as
// a replica.
func TestReferenceCluster(t *testing.T) {
	r := newRuntime(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	name := uniqueName(t)
	cl, err := r.StartCluster(ctx, cluster.Spec{
		Target: "reference", Nodes: 6, Replicas: 1, NodeTimeout: time.Second, Name: name,
	})
	if err != nil {
		t.Fatalf("starting the reference cluster (needs a static redline binary: make build, REDLINE_BINARY): %v", err)
	}
	defer func() {
		if err := cl.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
		if l := leftovers(t, name); len(l) > 0 {
			t.Errorf("left after Close: %v", l)
		}
	}()
	nodes := cl.Nodes()
	if len(nodes) != 6 {
		t.Fatalf("%d nodes", len(nodes))
	}
	for _, n := range nodes {
		if st, slots := clusterInfo(t, ctx, n.Addr); st != "ok" || slots != "16384" {
			t.Fatalf("%s: cluster_state %s, slots ok %s", n.Name, st, slots)
		}
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs(), DisableIdentity: true, MaxRedirects: 3, Protocol: 2})
	defer cc.Close()
	for i := 0; i < 300; i++ {
		if err := cc.Set(ctx, "key"+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	role := func(addr string) string {
		c := rdb(addr)
		defer c.Close()
		v, err := c.Do(ctx, "role").Slice()
		if err != nil || len(v) == 0 {
			return fmt.Sprintf("? (%v)", err)
		}
		return fmt.Sprint(v[0])
	}
	replInfo := func(addr string) string {
		c := rdb(addr)
		defer c.Close()
		s, _ := c.Info(ctx, "replication").Result()
		return s
	}
	// A primary and its replica.
	var victim, replica cluster.Node
	for _, n := range nodes {
		if role(n.Addr) != "master" {
			continue
		}
		for _, m := range nodes {
			if host, _ := clusteradmin.InfoField(replInfo(m.Addr), "master_host"); host == n.Host {
				victim, replica = n, m
			}
		}
		if victim.Name != "" {
			break
		}
	}
	if victim.Name == "" {
		t.Fatal("no primary with a replica")
	}
	pollUntil(t, ctx, "replica in sync", func() string {
		a, _ := clusteradmin.InfoField(replInfo(victim.Addr), "master_repl_offset")
		b, _ := clusteradmin.InfoField(replInfo(replica.Addr), "master_repl_offset")
		if a != b {
			return "offsets " + a + " vs " + b
		}
		return ""
	})
	rc := rdb(replica.Addr)
	defer rc.Close()
	vc := rdb(victim.Addr)
	defer vc.Close()
	keys, err := vc.DBSize(ctx).Result()
	if err != nil || keys == 0 {
		t.Fatalf("victim dbsize %d %v", keys, err)
	}
	start := time.Now()
	if err := cl.Kill(ctx, victim.Name); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, ctx, "replica promoted", func() string {
		if r := role(replica.Addr); r != "master" {
			return replica.Name + " is " + r
		}
		return ""
	})
	t.Logf("%s promoted %v after SIGKILL of %s (node timeout 1s)", replica.Name, time.Since(start).Round(10*time.Millisecond), victim.Name)
	if n, err := rc.DBSize(ctx).Result(); err != nil || n != keys {
		t.Fatalf("promoted replica has %d keys (%v), the primary had %d", n, err, keys)
	}
	if err := cl.Restart(ctx, victim.Name); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, ctx, "old primary rejoins as a replica", func() string {
		info := replInfo(victim.Addr)
		if r, _ := clusteradmin.InfoField(info, "role"); r != "slave" {
			return victim.Name + " role " + r
		}
		if s, _ := clusteradmin.InfoField(info, "master_link_status"); s != "up" {
			return "link " + s
		}
		return ""
	})
	for _, n := range nodes {
		pollUntil(t, ctx, n.Name+" cluster_state ok", func() string {
			if st, _ := clusterInfo(t, ctx, n.Addr); st != "ok" {
				return st
			}
			return ""
		})
	}
}
