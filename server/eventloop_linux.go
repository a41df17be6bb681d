//go:build linux

package server

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Event loops: the way Redis serves clients, on epoll.
//
// With a goroutine per connection every request costs two reads (the
// request, then EAGAIN before parking) and a park/wake of the goroutine;
// profiles of redis-benchmark at -P 1 put that at a fifth to a third more
// CPU per request than redis-server. An event loop reads a connection only
// when epoll says it has data and runs the requests of every ready
// connection in one pass: one read and one write per request.
//
// The loop never blocks in epoll_wait itself: its epoll descriptor is
// registered with Go's network poller, so the goroutine parks like any other
// network wait and the rest of the server (cron, cluster bus, replication)
// keeps its processor.
//
// A connection whose next command would block its caller (WAIT, a client
// pause, a Lua script that may run long enough to need BUSY replies for
// others, PSYNC turning it into a replica link) or whose replies do not fit
// the socket buffer leaves the loop for a goroutine of its own
// (Server.serveStream), keeping its buffered input and pending replies. It
// never comes back; such connections are few.

// loopClient is a connection's state in its event loop.
type loopClient struct {
	fd int
	// closed is set, under the server lock, once fd is no longer ours to
	// touch (closed, or handed over): CLIENT KILL must then not shut it.
	closed bool
}

// eventLoop serves the connections registered with one epoll instance.
type eventLoop struct {
	s      *Server
	epfd   int
	epFile *os.File // epfd, registered with Go's poller for parking
	raw    syscall.RawConn
	wakeFd int // an eventfd that interrupts the loop on shutdown

	mu    sync.Mutex
	conns map[int32]*Client // by fd
	// woken are blocked clients whose reply is ready (blocking.go); the
	// loop sends it and runs their buffered input.
	woken []*Client
	// held are the clients of this pass whose replies wait for the
	// stream to reach the replicas (process); links is finishPass's
	// scratch list of replica links.
	held  []*Client
	links []*replicaLink
}

// eventLoopsEnabled: REDLINE_EVENT_LOOP=off serves every connection from a
// goroutine of its own (for comparisons in scripts/bench-server).
func eventLoopsEnabled() bool {
	return os.Getenv("REDLINE_EVENT_LOOP") != "off"
}

// startLoops starts n event loops; on failure the server falls back to a
// goroutine per connection and says so in its log.
func (s *Server) startLoops(n int) {
	if !eventLoopsEnabled() {
		return
	}
	for i := 0; i < n; i++ {
		l, err := newEventLoop(s)
		if err != nil {
			s.Logf('#', "event loop unavailable (%v): serving each connection from its own goroutine", err)
			for _, l := range s.loops {
				l.wake()
			}
			s.loops = nil
			return
		}
		s.loops = append(s.loops, l)
	}
	for _, l := range s.loops {
		s.wg.Add(1)
		go l.run()
	}
}

func newEventLoop(s *Server) (*eventLoop, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(epfd)
		return nil, err
	}
	wfd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, err
	}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wfd)}); err != nil {
		unix.Close(epfd)
		unix.Close(wfd)
		return nil, err
	}
	// A non-blocking descriptor given to os.NewFile is registered with the
	// runtime poller; an epoll descriptor is readable when it has events.
	f := os.NewFile(uintptr(epfd), "epoll")
	raw, err := f.SyscallConn()
	if err == nil {
		// Only a descriptor in the poller takes deadlines: this tells
		// whether waiting on it parks the goroutine.
		err = f.SetReadDeadline(time.Time{})
	}
	if err != nil {
		f.Close()
		unix.Close(wfd)
		return nil, err
	}
	return &eventLoop{s: s, epfd: epfd, epFile: f, raw: raw, wakeFd: wfd, conns: map[int32]*Client{}}, nil
}

// wake interrupts the loop so that it sees the shutdown.
func (l *eventLoop) wake() {
	var one = [8]byte{1}
	unix.Write(l.wakeFd, one[:])
}

