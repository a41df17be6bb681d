package docker

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sys/unix"

	"github.com/redline-dev/redline/cluster"
)

// inNetns runs f on an OS thread inside the network namespace of node's
// container: sockets f opens live there, and stay there when other
// goroutines use them. The thread is never given back (it ends with the
// goroutine).
func inNetns(t *testing.T, ctx context.Context, c *Cluster, node string, f func() error) {
	t.Helper()
	n, err := c.node(node)
	if err != nil {
		t.Fatal(err)
	}
	ins, err := c.rt.cli.ContainerInspect(ctx, n.id, client.ContainerInspectOptions{})
	if err != nil || ins.Container.State == nil || ins.Container.State.Pid == 0 {
		t.Fatalf("%s is not running: %v", node, err)
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with this goroutine
		fd, err := unix.Open(fmt.Sprintf("/proc/%d/ns/net", ins.Container.State.Pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		errc <- f()
	}()
	if err := <-errc; err != nil {
		t.Fatalf("in %s's network namespace: %v", node, err)
	}
}

// udpShare sends count datagrams from node from's namespace to node to's
// address (or to loopback inside from, when to is "lo") and returns how
// many arrived, read in to's namespace.
func udpShare(t *testing.T, ctx context.Context, c *Cluster, from, to string, count int) int {
	t.Helper()
	host := map[string]string{}
	for _, n := range c.Nodes() {
		host[n.Name] = n.Host
	}
	dst, recvIn := host[to], to
	if to == "lo" {
		dst, recvIn = "127.0.0.1", from
	}
	var rc *net.UDPConn
	inNetns(t, ctx, c, recvIn, func() (err error) {
		rc, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP(dst)})
		return err
	})
	defer rc.Close()
	rc.SetReadBuffer(1 << 20)
	var sc *net.UDPConn
	inNetns(t, ctx, c, from, func() (err error) {
		sc, err = net.DialUDP("udp4", nil, rc.LocalAddr().(*net.UDPAddr))
		return err
	})
	defer sc.Close()
	got := make(chan int)
	go func() {
		buf := make([]byte, 64)
		n := 0
		for {
			rc.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			if _, err := rc.Read(buf); err != nil {
				got <- n
				return
			}
			n++
		}
	}()
	for i := range count {
		sc.Write([]byte(fmt.Sprintf("probe %d", i)))
		if i%50 == 49 {
			time.Sleep(time.Millisecond) // no burst the receiver's buffer drops
		}
	}
	return <-got
}

// tcpRate sends size bytes over TCP from node from's namespace to node
// to's and returns the rate the receiver saw, in bits per second.
func tcpRate(t *testing.T, ctx context.Context, c *Cluster, from, to string, size int) float64 {
	t.Helper()
	var toHost string
	for _, n := range c.Nodes() {
		if n.Name == to {
			toHost = n.Host
		}
	}
	var ln net.Listener
	inNetns(t, ctx, c, to, func() (err error) {
		ln, err = net.Listen("tcp4", net.JoinHostPort(toHost, "0"))
		return err
	})
	defer ln.Close()
	type result struct {
		d   time.Duration
		n   int64
		err error
	}
	done := make(chan result, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			done <- result{err: err}
			return
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(30 * time.Second))
		t0 := time.Now()
		n, err := io.Copy(io.Discard, conn)
		done <- result{time.Since(t0), n, err}
	}()
	var conn net.Conn
	inNetns(t, ctx, c, from, func() (err error) {
		conn, err = net.DialTimeout("tcp4", ln.Addr().String(), 5*time.Second)
		return err
	})
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := conn.Write(make([]byte, size)); err != nil {
		t.Fatalf("sending %d bytes from %s to %s: %v", size, from, to, err)
	}
	conn.Close()
	r := <-done
	if r.err != nil || r.n != int64(size) {
		t.Fatalf("%s received %d of %d bytes from %s: %v", to, r.n, size, from, r.err)
	}
	return float64(size*8) / r.d.Seconds()
}

