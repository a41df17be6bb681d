package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster tests run real node processes (the test binary re-executed, see
// TestMain) on 127.0.0.1 with ports below 22768, so that the bus ports
// (port+10000) stay out of the ephemeral range.

type node struct {
	t    *testing.T
	port int
	dir  string
	args []string
	cmd  *exec.Cmd
	log  *lockedBuffer
}

func (n *node) addr() string { return fmt.Sprintf("127.0.0.1:%d", n.port) }

func needRedisCLI(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatalf("redis-cli not found in PATH: install it with scripts/install-deps (Debian package redis-tools)")
	}
	return p
}

// startNode starts one cluster-enabled node process.
func startNode(t *testing.T, port int, nodeTimeoutMs int, extra ...string) *node {
	t.Helper()
	n := &node{t: t, port: port, dir: filepath.Join(t.TempDir(), strconv.Itoa(port))}
	if err := os.MkdirAll(n.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	n.args = append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
		"--cluster-node-timeout", strconv.Itoa(nodeTimeoutMs), "--dir", n.dir}, extra...)
	n.start()
	t.Cleanup(n.kill)
	return n
}

func (n *node) start() {
	t := n.t
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "REDLINE_TEST_SERVER="+strings.Join(n.args, "\n"))
	n.log = &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = n.log, n.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n.cmd = cmd
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", n.addr())
		if err == nil {
			c.Close()
			// Make sure the node answering is ours, not a leftover.
			if pid := infoField(n.str("info", "server"), "process_id"); pid != strconv.Itoa(cmd.Process.Pid) {
				t.Fatalf("port %d is taken by another process (pid %s, ours %d)\n%s", n.port, pid, cmd.Process.Pid, n.log.String())
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %d did not start: %v\n%s", n.port, err, n.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (n *node) kill() {
	if n.cmd != nil && n.cmd.Process != nil {
		n.cmd.Process.Signal(syscall.SIGKILL)
		n.cmd.Wait()
		n.cmd = nil
	}
}

func (n *node) client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: n.addr(), Protocol: 2, DisableIdentity: true, MaxRetries: -1,
		ReadTimeout: 10 * time.Second})
	n.t.Cleanup(func() { c.Close() })
	return c
}

func (n *node) do(args ...any) (any, error) {
	c := redis.NewClient(&redis.Options{Addr: n.addr(), Protocol: 2, DisableIdentity: true, MaxRetries: -1})
	defer c.Close()
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Do(cctx, args...).Result()
}

func (n *node) str(args ...any) string {
	v, err := n.do(args...)
	if err != nil {
		return "ERR: " + err.Error()
	}
	return fmt.Sprint(v)
}

func (n *node) myID() string { return n.str("cluster", "myid") }

func (n *node) role() string {
	v, err := n.do("role")
	if err != nil {
		return "?"
	}
	if a, ok := v.([]any); ok && len(a) > 0 {
		return fmt.Sprint(a[0])
	}
	return "?"
}

func infoField(info, field string) string {
	for _, l := range strings.Split(info, "\r\n") {
		if strings.HasPrefix(l, field+":") {
			return strings.TrimPrefix(l, field+":")
		}
	}
	return ""
}

// redisCLI runs redis-cli with args and returns its combined output.
func redisCLI(t *testing.T, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	cli := needRedisCLI(t)
	cctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := exec.CommandContext(cctx, cli, args...).CombinedOutput()
	return string(out), err
}

