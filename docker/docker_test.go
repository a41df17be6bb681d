package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
)

// These tests need a local Docker engine and root (partitions open the
// containers' network namespaces). They fail, never skip, without them.

func newRuntime(t *testing.T) *Runtime {
	t.Helper()
	r, err := New(Options{Log: t.Logf, Form: clusteradmin.Form})
	if err != nil {
		t.Fatalf("these tests need Docker: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// leftovers lists containers and networks labelled redline whose cluster
// name starts with prefix.
func leftovers(t *testing.T, prefix string) []string {
	t.Helper()
	c, err := engineClient()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	f := make(client.Filters).Add("label", LabelRedline+"=1")
	var out []string
	cs, err := c.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	for _, ct := range cs.Items {
		if strings.HasPrefix(ct.Labels[LabelCluster], prefix) {
			out = append(out, "container "+ct.Names[0])
		}
	}
	ns, err := c.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns.Items {
		if strings.HasPrefix(n.Labels[LabelCluster], prefix) {
			out = append(out, "network "+n.Name)
		}
	}
	return out
}

func uniqueName(t *testing.T) string {
	return fmt.Sprintf("test-%s-%d", strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")), time.Now().UnixNano()%1e9)
}

func TestPing(t *testing.T) {
	if err := Ping(t.Context()); err != nil {
		t.Fatalf("these tests need Docker: %v", err)
	}
}

func TestPingUnreachable(t *testing.T) {
	c, err := client.New(client.WithHost("unix:///nonexistent/docker.sock"), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = ping(t.Context(), c)
	if err == nil || !strings.Contains(err.Error(), "cannot reach the Docker engine at unix:///nonexistent/docker.sock") ||
		!strings.Contains(err.Error(), "set DOCKER_HOST") {
		t.Fatalf("got %v", err)
	}
}

func rdb(addr string) *redis.Client { return cluster.AdminClient(addr) }

func clusterInfo(t *testing.T, ctx context.Context, addr string) (state, slots string) {
	t.Helper()
	c := rdb(addr)
	defer c.Close()
	info, err := c.ClusterInfo(ctx).Result()
	if err != nil {
		t.Fatalf("CLUSTER INFO on %s: %v", addr, err)
	}
	state, _ = clusteradmin.InfoField(info, "cluster_state")
	slots, _ = clusteradmin.InfoField(info, "cluster_slots_ok")
	return state, slots
}

// pollUntil retries cond every 100 ms until it returns "" or ctx ends.
func pollUntil(t *testing.T, ctx context.Context, what string, cond func() string) {
	t.Helper()
	last := ""
	for {
		if last = cond(); last == "" {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: gave up: %s", what, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestRedisCluster starts one 3+3 cluster of real redis-server and runs every
// fault against it.
func TestRedisCluster(t *testing.T) {
	r := newRuntime(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	name := uniqueName(t)
	t0 := time.Now()
	cl, err := r.StartCluster(ctx, cluster.Spec{
		Target: "redis", Nodes: 6, Replicas: 1, NodeTimeout: time.Second, AppendOnly: true, Name: name,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("6-node cluster up in %s", time.Since(t0).Round(time.Millisecond))
	defer func() {
		if err := cl.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
		if l := leftovers(t, name); len(l) > 0 {
			t.Errorf("left after Close: %v", l)
		}
	}()
	nodes := cl.Nodes()
	addr := map[string]string{}
	for _, n := range nodes {
		addr[n.Name] = n.Addr
	}
	converge := func(t *testing.T) {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := clusteradmin.WaitConverged(cctx, cluster.Credentials{}, cl.Addrs()); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("formed", func(t *testing.T) {
		if len(nodes) != 6 {
			t.Fatalf("%d nodes", len(nodes))
		}
		for _, n := range nodes {
			if st, slots := clusterInfo(t, ctx, n.Addr); st != "ok" || slots != "16384" {
				t.Errorf("%s: cluster_state %s, slots ok %s", n.Name, st, slots)
			}
			if !strings.HasPrefix(n.Addr, n.Host+":") || !strings.HasPrefix(n.Host, "10.221.") {
				t.Errorf("node %+v", n)
			}
		}
		cli, err := engineClient()
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		cs, err := cli.ContainerList(ctx, client.ContainerListOptions{Filters: make(client.Filters).Add("label", LabelCluster+"="+cl.Name())})
		if err != nil || len(cs.Items) != 6 {
			t.Fatalf("%d containers labelled %s (%v)", len(cs.Items), cl.Name(), err)
		}
		for _, ct := range cs.Items {
			if ct.Labels[LabelRedline] != "1" || ct.Labels["org.testcontainers.sessionId"] == "" || ct.Labels[LabelTarget] != "redis" {
				t.Errorf("container %s labels %v", ct.Names, ct.Labels)
			}
		}
		d := cl.Describe()
		if !strings.HasPrefix(d["image"], "redline/redis:7.") || !strings.HasPrefix(d["image_id"], "sha256:") {
			t.Errorf("describe %v", d)
		}
		rc, err := cl.Logs(ctx, "n1")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if !strings.Contains(string(b), "Ready to accept connections") {
			t.Errorf("n1 log lacks the ready line:\n%s", b)
		}
	})

	t.Run("kill-restart", func(t *testing.T) {
		// n1 is a primary; its data must come back from its AOF and its
		// identity from nodes.conf, both in the container's /data.
		c := rdb(addr["n1"])
		defer c.Close()
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{addr["n1"]}, DisableIdentity: true, MaxRedirects: 3, Protocol: 2})
		defer cc.Close()
		// With appendfsync everysec Redis may postpone an acknowledged
		// write to the AOF by up to 2 s while a background fsync runs (a
		// slow disk under load), and a kill then loses it by design. This
		// test is about the runtime keeping /data across a restart.
		if err := c.ConfigSet(ctx, "appendfsync", "always").Err(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 50; i++ {
			if err := cc.Set(ctx, "key"+strconv.Itoa(i), i, 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
		id1, err := c.ClusterMyID(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		before, err := c.DBSize(ctx).Result()
		if err != nil || before == 0 {
			t.Fatalf("dbsize %d %v", before, err)
		}
		if err := cl.Kill(ctx, "n1"); err != nil {
			t.Fatal(err)
		}
		pctx, pcancel := context.WithTimeout(ctx, 300*time.Millisecond)
		if err := c.Ping(pctx).Err(); err == nil {
			t.Error("killed node answers PING")
		}
		pcancel()
		if err := cl.Restart(ctx, "n1"); err != nil {
			t.Fatal(err)
		}
		c2 := rdb(addr["n1"]) // same address after restart
		defer c2.Close()
		after, err := c2.DBSize(ctx).Result()
		if err != nil || after != before {
			t.Errorf("dbsize after restart %d (%v), before %d", after, err, before)
		}
		if id2, err := c2.ClusterMyID(ctx).Result(); err != nil || id2 != id1 {
			t.Errorf("node id after restart %q (%v), before %q", id2, err, id1)
		}
		converge(t)
	})

	t.Run("pause-resume", func(t *testing.T) {
		c := rdb(addr["n5"])
		defer c.Close()
		if err := cl.Pause(ctx, "n5"); err != nil {
			t.Fatal(err)
		}
		pctx, pcancel := context.WithTimeout(ctx, 300*time.Millisecond)
		tp := time.Now()
		err := c.Ping(pctx).Err()
		pcancel()
		t.Logf("ping of the paused node failed after %s: %v", time.Since(tp).Round(time.Millisecond), err)
		if rerr := cl.Resume(ctx, "n5"); rerr != nil {
			t.Fatal(rerr)
		}
		if err == nil {
			t.Error("paused node answered PING")
		}
		if err := c.Ping(ctx).Err(); err != nil {
			t.Errorf("resumed node: %v", err)
		}
	})

	t.Run("fault-combinations", func(t *testing.T) {
		// Nemeses overlap: each step must be safe in any state.
		for _, step := range []struct {
			what string
			do   func(context.Context, string) error
		}{
			{"pause", cl.Pause}, {"pause again", cl.Pause}, {"kill while paused", cl.Kill},
			{"kill again", cl.Kill}, {"resume a dead node", cl.Resume}, {"restart", cl.Restart},
			{"restart a running node", cl.Restart},
		} {
			if err := step.do(ctx, "n6"); err != nil {
				t.Fatalf("%s: %v", step.what, err)
			}
		}
		c := rdb(addr["n6"])
		defer c.Close()
		if err := c.Ping(ctx).Err(); err != nil {
			t.Fatalf("n6 after restart: %v", err)
		}
		converge(t)
	})

	t.Run("cut-heal", func(t *testing.T) {
		if err := cl.Cut(ctx, "n2", []string{"n3"}, false); err != nil {
			t.Fatal(err)
		}
		c3 := rdb(addr["n3"])
		defer c3.Close()
		wctx, wcancel := context.WithTimeout(ctx, 15*time.Second)
		defer wcancel()
		tc := time.Now()
		pollUntil(t, wctx, "n3 flags n2 as failing", func() string {
			text, err := c3.ClusterNodes(wctx).Result()
			if err != nil {
				return err.Error()
			}
			ns, err := cluster.ParseNodes(text)
			if err != nil {
				return err.Error()
			}
			for _, n := range ns {
				if n.Addr == addr["n2"] {
					if n.Failed() {
						return ""
					}
					return "n2 flags: " + strings.Join(n.Flags, ",")
				}
			}
			return "n2 missing"
		})
		t.Logf("n3 flagged n2 %s after the cut (node-timeout 1s)", time.Since(tc).Round(100*time.Millisecond))
		for _, n := range []string{"n2", "n3"} {
			c := rdb(addr[n])
			if err := c.Ping(ctx).Err(); err != nil {
				t.Errorf("harness cannot PING %s during a node-only cut: %v", n, err)
			}
			c.Close()
		}
		if k, err := cl.DropRules(ctx, "n2"); err != nil || k != 2 {
			t.Errorf("n2 has %d drop rules (%v), want 2", k, err)
		}
		if err := cl.Heal(ctx); err != nil {
			t.Fatal(err)
		}
		if k, err := cl.DropRules(ctx, "n2"); err != nil || k != 0 {
			t.Errorf("n2 has %d drop rules after heal (%v)", k, err)
		}
		converge(t)

		// A cut of a killed node takes effect when it restarts.
		if err := cl.Kill(ctx, "n4"); err != nil {
			t.Fatal(err)
		}
		if err := cl.Cut(ctx, "n4", []string{"n5", "n6"}, false); err != nil {
			t.Fatal(err)
		}
		if err := cl.Restart(ctx, "n4"); err != nil {
			t.Fatal(err)
		}
		if k, err := cl.DropRules(ctx, "n4"); err != nil || k != 4 {
			t.Errorf("restarted n4 has %d drop rules (%v), want 4", k, err)
		}
		if err := cl.Heal(ctx); err != nil {
			t.Fatal(err)
		}
		converge(t)

		// A kill whose caller gives up just as it is sent is seen to its
		// end: the node is down when Kill returns, and Restart brings it
		// back (a kill left half-done was taken for healed: CI 2026-12-06).
		kctx, kcancel := context.WithCancel(ctx)
		stateChangeSending = kcancel
		err := cl.Kill(kctx, "n4")
		stateChangeSending = nil
		if err != nil {
			t.Fatalf("kill canceled as it was sent: %v", err)
		}
		if n4, err := cl.node("n4"); err != nil {
			t.Fatal(err)
		} else if st, err := cl.state(ctx, n4); err != nil || st.Running {
			t.Fatalf("n4 after a kill canceled as it was sent: running=%v (%v), want stopped", st.Running, err)
		}
		if err := cl.Restart(ctx, "n4"); err != nil {
			t.Fatal(err)
		}
		converge(t)

		// clients=true: the harness loses the node too.
		if err := cl.Cut(ctx, "n6", nil, true); err != nil {
			t.Fatal(err)
		}
		c6 := rdb(addr["n6"])
		defer c6.Close()
		pctx, pcancel := context.WithTimeout(ctx, 300*time.Millisecond)
		err = c6.Ping(pctx).Err()
		pcancel()
		if herr := cl.Heal(ctx); herr != nil {
			t.Fatal(herr)
		}
		if err == nil {
			t.Error("harness reached n6 through a clients cut")
		}
		c6b := rdb(addr["n6"])
		defer c6b.Close()
		if err := c6b.Ping(ctx).Err(); err != nil {
			t.Errorf("after heal: %v", err)
		}
		converge(t)
	})

	t.Run("clock", func(t *testing.T) {
		c := rdb(addr["n6"])
		defer c.Close()
		skew := func() time.Duration {
			tm, err := c.Time(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			return tm.Sub(time.Now()).Round(time.Second)
		}
		if d := skew(); d < -2*time.Second || d > 2*time.Second {
			t.Fatalf("skew before: %s", d)
		}
		if err := cl.SetClockOffset(ctx, "n6", 10*time.Minute); err != nil {
			t.Fatal(err)
		}
		if d := skew(); d < 10*time.Minute-2*time.Second || d > 10*time.Minute+2*time.Second {
			t.Errorf("skew after +10m: %s", d)
		}
		if err := cl.SetClockOffset(ctx, "n6", -30*time.Second); err != nil {
			t.Fatal(err)
		}
		if d := skew(); d < -32*time.Second || d > -28*time.Second {
			t.Errorf("skew after -30s: %s", d)
		}
		if err := cl.SetClockOffset(ctx, "n6", 0); err != nil {
			t.Fatal(err)
		}
		if d := skew(); d < -2*time.Second || d > 2*time.Second {
			t.Errorf("skew after reset: %s", d)
		}
		converge(t)
	})

	t.Run("grow", func(t *testing.T) {
		n, err := cl.AddNode(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n.Name != "n7" || len(cl.Nodes()) != 7 {
			t.Fatalf("added %+v, nodes %d", n, len(cl.Nodes()))
		}
		text, err := clusteradmin.ClusterNodesText(ctx, cluster.Credentials{}, n.Addr)
		if err != nil {
			t.Fatal(err)
		}
		if ns, _ := cluster.ParseNodes(text); len(ns) != 1 {
			t.Errorf("new node knows %d nodes", len(ns))
		}
		if err := cl.RemoveNode(ctx, "n7"); err != nil {
			t.Fatal(err)
		}
		if len(cl.Nodes()) != 6 {
			t.Errorf("nodes after remove: %d", len(cl.Nodes()))
		}
		c := rdb(n.Addr)
		defer c.Close()
		pctx, pcancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer pcancel()
		if err := c.Ping(pctx).Err(); err == nil {
			t.Error("removed node still answers")
		}
	})
}

// A start that fails after containers exist must leave nothing behind. The
// reference image is built from a static stub that prints its arguments and
// exits, which also checks the reference flavour's image and arguments.
func TestFailedStartLeavesNothing(t *testing.T) {
	r := newRuntime(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	name := uniqueName(t)
	_, err := r.Start(ctx, cluster.Spec{Target: "redis", Nodes: 3, Image: "redline/no-such-image:none", Name: name})
	if err == nil || !strings.Contains(err.Error(), "not available locally") {
		t.Fatalf("bad image: %v", err)
	}
	if l := leftovers(t, name); len(l) > 0 {
		t.Fatalf("left after a bad image: %v", l)
	}

	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	stub := "package main\nimport (\"fmt\"; \"os\")\nfunc main() { fmt.Println(\"stub args:\", os.Args[1:]); os.Exit(3) }\n"
	if err := os.WriteFile(src, []byte(stub), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "redline")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, src)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the stub: %v\n%s", err, out)
	}
	r.opts.ReferenceBinary = bin
	name = uniqueName(t) + "-ref"
	_, err = r.Start(ctx, cluster.Spec{Target: "reference", Nodes: 2, Replicas: 0, Name: name})
	if err == nil {
		t.Fatal("a stub server that exits started a cluster")
	}
	for _, want := range []string{"exited with code 3", "stub args: [server --port 6379 --cluster-enabled yes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if l := leftovers(t, name); len(l) > 0 {
		t.Fatalf("left after a failed start: %v", l)
	}
}

func TestCleanup(t *testing.T) {
	r := newRuntime(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	name := uniqueName(t)
	c, err := r.StartCluster(ctx, cluster.Spec{Target: "redis", Nodes: 1, Replicas: 0, NodeTimeout: time.Second, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddNode(ctx); err != nil {
		t.Fatal(err)
	}
	if l := leftovers(t, name); len(l) != 3 {
		t.Fatalf("want 2 containers and a network, got %v", l)
	}
	running, err := Clusters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range running {
		if r.Name == c.Name() {
			found = true
			if r.Target != "redis" || len(r.Nodes) != 2 || r.Nodes[0] != c.Nodes()[0] || r.Nodes[1] != c.Nodes()[1] {
				t.Errorf("Clusters says %+v, cluster has %+v", r, c.Nodes())
			}
		}
	}
	if !found {
		t.Errorf("Clusters does not list %s: %+v", c.Name(), running)
	}
	// A later process attaches by name and gets the same nodes and faults.
	at, err := r.Attach(ctx, c.Name())
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(at.Nodes()) != fmt.Sprint(c.Nodes()) || at.spec.NodeTimeout != time.Second || at.spec.Target != "redis" {
		t.Fatalf("attached %+v %+v, started %+v", at.Nodes(), at.spec, c.Nodes())
	}
	if err := at.SetClockOffset(ctx, "n1", time.Hour); err != nil {
		t.Fatal(err)
	}
	c1 := rdb(c.Nodes()[0].Addr)
	defer c1.Close()
	if tm, err := c1.Time(ctx).Result(); err != nil || time.Until(tm) < 59*time.Minute {
		t.Errorf("clock through an attached handle: %v %v", tm, err)
	}
	if _, err := r.Attach(ctx, "no-such-cluster"); err == nil || !strings.Contains(err.Error(), "no running redline cluster") {
		t.Errorf("attach to nothing: %v", err)
	}

	n, err := CleanupCluster(ctx, c.Name())
	if err != nil || n != 3 {
		t.Fatalf("cleanup removed %d: %v", n, err)
	}
	if l := leftovers(t, name); len(l) > 0 {
		t.Fatalf("left after cleanup: %v", l)
	}
	if err := c.Close(ctx); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("close after cleanup: %v", err)
	}
}
