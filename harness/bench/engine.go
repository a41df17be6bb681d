// Package bench is the engine of the load driver, one of the two traffic
// drivers a run can use (the other is the history workers of package
// harness, which records every op): `redline bench`'s kv workload
// (workloads/kv) sent open-loop at a global --rate (every op has an intended send time
// from one schedule; latency is measured from it, "corrected", and from
// the actual send, "raw") or closed-loop (--rate 0), over raw RESP
// connections that follow MOVED/ASK and retry TRYAGAIN themselves. In the
// open loop each op is queued for its primary at its intended time and
// each primary has its own connections (queue.go), so a stalled primary
// holds up its own ops only.
//
// Memory stays bounded: each worker records into its own HDR histograms,
// drained once a second into one compressed histogram per second and op;
// no op is kept unless --history asks for a compressed op log.
//
// It writes its own files (bench.json, histograms, report.html: Save)
// into a run directory the harness owns; results.json is the harness's
// (harness.SaveLoad from Headline). It depends on history- and
// cluster-level packages only: history/, workloads/client (the
// topology and slot map) and the leaf workloads/kv; the faults come in as
// a Faults value.
package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads/client"
	"github.com/redline-dev/redline/workloads/kv"
)

// Faults is the fault schedule a load test runs under: the protocol of
// the history driver's nemesis (harness.Nemesis), so one schedule serves
// both drivers. Its events go into the bench's event log.
type Faults interface {
	Run(ctx context.Context, rec history.Recorder) error
	Heal(ctx context.Context, rec history.Recorder) error
	Current() string
}

// Options configure a load test.
type Options struct {
	Seeds       []string // node addresses
	KV          kv.Config
	Concurrency int
	// Rate is the total ops/s of the schedule; 0 runs closed-loop (each
	// worker sends its next op when the previous one completed).
	Rate     float64
	Duration time.Duration
	// Warmup is driven but not measured: the figures start after it
	// (whole seconds; part of Duration).
	Warmup    time.Duration
	OpTimeout time.Duration
	Seed      int64
	// HistoryPath, when set, receives a gzip-compressed op log.
	HistoryPath string
	Nemesis     Faults // nil: no faults
	// QueueLimit bounds each node's queue of dispatched ops in the open
	// loop (0: queueSeconds of the schedule, at least 1024, at most 1M);
	// ops a full queue refuses are counted as backlog (queue.go).
	QueueLimit int
	// ConnPerWorker gives each closed-loop worker its own connection to
	// each node, as before auto-pipelining (mux.go): a write and a read
	// per op per worker.
	ConnPerWorker bool
	Log           func(format string, args ...any)
	// NodeNames names nodes by address (n1, n2, ...): shards are shown
	// by their primary's name, the address beside it.
	NodeNames map[string]string
	// NameOf, if set, names a node by address at the end of the run,
	// when nodes a plan added (scale-out) are in the cluster too; a name
	// it does not know ("") falls back to NodeNames, then the address.
	NameOf func(addr string) string
	// Live, if set, is called when traffic starts with a function that
	// describes the last second (ops/s and corrected p99) for a progress
	// display.
	Live func(last func() string)
	// Started is called when traffic starts, with a function returning
	// ok/failed counts so far (for a progress display).
	Started func(counts func() (ok, fail, info int64))
	// StartAt, when set, is when traffic starts (a distributed run's
	// coordinated start, generator.go); the key space is populated before.
	StartAt time.Time

	// A generator's hooks (generator.go): beforeTraffic learns the shards
	// (by their primary's address) and the start, onSecond each measured
	// second as it is collected.
	beforeTraffic func(shards []string, start time.Time)
	onSecond      func(*second)
}