// waitFor polls cond every 100 ms until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// freeBase picks a random block of count ports in 20000..22767 whose bus
// ports (+10000) are free too, so that concurrent runs of these tests (other
// helpers, CI) do not collide.
func freeBase(t *testing.T, count int) int {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid())))
	for try := 0; try < 500; try++ {
		base := 20000 + r.IntN(2768-count)
		ok := true
		for i := 0; i < count && ok; i++ {
			for _, p := range []int{base + i, base + i + 10000} {
				ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
				if err != nil {
					ok = false
					break
				}
				ln.Close()
			}
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free block of ports below 22768")
	return 0
}

// startCluster starts count nodes on free ports and forms a cluster with
// redis-cli. The ports right after the last node are free for extra nodes.
func startCluster(t *testing.T, count, replicas, nodeTimeoutMs int, extra ...string) []*node {
	t.Helper()
	needRedisCLI(t)
	base := freeBase(t, count+2)
	nodes := make([]*node, count)
	args := []string{"--cluster", "create"}
	for i := range nodes {
		nodes[i] = startNode(t, base+i, nodeTimeoutMs, extra...)
		args = append(args, nodes[i].addr())
	}
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	out, err := redisCLI(t, 90*time.Second, args...)
	if err != nil || !strings.Contains(out, "[OK] All 16384 slots covered.") {
		t.Fatalf("redis-cli --cluster create failed: %v\n%s", err, out)
	}
	waitClusterOK(t, nodes)
	return nodes
}

func waitClusterOK(t *testing.T, nodes []*node) {
	t.Helper()
	waitFor(t, "cluster_state:ok on every node and replicas in sync", 30*time.Second, func() bool {
		for _, n := range nodes {
			if !strings.Contains(n.str("cluster", "info"), "cluster_state:ok") {
				return false
			}
			if n.role() == "slave" && infoField(n.str("info", "replication"), "master_link_status") != "up" {
				return false
			}
		}
		// Every node agrees on who replicates whom (a primary ignores a
		// manual failover request from a node it does not know as its replica).
		sig := ""
		for i, n := range nodes {
			var pairs []string
			for _, l := range strings.Split(n.str("cluster", "nodes"), "\n") {
				if f := strings.Fields(l); len(f) >= 4 {
					pairs = append(pairs, f[0]+">"+f[3])
				}
			}
			sort.Strings(pairs)
			if s := strings.Join(pairs, ","); i == 0 {
				sig = s
			} else if s != sig {
				return false
			}
		}
		return true
	})
}

func clusterClient(t *testing.T, nodes []*node) *redis.ClusterClient {
	var addrs []string
	for _, n := range nodes {
		addrs = append(addrs, n.addr())
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, DisableIdentity: true, Protocol: 2,
		ReadTimeout: 10 * time.Second, MaxRedirects: 8})
	t.Cleanup(func() { c.Close() })
	return c
}

// writeKeys writes count keys key:i = val:i through the cluster client.
func writeKeys(t *testing.T, c *redis.ClusterClient, prefix string, count int) {
	t.Helper()
	const batch = 500
	for i := 0; i < count; i += batch {
		_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for j := i; j < i+batch && j < count; j++ {
				p.Set(ctx, fmt.Sprintf("%s:%d", prefix, j), fmt.Sprintf("val:%d", j), 0)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("writing keys: %v", err)
		}
	}
}

// checkKeys reads every key back and fails on any missing or wrong value.
func checkKeys(t *testing.T, c *redis.ClusterClient, prefix string, count int) {
	t.Helper()
	const batch = 500
	bad := 0
	for i := 0; i < count; i += batch {
		cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for j := i; j < i+batch && j < count; j++ {
				p.Get(ctx, fmt.Sprintf("%s:%d", prefix, j))
			}
			return nil
		})
		if err != nil && err != redis.Nil {
			t.Fatalf("reading keys: %v", err)
		}
		for k, cmd := range cmds {
			v, err := cmd.(*redis.StringCmd).Result()
			if want := fmt.Sprintf("val:%d", i+k); v != want || err != nil {
				if bad < 5 {
					t.Errorf("key %s:%d = %q, %v; want %q", prefix, i+k, v, err, want)
				}
				bad++
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d keys missing or wrong", bad, count)
	}
}

func masters(t *testing.T, nodes []*node) []*node {
	var out []*node
	for _, n := range nodes {
		if n.role() == "master" {
			out = append(out, n)
		}
	}
	return out
}

