// Package bus is the I/O around the cluster state machine and nothing else:
// it listens on the cluster bus port, keeps one outbound connection per link
// the node asks for, decodes incoming frames into Inputs on one channel and
// writes the Envelopes of a Ready. It never touches a cluster.Node: the
// node's one owner (package server) receives Inputs, runs Step, Tick and
// admin commands, and hands each Ready's messages back through Send. The
// nodes.conf writer, SaveNodesConf, lives here as the other piece of I/O.
package bus

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redline-dev/redline/server/cluster"
)

// Options configure a Bus.
type Options struct {
	// ListenAddr is the bus address to listen on, e.g. "0.0.0.0:17000".
	ListenAddr string
	// Transport defaults to TCP.
	Transport Transport
	// SendQueue is the per-connection queue length (default 1024); messages
	// beyond it are dropped, as an overloaded link would.
	SendQueue int
}

// Input is one thing that happened on the bus, for the node's owner to feed
// to the node: a message that arrived (Msg, with Msg.Link set; pass it to
// Step) or an outbound link that failed (LinkFailed, the link id; pass it to
// Node.LinkFailed).
type Input struct {
	Msg        *cluster.Message
	LinkFailed uint64
	// InClosed is an accepted connection that closed (pass it to
	// Node.InboundClosed).
	InClosed uint64
	// OverLimit: the connection (LinkFailed or InClosed) was closed because
	// its send queue outgrew cluster-link-sendbuf-limit (pass it to
	// Node.LinkBufferLimitExceeded too).
	OverLimit bool
}

// Bus runs one node's cluster bus connections.
type Bus struct {
	o      Options
	ln     net.Listener
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	inputs chan Input // unbuffered: a send returns once the owner has the Input

	mu     sync.Mutex       // guards the connection maps only; never held while blocking
	out    map[uint64]*conn // outbound links by the node's link id
	in     map[uint64]*conn // accepted connections
	nextIn uint64
	// limit is cluster-link-sendbuf-limit in bytes (0: none).
	limit atomic.Int64
}

// SetSendBufLimit sets cluster-link-sendbuf-limit: a connection whose queued,
// unwritten bytes exceed it is closed, as Redis frees such a link (0: no
// limit).
func (b *Bus) SetSendBufLimit(n int64) { b.limit.Store(n) }

type conn struct {
	b          *Bus
	id         uint64
	out        bool
	addr       string
	ch         chan []byte
	mu         sync.Mutex
	c          net.Conn
	closed     chan struct{}
	once       sync.Once
	reportOnce sync.Once    // an outbound link's failure is reported once
	pending    atomic.Int64 // bytes queued and not yet written
	over       atomic.Bool  // closed for exceeding the send buffer limit
}

// New returns a bus; call Start.
func New(o Options) *Bus {
	if o.Transport == nil {
		o.Transport = TCP{}
	}
	if o.SendQueue <= 0 {
		o.SendQueue = 1024
	}
	b := &Bus{o: o, out: map[uint64]*conn{}, in: map[uint64]*conn{}, inputs: make(chan Input)}
	b.ctx, b.cancel = context.WithCancel(WithLocalAddr(context.Background(), o.ListenAddr))
	return b
}

// Start listens and starts accepting connections.
func (b *Bus) Start() error {
	ln, err := b.o.Transport.Listen(b.o.ListenAddr)
	if err != nil {
		return fmt.Errorf("cluster bus: listen on %s: %w", b.o.ListenAddr, err)
	}
	b.ln = ln
	b.wg.Add(1)
	go b.acceptLoop()
	return nil
}

// Addr is the listening address.
func (b *Bus) Addr() net.Addr { return b.ln.Addr() }

// Inputs delivers what arrives on the bus, in order per connection. Nothing
// is dropped: a reader waits (and so does its peer, through TCP) until the
// owner takes the Input.
func (b *Bus) Inputs() <-chan Input { return b.inputs }

// Close stops the bus and closes every connection.
func (b *Bus) Close() error {
	b.cancel()
	if b.ln != nil {
		b.ln.Close()
	}
	b.mu.Lock()
	for _, c := range b.out {
		c.close()
	}
	for _, c := range b.in {
		c.close()
	}
	b.mu.Unlock()
	b.wg.Wait()
	return nil
}

// Send performs the I/O of a Ready: it closes the links in r.CloseLinks and
// queues r.Messages, dialing Envelope.Addr on the first use of an outbound
// link and replying on accepted connection Envelope.In. It never blocks:
// a message for a full queue or a gone connection is dropped, as a lossy
// link would. After Close it does nothing.
func (b *Bus) Send(r *cluster.Ready) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ctx.Err() != nil {
		return // closed: no new connections
	}
	for _, id := range r.CloseLinks {
		if c := b.out[id]; c != nil {
			delete(b.out, id)
			c.close()
		}
	}
	for i := range r.Messages {
		e := &r.Messages[i]
		var c *conn
		if e.In != 0 {
			c = b.in[e.In]
		} else {
			c = b.out[e.Link]
			if c == nil {
				c = &conn{b: b, id: e.Link, out: true, addr: e.Addr, ch: make(chan []byte, b.o.SendQueue), closed: make(chan struct{})}
				b.out[e.Link] = c
				b.wg.Add(1)
				go c.dialAndWrite()
			}
		}
		if c == nil {
			continue
		}
		f := cluster.EncodeMessage(&e.Msg)
		select {
		case <-c.closed: // failed, its LinkFailed not yet taken by the owner
		case c.ch <- f:
			if p := c.pending.Add(int64(len(f))); b.limit.Load() > 0 && p > b.limit.Load() && c.over.CompareAndSwap(false, true) {
				go c.failed()
			}
		default: // queue full: drop
		}
	}
}

