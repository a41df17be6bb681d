package clusteradmin_test

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/clusteradmin/localcluster"
)

// startLocalNodes runs n empty cluster-mode redis-server processes on loopback.
func startLocalNodes(t *testing.T, n int) []string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server not found (%v): run scripts/install-deps", err)
	}
	var addrs []string
	for i := 0; i < n; i++ {
		p, err := localcluster.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		cmd := exec.Command(bin, "--port", strconv.Itoa(p), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
			"--cluster-node-timeout", "1000", "--save", "", "--appendonly", "no", "--dir", dir, "--repl-diskless-sync-delay", "0",
			"--logfile", dir+"/redis.log")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", p))
	}
	return addrs
}

func TestFormLocalCluster(t *testing.T) {
	addrs := startLocalNodes(t, 6)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var logged []string
	if err := clusteradmin.Form(ctx, cluster.Credentials{}, addrs, 1, func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }); err != nil {
		t.Fatal(err)
	}
	if len(logged) == 0 || !strings.Contains(logged[0], "3 primaries") {
		t.Fatalf("log lines %q", logged)
	}
	c := cluster.AdminClient(addrs[5])
	defer c.Close()
	info, err := c.ClusterInfo(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := clusteradmin.InfoField(info, "cluster_state"); v != "ok" {
		t.Fatalf("cluster_state %q", v)
	}
	if v, _ := clusteradmin.InfoField(info, "cluster_slots_ok"); v != "16384" {
		t.Fatalf("cluster_slots_ok %q", v)
	}
	nodes, err := clusteradmin.ReadNodes(ctx, cluster.Credentials{}, append([]string{"127.0.0.1:1"}, addrs...))
	if err != nil {
		t.Fatal(err)
	}
	primaries, replicas := 0, 0
	for _, n := range nodes {
		if n.IsPrimary() {
			primaries++
			if s := n.NumSlots(); s < 5461 || s > 5462 {
				t.Errorf("primary %s has %d slots", n.Addr, s)
			}
		} else if n.IsReplica() && n.Master != "" {
			replicas++
		}
	}
	if primaries != 3 || replicas != 3 {
		t.Fatalf("%d primaries, %d replicas", primaries, replicas)
	}

	// Forming again must refuse: the nodes are no longer empty.
	if err := clusteradmin.Form(ctx, cluster.Credentials{}, addrs, 1, nil); err == nil || !strings.Contains(err.Error(), "not an empty node") {
		t.Fatalf("Form on a formed cluster: %v", err)
	}

	// Stop one primary: WaitConverged must time out and name the failed node.
	var victim cluster.NodeInfo
	for _, n := range nodes {
		if n.IsPrimary() && n.Addr != addrs[5] {
			victim = n
			break
		}
	}
	vc := cluster.AdminClient(victim.Addr)
	_ = vc.Do(ctx, "SHUTDOWN", "NOSAVE").Err()
	vc.Close()
	short, cancel2 := context.WithTimeout(ctx, 2500*time.Millisecond)
	defer cancel2()
	err = clusteradmin.WaitConverged(short, cluster.Credentials{}, addrs)
	if err == nil || !strings.Contains(err.Error(), "did not converge") {
		t.Fatalf("WaitConverged with a dead primary: %v", err)
	}
	t.Logf("expected error: %v", err)
}

func TestWaitConvergedNoNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	err := clusteradmin.WaitConverged(ctx, cluster.Credentials{}, []string{"127.0.0.1:1"})
	if err == nil || !strings.Contains(err.Error(), "no node answered") {
		t.Fatalf("got %v", err)
	}
}

func TestFormRejectsDuplicateAddress(t *testing.T) {
	err := clusteradmin.Form(t.Context(), cluster.Credentials{}, []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:1"}, 0, nil)
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1 is listed twice") {
		t.Fatalf("got %v, want a listed-twice error", err)
	}
}
