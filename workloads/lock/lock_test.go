package lock

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads"
	"github.com/redline-dev/redline/workloads/workloadtest"
)

func lockOp(f, key string, v Value) history.Op {
	op := history.Op{F: f, Key: key}
	op.SetValue(v)
	return op
}

// The scripts on a real (in-process) cluster: a taken lock is refused,
// fences rise, and compare-and-delete deletes only the owner's lock.
func TestLockScripts(t *testing.T) {
	ctx, c := workloadtest.LocalClient(t)
	w := workloadtest.New(t, "lock").(*lock)
	if err := w.Setup(ctx, c); err != nil {
		t.Fatal(err)
	}
	k := w.key(0)
	acq := func(token string) history.Op {
		return w.Invoke(ctx, c, lockOp("acquire", k, Value{Token: token, TTLms: 5000}))
	}
	rel := func(token string) history.Op {
		return w.Invoke(ctx, c, lockOp("release", k, Value{Token: token}))
	}
	a := acq("a")
	var v Value
	if a.Type != history.OK || a.DecodeValue(&v) != nil || string(v.Fence) != "1" || v.Token != "a" {
		t.Fatalf("first acquire: %+v %s", a, a.Value)
	}
	if b := acq("b"); b.Type != history.Fail || b.ErrorText() != Held {
		t.Fatalf("acquire of a taken lock: %+v", b)
	}
	if r := rel("b"); r.Type != history.Fail || r.ErrorText() != NotOwner {
		t.Fatalf("release by another token: %+v", r)
	}
	if r := rel("a"); r.Type != history.OK {
		t.Fatalf("release by the owner: %+v", r)
	}
	c2 := acq("c")
	if c2.Type != history.OK || c2.DecodeValue(&v) != nil || string(v.Fence) != "2" {
		t.Fatalf("acquire after release: %+v %s", c2, c2.Value)
	}
	if r := rel("a"); r.Type != history.Fail {
		t.Fatalf("second release of a: %+v", r)
	}
	// The final clear deletes the lock (c's), not its fence.
	if out := w.Invoke(ctx, c, history.Op{F: "clear", Key: k}); out.Type != history.OK {
		t.Fatalf("clear: %+v", out)
	}
	if n := c.Node(c.Primary(workloads.Keyslot(k))).Exists(ctx, k, fenceKey(k)).Val(); n != 1 {
		t.Fatalf("after clear, %d of the lock and its fence exist, want the fence only", n)
	}
	if ops := w.FinalOps(); len(ops) != w.keys || ops[0].F != "clear" {
		t.Fatalf("final ops %v", ops)
	}
}

// A few workers on a healthy cluster, recorded as the runner does: the
// lock checker finds the history valid.
func TestLockWorkersOnAHealthyClusterAreValid(t *testing.T) {
	ctx, c := workloadtest.LocalClient(t)
	w := workloadtest.New(t, "lock").(*lock)
	if err := w.Setup(ctx, c); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var ops []history.Op
	t0 := time.Now()
	record := func(op history.Op) {
		mu.Lock()
		defer mu.Unlock()
		op.Time = int64(time.Since(t0))
		op.Index = int64(len(ops))
		ops = append(ops, op)
	}
	var wg sync.WaitGroup
	for p := 0; p < 4; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := w.Generator(p, 7)
			process := history.Process(p)
			for i := 0; i < 16; i++ {
				inv := g.Next()
				if v := (Value{}); inv.F == "release" && inv.DecodeValue(&v) == nil && v.HoldMs > 300 {
					v.HoldMs = 300 // keep the test short
					inv.SetValue(v)
				}
				inv.Process, inv.Type = process, history.Invoke
				record(inv)
				out := w.Invoke(context.Background(), c, inv)
				out.Process, out.F, out.Key = process, inv.F, inv.Key
				record(out)
				if out.Type == history.Info {
					process += 4
				}
			}
		}()
	}
	wg.Wait()
	r := Checker(checker.Scope{KeyPrefix: w.KeyPrefix()}).Check(ctx, checker.NewHistory(ops))
	if r.Valid != checker.Valid {
		t.Fatalf("valid = %v: %v", r.Valid, r.Figures)
	}
	f, ok := checker.FiguresAs[*Figures](r)
	if !ok || f.AcquiresOK == 0 || f.ReleasesOK == 0 {
		t.Fatalf("figures %v", r.Figures)
	}
	t.Logf("figures: acquires %v ok %v fail %v, releases ok %v not-owner %v", f.Acquires, f.AcquiresOK, f.AcquiresFail, f.ReleasesOK, f.ReleasesNotOwner)
}