// engine is one load test in progress.
type engine struct {
	o      Options
	clock  clock
	router *router
	value  []byte // random bytes; a SET of n bytes sends value[:n]
	// exec sends a batch; tests replace it to simulate a cluster.
	exec func(w *worker, ctx context.Context, batch []pending, clk clock)

	slotShard  []uint16
	shardAddrs []string // by shard: the primary's address at the start
	gaps       *gapTracker

	workers []*worker
	// lanes are the open loop's per-node workers (queue.go); each shares
	// the statistics of the worker of its number.
	lanes  []*worker
	series *series
	hist   *opLog
	events *eventLog

	// The closed loop's shared connections, by node (mux.go).
	muxMu    sync.Mutex
	muxNodes []*muxNode
}

// clock is the engine's time: real in a run, simulated in tests.
type clock interface {
	// now is the time since the start of traffic.
	now() time.Duration
	// sleepUntil waits until t; false when ctx ended first.
	sleepUntil(ctx context.Context, t time.Duration) bool
}

type realClock struct{ start time.Time }

func (c realClock) now() time.Duration { return time.Since(c.start) }

func (c realClock) sleepUntil(ctx context.Context, t time.Duration) bool {
	d := t - c.now()
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// intended is the due time of ticket i.
func (e *engine) intended(i int64) time.Duration {
	return time.Duration(float64(i) * float64(time.Second) / e.o.Rate)
}

// worker is one client: its own op stream and its own statistics, and
// its own connection to each node (populate, the open loop's lanes, a
// closed loop with ConnPerWorker) or the nodes' shared ones (mux.go).
type worker struct {
	id    int
	e     *engine
	gen   *kv.Gen
	conns []*conn // by node number
	dials []bool  // a connection to this node existed before (redial = reconnect)
	stats *workerStats
	batch []pending
	log   []byte // op log lines not yet handed to the writer
	// shared: send over the nodes' shared connections (the closed loop).
	shared bool
	muxes  []*muxConn // by node: the shared connection last used
	req    muxReq
}

// pending is one op of a batch.
type pending struct {
	op       kv.Op
	key      []byte
	slot     int
	node     uint32
	intended time.Duration
	sent     time.Duration
	done     time.Duration
	out      outcome
	errKind  string
	needRun  bool // redirected or TRYAGAIN: to be re-sent alone
	asking   bool
	hops     int
	// wire is the op's bytes on the wire, requests and replies, ASKING
	// and re-sends after a redirect included (memtier's KB/sec).
	wire int64
}

type outcome uint8

const (
	outOK outcome = iota
	outMiss
	outError   // error reply: not executed
	outTimeout // no reply: unknown
	outConn    // no connection: not executed
)

const maxHops = 5

// Run populates the key space if asked, then drives traffic for the
// duration (with the nemesis, if any), heals, and returns the figures.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	if o.Concurrency < 1 || o.Duration <= 0 || o.OpTimeout <= 0 || o.Rate < 0 {
		return nil, errors.New("bench: concurrency, duration and op timeout must be positive, rate not negative")
	}
	if err := o.KV.Validate(); err != nil {
		return nil, err
	}
	topo, err := client.New(ctx, client.Options{Seeds: o.Seeds, Timeout: o.OpTimeout, PoolSize: 2})
	if err != nil {
		return nil, fmt.Errorf("cannot reach the cluster at %v: %w", o.Seeds, err)
	}
	defer topo.Close()
	rt, err := newRouter(ctx, topo)
	if err != nil {
		return nil, err
	}
	e := newEngine(o, rt)
	if o.KV.Populate {
		start := time.Now()
		n, err := e.populate(ctx)
		if err != nil {
			return nil, err
		}
		o.Log("populated %d keys in %s", n, time.Since(start).Round(time.Millisecond))
	}
	if o.HistoryPath != "" {
		if e.hist, err = newOpLog(o.HistoryPath); err != nil {
			return nil, err
		}
	}
	res := e.traffic(ctx)
	if e.hist != nil {
		if err := e.hist.close(); err != nil {
			return res, fmt.Errorf("writing the op log: %w", err)
		}
	}
	if o.Nemesis != nil {
		hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
		o.Log("end phase: healing every fault")
		if err := o.Nemesis.Heal(hctx, e.events); err != nil {
			o.Log("heal reported an error: %v", err)
		}
		cancel()
	}
	res.Events = e.events.all()
	res.finish()
	res.Load = e.loadReport(time.Duration(res.DurationS * float64(time.Second)))
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	res.Load.serverSlotStats(sctx, topo)
	cancel()
	e.addServed(res.Load, topo, res.DurationS)
	return res, nil
}

