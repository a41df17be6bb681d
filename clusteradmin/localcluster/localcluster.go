// Package localcluster starts a Redis Cluster of plain redis-server (or
// other compatible) processes on 127.0.0.1, for tests of the external
// target and of cluster tooling that must not depend on Docker.
package localcluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
)

// Cluster is a set of local server processes formed into a cluster.
type Cluster struct {
	Addrs []string
	Dir   string
	procs []*exec.Cmd
	// exited[i] receives procs[i]'s exit (its Wait result) once.
	exited []chan error
}

// Start runs n redis-server processes in dir and forms a cluster with the
// given replicas per primary. Binary defaults to redis-server on PATH.
func Start(ctx context.Context, dir string, n, replicas int, nodeTimeout time.Duration, binary string) (*Cluster, error) {
	return StartWith(ctx, dir, n, replicas, nodeTimeout, binary, cluster.Credentials{}, nil)
}

// StartWith is Start with extra server arguments for each node, given its
// port (e.g. --requirepass, or --port 0 --tls-port <port> and the TLS
// files), and the credentials forming connects with (what those arguments
// ask for).
func StartWith(ctx context.Context, dir string, n, replicas int, nodeTimeout time.Duration, binary string, creds cluster.Credentials, extra func(port int) []string) (*Cluster, error) {
	if binary == "" {
		b, err := exec.LookPath("redis-server")
		if err != nil {
			return nil, fmt.Errorf("redis-server not found on PATH: run scripts/install-deps (apt-get install redis-server)")
		}
		binary = b
	}
	c := &Cluster{Dir: dir}
	exited := make([]chan error, 0, n)
	for i := 0; i < n; i++ {
		port, err := FreePort()
		if err != nil {
			c.Stop()
			return nil, err
		}
		nd := filepath.Join(dir, fmt.Sprintf("node%d", i+1))
		if err := os.MkdirAll(nd, 0o755); err != nil {
			c.Stop()
			return nil, err
		}
		cmd := exec.Command(binary, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--cluster-enabled", "yes", "--cluster-node-timeout", strconv.FormatInt(nodeTimeout.Milliseconds(), 10),
			"--cluster-config-file", "nodes.conf", "--save", "", "--appendonly", "no", "--dir", nd,
			"--logfile", filepath.Join(nd, "server.log"))
		if extra != nil {
			cmd.Args = append(cmd.Args, extra(port)...)
		}
		if err := cmd.Start(); err != nil {
			c.Stop()
			return nil, fmt.Errorf("starting %s: %w", binary, err)
		}
		c.procs = append(c.procs, cmd)
		c.Addrs = append(c.Addrs, fmt.Sprintf("127.0.0.1:%d", port))
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		exited = append(exited, done)
	}
	for i, a := range c.Addrs {
		if err := waitListening(ctx, a, exited[i]); err != nil {
			c.Stop()
			return nil, fmt.Errorf("%w (log: %s)", err, filepath.Join(dir, fmt.Sprintf("node%d", i+1), "server.log"))
		}
	}
	c.exited = exited
	if err := clusteradmin.Form(ctx, creds, c.Addrs, replicas, func(string, ...any) {}); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// Stop kills every process.
func (c *Cluster) Stop() {
	for i, p := range c.procs {
		_ = p.Process.Kill()
		if i < len(c.exited) {
			<-c.exited[i]
		}
	}
	c.procs = nil
	c.exited = nil
}

// Ports are only probed by FreePort and bound later by the servers, so the
// kernel may hand out the same port twice, or one node's port may be
// another's bus port (port+10000): taken, process-wide, rules both out.
var (
	takenMu sync.Mutex
	taken   = map[int]bool{}
)

// FreePort returns a loopback port p such that p and its cluster bus port
// p+10000 are free now and were not returned before by this process.
func FreePort() (int, error) {
	takenMu.Lock()
	defer takenMu.Unlock()
	// Cluster bus ports are port+10000, so keep ports below 55535.
	for i := 0; i < 100; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if p+10000 > 65535 || taken[p] || taken[p+10000] {
			continue
		}
		if b, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+10000)); err == nil {
			b.Close()
			taken[p], taken[p+10000] = true, true
			return p, nil
		}
	}
	return 0, fmt.Errorf("no free port pair (p, p+10000) on 127.0.0.1")
}

// waitListening waits until addr accepts connections, failing early when the
// process exits (a port taken by someone else since it was probed).
func waitListening(ctx context.Context, addr string, exited <-chan error) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("server for %s exited before listening: %v", addr, err)
		default:
		}
		conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			conn.Close()
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("server at %s did not start listening: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
