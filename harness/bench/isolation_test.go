package bench

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Three fake primaries, one of which holds every reply for 2 s from 2 s
// after the start of a 6 s open-loop run at 3000 ops/s: the ops to the
// other two keep their schedule (sent when due, done during the stall, at
// their share of the rate in every second of it), while every op due to
// the stalled node during the stall completes only when it ends, so its
// corrected latency, from the intended time, shows the stall. Bounds are
// fractions of the stall, not timings of the test.
func TestStalledNodeDoesNotHoldUpOthers(t *testing.T) {
	const (
		rate     = 3000
		duration = 6 * time.Second
		stall    = 2 * time.Second
	)
	var from, to atomic.Int64 // the stall, unix ns
	hold := func() {
		now := time.Now().UnixNano()
		if f, u := from.Load(), to.Load(); f > 0 && now >= f && now < u {
			time.Sleep(time.Duration(u - now))
		}
	}
	addrs := []string{fakeNode(t), listen(t, func(c net.Conn) { serveFakeHolding(c, hold) }), fakeNode(t)}
	rt := staticRouter(addrs[0])
	for s := range rt.slots {
		rt.slots[s].Store(rt.node(addrs[s*3/numSlots]))
	}
	rt.lastRefresh.Store(time.Now().Add(time.Hour).UnixNano()) // no topology to refresh from

	kv := testKV()
	kv.Keys = 3000
	o := Options{KV: kv, Concurrency: 4, Rate: rate, Duration: duration, OpTimeout: 5 * stall, Seed: 7,
		Started: func(func() (int64, int64, int64)) {
			f := time.Now().Add(2 * time.Second)
			from.Store(f.UnixNano())
			to.Store(f.Add(stall).UnixNano())
		}}
	e := newEngine(o, rt)
	if e.shards() != 3 {
		t.Fatalf("%d shards", e.shards())
	}
	var mu sync.Mutex
	var ops []pending
	exec := e.exec
	e.exec = func(w *worker, ctx context.Context, batch []pending, clk clock) {
		exec(w, ctx, batch, clk)
		mu.Lock()
		for _, b := range batch {
			b.key = nil
			ops = append(ops, b)
		}
		mu.Unlock()
	}
	r := e.traffic(context.Background())

	start := e.clock.(realClock).start
	sFrom, sTo := time.Duration(from.Load()-start.UnixNano()), time.Duration(to.Load()-start.UnixNano())
	stalled := 1
	if got := r.Counts.TotalOK() + r.Counts.Failed() + r.Unsent; got != rate*6 || r.Counts.Failed() != 0 || r.Backlog != 0 {
		t.Fatalf("ok %d failed %d unsent %d backlog %d: want all %d scheduled ops accounted, none failed or refused",
			r.Counts.TotalOK(), r.Counts.Failed(), r.Unsent, r.Backlog, rate*6)
	}
	if int64(len(ops)) != r.Counts.TotalOK() {
		t.Fatalf("%d ops seen, %d ok", len(ops), r.Counts.TotalOK())
	}
	// Ops due during the stall (but for its last half second, a margin
	// for the scheduler) are the ones to judge.
	var dueOther, doneOther, dueStalled, heldStalled int
	for _, b := range ops {
		if b.intended < sFrom || b.intended >= sTo-stall/4 {
			continue
		}
		if int(e.slotShard[b.slot]) == stalled {
			dueStalled++
			if b.done >= sTo-stall/20 && b.done-b.intended >= stall/4 {
				heldStalled++
			}
			continue
		}
		dueOther++
		if b.done < sTo && b.sent-b.intended < stall/4 {
			doneOther++
		}
	}
	share := float64(rate) / 3 * (stall - stall/4).Seconds()
	if float64(dueOther) < 2*share*0.8 || float64(dueStalled) < share*0.8 {
		t.Fatalf("%d ops due to the other nodes and %d to the stalled one during the stall, want about %.0f and %.0f", dueOther, dueStalled, 2*share, share)
	}
	if float64(doneOther) < 0.9*float64(dueOther) {
		t.Errorf("only %d of the %d ops due to the healthy nodes during the stall were sent on time and done before it ended: the stall held them up", doneOther, dueOther)
	}
	if heldStalled != dueStalled {
		t.Errorf("%d of the %d ops due to the stalled node during the stall waited for its end", heldStalled, dueStalled)
	}
	// The per-shard figures say the same.
	for i, sh := range r.Shards {
		if i == stalled {
			if sh.Corrected.Max < 0.75*stall.Seconds()*1000 || sh.LagMaxMs < 0.5*stall.Seconds()*1000 {
				t.Errorf("stalled shard %s: corrected max %.1f ms, lag max %.1f ms: the stall is missing", sh.Shard, sh.Corrected.Max, sh.LagMaxMs)
			}
			if sh.MaxGapS < 0.75*stall.Seconds() || sh.GeneratorBehind {
				t.Errorf("stalled shard %s: gap %.2f s, generator behind %v: want the stall, as the shard's own", sh.Shard, sh.MaxGapS, sh.GeneratorBehind)
			}
			continue
		}
		if sh.Corrected.Max >= 0.5*stall.Seconds()*1000 || sh.MaxGapS >= 0.5*stall.Seconds() {
			t.Errorf("healthy shard %s: corrected max %.1f ms, gap %.2f s: the stall reached it", sh.Shard, sh.Corrected.Max, sh.MaxGapS)
		}
	}
	said := false
	for _, d := range r.Diagnosis {
		said = said || strings.Contains(d, "waited in their node's queue") && strings.Contains(d, r.Shards[stalled].Shard) &&
			!strings.Contains(d, r.Shards[0].Shard) && !strings.Contains(d, r.Shards[2].Shard)
	}
	if !said {
		t.Errorf("the diagnosis does not name the stalled shard's queue alone: %q", r.Diagnosis)
	}
	// Every second inside the stall: the healthy shards at their share.
	inside := 0
	for _, p := range r.Seconds {
		if p.T-1 < sFrom.Seconds()-0.1 || p.T > sTo.Seconds()+0.1 {
			continue
		}
		inside++
		for i, v := range p.ShardOKPerS {
			if i != stalled && v < 0.5*rate/3 {
				t.Errorf("second to %.1f s: shard %d served %.0f ops/s, want about %d", p.T, i, v, rate/3)
			}
		}
	}
	if inside == 0 {
		t.Errorf("no whole second inside the stall %.2f-%.2f s: %+v", sFrom.Seconds(), sTo.Seconds(), r.Seconds)
	}
}