func newEngine(o Options, rt *router) *engine {
	e := &engine{o: o, router: rt, events: &eventLog{}, exec: (*worker).exec}
	rng := rand.New(rand.NewPCG(uint64(o.Seed), 42))
	e.value = make([]byte, o.KV.ValueMax)
	for i := range e.value {
		e.value[i] = 'a' + byte(rng.IntN(26))
	}
	if rt != nil {
		var names []string
		e.slotShard, names = rt.shardMap()
		e.shardAddrs = append([]string(nil), names...)
		for i, a := range names {
			if n, ok := o.NodeNames[a]; ok {
				names[i] = n
			}
		}
		e.gaps = newGapTracker(names)
	}
	for i := 0; i < o.Concurrency; i++ {
		e.workers = append(e.workers, &worker{id: i, e: e, gen: o.KV.NewGen(i, o.Concurrency, o.Seed), stats: newWorkerStats(e.shards())})
	}
	return e
}

// shards is the number of shards at the start (0 without a cluster).
func (e *engine) shards() int {
	if e.gaps == nil {
		return 0
	}
	return len(e.gaps.names)
}

// traffic runs the load phase and collects a Result.
func (e *engine) traffic(ctx context.Context) *Result {
	o := e.o
	if !o.StartAt.IsZero() {
		t := time.NewTimer(time.Until(o.StartAt))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	start := time.Now()
	if o.beforeTraffic != nil {
		o.beforeTraffic(e.shardAddrs, start)
	}
	e.clock = realClock{start: start}
	e.events.start = start
	e.series = newSeries(e.workers, e.shards())
	e.series.warmup = o.Warmup
	e.series.onSecond = o.onSecond
	tctx, stop := context.WithTimeout(ctx, o.Duration)
	defer stop()

	var nemWG sync.WaitGroup
	if o.Nemesis != nil {
		nemWG.Add(1)
		go func() {
			defer nemWG.Done()
			if err := o.Nemesis.Run(tctx, e.events); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				o.Log("nemesis stopped with an error: %v", err)
			}
		}()
	}
	collectDone := make(chan struct{})
	go func() {
		defer close(collectDone)
		e.series.run(tctx, start)
	}()
	if o.Live != nil { // before Started: a display started there reads it
		o.Live(e.series.live)
	}
	if o.Started != nil {
		o.Started(e.series.counts)
	}
	var wg sync.WaitGroup
	if o.Rate > 0 {
		d := e.newDispatcher(func(_ uint32, q *nodeQueue) {
			for _, base := range e.workers {
				l := &worker{id: base.id, e: e, stats: base.stats}
				e.lanes = append(e.lanes, l)
				wg.Add(1)
				go func() {
					defer wg.Done()
					l.serve(tctx, q, e.clock)
				}()
			}
		})
		e.series.addStats(d.stats)
		d.run(tctx, e.clock)
	} else {
		for _, w := range e.workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.run(tctx, e.clock)
			}()
		}
	}
	wg.Wait()
	e.closeShared()
	elapsed := time.Since(start)
	stop()
	<-collectDone
	nemWG.Wait()
	e.series.collect(elapsed) // what the workers did after the last tick
	for _, w := range append(e.workers, e.lanes...) {
		w.closeAll()
		if e.hist != nil {
			e.hist.write(w.log)
		}
	}
	if e.gaps != nil {
		e.gaps.finish(elapsed)
	}
	return e.result(elapsed)
}

