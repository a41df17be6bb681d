package bus

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"
)

// Transport opens the bus's connections. TCP is the real one; MemNetwork is
// an in-memory one for tests.
type Transport interface {
	Listen(addr string) (net.Listener, error)
	Dial(ctx context.Context, addr string) (net.Conn, error)
}

// TCP is the Transport over real TCP sockets.
type TCP struct{}

// Listen listens on a TCP address.
func (TCP) Listen(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }

// Dial connects to a TCP address.
func (TCP) Dial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err == nil {
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetNoDelay(true)
		}
	}
	return c, err
}

// MemNetwork is an in-memory Transport: listeners are registered by address
// and Dial returns one end of a net.Pipe. Block cuts traffic between two
// addresses (new dials fail, open connections between them are closed).
type MemNetwork struct {
	mu        sync.Mutex
	listeners map[string]*memListener
	blocked   map[[2]string]bool
	conns     []*memConn
}

// NewMemNetwork returns an empty in-memory network.
func NewMemNetwork() *MemNetwork {
	return &MemNetwork{listeners: map[string]*memListener{}, blocked: map[[2]string]bool{}}
}

type memAddr string

func (a memAddr) Network() string { return "mem" }
func (a memAddr) String() string  { return string(a) }

type memConn struct {
	net.Conn
	local, remote memAddr
}

func (c *memConn) LocalAddr() net.Addr  { return c.local }
func (c *memConn) RemoteAddr() net.Addr { return c.remote }

type memListener struct {
	net  *MemNetwork
	addr memAddr
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() {
		close(l.done)
		l.net.mu.Lock()
		if l.net.listeners[string(l.addr)] == l {
			delete(l.net.listeners, string(l.addr))
		}
		l.net.mu.Unlock()
	})
	return nil
}

func (l *memListener) Addr() net.Addr { return l.addr }

// Listen registers a listener at addr.
func (m *MemNetwork) Listen(addr string) (net.Listener, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.listeners[addr]; ok {
		return nil, errors.New("mem: address in use: " + addr)
	}
	l := &memListener{net: m, addr: memAddr(addr), ch: make(chan net.Conn), done: make(chan struct{})}
	m.listeners[addr] = l
	return l, nil
}

// Dial connects to a listener; the caller's address is taken from the context
// value set by WithLocalAddr (the bus sets it to its own listen address).
func (m *MemNetwork) Dial(ctx context.Context, addr string) (net.Conn, error) {
	local, _ := ctx.Value(localAddrKey{}).(string)
	m.mu.Lock()
	l := m.listeners[addr]
	blocked := m.blocked[[2]string{local, addr}]
	m.mu.Unlock()
	if l == nil || blocked {
		return nil, errors.New("mem: connection refused: " + addr)
	}
	a, b := net.Pipe()
	ca := &memConn{Conn: a, local: memAddr(local), remote: memAddr(addr)}
	cb := &memConn{Conn: b, local: memAddr(addr), remote: memAddr(local)}
	select {
	case l.ch <- cb:
	case <-l.done:
		return nil, errors.New("mem: connection refused: " + addr)
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(time.Second):
		return nil, errors.New("mem: accept timeout: " + addr)
	}
	m.mu.Lock()
	m.conns = append(m.conns, ca)
	m.mu.Unlock()
	return ca, nil
}

// Block cuts (or restores) traffic between a and b in both directions.
func (m *MemNetwork) Block(a, b string, blocked bool) {
	m.mu.Lock()
	m.blocked[[2]string{a, b}] = blocked
	m.blocked[[2]string{b, a}] = blocked
	var keep []*memConn
	var kill []*memConn
	for _, c := range m.conns {
		if blocked && (c.local == memAddr(a) && c.remote == memAddr(b) || c.local == memAddr(b) && c.remote == memAddr(a)) {
			kill = append(kill, c)
		} else {
			keep = append(keep, c)
		}
	}
	m.conns = keep
	m.mu.Unlock()
	for _, c := range kill {
		c.Close()
	}
}

type localAddrKey struct{}

// WithLocalAddr tells an in-memory Dial which address the caller listens on.
func WithLocalAddr(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, localAddrKey{}, addr)
}
