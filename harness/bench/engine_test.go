package bench

import (
	"context"
	"testing"
	"time"

	"github.com/redline-dev/redline/workloads/kv"
)

// fakeClock is simulated time for one worker: sleeping jumps ahead, and
// the simulated cluster advances it by each op's service time.
type fakeClock struct{ t time.Duration }

func (c *fakeClock) now() time.Duration { return c.t }

func (c *fakeClock) sleepUntil(ctx context.Context, t time.Duration) bool {
	c.t = max(c.t, t)
	return ctx.Err() == nil
}

func testKV() kv.Config {
	return kv.Config{Prefix: "t:", Keys: 100, SetRatio: 1, GetRatio: 1, ValueMin: 8, ValueMax: 8, Pattern: "uniform", Pipeline: 1}
}

// simulate runs one worker against a cluster that answers each op in
// service time, except op number stallAt, which takes stall.
func simulate(t *testing.T, rate float64, duration, service time.Duration, stallAt int, stall time.Duration) *Result {
	t.Helper()
	o := Options{KV: testKV(), Concurrency: 1, Rate: rate, Duration: duration, OpTimeout: time.Second, Seed: 1}
	if err := o.KV.Validate(); err != nil {
		t.Fatal(err)
	}
	e := newEngine(o, nil)
	clk := &fakeClock{}
	n := 0
	e.exec = func(w *worker, _ context.Context, batch []pending, clk2 clock) {
		for i := range batch {
			d := service
			if n == stallAt {
				d = stall
			}
			n++
			clk.t += d
			batch[i].done, batch[i].out = clk.t, outOK
		}
	}
	e.clock = clk
	e.series = newSeries(e.workers, e.shards())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if rate <= 0 {
		// Closed loop stops on the context: stop once simulated time is up.
		e.exec = stopAt(e.exec, clk, duration, cancel)
	}
	if rate > 0 {
		runInline(ctx, e, clk)
	} else {
		e.workers[0].run(ctx, clk)
	}
	e.series.collect(clk.t)
	return e.result(clk.t)
}

// runInline drives the open loop in one goroutine on simulated time: the
// schedule's due ops are queued (all to node 0: no router), then worker 0,
// as node 0's one lane, sends what is queued; when nothing is, time jumps
// to the next op's intended time. Ops are sent until the queue is empty.
func runInline(ctx context.Context, e *engine, clk *fakeClock) {
	var q *nodeQueue
	d := e.newDispatcher(func(_ uint32, nq *nodeQueue) { q = nq })
	e.series.addStats(d.stats)
	w := e.workers[0]
	batch := make([]pending, e.o.KV.Pipeline)
	for {
		next, more := d.pump(clk.now())
		if q != nil {
			if n := q.take(ctx, batch, false); n > 0 {
				w.sendQueued(ctx, batch[:n], clk)
				continue
			}
		}
		if !more {
			return
		}
		clk.sleepUntil(ctx, next)
	}
}

func stopAt(exec func(*worker, context.Context, []pending, clock), clk *fakeClock, end time.Duration, stop func()) func(*worker, context.Context, []pending, clock) {
	return func(w *worker, ctx context.Context, b []pending, c clock) {
		exec(w, ctx, b, c)
		if clk.t >= end {
			stop()
		}
	}
}

// A 2 s stall in a 10 s open-loop run at 1000 ops/s: the ~2000 ops due
// during the stall are sent late, and their latency from the intended time
// shows it; the raw latency (from the actual send) sees one slow op only.
func TestOpenLoopCorrectsForAStall(t *testing.T) {
	r := simulate(t, 1000, 10*time.Second, 100*time.Microsecond, 3000, 2*time.Second)
	tot := r.Ops["total"]
	if tot.Corrected.Count != 10000 {
		t.Fatalf("ops measured = %d, want the 10000 the schedule holds", tot.Corrected.Count)
	}
	if tot.Corrected.P999 < 1500 {
		t.Errorf("corrected p99.9 = %.3f ms, want the stall (about 2000 ms)", tot.Corrected.P999)
	}
	if tot.Corrected.P99 < 1000 {
		t.Errorf("corrected p99 = %.3f ms: the ops due during the stall are missing", tot.Corrected.P99)
	}
	if tot.Raw.P999 > 1 {
		t.Errorf("raw p99.9 = %.3f ms, want the 0.1 ms service time: only one op was slow", tot.Raw.P999)
	}
	if tot.Raw.Max < 1999 {
		t.Errorf("raw max = %.3f ms, want the stalled op's 2000 ms", tot.Raw.Max)
	}
	if r.LagMaxMs < 1900 || r.LateOps < 1000 {
		t.Errorf("lag max %.1f ms, %d late ops: the generator must report it fell behind", r.LagMaxMs, r.LateOps)
	}
	if len(r.Diagnosis) == 0 {
		t.Errorf("no diagnosis of the lag")
	}
	if r.Unsent != 0 {
		t.Errorf("%d ops unsent: every scheduled op was sent, late", r.Unsent)
	}
}

// The same stall in a closed loop hides: one slow op, nothing corrected.
func TestClosedLoopMeasuresFromTheSend(t *testing.T) {
	r := simulate(t, 0, 10*time.Second, 100*time.Microsecond, 3000, 2*time.Second)
	tot := r.Ops["total"]
	if tot.Corrected.P999 != tot.Raw.P999 || tot.Corrected.Max != tot.Raw.Max {
		t.Errorf("closed loop: corrected %+v differs from raw %+v", tot.Corrected, tot.Raw)
	}
	if tot.Raw.P999 > 1 {
		t.Errorf("closed-loop p99.9 = %.3f ms: the stall should hide (coordinated omission)", tot.Raw.P999)
	}
	if r.LateOps != 0 {
		t.Errorf("closed loop has no schedule, yet %d ops late", r.LateOps)
	}
}

// Without a stall, an open loop that keeps up reports no lag.
func TestOpenLoopOnSchedule(t *testing.T) {
	r := simulate(t, 1000, 5*time.Second, 100*time.Microsecond, -1, 0)
	if r.LateOps != 0 || r.Ops["total"].Corrected.Max > 1 {
		t.Errorf("late %d, corrected max %.3f ms: an idle schedule should be kept", r.LateOps, r.Ops["total"].Corrected.Max)
	}
	if r.Ops["total"].Corrected.Count != 5000 {
		t.Errorf("%d ops, want 5000", r.Ops["total"].Corrected.Count)
	}
}
