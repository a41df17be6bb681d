package bench

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The closed loop (--rate 0) auto-pipelines, as rueidis does: the workers
// stay independent clients with one batch outstanding each, but the
// batches bound for a node share one connection to it (a muxConn). A
// worker appends its commands to the connection's buffer and wakes the
// connection's writer, which yields once (letting the other workers woken
// by the same read append theirs) and writes whatever is buffered by then
// in one write, so a busy node gets one write per many ops. One reader per
// connection reads the replies in order (Redis answers a connection in
// order), completes each op and wakes its worker. A redirected op is
// re-sent by its worker as before; an ASK's ASKING is appended right
// before the command, so the pair is written together on the same
// connection. When the connection breaks (a read or write error, or the
// oldest op outliving its deadline), every op in flight on it fails as
// a timeout (it may have run) and the next op to the node redials.
//
// The open loop's lanes keep a connection each (queue.go): they are per
// node already, and a lane's own connection is what keeps a stalled node
// from holding up anything but its own lanes.

// muxReq is one worker's batch for one node, reused by the worker.
type muxReq struct {
	w        *worker
	ops      []pending
	clk      clock
	deadline time.Time
	done     chan struct{} // one token when every op has its outcome
}

// muxConn is one node's shared connection in the closed loop.
type muxConn struct {
	c *conn
	e *engine

	mu      sync.Mutex
	idle    sync.Cond     // the reader waits on it for a batch in flight
	kick    chan struct{} // wakes the writer
	quit    chan struct{} // closed when the connection is done
	kicked  bool          // the writer is woken and has not taken the buffer yet
	spare   []byte        // the buffer not being appended to
	ring    []*muxReq     // batches in flight, in the order written
	head, n int
	broken  bool
	dead    atomic.Bool // broken, readable without the lock
}

var errMuxBroken = errors.New("bench: shared connection broken")

func newMuxConn(e *engine, c *conn) *muxConn {
	m := &muxConn{c: c, e: e, spare: make([]byte, 0, cap(c.out)), ring: make([]*muxReq, max(len(e.workers), 1))}
	m.idle.L = &m.mu
	m.kick, m.quit = make(chan struct{}, 1), make(chan struct{})
	go m.readLoop()
	go m.writeLoop()
	return m
}

// submit appends r's commands for the writer. After a nil return r.done gets its token once every op has its outcome.
func (m *muxConn) submit(r *muxReq) error {
	e := m.e
	m.mu.Lock()
	if m.broken {
		m.mu.Unlock()
		return errMuxBroken
	}
	out := m.c.out
	for i := range r.ops {
		b := &r.ops[i]
		n := len(out)
		if b.asking {
			out = appendCmd(out, cmdASKING)
		}
		if b.op.Set {
			out = appendCmd(out, cmdSET, b.key, e.value[:b.op.Size])
		} else {
			out = appendCmd(out, cmdGET, b.key)
		}
		b.wire += int64(len(out) - n)
	}
	m.c.out = out
	if m.n == len(m.ring) { // more batches than workers: cannot happen, but grow
		nr := make([]*muxReq, 2*len(m.ring))
		for i := 0; i < m.n; i++ {
			nr[i] = m.ring[(m.head+i)%len(m.ring)]
		}
		m.ring, m.head = nr, 0
	}
	m.ring[(m.head+m.n)%len(m.ring)] = r
	m.n++
	if m.n == 1 {
		m.idle.Signal()
	}
	kick := !m.kicked
	m.kicked = true
	m.mu.Unlock()
	if kick {
		m.kick <- struct{}{}
	}
	return nil
}

// writeLoop writes what the workers appended, all of it in one write,
// until the connection is done.
func (m *muxConn) writeLoop() {
	for {
		select {
		case <-m.kick:
		case <-m.quit:
			return
		}
		runtime.Gosched()
		m.mu.Lock()
		m.kicked = false
		buf := m.c.out
		m.c.out = m.spare[:0]
		m.mu.Unlock()
		err := m.c.nc.SetWriteDeadline(time.Now().Add(m.e.o.OpTimeout))
		if err == nil {
			_, err = m.c.nc.Write(buf)
		}
		m.mu.Lock()
		m.spare = buf[:0]
		m.mu.Unlock()
		if err != nil {
			// The reader's next read fails and fails every batch in flight.
			m.c.close()
			return
		}
	}
}

