// Serving one connection (Redis networking.c): registering the client,
// reading and parsing its input, running each batch of requests under the
// server lock, and dropping the client when it goes.

package server

import (
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redline-dev/redline/server/resp"
)

func (s *Server) serveConn(conn net.Conn) {
	c := s.registerClient(conn)
	c.in = make([]byte, initialIn)
	s.serveOwn(c, conn, false)
}

// serveOwn serves a connection from its goroutine until it closes, then
// forgets it. The caller did s.wg.Add(1).
func (s *Server) serveOwn(c *Client, conn net.Conn, resumed bool) {
	defer s.wg.Done()
	defer func() {
		if c.ps != nil && c.closeNow {
			c.ps.flushNow() // QUIT's OK (and what was queued before it) goes out first
		}
		conn.Close()
		s.dropClient(c)
	}()
	s.serveStream(c, conn, resumed)
}

// registerClient makes the Client of a new connection. Registration takes
// only clientsMu, so a connection arriving while a long script holds the
// server lock can still be answered BUSY.
func (s *Server) registerClient(conn net.Conn) *Client {
	c := s.newClient(conn)
	s.register(c)
	return c
}

// register gives c its id and makes it visible to CLIENT LIST and KILL.
func (s *Server) register(c *Client) {
	s.clientsMu.Lock()
	s.nextID++
	c.id = s.nextID
	s.clients[c.id] = c
	s.clientsMu.Unlock()
	atomic.AddInt64(&s.stats.connections, 1)
	s.nclients.Add(1)
}

// dropClient forgets a closed connection's client.
func (s *Server) dropClient(c *Client) {
	s.nclients.Add(-1)
	s.mu.Lock()
	s.forgetClient(c)
	s.mu.Unlock()
}

// forgetClient is dropClient with the server lock held.
func (s *Server) forgetClient(c *Client) {
	if c.blk != nil {
		s.unblock(c)
	}
	s.unwatchAll(c)
	s.stopMonitor(c)
	s.trackingOff(c)
	s.dropSubscriber(c)
	s.clientsMu.Lock()
	delete(s.clients, c.id)
	s.clientsMu.Unlock()
	s.replClientClosed(c)
}

// serveStream serves a connection from its own goroutine until it closes.
// resumed is true for a connection handed over by an event loop
// (eventloop_linux.go): its buffered input and pending replies come first.
func (s *Server) serveStream(c *Client, conn net.Conn, resumed bool) {
	for {
		if !resumed {
			c.makeRoom()
			var deadline time.Time
			if s.cfg.Timeout > 0 {
				deadline = time.Now().Add(time.Duration(s.cfg.Timeout) * time.Second)
				conn.SetReadDeadline(deadline)
			}
			if !c.woken.Swap(false) { // else a blocked client was served: no read
				var n int
				var err error
				if c.ps != nil {
					n, err = readCounted(c, conn, c.in[c.rend:])
				} else {
					n, err = conn.Read(c.in[c.rend:])
				}
				if n > 0 {
					c.rend += n
					atomic.AddInt64(&s.stats.netIn, int64(n))
				}
				if err != nil && !wakeTimeout(c, conn, err, deadline) {
					return
				}
			}
			if c.killed.Load() {
				return
			}
		}
		resumed = false
		ok := s.processInput(c, false)
		c.inDone.Store(c.inReads.Load())
		if !ok {
			return
		}
		// A client with a writer (a subscriber, a tracking client) had
		// its replies moved to the writer under the lock, and other
		// clients' commands append its messages to out under the lock:
		// out is not this goroutine's to read.
		if (c.ps == nil || c.ps.conn == nil) && len(c.out) > 0 {
			if _, err := conn.Write(c.out); err != nil {
				return
			}
			atomic.AddInt64(&s.stats.netOut, int64(len(c.out)))
			c.resetOut()
		}
		if c.closeNow || c.killed.Load() {
			return
		}
		c.shrinkIn()
		c.lastActive.Store(time.Now().UnixMilli())
	}
}