// rootQdiscs is RootQdiscs, failing the test on an error.
func rootQdiscs(t *testing.T, ctx context.Context, c *Cluster, node string) []string {
	t.Helper()
	q, err := c.RootQdiscs(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// kernelHasNetem reads the kernel's own config, when it publishes it.
func kernelHasNetem() (has, known bool) {
	f, err := os.Open("/proc/config.gz")
	if err != nil {
		return false, false
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return false, false
	}
	b, _ := io.ReadAll(z)
	s := string(b)
	switch {
	case strings.Contains(s, "CONFIG_NET_SCH_NETEM=y"), strings.Contains(s, "CONFIG_NET_SCH_NETEM=m"):
		return true, true
	case strings.Contains(s, "# CONFIG_NET_SCH_NETEM is not set"):
		return false, true
	}
	return false, false
}

// TestLinkAndCPUFaults starts 3 reference nodes (no replicas: the faults act on
// namespaces and containers, the cluster is only their owner) and shows
// each link fault by its effect on traffic between the test's own
// containers: one-way cuts drop one direction only, loss drops its share
// of what a node sends (and none of its loopback), a rate cap holds TCP to
// the rate, and each undoes cleanly; a killed and restarted node gets its
// loss and cap back; a CPU cap makes a busy script several times slower
// and lifting it makes it fast again; the probes say what this kernel can
// do.
func TestLinkAndCPUFaults(t *testing.T) {
	r := newRuntime(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	name := uniqueName(t)
	cl, err := r.StartCluster(ctx, cluster.Spec{Target: "reference", Nodes: 3, Replicas: 0, NodeTimeout: time.Second, Name: name})
	if err != nil {
		t.Fatalf("starting a reference cluster (needs a static redline binary: make build, REDLINE_BINARY): %v", err)
	}
	defer func() {
		if err := cl.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
		if l := leftovers(t, name); len(l) > 0 {
			t.Errorf("left after Close: %v", l)
		}
	}()

	t.Run("probes", func(t *testing.T) {
		for _, kind := range []string{cluster.ProbeLoss, cluster.ProbeThrottle, cluster.ProbeOneWay, cluster.ProbeCPU} {
			if err := cl.Probe(ctx, kind); err != nil {
				t.Errorf("probe %s: %v", kind, err)
			}
		}
		err := r.Probe(ctx, cluster.ProbeDelay)
		has, known := kernelHasNetem()
		t.Logf("delay probe: %v (kernel config: netem %v, known %v)", err, has, known)
		if known && has != (err == nil) {
			t.Errorf("the kernel config says netem %v, the probe says %v", has, err)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "sch_netem") {
				t.Errorf("the delay probe's refusal does not name sch_netem: %v", err)
			}
			if derr := cl.Delay(ctx, "n1", 100*time.Millisecond, 0); derr == nil || !strings.Contains(derr.Error(), "sch_netem") {
				t.Errorf("Delay without netem: %v", derr)
			}
			if derr := cl.Delay(ctx, "n1", 0, 0); derr != nil {
				t.Errorf("removing a delay that cannot exist: %v", derr)
			}
		}
	})

	t.Run("one-way", func(t *testing.T) {
		if got := udpShare(t, ctx, cl, "n1", "n2", 100); got != 100 {
			t.Fatalf("before any cut %d of 100 datagrams n1->n2 arrived", got)
		}
		if err := cl.CutOneWay(ctx, "n1", []string{"n2"}); err != nil {
			t.Fatal(err)
		}
		there, back := udpShare(t, ctx, cl, "n1", "n2", 100), udpShare(t, ctx, cl, "n2", "n1", 100)
		other := udpShare(t, ctx, cl, "n1", "n3", 100)
		t.Logf("one-way n1->n2: %d of 100 arrived n1->n2, %d n2->n1, %d n1->n3", there, back, other)
		if there != 0 || back != 100 || other != 100 {
			t.Errorf("one-way cut n1->n2: arrived n1->n2 %d, n2->n1 %d, n1->n3 %d of 100; want 0, 100, 100", there, back, other)
		}
		if k, err := cl.DropRules(ctx, "n1"); err != nil || k != 1 {
			t.Errorf("n1 has %d drop rules (%v), want 1", k, err)
		}
		if err := cl.Heal(ctx); err != nil {
			t.Fatal(err)
		}
		if got := udpShare(t, ctx, cl, "n1", "n2", 100); got != 100 {
			t.Errorf("after heal %d of 100 datagrams n1->n2 arrived", got)
		}
	})

	t.Run("loss", func(t *testing.T) {
		if err := cl.Loss(ctx, "n1", 30); err != nil {
			t.Fatal(err)
		}
		got, back, lo := udpShare(t, ctx, cl, "n1", "n2", 2000), udpShare(t, ctx, cl, "n2", "n1", 500), udpShare(t, ctx, cl, "n1", "lo", 500)
		t.Logf("30%% loss on n1: %d of 2000 arrived n1->n2 (%.1f%% lost), %d of 500 n2->n1, %d of 500 on n1's loopback",
			got, 100-float64(got)/20, back, lo)
		// Binomial(2000, 0.3) lies within 600 +- 5 sd (+-102) but for a
		// chance below one in a million.
		if lost := 2000 - got; lost < 500 || lost > 700 || back != 500 || lo != 500 {
			t.Errorf("30%% loss on n1: lost %d of 2000 n1->n2 (want 500-700), arrived %d of 500 n2->n1 and %d of 500 on loopback (want all)", lost, back, lo)
		}
		if err := cl.Loss(ctx, "n1", 0); err != nil {
			t.Fatal(err)
		}
		if got := udpShare(t, ctx, cl, "n1", "n2", 500); got != 500 {
			t.Errorf("after the loss was removed %d of 500 arrived", got)
		}
		if k, err := cl.DropRules(ctx, "n1"); err != nil || k != 0 {
			t.Errorf("n1 has %d rules after the loss was removed (%v)", k, err)
		}
	})

	t.Run("slow-link", func(t *testing.T) {
		free := tcpRate(t, ctx, cl, "n1", "n2", 4<<20)
		const cap = 1_000_000
		if err := cl.Throttle(ctx, "n1", cap); err != nil {
			t.Fatal(err)
		}
		if q := rootQdiscs(t, ctx, cl, "n1"); len(q) != 1 || q[0] != "tbf" {
			t.Errorf("n1's root qdiscs %v, want tbf", q)
		}
		capped := tcpRate(t, ctx, cl, "n1", "n2", 256<<10) // 2 Mbit: 2 s at the cap
		back := tcpRate(t, ctx, cl, "n2", "n1", 4<<20)
		t.Logf("n1->n2 %.1f Mbit/s free, %.2f Mbit/s under a 1 Mbit/s cap; n2->n1 %.1f Mbit/s", free/1e6, capped/1e6, back/1e6)
		if capped < 0.7*cap || capped > 1.2*cap {
			t.Errorf("n1->n2 under a 1 Mbit/s cap: %.2f Mbit/s", capped/1e6)
		}
		if free < 10*cap || back < 10*cap {
			t.Errorf("uncapped directions: %.1f and %.1f Mbit/s, want well over the cap", free/1e6, back/1e6)
		}
		if err := cl.Throttle(ctx, "n1", 0); err != nil {
			t.Fatal(err)
		}
		if q := rootQdiscs(t, ctx, cl, "n1"); len(q) != 0 && !(len(q) == 1 && q[0] == "noqueue") {
			t.Errorf("n1's root qdiscs after the cap was removed: %v", q)
		}
		if again := tcpRate(t, ctx, cl, "n1", "n2", 4<<20); again < 10*cap {
			t.Errorf("n1->n2 after the cap was removed: %.2f Mbit/s", again/1e6)
		}
	})

	t.Run("cpu-limit", func(t *testing.T) {
		var addr string
		for _, n := range cl.Nodes() {
			if n.Name == "n2" {
				addr = n.Addr
			}
		}
		// At 2% of a CPU the script takes up to 50 times its free time:
		// with a free time of 0.1-0.2 s, several seconds, past the admin
		// client's 3 s read timeout (a clean-clone run of 2026-12-05 failed
		// with an i/o timeout on the capped EVAL; others saw 20-26x and
		// passed). The reply is what is measured, so it is waited for.
		opt := cl.spec.RunUser.AdminOptions(addr)
		opt.ReadTimeout = time.Minute
		rc := redis.NewClient(opt)
		defer rc.Close()
		// A script that keeps the server's CPU busy: its reply time is
		// CPU time, best of three.
		busy := func() time.Duration {
			best := time.Hour
			for range 3 {
				t0 := time.Now()
				if err := rc.Eval(ctx, "local i = 0 while i < 300000 do i = i + 1 end return i", nil).Err(); err != nil {
					t.Fatal(err)
				}
				best = min(best, time.Since(t0))
			}
			return best
		}
		free := busy()
		if err := cl.LimitCPU(ctx, "n2", 0.02); err != nil {
			t.Fatal(err)
		}
		capped := busy()
		if err := cl.LimitCPU(ctx, "n2", 0); err != nil {
			t.Fatal(err)
		}
		again := busy()
		t.Logf("busy script on n2: %s free, %s at 2%% of a CPU, %s with the cap lifted", free, capped, again)
		if capped < 3*free || again > capped/3 {
			t.Errorf("busy script: %s free, %s capped at 2%%, %s lifted: want the cap 3x slower at least, the lift 3x faster", free, capped, again)
		}
		if q, err := cl.CPUQuota(ctx, "n2"); err != nil || q != -1 {
			t.Errorf("n2's CPU quota after the lift: %d %v; want -1", q, err)
		}
	})

	t.Run("restart-reapplies", func(t *testing.T) {
		if err := cl.Loss(ctx, "n3", 10); err != nil {
			t.Fatal(err)
		}
		if err := cl.Throttle(ctx, "n3", 2_000_000); err != nil {
			t.Fatal(err)
		}
		if err := cl.Kill(ctx, "n3"); err != nil {
			t.Fatal(err)
		}
		if err := cl.Restart(ctx, "n3"); err != nil {
			t.Fatal(err)
		}
		k, err := cl.DropRules(ctx, "n3")
		q := rootQdiscs(t, ctx, cl, "n3")
		if err != nil || k != 1 || len(q) != 1 || q[0] != "tbf" {
			t.Errorf("restarted n3: %d rules (%v), root qdiscs %v; want the loss rule and tbf back", k, err, q)
		}
		err = errors.Join(cl.Loss(ctx, "n3", 0), cl.Throttle(ctx, "n3", 0))
		if err != nil {
			t.Fatal(err)
		}
	})
}