// deliver hands in to the owner; false when the bus or the connection closed first.
func (b *Bus) deliver(in Input, closed <-chan struct{}) bool {
	select {
	case b.inputs <- in:
		return true
	case <-closed:
		return false
	case <-b.ctx.Done():
		return false
	}
}

func (b *Bus) acceptLoop() {
	defer b.wg.Done()
	for {
		c, err := b.ln.Accept()
		if err != nil {
			if b.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		b.mu.Lock()
		if b.ctx.Err() != nil {
			b.mu.Unlock()
			c.Close()
			return
		}
		b.nextIn++
		k := &conn{b: b, id: b.nextIn, c: c, ch: make(chan []byte, b.o.SendQueue), closed: make(chan struct{})}
		b.in[k.id] = k
		b.mu.Unlock()
		link := cluster.Link{In: k.id, RemoteIP: hostOf(c.RemoteAddr()), LocalIP: hostOf(c.LocalAddr())}
		b.wg.Add(2)
		go k.writeLoop()
		go k.readLoop(link)
	}
}

func hostOf(a net.Addr) string {
	if a == nil {
		return ""
	}
	h, _, err := net.SplitHostPort(a.String())
	if err != nil || net.ParseIP(h) == nil {
		return ""
	}
	return h
}

func (c *conn) close() {
	c.once.Do(func() {
		close(c.closed)
		c.mu.Lock()
		if c.c != nil {
			c.c.Close()
		}
		c.mu.Unlock()
	})
}

// failed drops the connection. An outbound link stays in the map, closed,
// until the owner has taken its LinkFailed: until then the node may still
// send on it, and those messages must be dropped rather than redialed under
// an id the node is about to forget.
func (c *conn) failed() {
	c.close()
	b := c.b
	if !c.out {
		b.mu.Lock()
		mine := b.in[c.id] == c
		if mine {
			delete(b.in, c.id)
		}
		b.mu.Unlock()
		if mine {
			b.deliver(Input{InClosed: c.id, OverLimit: c.over.Load()}, nil)
		}
		return
	}
	c.reportOnce.Do(func() {
		b.mu.Lock()
		mine := b.out[c.id] == c
		b.mu.Unlock()
		if !mine {
			return // closed on the node's request (CloseLinks)
		}
		b.deliver(Input{LinkFailed: c.id, OverLimit: c.over.Load()}, nil)
		b.mu.Lock()
		if b.out[c.id] == c {
			delete(b.out, c.id)
		}
		b.mu.Unlock()
	})
}

func (c *conn) dialAndWrite() {
	defer c.b.wg.Done()
	ctx, cancel := context.WithTimeout(c.b.ctx, 2*time.Second)
	nc, err := c.b.o.Transport.Dial(ctx, c.addr)
	cancel()
	if err != nil {
		c.failed()
		return
	}
	c.mu.Lock()
	select {
	case <-c.closed:
		c.mu.Unlock()
		nc.Close()
		return
	default:
	}
	c.c = nc
	c.mu.Unlock()
	c.b.wg.Add(1)
	go c.readLoop(cluster.Link{Out: c.id})
	c.b.wg.Add(1)
	c.writeLoop()
}

func (c *conn) writeLoop() {
	defer c.b.wg.Done()
	w := bufio.NewWriterSize(c.c, 64<<10)
	for {
		select {
		case <-c.closed:
			return
		case f := <-c.ch:
			if _, err := w.Write(f); err != nil {
				c.failed()
				return
			}
			c.pending.Add(-int64(len(f)))
			if len(c.ch) == 0 {
				if err := w.Flush(); err != nil {
					c.failed()
					return
				}
			}
		}
	}
}

func (c *conn) readLoop(link cluster.Link) {
	defer c.b.wg.Done()
	r := bufio.NewReaderSize(c.c, 64<<10)
	var buf []byte
	for {
		f, err := cluster.ReadFrame(r, buf)
		if err != nil {
			c.failed()
			return
		}
		buf = f
		m, err := cluster.DecodeMessage(f)
		if err != nil {
			c.failed()
			return
		}
		m.Link = link
		if !c.b.deliver(Input{Msg: &m}, c.closed) {
			return
		}
	}
}

// SaveNodesConf rewrites nodes.conf in place like Redis's
// clusterSaveConfig: the new text padded with newlines to the old length,
// one write, fsync when asked, then truncation of the padding. (An atomic
// rename costs a second fsync, of the directory, on every slot change.)
// It is the one writer of nodes.conf.
func SaveNodesConf(path, text string, fsync bool) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	b := []byte(text)
	if st, err := f.Stat(); err == nil && st.Size() > int64(len(b)) {
		pad := make([]byte, int(st.Size())-len(b))
		for i := range pad {
			pad[i] = '\n'
		}
		b = append(b, pad...)
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		return err
	}
	if fsync {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	if len(b) != len(text) {
		f.Truncate(int64(len(text)))
	}
	return nil
}
