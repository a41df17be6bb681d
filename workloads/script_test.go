package workloads

import (
	"context"
	"testing"
	"time"

	"github.com/redline-dev/redline/harness/cluster/localcluster"
	"github.com/redline-dev/redline/harness/history"
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