// loopAccept moves a freshly accepted connection into an event loop; false
// means the caller serves it from a goroutine as before.
func (s *Server) loopAccept(conn net.Conn) bool {
	if len(s.loops) == 0 {
		return false
	}
	tc, ok := conn.(*net.TCPConn)
	if !ok {
		return false
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return false
	}
	// The loop owns a duplicate of the socket; closing conn then takes the
	// original out of Go's poller.
	fd := -1
	rc.Control(func(sfd uintptr) {
		if nfd, err := unix.Dup(int(sfd)); err == nil {
			fd = nfd
		}
	})
	if fd < 0 {
		return false
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return false
	}
	c := s.newClient(conn)
	conn.Close()
	c.in = make([]byte, initialIn)
	l := s.loops[fd%len(s.loops)]
	c.loop = &loopClient{fd: fd}
	c.conn = loopConn{c: c, laddr: conn.LocalAddr(), raddr: conn.RemoteAddr()}
	s.register(c)
	l.mu.Lock()
	l.conns[int32(fd)] = c
	l.mu.Unlock()
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(fd)}); err != nil {
		l.close(c)
	}
	return true
}

func (l *eventLoop) run() {
	defer l.s.wg.Done()
	defer l.epFile.Close()
	defer unix.Close(l.wakeFd)
	events := make([]unix.EpollEvent, 256)
	for {
		var n int
		err := l.raw.Read(func(uintptr) bool {
			n = epollPoll(l.epfd, events)
			return n > 0
		})
		if err != nil {
			l.s.Logf('#', "event loop stopped: %v", err)
			l.closeAll()
			return
		}
		for i := 0; i < n; i++ {
			fd := events[i].Fd
			if int(fd) == l.wakeFd {
				select {
				case <-l.s.shutdown:
					l.closeAll()
					return
				default:
				}
				var b [8]byte
				unix.Read(l.wakeFd, b[:])
				l.serveWoken()
				continue
			}
			l.mu.Lock()
			c := l.conns[fd]
			l.mu.Unlock()
			if c != nil {
				l.serve(c)
			}
		}
		l.finishPass()
	}
}

// serve reads what a ready connection sent, runs it and writes the replies.
func (l *eventLoop) serve(c *Client) {
	s := l.s
	fd := c.loop.fd
	c.makeRoom()
	n, err := rawRead(fd, c.in[c.rend:])
	if err == unix.EAGAIN || err == unix.EINTR {
		return
	}
	if n <= 0 || c.killed.Load() {
		l.close(c)
		return
	}
	c.rend += n
	atomic.AddInt64(&s.stats.netIn, int64(n))
	l.process(c)
}

// process runs what c has buffered and writes the replies, unless the
// replication stream holds bytes no replica socket has yet: then the
// replies wait for the end of the pass (finishPass), which hands the
// stream to the replicas first. Redis writes the replicas' output and the
// clients' replies in the same beforeSleep, so a write it acknowledges is
// in the replica's socket within microseconds; a reply sent before a
// replica writer's next batch would leave a stopped or partitioned
// primary's acknowledged writes on no replica for up to replWriteGap.
func (l *eventLoop) process(c *Client) {
	s := l.s
	if !s.processInput(c, true) {
		l.close(c)
		return
	}
	if s.repl.unflushed.Load() {
		if !c.loopHeld {
			c.loopHeld = true
			l.held = append(l.held, c)
		}
		return
	}
	l.reply(c)
}

// finishPass writes the stream to the replicas, then the replies the
// pass held back. It writes whenever the stream has unwritten bytes: the
// pass's writes woke no replica writer (loopFeed), even those whose
// client was closed before its reply.
func (l *eventLoop) finishPass() {
	if len(l.held) == 0 && !l.s.repl.unflushed.Load() {
		return
	}
	l.s.repl.flushFromLoop(&l.links)
	for i, c := range l.held {
		l.held[i] = nil
		c.loopHeld = false
		if c.loop == nil || c.loop.closed {
			continue
		}
		l.reply(c)
	}
	l.held = l.held[:0]
}

// reply writes c's pending replies and settles the connection.
func (l *eventLoop) reply(c *Client) {
	s := l.s
	fd := c.loop.fd
	for written := 0; written < len(c.out); {
		m, err := rawWrite(fd, c.out[written:])
		if m > 0 {
			written += m
			atomic.AddInt64(&s.stats.netOut, int64(m))
		}
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			// The client reads slower than it asks: a goroutine of its
			// own waits for it with a blocking write.
			c.out = c.out[written:]
			l.handOver(c)
			return
		}
		if err != 0 {
			l.close(c)
			return
		}
	}
	c.resetOut()
	if c.closeNow || c.killed.Load() {
		l.close(c)
		return
	}
	if c.leaveLoop {
		l.handOver(c)
		return
	}
	c.shrinkIn()
	c.lastActive.Store(s.unixMs())
}