// run is a closed-loop worker's loop (--rate 0): send the next op as
// soon as the previous one completed, record. Its ops go over the nodes'
// shared connections (mux.go) unless Options.ConnPerWorker. The open loop
// is the dispatcher and the per-node lanes (queue.go).
func (w *worker) run(ctx context.Context, clk clock) {
	e := w.e
	p := e.o.KV.Pipeline
	if cap(w.batch) < p {
		w.batch = make([]pending, p)
	}
	w.shared = !e.o.ConnPerWorker
	defer func() { w.shared = false }()
	for ctx.Err() == nil {
		batch := w.batch[:p]
		sent := clk.now()
		for i := range batch {
			b := &batch[i]
			b.op = w.gen.Next()
			b.intended, b.sent = sent, sent
		}
		e.exec(w, ctx, batch, clk)
		w.record(batch)
		if batch[0].out >= outTimeout {
			// Closed loop against a dead node would spin: back off a little.
			clk.sleepUntil(ctx, clk.now()+10*time.Millisecond)
		}
	}
}

// record adds a finished batch to the worker's statistics.
func (w *worker) record(batch []pending) {
	e := w.e
	s := w.stats
	s.mu.Lock()
	for i := range batch {
		b := &batch[i]
		op := opGet
		if b.op.Set {
			op = opSet
		}
		shard := -1
		if e.gaps != nil {
			shard = int(e.slotShard[b.slot])
		}
		if lag := b.sent - b.intended; lag > lateAfter {
			s.c.Late++
			s.c.LagMaxNs = max(s.c.LagMaxNs, int64(lag))
			if shard >= 0 {
				s.shard.lagNs[shard] = max(s.shard.lagNs[shard], int64(lag))
			}
		}
		s.c.Wire[op] += b.wire
		switch b.out {
		case outOK, outMiss:
			s.c.OK[op]++
			record(s.h[op][corrected], b.done-b.intended)
			record(s.h[op][raw], b.done-b.sent)
			if op == opGet {
				if b.out == outMiss {
					s.c.Misses++
				} else {
					s.c.Hits++
				}
			}
			s.c.Bytes += int64(b.op.Size)
			if shard >= 0 {
				e.gaps.ok(uint16(shard), b.done)
				s.shard.ok[shard]++
				record(s.shardH[shard], b.done-b.intended)
				if s.slots == nil {
					s.slots = &slotCounts{}
				}
				s.slots.ops[b.slot]++
				s.slots.bytes[b.slot] += int64(len(b.key) + b.op.Size)
				if int(b.node) >= len(s.slots.byNode) {
					s.slots.byNode = append(s.slots.byNode, make([]int64, int(b.node)+1-len(s.slots.byNode))...)
				}
				s.slots.byNode[b.node]++
			}
		case outError:
			s.c.Errors[op]++
		case outTimeout:
			s.c.Timeouts[op]++
		case outConn:
			s.c.ConnErrors++
		}
	}
	s.mu.Unlock()
	if e.hist != nil {
		w.log = appendOps(w.log, batch)
		if len(w.log) > 64<<10 {
			e.hist.write(w.log)
			w.log = w.log[:0]
		}
	}
}