// TestClusterRedisCLI drives reference nodes with Debian's redis-cli 7.0:
// create with replicas, check, reshard 1000 slots full of keys, add-node +
// rebalance, del-node.
func TestClusterRedisCLI(t *testing.T) {
	nodes := startCluster(t, 6, 1, 2000)
	out, err := redisCLI(t, 30*time.Second, "--cluster", "check", nodes[0].addr())
	if err != nil || !strings.Contains(out, "[OK] All 16384 slots covered.") || !strings.Contains(out, "[OK] All nodes agree about slots configuration.") {
		t.Fatalf("check failed: %v\n%s", err, out)
	}
	c := clusterClient(t, nodes)
	const nkeys = 20000
	writeKeys(t, c, "key", nkeys)
	ms := masters(t, nodes)
	if len(ms) != 3 {
		t.Fatalf("want 3 masters, got %d", len(ms))
	}
	from, to := ms[0], ms[1]
	before := from.str("dbsize")
	out, err = redisCLI(t, 180*time.Second, "--cluster", "reshard", nodes[0].addr(), "--cluster-from", from.myID(),
		"--cluster-to", to.myID(), "--cluster-slots", "1000", "--cluster-yes")
	if err != nil {
		t.Fatalf("reshard failed: %v\n%s", err, lastLines(out, 20))
	}
	after := from.str("dbsize")
	t.Logf("source dbsize %s -> %s", before, after)
	if before == after {
		t.Fatalf("reshard moved no keys (dbsize %s)", after)
	}
	checkKeys(t, c, "key", nkeys)
	out, err = redisCLI(t, 30*time.Second, "--cluster", "check", nodes[0].addr())
	if err != nil || !strings.Contains(out, "[OK] All 16384 slots covered.") {
		t.Fatalf("check after reshard failed: %v\n%s", err, out)
	}
	// The replicas follow: the destination's replica holds the moved keys.
	waitFor(t, "replicas catch up", 20*time.Second, func() bool {
		for _, m := range ms {
			for _, n := range nodes {
				if n.role() == "slave" && strings.Contains(n.str("info", "replication"), fmt.Sprintf("master_port:%d", m.port)) {
					if n.str("dbsize") != m.str("dbsize") {
						return false
					}
				}
			}
		}
		return true
	})

	// add-node + rebalance.
	extra := startNode(t, nodes[5].port+1, 2000)
	out, err = redisCLI(t, 60*time.Second, "--cluster", "add-node", extra.addr(), nodes[0].addr())
	if err != nil || !strings.Contains(out, "[OK] New node added correctly.") {
		t.Fatalf("add-node failed: %v\n%s", err, out)
	}
	waitFor(t, "the new node is known everywhere", 20*time.Second, func() bool {
		for _, n := range append([]*node{extra}, nodes...) {
			info := n.str("cluster", "info")
			if !strings.Contains(info, "cluster_known_nodes:7") || !strings.Contains(info, "cluster_state:ok") {
				return false
			}
		}
		return true
	})
	// A small weight for the new node keeps the test short (~500 slots move).
	out, err = redisCLI(t, 240*time.Second, "--cluster", "rebalance", nodes[0].addr(), "--cluster-use-empty-masters",
		"--cluster-weight", extra.myID()+"=0.1")
	if err != nil {
		t.Fatalf("rebalance failed: %v\n%s", err, lastLines(out, 20))
	}
	if v := extra.str("dbsize"); v == "0" {
		t.Fatalf("rebalance gave the new node no keys\n%s", lastLines(out, 20))
	}
	all := append(append([]*node(nil), nodes...), extra)
	c2 := clusterClient(t, all)
	checkKeys(t, c2, "key", nkeys)
	out, err = redisCLI(t, 30*time.Second, "--cluster", "check", nodes[0].addr())
	if err != nil || !strings.Contains(out, "[OK] All 16384 slots covered.") || !strings.Contains(out, "[OK] All nodes agree") {
		t.Fatalf("check after rebalance failed: %v\n%s", err, out)
	}

	// del-node of a replica.
	var rep *node
	for _, n := range nodes {
		if n.role() == "slave" {
			rep = n
			break
		}
	}
	out, err = redisCLI(t, 60*time.Second, "--cluster", "del-node", nodes[0].addr(), rep.myID())
	if err != nil || !strings.Contains(out, "CLUSTER RESET SOFT") {
		t.Fatalf("del-node failed: %v\n%s", err, out)
	}
	waitFor(t, "the removed node forgotten", 20*time.Second, func() bool {
		for _, n := range all {
			if n == rep {
				continue
			}
			if !strings.Contains(n.str("cluster", "info"), "cluster_known_nodes:6") {
				return false
			}
		}
		return true
	})
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}
