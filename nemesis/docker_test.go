package nemesis_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/docker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/nemesis"
)

// These tests run the nemesis against the Docker runtime (real Redis in
// containers). They need a local Docker engine and root for partitions, and
// fail (never skip) without them.

func nodesOf(ctx context.Context, addr string) ([]cluster.NodeInfo, error) {
	text, err := clusteradmin.ClusterNodesText(ctx, cluster.Credentials{}, addr)
	if err != nil {
		return nil, err
	}
	return cluster.ParseNodes(text)
}

func startDocker(t *testing.T, ctx context.Context) *docker.Cluster {
	t.Helper()
	r, err := docker.New(docker.Options{Log: t.Logf, Form: clusteradmin.Form})
	if err != nil {
		t.Fatalf("this test needs Docker: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	cl, err := r.StartCluster(ctx, cluster.Spec{Target: "redis", Nodes: 6, Replicas: 1, NodeTimeout: time.Second,
		Name: fmt.Sprintf("nemesis-test-%d", time.Now().UnixNano()%1e6)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close(context.Background()) })
	return cl
}

func TestDockerMemberAddAndRemove(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cl := startDocker(t, ctx)
	nem, err := nemesis.New([]string{"member"}, cl, nemesis.Options{Interval: 2 * time.Second, Seed: 1, NodeTimeout: time.Second, Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	rec := &nemesis.MemRecorder{}
	nem.FireForTest(ctx, rec, nemesis.Step{Fault: "member", Mode: "add", Seed: 1})
	d := nemesis.DetailOf(t, rec.Last("start-member", history.Info))
	if d["error"] != nil {
		t.Fatalf("add: %v", d["error"])
	}
	id := d["id"].(string)
	t.Logf("member add moved %v slots in %v ms", d["slots_moved"], d["took_ms"])
	if len(cl.Nodes()) != 7 {
		t.Fatalf("%d nodes after add", len(cl.Nodes()))
	}
	nemesis.Eventually(t, 30*time.Second, func() string {
		for _, n := range cl.Nodes() {
			ls, err := nodesOf(ctx, n.Addr)
			if err != nil {
				return err.Error()
			}
			ok := false
			for _, l := range ls {
				ok = ok || (l.ID == id && l.NumSlots() > 4000)
			}
			if !ok {
				return fmt.Sprintf("%s does not see the new node %s owning slots", n.Name, id)
			}
		}
		return ""
	})
	nem.FireForTest(ctx, rec, nemesis.Step{Fault: "member", Mode: "remove", Seed: 2})
	d = nemesis.DetailOf(t, rec.Last("start-member", history.Info))
	if d["error"] != nil {
		t.Fatalf("remove: %v", d["error"])
	}
	t.Logf("member remove moved %v slots in %v ms", d["slots_moved"], d["took_ms"])
	if len(cl.Nodes()) != 6 {
		t.Fatalf("%d nodes after remove", len(cl.Nodes()))
	}
	if err := nem.Heal(ctx, rec); err != nil {
		t.Fatalf("heal: %v", err)
	}
}

func TestDockerPartitionClockAndHeal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cl := startDocker(t, ctx)
	nem, err := nemesis.New([]string{"partition", "clock", "kill", "pause"}, cl,
		nemesis.Options{Interval: 2 * time.Second, Seed: 1, NodeTimeout: time.Second, Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	rec := &nemesis.MemRecorder{}
	addr := map[string]string{}
	for _, n := range cl.Nodes() {
		addr[n.Name] = n.Addr
	}

	// Partition: the isolated node sees every peer fail while the harness
	// still reaches it; the others see it fail.
	stop := nem.FireForTest(ctx, rec, nemesis.Step{Fault: "partition", Mode: "isolate-one", Seed: 3})
	if stop == nil {
		t.Fatal("partition has nothing to stop")
	}
	inv := rec.Last("start-partition", history.Invoke)
	minority := nemesis.DetailOf(t, inv)["minority"].([]any)
	isolated := minority[0].(string)
	var other string
	for name := range addr {
		if name != isolated {
			other = name
			break
		}
	}
	nemesis.Eventually(t, 30*time.Second, func() string {
		ls, err := nodesOf(ctx, addr[isolated])
		if err != nil {
			return "harness cannot reach the isolated node: " + err.Error()
		}
		for _, l := range ls {
			if !l.Myself() && !l.Failed() {
				return fmt.Sprintf("%s still sees %s as %s", isolated, l.Addr, strings.Join(l.Flags, ","))
			}
		}
		ls, err = nodesOf(ctx, addr[other])
		if err != nil {
			return err.Error()
		}
		for _, l := range ls {
			if l.Addr == addr[isolated] && !l.Failed() {
				return fmt.Sprintf("%s still sees %s as %s", other, isolated, strings.Join(l.Flags, ","))
			}
		}
		return ""
	})
	if err := stop(ctx); err != nil {
		t.Fatal(err)
	}

	// Clock: after a bump the node's TIME moved by the offset.
	stop = nem.FireForTest(ctx, rec, nemesis.Step{Fault: "clock", Mode: "bump", Seed: 4})
	d := nemesis.DetailOf(t, rec.Last("start-clock", history.Info))
	off := nemesis.DetailOf(t, rec.Last("start-clock", history.Invoke))["offset_ms"].(float64)
	before, after := d["time_before"].(float64), d["time_after"].(float64)
	if moved := after - before; moved < off-2000 || moved > off+2000 {
		t.Fatalf("TIME moved %v ms, the bump was %v ms", moved, off)
	}
	// Heal resets the clock (the bump is still in force), and converges.
	if err := nem.Heal(ctx, rec); err != nil {
		t.Fatalf("heal: %v", err)
	}
	heal := nemesis.DetailOf(t, rec.Last("heal", history.Info))
	if heal["converged"] != true {
		t.Fatalf("heal: %v", heal)
	}
	node := rec.Last("start-clock", history.Invoke).NodeList()[0]
	tm, err := cluster.AdminClient(addr[node]).Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if skew := time.Since(tm); skew > 2*time.Second || skew < -2*time.Second {
		t.Fatalf("after heal %s is still %s off", node, skew)
	}
	_ = stop
}

// TestDockerZombiePrimaryAndKillAll pauses a primary for longer than the
// node timeout (a replica takes over; the old primary comes back as its
// replica), then kills every node and restarts them.
func TestDockerZombiePrimaryAndKillAll(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cl := startDocker(t, ctx)
	nem, err := nemesis.New([]string{"pause", "kill"}, cl, nemesis.Options{Interval: 2 * time.Second, Seed: 1, NodeTimeout: time.Second, Log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	rec := &nemesis.MemRecorder{}
	addr := map[string]string{}
	for _, n := range cl.Nodes() {
		addr[n.Name] = n.Addr
	}
	stop := nem.FireForTest(ctx, rec, nemesis.Step{Fault: "pause", Mode: "primary-long", Seed: 1})
	inv := rec.Last("start-pause", history.Invoke)
	paused := inv.NodeList()[0]
	hold := time.Duration(nemesis.DetailOf(t, inv)["min_hold_ms"].(float64)) * time.Millisecond
	if hold < 3*time.Second {
		t.Fatalf("primary-long holds %s, want at least 3 node timeouts", hold)
	}
	pctx, pcancel := context.WithTimeout(ctx, 500*time.Millisecond)
	if err := cluster.AdminClient(addr[paused]).Ping(pctx).Err(); err == nil {
		t.Fatalf("paused %s still answers PING", paused)
	}
	pcancel()
	time.Sleep(hold)
	if err := stop(ctx); err != nil {
		t.Fatal(err)
	}
	nemesis.Eventually(t, 30*time.Second, func() string {
		ls, err := nodesOf(ctx, addr[paused])
		if err != nil {
			return err.Error()
		}
		self, _ := cluster.Self(ls)
		if !self.IsReplica() {
			return fmt.Sprintf("%s (paused primary) is %v", paused, self.Flags)
		}
		return ""
	})

	stop = nem.FireForTest(ctx, rec, nemesis.Step{Fault: "kill", Mode: "all", Seed: 2})
	if n := len(rec.Last("start-kill", history.Invoke).NodeList()); n != 6 {
		t.Fatalf("kill all hit %d nodes", n)
	}
	for name, a := range addr {
		pctx, pcancel := context.WithTimeout(ctx, 500*time.Millisecond)
		if err := cluster.AdminClient(a).Ping(pctx).Err(); err == nil {
			t.Fatalf("%s answers PING after kill all", name)
		}
		pcancel()
	}
	if err := stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := nem.Heal(ctx, rec); err != nil {
		t.Fatalf("heal after kill all: %v", err)
	}
}
