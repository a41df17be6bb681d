package workloads

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/clusteradmin/localcluster"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads/client"
)

// A node that lost its script cache (restart, SCRIPT FLUSH, a new node)
// answers NOSCRIPT: the op is sent again as EVAL and completes normally.
// localClient starts an in-process cluster of three primaries for the
// test and returns a client of it; both stop when the test ends.
func localClient(t *testing.T) (context.Context, *client.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	lc, err := localcluster.Start(ctx, t.TempDir(), 3, 0, time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lc.Stop)
	c, err := client.New(ctx, client.Options{Seeds: lc.Addrs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return ctx, c
}

func TestScriptFallbackAfterNoscript(t *testing.T) {
	ctx, c := localClient(t)
	w, _ := New("register", Config{Prefix: "t:"})
	if err := w.Setup(ctx, c); err != nil {
		t.Fatal(err)
	}
	for _, a := range c.Addrs() {
		if err := c.Node(a).ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	set := history.Op{Process: 0, F: "write", Key: "t:register:0:0"}
	set.SetValue(3)
	if out := w.Invoke(ctx, c, set); out.Type != history.OK {
		t.Fatalf("write: %+v", out)
	}
	cas := history.Op{Process: 0, F: "cas", Key: "t:register:0:0"}
	cas.SetValue([]int{3, 4})
	if out := w.Invoke(ctx, c, cas); out.Type != history.OK {
		t.Fatalf("cas after SCRIPT FLUSH: %+v", out)
	}
	cas.SetValue([]int{3, 1})
	if out := w.Invoke(ctx, c, cas); out.Type != history.Fail || out.ErrorText() != CASMismatch {
		t.Fatalf("cas with a stale expectation: %+v", out)
	}
	read := history.Op{Process: 0, F: "read", Key: "t:register:0:0"}
	if out := w.Invoke(ctx, c, read); out.Type != history.OK || string(out.Value) != "4" {
		t.Fatalf("read: %+v", out)
	}
}

// TestScriptWorkloadNoscriptAfterFailover runs the script workload on
// redis-server processes with replicas: SCRIPT LOAD on every primary,
// EVALSHA works, a CLUSTER FAILOVER promotes the replica of key 0's
// primary, and the next EVALSHA there fails with NOSCRIPT (Redis 7.0 does
// not propagate SCRIPT LOAD to replicas); the workload loads the script
// again, so the one after succeeds. The script checker calls that NOSCRIPT
// documented (valid) and counts it after the failover.
func TestScriptWorkloadNoscriptAfterFailover(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lc, err := localcluster.Start(ctx, t.TempDir(), 6, 1, time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Stop()
	c, err := client.New(ctx, client.Options{Seeds: lc.Addrs})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w, _ := New("script", Config{Prefix: "t:"})
	if err := w.Setup(ctx, c); err != nil {
		t.Fatal(err)
	}
	var ops []history.Op
	run := func(inv history.Op) history.Op {
		inv.Type, inv.Process, inv.Index = history.Invoke, 0, int64(len(ops))
		ops = append(ops, inv)
		out := w.Invoke(ctx, c, inv)
		out.Process, out.F, out.Key, out.Index = 0, inv.F, inv.Key, int64(len(ops))
		if out.Type == history.Invoke {
			t.Fatalf("no outcome for %+v", inv)
		}
		ops = append(ops, out)
		return out
	}
	for _, inv := range w.InitOps() {
		if out := run(inv); out.Type != history.OK {
			t.Fatalf("SCRIPT LOAD: %+v", out)
		}
	}
	key := w.InitOps()[0].Key
	add := history.Op{F: "add", Key: key}
	add.SetValue(2)
	if out := run(add); out.Type != history.OK {
		t.Fatalf("EVALSHA before the failover: %+v", out)
	}
	// Promote the replica of the key's primary.
	primary := c.Primary(Keyslot(key))
	var replica string
	for _, a := range lc.Addrs {
		info, _ := c.Node(a).Info(ctx, "replication").Result()
		if strings.Contains(info, "role:slave") && strings.Contains(info, "master_port:"+primary[strings.LastIndex(primary, ":")+1:]) {
			replica = a
		}
	}
	if replica == "" {
		t.Fatalf("no replica of %s", primary)
	}
	if err := c.Node(replica).Do(ctx, "cluster", "failover").Err(); err != nil {
		t.Fatal(err)
	}
	localcluster.Eventually(t, 20*time.Second, func() string {
		if info, _ := c.Node(replica).Info(ctx, "replication").Result(); !strings.Contains(info, "role:master") {
			return replica + " not promoted yet"
		}
		return ""
	})
	j := history.Op{Process: history.Nemesis, Type: history.Info, F: "journal", Index: int64(len(ops))}
	j.SetDetail([]byte(`{"seq":1,"state":"done","kind":"failover"}`))
	ops = append(ops, j)
	out := run(add)
	if out.Type != history.Fail || !strings.HasPrefix(out.ErrorText(), "NOSCRIPT") {
		t.Fatalf("EVALSHA on the promoted replica: %+v, want a NOSCRIPT failure (Redis 7.0 does not replicate SCRIPT LOAD)", out)
	}
	if out.Node != replica {
		t.Fatalf("NOSCRIPT from %s, want the promoted %s", out.Node, replica)
	}
	if out := run(add); out.Type != history.OK {
		t.Fatalf("EVALSHA after the workload loaded the script again: %+v", out)
	}
	r := checker.Script().Check(ctx, checker.NewHistory(ops))
	if f, ok := checker.FiguresAs[*checker.ScriptFigures](r); r.Valid != checker.Valid || !ok || f.NoscriptAfterFailover != 1 {
		t.Fatalf("script checker: %v %v", r.Valid, r.Figures)
	}
	t.Logf("script checker: %v", r.Why())
}