// exec sends a batch: ops are grouped by node, each group written in one
// write and its replies read in order. Redirected ops are then re-sent
// one by one.
func (w *worker) exec(ctx context.Context, batch []pending, clk clock) {
	e := w.e
	for i := range batch {
		b := &batch[i]
		b.key = e.o.KV.AppendKey(b.key[:0], b.op.Key)
		b.slot = history.Keyslot(string(b.key))
		b.node = e.router.primary(b.slot)
		b.needRun, b.asking, b.hops, b.errKind, b.wire = false, false, 0, "", 0
	}
	deadline := time.Now().Add(e.o.OpTimeout)
	if len(batch) == 1 {
		w.send(batch, clk, deadline)
	} else {
		// Group by node in place: batches are small, a quadratic pass is cheap.
		for i := 0; i < len(batch); {
			j := i + 1
			for k := j; k < len(batch); k++ {
				if batch[k].node == batch[i].node {
					batch[j], batch[k] = batch[k], batch[j]
					j++
				}
			}
			w.send(batch[i:j], clk, deadline)
			i = j
		}
	}
	for i := range batch {
		b := &batch[i]
		for b.needRun && ctx.Err() == nil {
			if b.errKind == "TRYAGAIN" {
				// The slot is being migrated and a multi-key op is split:
				// Redis asks the client to retry a little later.
				time.Sleep(5 * time.Millisecond)
			}
			if time.Now().After(deadline) {
				b.out, b.needRun = outTimeout, false
				b.done = clk.now()
				break
			}
			w.send(batch[i:i+1], clk, deadline)
		}
	}
}

// send writes ops that share a node and reads their replies (over the
// node's shared connection when w.shared).
func (w *worker) send(ops []pending, clk clock, deadline time.Time) {
	if w.shared {
		w.sendShared(ops, clk, deadline)
		return
	}
	e := w.e
	node := ops[0].node
	c, err := w.conn(node)
	if err != nil {
		w.fail(ops, outConn, clk)
		return
	}
	for i := range ops {
		b := &ops[i]
		n := len(c.out)
		if b.asking {
			c.out = appendCmd(c.out, cmdASKING)
		}
		if b.op.Set {
			c.out = appendCmd(c.out, cmdSET, b.key, e.value[:b.op.Size])
		} else {
			c.out = appendCmd(c.out, cmdGET, b.key)
		}
		b.wire += int64(len(c.out) - n)
	}
	if err := c.flush(deadline); err != nil {
		w.drop(node)
		w.fail(ops, outTimeout, clk)
		return
	}
	for i := range ops {
		b := &ops[i]
		if b.asking {
			ask, err := c.readReply()
			if err != nil {
				w.drop(node)
				w.fail(ops[i:], outTimeout, clk)
				return
			}
			b.asking = false
			b.wire += int64(ask.size)
		}
		rp, err := c.readReply()
		b.done = clk.now()
		b.wire += int64(rp.size)
		if err != nil {
			// A reset, EOF or timeout after the command was written: it
			// may have run; the outcome is unknown.
			w.drop(node)
			w.fail(ops[i:], outTimeout, clk)
			return
		}
		w.classify(b, rp)
	}
}

// classify decides an op from its reply.
func (w *worker) classify(b *pending, rp reply) {
	e := w.e
	s := &w.stats.c
	if rp.kind != '-' {
		b.out, b.needRun = outOK, false
		if rp.nil {
			b.out = outMiss
		}
		return
	}
	kind, addr, isRedirect := redirect(rp.err)
	if isRedirect && b.hops < maxHops {
		b.hops++
		b.needRun = true
		b.node = e.router.node(addr)
		w.stats.mu.Lock()
		if kind == "MOVED" {
			s.Moved++
		} else {
			s.Ask++
		}
		w.stats.mu.Unlock()
		if kind == "MOVED" {
			e.router.setSlot(b.slot, addr)
			e.router.refreshSoon(e.o.OpTimeout)
		} else {
			b.asking = true
		}
		return
	}
	b.errKind = errorKind(rp.err)
	w.stats.mu.Lock()
	switch b.errKind {
	case "TRYAGAIN":
		s.TryAgain++
	case "CLUSTERDOWN":
		s.ClusterDown++
	}
	w.stats.mu.Unlock()
	if b.errKind == "TRYAGAIN" && b.hops < maxHops {
		b.hops++
		b.needRun = true
		return
	}
	if b.errKind == "CLUSTERDOWN" {
		e.router.refreshSoon(e.o.OpTimeout)
	}
	b.out, b.needRun = outError, false
}

