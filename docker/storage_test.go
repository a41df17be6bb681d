package docker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
)

// TestPowerCutLosesWhatWasNotFsynced starts three reference primaries
// (no replicas: nothing else holds a copy) with their data directories
// through docker/faultfs and appendonly yes. With appendfsync no, a power
// cut of every node loses acknowledged writes; with appendfsync always it
// keeps every one. Then a full disk: writes are refused (MISCONF) while
// it lasts and accepted once it heals.
func TestPowerCutLosesWhatWasNotFsynced(t *testing.T) {
	r := newRuntime(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	name := uniqueName(t)
	cl, err := r.StartCluster(ctx, cluster.Spec{
		Target: "reference", Nodes: 3, Replicas: 0, NodeTimeout: time.Second, AppendOnly: true, FaultFS: true, Name: name,
	})
	if err != nil {
		t.Fatalf("starting the reference cluster with faulting data directories: %v", err)
	}
	storageDir := cl.storage.dir
	defer func() {
		if err := cl.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
		if l := leftovers(t, name); len(l) > 0 {
			t.Errorf("left after Close: %v", l)
		}
		if _, err := os.Stat(storageDir); !os.IsNotExist(err) {
			t.Errorf("%s left after Close (%v)", storageDir, err)
		}
		if b, _ := os.ReadFile("/proc/self/mounts"); strings.Contains(string(b), storageDir) {
			t.Errorf("mounts left after Close under %s", storageDir)
		}
	}()
	if err := cl.StorageFaults(); err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, n := range cl.Nodes() {
		names = append(names, n.Name)
	}
	// The node's files go through the mount into the backing directory.
	if _, err := os.Stat(filepath.Join(storageDir, "n1", "backing", "nodes.conf")); err != nil {
		t.Fatalf("n1's nodes.conf is not in its backing directory: %v", err)
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs(), DisableIdentity: true, MaxRedirects: 3, Protocol: 2})
	defer cc.Close()
	setAll := func(setting string) {
		t.Helper()
		for _, n := range cl.Nodes() {
			c := rdb(n.Addr)
			err := c.ConfigSet(ctx, "appendfsync", setting).Err()
			c.Close()
			if err != nil {
				t.Fatalf("CONFIG SET appendfsync %s on %s: %v", setting, n.Name, err)
			}
		}
	}
	write := func(prefix string, n int) {
		t.Helper()
		for i := range n {
			if err := cc.Set(ctx, fmt.Sprintf("%s:%d", prefix, i), i, 0).Err(); err != nil {
				t.Fatalf("SET %s:%d: %v", prefix, i, err)
			}
		}
	}
	count := func(prefix string, n int) int {
		t.Helper()
		kept := 0
		for i := range n {
			err := cc.Get(ctx, fmt.Sprintf("%s:%d", prefix, i)).Err()
			switch err {
			case nil:
				kept++
			case redis.Nil:
			default:
				t.Fatalf("GET %s:%d: %v", prefix, i, err)
			}
		}
		return kept
	}
	powerCycle := func() []cluster.NodeLoss {
		t.Helper()
		t0 := time.Now()
		loss, err := cl.PowerCut(ctx, names, cluster.PowerLoss{})
		if err != nil {
			t.Fatalf("power cut: %v", err)
		}
		t.Logf("power cut in %s: %+v", time.Since(t0).Round(time.Millisecond), loss)
		for _, n := range names {
			if err := cl.Restart(ctx, n); err != nil {
				t.Fatalf("restart %s: %v", n, err)
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := clusteradmin.WaitConverged(cctx, cluster.Credentials{}, cl.Addrs()); err != nil {
			t.Fatalf("after the power cut: %v", err)
		}
		return loss
	}

	setAll("no")
	write("no", 300)
	loss := powerCycle()
	lost := int64(0)
	for _, l := range loss {
		lost += l.LostBytes
	}
	if lost == 0 {
		t.Fatalf("with appendfsync no the cut took no byte: %+v", loss)
	}
	if kept := count("no", 300); kept != 0 {
		t.Fatalf("appendfsync no: %d of 300 acknowledged writes survived the power cut, want none (written well within the 30 s writeback)", kept)
	}
	t.Logf("appendfsync no: 300 of 300 acknowledged writes lost")

	setAll("always")
	write("always", 300)
	// Writes in flight when the power fails (every one fsyncs: the
	// servers are inside the filesystem when it freezes).
	busy, stopBusy := context.WithCancel(ctx)
	busyDone := make(chan int)
	go func() {
		sent := 0
		for i := 0; busy.Err() == nil; i++ {
			cc.Set(busy, fmt.Sprintf("busy:%d", i), i, 0)
			sent++
		}
		busyDone <- sent
	}()
	time.Sleep(500 * time.Millisecond)
	powerCycle()
	stopBusy()
	t.Logf("%d writes sent while the power failed", <-busyDone)
	if kept := count("always", 300); kept != 300 {
		t.Fatalf("appendfsync always: only %d of 300 acknowledged writes survived the power cut", kept)
	}

	// A full disk under n1: a write to a key n1 owns is not acknowledged;
	// once the disk has room and the node is started again, it is. Redis
	// 7.0 with appendfsync always exits on an AOF write error before the
	// reply, and so does the reference (server/aof.go). The power cut
	// restarted every node with its start-up settings (everysec, under
	// which Redis acknowledges and then refuses with MISCONF), so always is
	// set again first.
	setAll("always")
	var key string
	n1 := cl.Nodes()[0]
	for i := 0; key == ""; i++ {
		k := fmt.Sprintf("disk:%d", i)
		if addr, err := cc.MasterForKey(ctx, k); err == nil && addr.Options().Addr == n1.Addr {
			key = k
		}
	}
	if err := cl.SetDiskError(ctx, n1.Name, cluster.DiskFull); err != nil {
		t.Fatal(err)
	}
	c1 := rdb(n1.Addr)
	defer c1.Close()
	err = c1.Set(ctx, key, "during", 0).Err()
	if err == nil {
		t.Fatalf("SET %s on n1 with a full disk and appendfsync always was acknowledged", key)
	}
	t.Logf("SET during the full disk: %v", err)
	if err := cl.SetDiskError(ctx, n1.Name, ""); err != nil {
		t.Fatal(err)
	}
	t.Logf("n1's log after the full disk:\n%s", cl.logTail(cl.nodes[0], 3))
	t.Logf("SET on n1 once the disk has room, before a restart: %v", c1.Set(ctx, key, "healed", 0).Err())
	if err := cl.Kill(ctx, n1.Name); err != nil {
		t.Fatal(err)
	}
	if err := cl.Restart(ctx, n1.Name); err != nil {
		t.Fatalf("restarting n1 after the full disk: %v", err)
	}
	pollUntil(t, ctx, "writes accepted once the disk has room", func() string {
		if err := c1.Set(ctx, key, "after", 0).Err(); err != nil {
			return err.Error()
		}
		return ""
	})
}