// A stall longer than a node's queue holds: the ops the full queue
// refuses are counted as backlog, per shard and within unsent, and every
// scheduled op is still accounted for.
func TestFullQueueCountsBacklog(t *testing.T) {
	o := Options{KV: testKV(), Concurrency: 1, Rate: 1000, Duration: 10 * time.Second, OpTimeout: time.Second, Seed: 1, QueueLimit: 500}
	e := newEngine(o, nil)
	e.gaps = newGapTracker([]string{"a"}) // one shard: every slot is shard 0
	e.slotShard = make([]uint16, numSlots)
	for _, w := range e.workers {
		w.stats = newWorkerStats(1)
	}
	clk := &fakeClock{}
	n := 0
	e.exec = func(w *worker, _ context.Context, batch []pending, _ clock) {
		for i := range batch {
			d := 100 * time.Microsecond
			if n == 3000 {
				d = 2 * time.Second
			}
			n++
			clk.t += d
			batch[i].done, batch[i].out = clk.t, outOK
		}
	}
	e.clock = clk
	e.series = newSeries(e.workers, 1)
	runInline(context.Background(), e, clk)
	e.series.collect(clk.t)
	r := e.result(clk.t)
	// During the 2 s stall about 2000 ops fall due; the queue takes 500.
	if r.Backlog < 1000 || r.Backlog > 1600 {
		t.Errorf("backlog %d, want the ~1500 ops the full queue refused", r.Backlog)
	}
	if r.Unsent != r.Backlog || r.Counts.TotalOK()+r.Backlog != 10000 {
		t.Errorf("ok %d, backlog %d, unsent %d: every scheduled op must be measured or counted", r.Counts.TotalOK(), r.Backlog, r.Unsent)
	}
	if len(r.Shards) != 1 || r.Shards[0].Backlog != r.Backlog || r.Shards[0].OK != r.Counts.TotalOK() {
		t.Errorf("shards %+v", r.Shards)
	}
	found := false
	for _, d := range r.Diagnosis {
		found = found || strings.Contains(d, "queue was full")
	}
	if !found {
		t.Errorf("diagnosis %q does not name the backlog", r.Diagnosis)
	}
}