// wakeLoopClient hands a served blocked client back to its loop (lock
// held).
func (s *Server) wakeLoopClient(c *Client) {
	l := s.loops[c.loop.fd%len(s.loops)]
	l.mu.Lock()
	l.woken = append(l.woken, c)
	l.mu.Unlock()
	l.wake()
}

// serveWoken sends the replies of served blocked clients and runs the
// commands they sent meanwhile.
func (l *eventLoop) serveWoken() {
	l.mu.Lock()
	woken := l.woken
	l.woken = nil
	l.mu.Unlock()
	for _, c := range woken {
		// Only the loop closes or hands over its connections, so c.loop
		// is stable here.
		if c.loop == nil || c.loop.closed {
			continue
		}
		l.process(c)
	}
}

// forget removes fd from the loop; the caller holds the server lock and
// closes or hands over the descriptor.
func (l *eventLoop) forget(c *Client) {
	fd := c.loop.fd
	unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, fd, nil)
	l.mu.Lock()
	delete(l.conns, int32(fd))
	l.mu.Unlock()
	c.loop.closed = true
}

// close ends a connection served by the loop.
func (l *eventLoop) close(c *Client) {
	s := l.s
	s.mu.Lock()
	l.forget(c)
	unix.Close(c.loop.fd)
	s.forgetClient(c)
	s.mu.Unlock()
	s.nclients.Add(-1)
}

// closeAll ends every connection when the server shuts down.
func (l *eventLoop) closeAll() {
	l.mu.Lock()
	cs := make([]*Client, 0, len(l.conns))
	for _, c := range l.conns {
		cs = append(cs, c)
	}
	l.mu.Unlock()
	for _, c := range cs {
		l.close(c)
	}
}

