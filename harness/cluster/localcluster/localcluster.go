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
	"time"

	"github.com/redline-dev/redline/harness/cluster"
)

// Cluster is a set of local server processes formed into a cluster.
type Cluster struct {
	Addrs []string
	Dir   string
	procs []*exec.Cmd
}

// Start runs n redis-server processes in dir and forms a cluster with the
// given replicas per primary. Binary defaults to redis-server on PATH.
func Start(ctx context.Context, dir string, n, replicas int, nodeTimeout time.Duration, binary string) (*Cluster, error) {
	if binary == "" {
		b, err := exec.LookPath("redis-server")
		if err != nil {
			return nil, fmt.Errorf("redis-server not found on PATH: run scripts/install-deps (apt-get install redis-server)")
		}
		binary = b
	}
	c := &Cluster{Dir: dir}
	for i := 0; i < n; i++ {
		port, err := freePort()
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
		if err := cmd.Start(); err != nil {
			c.Stop()
			return nil, fmt.Errorf("starting %s: %w", binary, err)
		}
		c.procs = append(c.procs, cmd)
		c.Addrs = append(c.Addrs, fmt.Sprintf("127.0.0.1:%d", port))
	}
	for _, a := range c.Addrs {
		if err := waitListening(ctx, a); err != nil {
			c.Stop()
			return nil, err
		}
	}
	if err := cluster.Form(ctx, c.Addrs, replicas, func(string, ...any) {}); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// Stop kills every process.
func (c *Cluster) Stop() {
	for _, p := range c.procs {
		_ = p.Process.Kill()
		_, _ = p.Process.Wait()
	}
	c.procs = nil
}

func freePort() (int, error) {
	// Cluster bus ports are port+10000, so keep ports below 55535.
	for i := 0; i < 50; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if p+10000 > 65535 {
			continue
		}
		if b, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+10000)); err == nil {
			b.Close()
			return p, nil
		}
	}
	return 0, fmt.Errorf("no free port pair (p, p+10000) on 127.0.0.1")
}

func waitListening(ctx context.Context, addr string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
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