// processInput parses every complete request in c.in[c.rstart:c.rend] and
// runs them under one lock acquisition, leaving the replies in c.out. It
// returns false when the connection must close without sending them (the
// server exits on an AOF write error with appendfsync always, or the unparsed input passed client-query-buffer-limit). In an event loop (inLoop) it stops before a command
// that blocks its caller (WAIT, a client pause, a script, PSYNC) and sets
// c.leaveLoop, leaving that command in the buffer.
func (s *Server) processInput(c *Client, inLoop bool) bool {
	if s.exited.Load() {
		return false
	}
	if int64(c.rend-c.rstart) > s.queryBufLimit.Load() {
		s.closeOverQueryBuf(c)
		return false
	}
	if c.foreignPending.Load() {
		s.takeForeign(c) // pushes first: they were produced before this batch
	}
	if c.blocked.Load() && !s.resumeBlocked(c) {
		return true // still blocked: its input waits in c.in (blocking.go)
	}
	if c.closeNow {
		return true
	}
	locked, perr := s.runBatch(c, inLoop)
	if locked {
		s.repl.loopFeed = false
		if !s.afterBatch(c) {
			// The server exits (an AOF write failed with appendfsync
			// always): the batch's replies must not go out.
			s.mu.Unlock()
			return false
		}
		if c.ps != nil {
			c.ps.enqueue() // a subscriber's replies queue up with its messages
		}
		s.mu.Unlock()
	}
	if c.rstart == c.rend {
		c.rstart, c.rend = 0, 0
	}
	if perr != nil {
		if c.ps != nil && c.ps.conn != nil {
			s.mu.Lock()
			c.out = resp.AppendError(c.out, "ERR "+perr.Error())
			c.ps.enqueue()
			s.mu.Unlock()
		} else {
			c.out = resp.AppendError(c.out, "ERR "+perr.Error())
		}
		c.closeNow = true
	}
	return true
}

// closeOverQueryBuf logs, as Redis's readQueryFromClient, a client whose
// unparsed input passed client-query-buffer-limit (1 GB by default): Redis
// closes it without a reply.
func (s *Server) closeOverQueryBuf(c *Client) {
	s.mu.Lock()
	info := c.infoLine(time.Now())
	s.mu.Unlock()
	head := c.in[c.rstart:c.rend]
	if len(head) > 64 {
		head = head[:64]
	}
	s.Logf('#', "Closing client that reached max query buffer length: %s (qbuf initial bytes: %s)", info, appendRepr(nil, head))
}

// setQueryBufLimit reads client-query-buffer-limit (lock held) for
// processInput, which checks it without the lock.
func (s *Server) setQueryBufLimit() {
	n, err := strconv.ParseInt(s.configValue("client-query-buffer-limit"), 10, 64)
	if err != nil || n <= 0 {
		n = 1 << 30
	}
	s.queryBufLimit.Store(n)
}

// runBatch runs the complete requests in c's input; locked reports that
// it returns with the server lock held. A panicking handler is logged and
// answered with an error and the connection is closed, instead of taking
// the server down: one deferred recover for the batch, not one per
// command.
func (s *Server) runBatch(c *Client, inLoop bool) (locked bool, perr error) {
	defer func() {
		if p := recover(); p != nil {
			name := "?"
			if c.cmd != nil {
				name = c.cmd.Name
			}
			s.Logf('#', "panic running %q: %v\n%s", name, p, debug.Stack())
			c.Error("ERR internal error")
			c.closeNow = true
			if s.trk != nil && s.trk.running == c {
				s.trackDone(c)
			}
		}
	}()
	for c.rstart < c.rend {
		args, m, need, err := c.parser.Parse(c.in[c.rstart:c.rend], c.argvBuf[:0])
		c.argvBuf = args
		if err != nil {
			perr = err
			break
		}
		if m == 0 {
			c.growFor(need)
			break
		}
		if len(args) == 0 {
			c.rstart += m
			continue
		}
		if !locked {
			if s.subscribers.Load() > 0 && isPublish(args[0]) {
				s.letSubscribersCatchUp(c, args)
			}
			if !s.lockOrBusy(c, args, inLoop) {
				c.rstart += m
				continue // answered BUSY (or SCRIPT KILL) without the lock
			}
			locked = true
			s.repl.loopFeed = inLoop
		}
		cmd := c.lookupCommand(args[0])
		if inLoop && s.blocksCaller(c, cmd, args) {
			c.leaveLoop = true
			break
		}
		c.rstart += m
		if s.paused(c, args) {
			s.mu.Unlock()
			s.waitPause(c, args)
			s.mu.Lock()
		}
		c.callCmd(cmd, args)
		if len(s.blk.ready) > 0 {
			s.serveReadyKeys()
		}
		if c.closeNow || c.blk != nil {
			break
		}
	}
	return locked, perr
}

