// Package bus is the I/O around the cluster state machine: it listens on the
// cluster bus port, keeps one outbound connection per link the node asks
// for, frames messages with the cluster wire codec, feeds Step and Tick, and
// performs what Ready hands out (send, close links, save nodes.conf, events).
package bus

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redline-dev/redline/server/cluster"
)

// Options configure a Bus.
type Options struct {
	// Node is the state machine; the bus owns it from Start on: touch it
	// only through Do.
	Node *cluster.Node
	// ListenAddr is the bus address to listen on, e.g. "0.0.0.0:17000".
	ListenAddr string
	// Transport defaults to TCP.
	Transport Transport
	// TickInterval defaults to 100ms.
	TickInterval time.Duration
	// Now defaults to time.Now (inject a skewed clock here).
	Now func() time.Time
	// ConfigPath is where nodes.conf is written ("" = not saved).
	ConfigPath string
	// OnReady, if set, sees every non-empty Ready after the bus has saved
	// the config and published the View, before the messages are queued:
	// hook replication (Events) and logging (Logs) here. It runs with the
	// bus locked: it must not call Do, and must not wait for a lock that is
	// held while calling Do (e.g. the server lock of a CLUSTER handler):
	// hand work that needs it to another goroutine. After pausing writes
	// for EventPauseWrites, confirm with Do(n.WritesPaused(offset)).
	OnReady func(r *cluster.Ready)
	// BeforeTick, if set, runs with the bus locked before every Tick: the
	// place to feed replication inputs (SetReplOffset, SetMasterLinkStatus)
	// read from atomics (same lock rule as OnReady).
	BeforeTick func(n *cluster.Node)
	// SendQueue is the per-connection queue length (default 1024); messages
	// beyond it are dropped, as an overloaded link would.
	SendQueue int
}

// Bus runs one node's cluster bus.
type Bus struct {
	o      Options
	mu     sync.Mutex
	node   *cluster.Node
	view   atomic.Pointer[cluster.SlotView]
	ln     net.Listener
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	out    map[uint64]*conn // outbound links by the node's link id
	in     map[uint64]*conn // accepted connections
	nextIn uint64
	err    error // first config save error
}

type conn struct {
	b      *Bus
	id     uint64
	out    bool
	addr   string
	ch     chan []byte
	mu     sync.Mutex
	c      net.Conn
	closed chan struct{}
	once   sync.Once
}

// New returns a bus for o.Node; call Start.
func New(o Options) *Bus {
	if o.Transport == nil {
		o.Transport = TCP{}
	}
	if o.TickInterval <= 0 {
		o.TickInterval = 100 * time.Millisecond
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.SendQueue <= 0 {
		o.SendQueue = 1024
	}
	b := &Bus{o: o, node: o.Node, out: map[uint64]*conn{}, in: map[uint64]*conn{}}
	b.ctx, b.cancel = context.WithCancel(WithLocalAddr(context.Background(), o.ListenAddr))
	b.view.Store(o.Node.View())
	return b
}

// Start listens and starts the accept and tick goroutines.
func (b *Bus) Start() error {
	ln, err := b.o.Transport.Listen(b.o.ListenAddr)
	if err != nil {
		return fmt.Errorf("cluster bus: listen on %s: %w", b.o.ListenAddr, err)
	}
	b.ln = ln
	b.wg.Add(2)
	go b.acceptLoop()
	go b.tickLoop()
	return b.Do(func(n *cluster.Node) error { return nil }) // flush the initial Ready
}

// Addr is the listening address.
func (b *Bus) Addr() net.Addr { return b.ln.Addr() }

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

// Do runs f on the node with the bus locked (admin commands, replication
// inputs, reads such as NodesText), then performs the node's outputs.
func (b *Bus) Do(f func(n *cluster.Node) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	err := f(b.node)
	b.flush()
	return err
}

// DoLater runs f on the node with the bus locked like Do, but leaves the
// outputs (config save, messages, events) to the next Do, Tick or incoming
// message. A caller running many admin commands in a row (a pipeline of
// CLUSTER SETSLOT) calls Do once at the end, so nodes.conf is written and
// fsynced once for the batch, as Redis does in beforeSleep.
func (b *Bus) DoLater(f func(n *cluster.Node) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return f(b.node)
}

// View is the latest routing snapshot; safe from any goroutine.
func (b *Bus) View() *cluster.SlotView { return b.view.Load() }

// SaveError returns the first error writing nodes.conf, if any.
func (b *Bus) SaveError() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

func (b *Bus) tickLoop() {
	defer b.wg.Done()
	t := time.NewTicker(b.o.TickInterval)
	defer t.Stop()
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-t.C:
			b.mu.Lock()
			if b.o.BeforeTick != nil {
				b.o.BeforeTick(b.node)
			}
			b.node.Tick(b.o.Now())
			b.flush()
			b.mu.Unlock()
		}
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

// flush performs the node's outputs; b.mu is held.
func (b *Bus) flush() {
	if b.ctx.Err() != nil {
		return // closed: no new connections
	}
	r := b.node.Ready()
	if r.Empty() {
		return
	}
	if r.SaveConfig && b.o.ConfigPath != "" {
		if err := WriteFileAtomic(b.o.ConfigPath, []byte(r.NodesConf), r.Fsync); err != nil && b.err == nil {
			b.err = err
		}
	}
	for _, id := range r.CloseLinks {
		if c := b.out[id]; c != nil {
			delete(b.out, id)
			c.close()
		}
	}
	if r.View != nil {
		b.view.Store(r.View)
	}
	if b.o.OnReady != nil {
		b.o.OnReady(&r)
	}
	for i := range r.Messages {
		e := &r.Messages[i]
		frame := cluster.EncodeMessage(&e.Msg)
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
		select {
		case c.ch <- frame:
		default: // queue full: drop
		}
	}
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

// failed drops the connection and tells the node when it was an outbound link.
func (c *conn) failed() {
	c.close()
	b := c.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if c.out {
		if b.out[c.id] == c {
			delete(b.out, c.id)
			b.node.LinkFailed(c.id)
			b.flush()
		}
	} else if b.in[c.id] == c {
		delete(b.in, c.id)
	}
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
		b := c.b
		b.mu.Lock()
		select {
		case <-c.closed:
			b.mu.Unlock()
			return
		default:
		}
		b.node.Step(m, b.o.Now())
		b.flush()
		b.mu.Unlock()
	}
}

// WriteFileAtomic writes data to path through a temporary file and a rename,
// fsyncing the file (and its directory) when sync is true.
func WriteFileAtomic(path string, data []byte, sync bool) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".nodes-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if sync {
		if d, err := os.Open(dir); err == nil {
			d.Sync()
			d.Close()
		}
	}
	return nil
}
