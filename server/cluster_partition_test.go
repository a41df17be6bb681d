package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/server/cluster/bus"
	"github.com/redline-dev/redline/server/config"
)

// memCluster runs cluster nodes in this process: clients reach them over
// loopback TCP, while the cluster bus and the replication links go over a
// bus.MemNetwork, so a test can cut a node off from its peers and leave it
// reachable by clients (as an iptables partition of node links does).
type memCluster struct {
	t     *testing.T
	net   *bus.MemNetwork
	srv   []*Server
	nodes []*node
}

func busAddr(port int) string { return "127.0.0.1:" + strconv.Itoa(port+10000) }
func cliAddr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

func startMemCluster(t *testing.T, base, count int, nodeTimeoutMs int) *memCluster {
	t.Helper()
	mc := &memCluster{t: t, net: bus.NewMemNetwork()}
	for i := 0; i < count; i++ {
		port := base + i
		dir := t.TempDir()
		cfg, err := config.ParseArgs([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
			"--cluster-enabled", "yes", "--cluster-node-timeout", strconv.Itoa(nodeTimeoutMs),
			"--cluster-config-file", dir + "/nodes.conf"})
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(cfg, Options{Log: io.Discard, ClusterTransport: mc.net, DialMaster: func(addr string) (net.Conn, error) {
			cctx, cancel := context.WithTimeout(bus.WithLocalAddr(context.Background(), cliAddr(port)), 2*time.Second)
			defer cancel()
			return mc.net.Dial(cctx, addr)
		}})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Listen(); err != nil {
			t.Fatal(err)
		}
		ln, err := mc.net.Listen(cliAddr(port))
		if err != nil {
			t.Fatal(err)
		}
		s.listeners = append(s.listeners, ln)
		if err := s.serve(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		mc.srv = append(mc.srv, s)
		mc.nodes = append(mc.nodes, &node{t: t, port: port})
	}
	args := []string{"--cluster", "create"}
	for _, n := range mc.nodes {
		args = append(args, n.addr())
	}
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	out, err := redisCLI(t, 90*time.Second, args...)
	if err != nil || !strings.Contains(out, "[OK] All 16384 slots covered.") {
		t.Fatalf("redis-cli --cluster create failed: %v\n%s", err, out)
	}
	waitClusterOK(t, mc.nodes)
	return mc
}

// isolate cuts (or heals) every bus and replication link of n.
func (mc *memCluster) isolate(n *node, cut bool) {
	for _, o := range mc.nodes {
		if o == n {
			continue
		}
		mc.net.Block(busAddr(n.port), busAddr(o.port), cut)
		mc.net.Block(cliAddr(n.port), cliAddr(o.port), cut)
	}
}

// TestClusterPartitionPrimary isolates a primary from its peers while
// clients still reach it: it keeps acknowledging writes until it notices it
// is in the minority (CLUSTERDOWN about one node timeout later), the
// majority promotes its replica, and after healing it rejoins as a replica
// of the new primary and loses every write it took meanwhile, as Redis does.
func TestClusterPartitionPrimary(t *testing.T) {
	const nt = 1000
	mc := startMemCluster(t, freeBase(t, 6), 6, nt)
	p := masters(t, mc.nodes)[0]
	tag, _ := tagOwnedBy(t, p)
	var rep *node
	for _, n := range mc.nodes {
		if infoField(n.str("info", "replication"), "master_port") == strconv.Itoa(p.port) {
			rep = n
		}
	}
	if rep == nil {
		t.Fatal("no replica of the primary")
	}
	pc := p.client()
	for i := 0; i < 100; i++ {
		if err := pc.Set(ctx, fmt.Sprintf("{%s}before:%d", tag, i), "x", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "replica in sync", 10*time.Second, func() bool { return rep.str("dbsize") == p.str("dbsize") })

	mc.isolate(p, true)
	start := time.Now()
	var acked []string
	var downAfter time.Duration
	for i := 0; ; i++ {
		k := fmt.Sprintf("{%s}during:%d", tag, i)
		err := pc.Set(ctx, k, "x", 0).Err()
		if err == nil {
			acked = append(acked, k)
		} else if strings.HasPrefix(err.Error(), "CLUSTERDOWN The cluster is down") {
			downAfter = time.Since(start)
			break
		} else {
			t.Fatalf("unexpected error from the isolated primary: %v", err)
		}
		if time.Since(start) > 30*time.Second {
			t.Fatal("the isolated primary never refused writes")
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Logf("isolated primary acknowledged %d writes, CLUSTERDOWN after %v (node timeout %dms)", len(acked), downAfter.Round(time.Millisecond), nt)
	if len(acked) == 0 {
		t.Fatal("the isolated primary acknowledged no write before CLUSTERDOWN")
	}
	waitFor(t, "the majority to promote the replica", 30*time.Second, func() bool { return rep.role() == "master" })
	t.Logf("replica promoted %v after the partition began", time.Since(start).Round(time.Millisecond))

	mc.isolate(p, false)
	waitFor(t, "the old primary to rejoin as a replica in sync", 30*time.Second, func() bool {
		ri := p.str("info", "replication")
		return infoField(ri, "role") == "slave" && infoField(ri, "master_port") == strconv.Itoa(rep.port) &&
			infoField(ri, "master_link_status") == "up" && p.str("dbsize") == rep.str("dbsize")
	})
	rc := redis.NewClient(&redis.Options{Addr: rep.addr(), DisableIdentity: true, Protocol: 2, MaxRetries: -1})
	defer rc.Close()
	lost := 0
	for _, k := range acked {
		if rc.Exists(ctx, k).Val() == 0 {
			lost++
		}
	}
	if lost != len(acked) {
		t.Fatalf("%d of %d writes acknowledged during the partition survived; Redis loses all of them", len(acked)-lost, len(acked))
	}
	if n := rc.DBSize(ctx).Val(); n != 100 {
		t.Fatalf("new primary has %d keys, want the 100 written before the partition", n)
	}
	t.Logf("all %d writes acknowledged by the isolated primary were lost after healing", lost)
}
