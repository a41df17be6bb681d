// Package workloadtest is what the tests of a workload in its own folder
// (workloads/lock, workloads/queue, workloads/ttl) share: a client of an
// in-process cluster, and workers recorded as the runner records them.
package workloadtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redline-dev/redline/clusteradmin/localcluster"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads"
	"github.com/redline-dev/redline/workloads/client"
)

// LocalClient starts an in-process cluster of 3 primaries for the test
// and a client of it.
func LocalClient(t *testing.T) (context.Context, *client.Client) {
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

// New builds workload name with the tests' key prefix.
func New(t *testing.T, name string) workloads.Workload {
	t.Helper()
	w, err := workloads.New(name, workloads.Config{Prefix: "t:"})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// RunRecorded runs workers x n ops of w and then its final ops, recorded
// as the runner does; adjust may change an invocation before it is sent.
func RunRecorded(t *testing.T, ctx context.Context, c *client.Client, w workloads.Workload, workers, n int, adjust func(*history.Op)) []history.Op {
	t.Helper()
	var mu sync.Mutex
	var ops []history.Op
	t0 := time.Now()
	record := func(op history.Op) history.Op {
		mu.Lock()
		defer mu.Unlock()
		op.Time = int64(time.Since(t0))
		op.Index = int64(len(ops))
		ops = append(ops, op)
		return op
	}
	run := func(process history.Process, inv history.Op) history.Op {
		inv.Process, inv.Type = process, history.Invoke
		if adjust != nil {
			adjust(&inv)
		}
		inv = record(inv)
		out := w.Invoke(context.Background(), c, inv)
		out.Process, out.F, out.Key = process, inv.F, inv.Key
		return record(out)
	}
	var wg sync.WaitGroup
	for p := 0; p < workers; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := w.Generator(p, 7)
			process := history.Process(p)
			for i := 0; i < n; i++ {
				if out := run(process, g.Next()); out.Type == history.Info {
					process += history.Process(workers)
				}
			}
		}()
	}
	wg.Wait()
	for i, op := range w.FinalOps() {
		run(history.Process(1000+i), op)
	}
	return ops
}