func (w *worker) fail(ops []pending, out outcome, clk clock) {
	now := clk.now()
	for i := range ops {
		ops[i].out, ops[i].needRun, ops[i].done = out, false, now
	}
	w.e.router.refreshSoon(w.e.o.OpTimeout)
}

// conn returns the worker's connection to node, dialling if needed.
func (w *worker) conn(node uint32) (*conn, error) {
	for int(node) >= len(w.conns) {
		w.conns = append(w.conns, nil)
		w.dials = append(w.dials, false)
	}
	if c := w.conns[node]; c != nil {
		return c, nil
	}
	c, err := dial(w.e.router.addr(node), w.e.o.OpTimeout)
	if err != nil {
		return nil, err
	}
	if w.dials[node] {
		w.stats.mu.Lock()
		w.stats.c.Reconnects++
		w.stats.mu.Unlock()
	}
	w.conns[node], w.dials[node] = c, true
	return c, nil
}

// drop closes a broken connection: replies still in flight on it would
// otherwise be read as the answers to later commands.
func (w *worker) drop(node uint32) {
	if c := w.conns[node]; c != nil {
		c.close()
		w.conns[node] = nil
	}
}

func (w *worker) closeAll() {
	for i := range w.conns {
		w.drop(uint32(i))
	}
}

// populate writes every key once, pipelined, before traffic.
func (e *engine) populate(ctx context.Context) (int, error) {
	const depth = 64
	clk := realClock{start: time.Now()}
	var next atomic.Int64
	var failed atomic.Int64
	var firstErr sync.Once
	var why string
	var wg sync.WaitGroup
	for _, w := range e.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.closeAll()
			batch := make([]pending, depth)
			rng := rand.New(rand.NewPCG(uint64(e.o.Seed), uint64(w.id)))
			for ctx.Err() == nil {
				first := int(next.Add(depth)) - depth
				if first >= e.o.KV.Keys {
					return
				}
				n := min(depth, e.o.KV.Keys-first)
				for i := 0; i < n; i++ {
					size := e.o.KV.ValueMin
					if e.o.KV.ValueMax > size {
						size += rng.IntN(e.o.KV.ValueMax - size + 1)
					}
					batch[i].op = kv.Op{Set: true, Key: first + i, Size: size}
				}
				// A populate op gets a few tries: the cluster may still be settling.
				for attempt := 0; attempt < 5; attempt++ {
					w.exec(ctx, batch[:n], clk)
					bad := 0
					for i := 0; i < n; i++ {
						if batch[i].out != outOK {
							bad++
						}
					}
					if bad == 0 {
						break
					}
					if attempt == 4 {
						failed.Add(int64(bad))
						firstErr.Do(func() { why = fmt.Sprintf("%v (%s)", batch[0].out, batch[0].errKind) })
					}
					time.Sleep(200 * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	// Populate is not measured.
	for _, w := range e.workers {
		w.stats = newWorkerStats(e.shards())
		clear(w.dials) // the first dial of traffic is no reconnect
	}
	if n := failed.Load(); n > 0 {
		return 0, fmt.Errorf("populating the key space: %d SETs failed, e.g. %s", n, why)
	}
	return e.o.KV.Keys, ctx.Err()
}

func (o outcome) String() string {
	return [...]string{"ok", "miss", "error", "timeout", "conn-error"}[o]
}

// Populate writes every key of o.KV once, as Run does before traffic: a
// distributed run's coordinator does it before its generators start.
func Populate(ctx context.Context, o Options) (int, error) {
	if err := o.KV.Validate(); err != nil {
		return 0, err
	}
	topo, err := client.New(ctx, client.Options{Seeds: o.Seeds, Timeout: o.OpTimeout, PoolSize: 2})
	if err != nil {
		return 0, fmt.Errorf("cannot reach the cluster at %v: %w", o.Seeds, err)
	}
	defer topo.Close()
	rt, err := newRouter(ctx, topo)
	if err != nil {
		return 0, err
	}
	return newEngine(o, rt).populate(ctx)
}