// lookupCommand is Server.Lookup with a one-entry cache per client: a
// pipeline mostly repeats one command, and the name's two map lookups
// (lower case, then upper case as redis-benchmark sends it) cost more than
// the GET they find. The table does not change after New.
func (c *Client) lookupCommand(name []byte) *Command {
	if c.lastLookup != nil && string(name) == string(c.lastName) {
		return c.lastLookup
	}
	cmd := c.s.Lookup(name)
	if cmd != nil && len(name) <= 32 {
		c.lastName = append(c.lastName[:0], name...)
		c.lastLookup = cmd
	}
	return cmd
}

// blocksCaller reports, lock held, whether running argv would block the
// goroutine that runs it for longer than a command takes: an event loop
// hands such a connection over to a goroutine of its own first.
func (s *Server) blocksCaller(c *Client, cmd *Command, argv [][]byte) bool {
	if cmd == nil {
		return false
	}
	// A script queued in MULTI hands the connection over when it is
	// queued, so EXEC runs it off the loop too.
	if cmd.holdsCaller {
		return true
	}
	if cmd.Name == "client" && len(argv) > 2 && strings.EqualFold(string(argv[1]), "tracking") {
		return true // invalidations are pushed between its commands
	}
	return s.paused(c, argv)
}

// afterBatch runs after a connection's batch of commands, lock held: the
// AOF is written (and fsynced with appendfsync always) before replies go out.
func (s *Server) afterBatch(c *Client) bool {
	if s.trk != nil {
		s.trackFlushBcast() // BCAST invalidations go out once per batch, as Redis's beforeSleep
	}
	s.flushClusterOutputs()
	if s.aof != nil {
		s.aof.flush(s.cfg.AppendFsync == "always")
	}
	return !s.exited.Load()
}

// Listen binds the configured addresses and port (port 0 picks a free port
// on the first address).
func (s *Server) Listen() error {
	binds := s.cfg.Bind
	if len(binds) == 0 {
		binds = []string{"*"}
	}
	port := s.cfg.Port
	for _, b := range binds {
		optional := strings.HasPrefix(b, "-")
		host := strings.TrimPrefix(b, "-")
		network := "tcp"
		switch host {
		case "*":
			host, network = "0.0.0.0", "tcp4"
		case "::*":
			host, network = "::", "tcp6"
		}
		ln, err := net.Listen(network, net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			if optional {
				continue
			}
			s.closeListeners()
			return fmt.Errorf("Could not create server TCP listening socket %s:%d: %v", host, port, err)
		}
		if port == 0 {
			port = ln.Addr().(*net.TCPAddr).Port
		}
		s.listeners = append(s.listeners, ln)
	}
	if len(s.listeners) == 0 {
		return errors.New("no address to listen on")
	}
	s.cfg.Port = port
	return nil
}

func (s *Server) closeListeners() {
	for _, ln := range s.listeners {
		ln.Close()
	}
}

func (s *Server) acceptLoop(ln net.Listener) {
	defer s.wg.Done()
	for {
		conn, err := ln.Accept()
		if err != nil {
			select {
			case <-s.shutdown:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if strings.Contains(err.Error(), "use of closed") {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if s.nclients.Load() >= int64(s.cfg.MaxClients) {
			atomic.AddInt64(&s.stats.rejectedConns, 1)
			conn.Write([]byte("-ERR max number of clients reached\r\n"))
			conn.Close()
			continue
		}
		if s.denyProtected(conn) {
			continue
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetNoDelay(true)
		}
		if s.loopAccept(conn) {
			continue
		}
		s.wg.Add(1)
		go s.serveConn(conn)
	}
}