// readLoop completes the batches in flight in order until the connection
// breaks.
func (m *muxConn) readLoop() {
	var set time.Time
	for {
		m.mu.Lock()
		for m.n == 0 && !m.broken {
			m.idle.Wait()
		}
		if m.broken {
			m.mu.Unlock()
			return
		}
		r := m.ring[m.head]
		m.mu.Unlock()
		if !r.deadline.Equal(set) {
			if m.c.nc.SetReadDeadline(r.deadline) != nil {
				m.breakAll(0)
				return
			}
			set = r.deadline
		}
		for i := range r.ops {
			b := &r.ops[i]
			if b.asking {
				ask, err := m.c.readReply()
				if err != nil {
					m.breakAll(i)
					return
				}
				b.asking = false
				b.wire += int64(ask.size)
			}
			rp, err := m.c.readReply()
			if err != nil {
				// A reset, EOF or timeout after the command was written:
				// it may have run; the outcome is unknown.
				m.breakAll(i)
				return
			}
			b.wire += int64(rp.size)
			b.done = r.clk.now()
			r.w.classify(b, rp)
		}
		m.mu.Lock()
		m.ring[m.head] = nil
		m.head = (m.head + 1) % len(m.ring)
		m.n--
		m.mu.Unlock()
		r.done <- struct{}{}
	}
}

// breakAll closes the connection and fails every op in flight on it: the
// head batch's from its op i on, every later batch's all.
func (m *muxConn) breakAll(i int) {
	m.mu.Lock()
	m.markBroken()
	m.c.out = m.c.out[:0]
	for k := 0; m.n > 0; k++ {
		r := m.ring[m.head]
		m.ring[m.head] = nil
		m.head = (m.head + 1) % len(m.ring)
		m.n--
		from := 0
		if k == 0 {
			from = i
		}
		for j := range r.ops[from:] {
			r.ops[from+j].asking = false
		}
		r.w.fail(r.ops[from:], outTimeout, r.clk)
		r.done <- struct{}{}
	}
	m.mu.Unlock()
}

// close ends the connection at the end of a run (nothing is in flight).
func (m *muxConn) close() {
	m.mu.Lock()
	m.markBroken()
	m.mu.Unlock()
	m.idle.Broadcast()
}

// markBroken closes the connection and stops the writer (m.mu held).
func (m *muxConn) markBroken() {
	if !m.broken {
		m.broken = true
		m.dead.Store(true)
		close(m.quit)
	}
	m.c.close()
}

// muxNode holds a node's current shared connection.
type muxNode struct {
	mu    sync.Mutex
	cur   *muxConn
	dials int
}

// sharedConn returns the node's shared connection, dialling a new one
// when there is none or it broke (a redial counts as a reconnect).
func (w *worker) sharedConn(node uint32) (*muxConn, error) {
	for int(node) >= len(w.muxes) {
		w.muxes = append(w.muxes, nil)
	}
	if m := w.muxes[node]; m != nil && !m.dead.Load() {
		return m, nil
	}
	e := w.e
	e.muxMu.Lock()
	for int(node) >= len(e.muxNodes) {
		e.muxNodes = append(e.muxNodes, &muxNode{})
	}
	mn := e.muxNodes[node]
	e.muxMu.Unlock()
	mn.mu.Lock()
	defer mn.mu.Unlock()
	if mn.cur == nil || mn.cur.dead.Load() {
		c, err := dial(e.router.addr(node), e.o.OpTimeout)
		if err != nil {
			return nil, err
		}
		if mn.dials > 0 {
			w.stats.mu.Lock()
			w.stats.c.Reconnects++
			w.stats.mu.Unlock()
		}
		mn.dials++
		mn.cur = newMuxConn(e, c)
	}
	w.muxes[node] = mn.cur
	return mn.cur, nil
}

// sendShared is send over the node's shared connection: it waits until
// every op of ops has its outcome.
func (w *worker) sendShared(ops []pending, clk clock, deadline time.Time) {
	node := ops[0].node
	for attempt := 0; ; attempt++ {
		m, err := w.sharedConn(node)
		if err != nil {
			w.fail(ops, outConn, clk)
			return
		}
		r := &w.req
		if r.done == nil {
			r.done = make(chan struct{}, 1)
		}
		r.w, r.ops, r.clk, r.deadline = w, ops, clk, deadline
		if err := m.submit(r); err != nil {
			if attempt == 0 {
				continue // broke since: redial once
			}
			w.fail(ops, outConn, clk)
			return
		}
		<-r.done
		r.ops = nil
		return
	}
}

// closeShared closes the closed loop's shared connections.
func (e *engine) closeShared() {
	e.muxMu.Lock()
	defer e.muxMu.Unlock()
	for _, mn := range e.muxNodes {
		mn.mu.Lock()
		if mn.cur != nil {
			mn.cur.close()
			mn.cur = nil
		}
		mn.mu.Unlock()
	}
}