// handOver gives the connection a goroutine of its own (Server.serveStream)
// with its buffered input and pending replies.
func (l *eventLoop) handOver(c *Client) {
	s := l.s
	c.leaveLoop = false
	f := os.NewFile(uintptr(c.loop.fd), "client")
	s.mu.Lock()
	l.forget(c)
	conn, err := net.FileConn(f) // a duplicate, in Go's poller
	f.Close()
	if err != nil {
		s.Logf('#', "handing a connection over to a goroutine: %v", err)
		s.forgetClient(c)
		s.mu.Unlock()
		s.nclients.Add(-1)
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	s.clientsMu.Lock() // CLIENT LIST reads these with clientsMu only
	c.conn = conn
	c.loop = nil
	s.clientsMu.Unlock()
	s.mu.Unlock()
	s.wg.Add(1)
	go s.serveOwn(c, conn, true)
}

// The loop's system calls never block (the sockets are non-blocking and
// epoll is polled with a zero timeout), so they are made raw: without the
// runtime's entersyscall/exitsyscall, which with one processor wake the
// sysmon thread and hand the processor to another thread whenever a
// loopback write takes longer than 20 µs. That bookkeeping cost more CPU
// per request than the command itself.

func rawRead(fd int, p []byte) (int, syscall.Errno) {
	r, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(r), e
}

func rawWrite(fd int, p []byte) (int, syscall.Errno) {
	r, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(r), e
}

// writeConn writes b to a connection in Go's poller the same way: raw
// writes while the socket takes them, the poller's wait (and the write
// deadline) when it is full. Replica streams use it; a plain conn.Write
// there woke the sysmon thread on every burst.
func writeConn(conn net.Conn, b []byte) error {
	rc := loopWritable(conn)
	if rc == nil {
		_, err := conn.Write(b)
		return err
	}
	var werr error
	err := rc.Write(func(fd uintptr) bool {
		for len(b) > 0 {
			n, e := rawWrite(int(fd), b)
			switch e {
			case 0:
				b = b[n:]
			case unix.EINTR:
			case unix.EAGAIN:
				return false
			default:
				werr = e
				return true
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	return werr
}

// tryWrite writes what the socket takes of b now, never waiting: the
// bytes written, and an error when the link is broken or its write
// deadline passed (a full socket is no error).
func tryWrite(rc syscall.RawConn, b []byte) (int, error) {
	n := 0
	var werr error
	err := rc.Write(func(fd uintptr) bool {
		for n < len(b) {
			m, e := rawWrite(int(fd), b[n:])
			if e == unix.EINTR {
				continue
			}
			if e == unix.EAGAIN {
				break
			}
			if e != 0 {
				werr = e
				break
			}
			n += m
		}
		return true
	})
	if err != nil {
		return n, err
	}
	return n, werr
}

// waitWritable waits until the socket takes bytes again; an error when
// the deadline passes or the connection is closed. It waits in poll(2)
// through Control, never through Write: syscall.RawConn.Write holds the
// descriptor's write lock while it waits, so an event loop's tryWrite to
// the same socket (finishPass, under the link's locks, which feed takes
// under the server lock) queued behind it and a replica that stopped
// reading stopped the whole server (TestRepliesFlowWhileAReplicaStopsReading).
// It wakes every waitWritableStep to see a close or the deadline.
func waitWritable(rc syscall.RawConn, deadline time.Time) error {
	for {
		step := waitWritableStep
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return os.ErrDeadlineExceeded
			}
			step = min(step, left)
		}
		ready := false
		err := rc.Control(func(fd uintptr) {
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
			n, e := unix.Poll(fds, int((step+time.Millisecond-1)/time.Millisecond))
			// An error or hang-up is "ready" too: the next write reports it.
			ready = e == nil && n > 0
		})
		if err != nil {
			return err
		}
		if ready {
			return nil
		}
	}
}

// waitWritableStep is how long waitWritable sleeps in poll(2) at most
// before it looks at the connection and the deadline again.
const waitWritableStep = 100 * time.Millisecond

// loopWritable is conn's descriptor for writes that never wait (nil when
// it has none, as over TLS).
func loopWritable(conn net.Conn) syscall.RawConn {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// epollPoll returns the ready events without waiting (0 on EINTR).
func epollPoll(epfd int, events []unix.EpollEvent) int {
	r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0
	}
	return int(r)
}

// loopConn stands for a loop connection where the server keeps a net.Conn:
// only Close (CLIENT KILL, shutdown) and the addresses are used.
type loopConn struct {
	c            *Client
	laddr, raddr net.Addr
}

var errLoopConn = errors.New("connection is served by an event loop")

// Close shuts the socket down (lock held); the loop sees it and closes it.
func (lc loopConn) Close() error {
	if l := lc.c.loop; l != nil && !l.closed {
		unix.Shutdown(l.fd, unix.SHUT_RDWR)
	}
	return nil
}

func (lc loopConn) Read([]byte) (int, error)         { return 0, errLoopConn }
func (lc loopConn) Write([]byte) (int, error)        { return 0, errLoopConn }
func (lc loopConn) LocalAddr() net.Addr              { return lc.laddr }
func (lc loopConn) RemoteAddr() net.Addr             { return lc.raddr }
func (lc loopConn) SetDeadline(time.Time) error      { return errLoopConn }
func (lc loopConn) SetReadDeadline(time.Time) error  { return errLoopConn }
func (lc loopConn) SetWriteDeadline(time.Time) error { return errLoopConn }

// socketQueued is how many bytes wait unread in conn's socket (0 if it
// cannot tell).
func socketQueued(conn net.Conn) int {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return 0
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0
	}
	queued := 0
	raw.Control(func(fd uintptr) { queued, _ = unix.IoctlGetInt(int(fd), unix.SIOCINQ) })
	return queued
}

// readCounted is conn.Read for a subscriber's goroutine, with a read that
// returned input counted in c.inReads before the goroutine can lose its
// processor: the raw read keeps it, where after conn.Read's system call
// the goroutine may wait for a processor with the input neither in the
// socket nor counted, and a PUBLISH would not see it pending
// (pubsub_order.go).
func readCounted(c *Client, conn net.Conn, p []byte) (int, error) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return readCountedPlain(c, conn, p)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return readCountedPlain(c, conn, p)
	}
	n := 0
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		for {
			m, e := rawRead(int(fd), p)
			switch e {
			case 0:
				if m > 0 {
					c.inReads.Add(1)
					n = m
				} else {
					rerr = io.EOF
				}
				return true
			case unix.EINTR:
			case unix.EAGAIN:
				return false
			default:
				rerr = e
				return true
			}
		}
	})
	if err != nil {
		return 0, err
	}
	return n, rerr
}
