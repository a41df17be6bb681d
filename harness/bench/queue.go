package bench

import (
	"context"
	"sync"
	"time"

	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads/kv"
)

// The open loop (--rate > 0) is a schedule feeding one queue per node.
//
// The dispatcher is the schedule: at each op's intended time it generates
// the op, routes it by slot to the primary the slot map names at that
// moment, and appends it to that node's queue. Each node has its own
// lanes, one per worker, each with its own connection to the node (as a
// cluster client's per-node pool, or memtier's per-shard connections):
// a lane takes the node's queued ops, up to --pipeline at a time, as soon
// as one is free. A redirected op (MOVED/ASK) is re-sent by the same lane
// to the node named in the reply; MOVED also updates the slot map, so the
// ops dispatched after it go to the new owner's queue.
//
// A node that stalls holds up its own lanes and queue only: the ops to the
// other nodes are dispatched and sent on time, while the stalled node's
// ops wait in its queue and are measured from their intended time, so the
// stall shows in the corrected latency of exactly those ops.
//
// A queue is bounded (Options.QueueLimit ops). When it is full, the
// dispatcher does not wait: waiting would either need unbounded memory or
// stop the schedule, which would hold up every other node's ops again.
// The op is counted as not sent ("backlog", per shard) and is part of
// Result.Unsent: never dropped silently, but its latency, which would have
// been at least the time the queue took to drain, is missing from the
// figures (the summary says so).

// queued is one dispatched op waiting for a lane of its node.
type queued struct {
	intended time.Duration
	op       kv.Op
}

// nodeQueue is one node's queue of dispatched ops: a ring that grows up
// to limit on demand, so memory is only used while a node is behind.
type nodeQueue struct {
	mu     sync.Mutex
	ready  sync.Cond
	buf    []queued
	head   int
	n      int
	limit  int
	closed bool
}

func newNodeQueue(limit int) *nodeQueue {
	q := &nodeQueue{limit: limit, buf: make([]queued, min(limit, 256))}
	q.ready.L = &q.mu
	return q
}

// push appends an op; false when the queue is full.
func (q *nodeQueue) push(it queued) bool {
	q.mu.Lock()
	if q.n == len(q.buf) {
		if q.n >= q.limit {
			q.mu.Unlock()
			return false
		}
		nb := make([]queued, min(q.limit, 2*len(q.buf)))
		for i := 0; i < q.n; i++ {
			nb[i] = q.buf[(q.head+i)%len(q.buf)]
		}
		q.buf, q.head = nb, 0
	}
	q.buf[(q.head+q.n)%len(q.buf)] = it
	q.n++
	q.mu.Unlock()
	q.ready.Signal()
	return true
}

// take moves up to len(dst) ops, oldest first, into dst and returns how
// many. With wait it blocks until there is one; it returns 0 when the
// queue is closed and empty, or ctx ended.
func (q *nodeQueue) take(ctx context.Context, dst []pending, wait bool) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	for wait && q.n == 0 && !q.closed && ctx.Err() == nil {
		q.ready.Wait()
	}
	if ctx.Err() != nil {
		return 0
	}
	k := min(q.n, len(dst))
	for i := 0; i < k; i++ {
		it := &q.buf[q.head]
		dst[i].op, dst[i].intended = it.op, it.intended
		q.head = (q.head + 1) % len(q.buf)
	}
	q.n -= k
	return k
}

func (q *nodeQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.ready.Broadcast()
}

// queueSeconds: by default a node's queue holds this long of the whole
// schedule (so at least as long of the node's own share).
const queueSeconds = 10

// queueLimit is the bound of each node's queue, in ops.
func (o *Options) queueLimit() int {
	if o.QueueLimit > 0 {
		return o.QueueLimit
	}
	return min(max(int(o.Rate*queueSeconds), 1024), 1<<20)
}

// dispatcher walks the schedule and queues each op for its node.
type dispatcher struct {
	e      *engine
	gen    *kv.Gen
	next   int64 // next ticket: due at e.intended(next)
	key    []byte
	queues []*nodeQueue // by node number
	// onNode starts the lanes of a node seen for the first time.
	onNode func(node uint32, q *nodeQueue)
	// stats counts the ops refused by a full queue (drained by the
	// series like a worker's).
	stats *workerStats
}

func (e *engine) newDispatcher(onNode func(uint32, *nodeQueue)) *dispatcher {
	return &dispatcher{e: e, gen: e.o.KV.NewGen(0, 1, e.o.Seed), onNode: onNode, stats: newWorkerStats(e.shards())}
}

// pump queues every op due by now. It returns the intended time of the
// next op, or false when the schedule holds no more ops.
func (d *dispatcher) pump(now time.Duration) (time.Duration, bool) {
	e := d.e
	first := true
	for {
		t := e.intended(d.next)
		if t >= e.o.Duration {
			return 0, false
		}
		if t > now {
			return t, true
		}
		if first {
			// The oldest due op says how late the dispatcher itself woke.
			first = false
			if lag := int64(now - t); lag > int64(lateAfter) {
				s := d.stats
				s.mu.Lock()
				s.c.DispatchLagNs = max(s.c.DispatchLagNs, lag)
				s.mu.Unlock()
			}
		}
		d.next++
		op := d.gen.Next()
		d.key = e.o.KV.AppendKey(d.key[:0], op.Key)
		slot := history.Keyslot(string(d.key))
		var node uint32
		if e.router != nil {
			node = e.router.primary(slot)
		}
		if !d.queue(node).push(queued{intended: t, op: op}) {
			d.refuse(slot)
		}
	}
}

// queue returns node's queue, starting its lanes on first sight.
func (d *dispatcher) queue(node uint32) *nodeQueue {
	for int(node) >= len(d.queues) {
		d.queues = append(d.queues, nil)
	}
	q := d.queues[node]
	if q == nil {
		q = newNodeQueue(d.e.o.queueLimit())
		d.queues[node] = q
		if d.onNode != nil {
			d.onNode(node, q)
		}
	}
	return q
}

// refuse counts an op its node's full queue could not take.
func (d *dispatcher) refuse(slot int) {
	s := d.stats
	s.mu.Lock()
	s.c.Backlog++
	if d.e.gaps != nil {
		s.shard.backlog[d.e.slotShard[slot]]++
	}
	s.mu.Unlock()
}

// run queues the schedule's ops as they fall due until the schedule or
// ctx ends, then closes the queues: the lanes send what is queued and
// stop (or stop at once when ctx ended).
func (d *dispatcher) run(ctx context.Context, clk clock) {
	defer func() {
		for _, q := range d.queues {
			if q != nil {
				q.close()
			}
		}
	}()
	for {
		next, more := d.pump(clk.now())
		if !more || !clk.sleepUntil(ctx, next) {
			return
		}
	}
}

// serve is a lane's loop: take the node's queued ops, up to --pipeline
// at a time, send them, record.
func (w *worker) serve(ctx context.Context, q *nodeQueue, clk clock) {
	p := w.e.o.KV.Pipeline
	if cap(w.batch) < p {
		w.batch = make([]pending, p)
	}
	for {
		n := q.take(ctx, w.batch[:p], true)
		if n == 0 {
			return
		}
		w.sendQueued(ctx, w.batch[:n], clk)
	}
}

// sendQueued sends dispatched ops now and records them.
func (w *worker) sendQueued(ctx context.Context, batch []pending, clk clock) {
	sent := clk.now()
	for i := range batch {
		batch[i].sent = sent
	}
	w.e.exec(w, ctx, batch, clk)
	w.record(batch)
}
