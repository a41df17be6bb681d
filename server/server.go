package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redline-dev/redline/server/config"
	"github.com/redline-dev/redline/server/internal/planted"
	"github.com/redline-dev/redline/server/resp"
	"github.com/redline-dev/redline/server/store"
)

// New creates a server from a configuration. It loads the AOF if appendonly
// is set; call Listen and Serve (or Start) afterwards.
func New(cfg *config.Config, opts Options) (*Server, error) {
	if opts.Clock == nil {
		opts.Clock = store.NewClock(nil)
	}
	if opts.Log == nil {
		opts.Log = os.Stdout
	}
	s := &Server{
		cfg:         cfg,
		opts:        opts,
		clock:       opts.Clock,
		upperCmds:   make(map[string]*Command),
		log:         opts.Log,
		clients:     make(map[int64]*Client),
		started:     time.Now(),
		runID:       randomHex(40),
		watchers:    make(map[watchedKey][]*Client),
		shutdown:    make(chan struct{}),
		shutdownReq: make(chan struct{}),
		pauseCh:     make(chan struct{}),
		clusterDone: make(chan struct{}),
	}
	s.repl = newReplState(s)
	s.dbs = make([]*store.DB, cfg.Databases)
	s.replyBuf.peakResetMs, s.replyBuf.resizing = replyBufPeakResetDefault, true
	for i := range s.dbs {
		i := i
		s.dbs[i] = store.New(s.clock, store.Hooks{Expired: func(key string) { s.expired(i, key) }, Added: func(key string, o *store.Object) { s.keyAdded(i, key, o); s.notifyIn(i, notifyNew, "new", []byte(key)) },
			StreamUnlinked: func(key string) { s.streamReady(i, []byte(key)) }})
	}
	s.applyAccessPolicy()
	s.applyLimits()
	s.applyIntrospection()
	s.setMaxmemory()
	if cfg.ClusterEnabled {
		// Cluster mode answers COUNTKEYSINSLOT/GETKEYSINSLOT from an index.
		s.dbs[0].EnableSlotIndex()
	}
	s.commands = newCommandTable()
	for name, cmd := range s.commands {
		s.upperCmds[strings.ToUpper(name)] = cmd
		cmd.holdsCaller = blocking(cmd.Name)
	}
	if err := s.newACL(); err != nil {
		return nil, err
	}
	s.refreshProtected()
	s.setQueryBufLimit()
	s.scripts = newScripting(s)
	s.functions()
	for _, w := range cfg.Warnings {
		s.Logf('#', "%s", w)
	}
	if err := s.openAOF(); err != nil {
		return nil, err
	}
	if err := s.loadRDBAtStart(); err != nil {
		return nil, err
	}
	return s, nil
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

// Start listens, starts cluster mode (cluster-enabled yes) or the link to a
// configured master (replicaof), and serves in the background, as Main
// does. Close stops everything.
func (s *Server) Start() error {
	if err := s.Listen(); err != nil {
		return err
	}
	return s.serve()
}

// serve starts the node (cluster mode, or the link to a configured master)
// and serves the listeners in the background: what Start and Main do
// after Listen.
func (s *Server) serve() error {
	if err := s.startNode(); err != nil {
		s.closeListeners()
		return err
	}
	s.afterStartLoad()
	s.serveBackground()
	return nil
}

func (s *Server) serveBackground() {
	s.startLoops(1)
	for _, ln := range s.listeners {
		s.wg.Add(1)
		go s.acceptLoop(ln)
	}
	s.wg.Add(1)
	go s.cronLoop()
	s.Logf('*', "Ready to accept connections")
}

// Close stops listening, closes every connection, flushes and closes the AOF.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.stopNode()
		close(s.shutdown)
		s.closeListeners()
		for _, l := range s.loops {
			l.wake()
		}
		s.mu.Lock()
		s.clientsMu.Lock()
		for _, c := range s.clients {
			c.conn.Close()
		}
		s.clientsMu.Unlock()
		err = s.closeAOF()
		s.mu.Unlock()
		s.wg.Wait()
	})
	return err
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

func (s *Server) newClient(conn net.Conn) *Client {
	c := &Client{s: s, conn: conn, proto: 2, created: time.Now()}
	if conn != nil {
		c.addr = conn.RemoteAddr().String()
		c.laddr = conn.LocalAddr().String()
	}
	c.parser.MaxBulk = s.cfg.ProtoMaxBulkLen
	c.parser.NulHidesLineEnd = true
	if conn != nil {
		c.resetAuth()
	} else {
		c.authenticated = true // no connection: the server's own client, a superuser (nil user)
	}
	return c
}

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

// blocking names the commands that may hold their caller: a handed-over
// connection's goroutine waits, or runs a script while the server answers
// others BUSY.
func blocking(name string) bool {
	switch name {
	case "wait", "psync", "sync", "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro", "monitor",
		"subscribe", "psubscribe", "ssubscribe":
		return true
	}
	return false
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

// Main runs a server with redis-server style arguments until SHUTDOWN or
// SIGTERM/SIGINT. It returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "-v", "--version":
			fmt.Fprintf(stdout, "Redis server v=%s sha=00000000:0 malloc=libc bits=64 build=redline\n", config.Version)
			return 0
		case "-h", "--help":
			fmt.Fprintln(stdout, "Usage: redline server [/path/to/redis.conf] [options]\n       redline server -v or --version\n\nExamples:\n       redline server /etc/redis/6379.conf\n       redline server --port 7777\n       redline server --port 7777 --replicaof 127.0.0.1 8888\n       redline server /etc/myredis.conf --loglevel verbose --appendonly yes")
			return 0
		}
	}
	args, err := planted.Args(args) // --planted-bug NAME, only in a -tags plantedbugs build
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	cfg, err := config.ParseArgs(args)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if cfg.ClusterEnabled && os.Getenv("GOMAXPROCS") == "" {
		// A cluster node shares its machine with the other nodes (six
		// processes on two cores in the benches): one P, like Redis's one
		// thread, saves the wakeups of idle Ps (~7% CPU per request at
		// redis-benchmark -P 1). The GOMAXPROCS variable overrides it.
		runtime.GOMAXPROCS(1)
	}
	// Redis changes directory when it reads dir, so a relative logfile
	// after it lives in dir (the test suites' "dir ./redis_0" then
	// "logfile log.txt").
	if cfg.Dir != "" && cfg.Dir != "." {
		if err := os.Chdir(cfg.Dir); err != nil {
			fmt.Fprintf(stderr, "Can't chdir to '%s': %v\n", cfg.Dir, err)
			return 1
		}
	}
	var logw io.Writer = stdout
	if cfg.LogFile != "" {
		f, err := os.OpenFile(cfg.LogFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintf(stderr, "Can't open the log file: %v\n", err)
			return 1
		}
		defer f.Close()
		bw := &syncWriter{w: f}
		logw = bw
	}
	if wd, err := os.Getwd(); err == nil {
		cfg.Dir = wd
	}
	s, err := New(cfg, Options{Log: logw})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	s.Logf('#', "redline reference server (Redis %s compatible), pid=%d, port=%d", config.Version, os.Getpid(), cfg.Port)
	// Redis's logo carries " PID: n": Redis's own test suite waits for it.
	s.Logf('*', "Port: %d PID: %d", cfg.Port, os.Getpid())
	if err := s.Listen(); err != nil {
		s.Logf('#', "%v", err)
		fmt.Fprintln(stderr, err)
		return 1
	}
	if cfg.PidFile != "" {
		os.WriteFile(cfg.PidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
		defer os.Remove(cfg.PidFile)
	}
	if path := os.Getenv("REDLINE_CPUPROFILE"); path != "" {
		if stop, err := startCPUProfile(path); err == nil {
			defer stop()
		} else {
			s.Logf('#', "CPU profile: %v", err)
		}
	}
	if err := s.serve(); err != nil {
		s.Logf('#', "%v", err)
		fmt.Fprintln(stderr, err)
		return 1
	}
	sig := notifySignals()
	signaled := false
	select {
	case <-sig:
		signaled = true
		s.Logf('#', "Received SIGTERM scheduling shutdown...")
	case <-s.Done():
	}
	if s.exited.Load() {
		s.Close() // abandons the AOF's buffer (closeAOF)
		return 1
	}
	s.Logf('#', "User requested shutdown...")
	if s.busy.start.Load() != 0 {
		// A script still holds the lock (SHUTDOWN NOSAVE while BUSY): exit
		// at once; its unflushed effects are lost, as with Redis.
		s.Logf('#', "Exiting with a script still running (SHUTDOWN NOSAVE)")
		return 0
	}
	if signaled {
		// SIGTERM saves when a save point is configured, as Redis's
		// prepareForShutdown (SHUTDOWN saved in the command). Unlike Redis,
		// a failed save does not keep the process running.
		s.mu.Lock()
		s.shutdownSave(false, false)
		s.mu.Unlock()
	}
	if err := s.Close(); err != nil {
		s.Logf('#', "Error closing the AOF: %v", err)
		return 1
	}
	s.Logf('#', "Redis is now ready to exit, bye bye...")
	return 0
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// cronLoop runs periodic work: active expiry, AOF fsync (everysec) and
// rewrite, stats, the extension cron.
func (s *Server) cronLoop() {
	defer s.wg.Done()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	lastSync := time.Now()
	lastIdleCheck := lastSync
	for {
		select {
		case <-s.shutdown:
			return
		case now := <-t.C:
			s.mu.Lock()
			if s.expirePaused && now.After(s.pauseEnd) {
				s.endPause() // the pause's time passed: expiry resumes
			}
			s.activeExpireCycle()
			if s.aof != nil {
				// Also the retry of a failed write (Redis's serverCron
				// retries once a second, its beforeSleep at every pass).
				s.aof.flush(s.cfg.AppendFsync == "always")
				if s.cfg.AppendFsync == "everysec" && now.Sub(lastSync) >= time.Second && s.aof.unsynced() {
					s.aof.syncAsync()
					lastSync = now
				}
				if s.persist.bg == nil { // a rewrite waits for the background save, as in Redis
					s.maybeRewriteAOF()
				}
			}
			s.persistCron(now)
			s.resizeReplyBuffers(now)
			if el := now.Sub(s.stats.sampleTime); el >= time.Second {
				s.stats.opsPerSec = (s.stats.commands - s.stats.opsSample) * int64(time.Second) / int64(el)
				s.stats.opsSample = s.stats.commands
				s.stats.sampleTime = now
			}
			s.clusterReplCron()
			if s.cfg.Timeout > 0 && now.Sub(lastIdleCheck) >= time.Second {
				s.closeIdleLoopClients(now)
				lastIdleCheck = now
			}
			s.mu.Unlock()
		}
	}
}

// activeExpireCycle is the cron's active expiry over every database, as
// Redis's activeExpireCycle, timed for the latency monitor's expire-cycle
// event (lock held).
//
// Redis 7.0 frees an expired value inside the cycle unless
// lazyfree-lazy-expire is yes, in time proportional to the value's
// allocations: a set of a million members takes tens of milliseconds, and
// nothing else runs meanwhile. Here dropping a value costs nothing at once
// (the Go collector reclaims it later, beside the server), so the cycle
// holds the lock for the time Redis would spend, freeNsPerEffort per unit
// of FreeEffort, when that comes to a millisecond or more: a big key's
// expiry delays clients and shows in LATENCY as on Redis, and the many
// small keys of an ordinary cycle add nothing.
func (s *Server) activeExpireCycle() {
	if s.debug.noActiveExpire {
		return
	}
	start := time.Now()
	effort := 0
	for _, db := range s.dbs {
		if db.VolatileLen() > 0 {
			_, e := db.ActiveExpire(16)
			effort += e
		}
	}
	if effort > 0 && s.configValue("lazyfree-lazy-expire") != "yes" {
		if d := time.Duration(effort) * freeNsPerEffort; d >= time.Millisecond {
			time.Sleep(d)
		}
	}
	if ms := time.Since(start).Milliseconds(); s.intro.latThreshold > 0 && ms >= s.intro.latThreshold {
		s.latencySample("expire-cycle", ms)
	}
}

// freeNsPerEffort is what redis-server 7.0.15 takes to free one unit of
// FreeEffort synchronously, the lowest of what was measured: DEL of a set
// of integers (hashtable) took 25-99 ms for 100,000 members and 0.64-1.6 s
// for 1,000,000, and the active expiry of the latter 0.69 s (SLOWLOG and
// LATENCY LATEST, 2026-12-02, on a shared 2-core machine under load).
const freeNsPerEffort = 250 * time.Nanosecond

// closeIdleLoopClients applies the timeout directive to connections in an
// event loop (the others have read deadlines), lock held.
func (s *Server) closeIdleLoopClients(now time.Time) {
	limit := now.Add(-time.Duration(s.cfg.Timeout) * time.Second).UnixMilli()
	s.clientsMu.Lock()
	defer s.clientsMu.Unlock()
	for _, c := range s.clients {
		if c.loop == nil || c.blocked.Load() { // Redis spares blocked clients too
			continue
		}
		last := c.lastActive.Load()
		if last == 0 {
			last = c.created.UnixMilli()
		}
		if last < limit {
			c.killed.Store(true)
			c.conn.Close()
		}
	}
}

// expired is called by a DB when it drops an expired key.
func (s *Server) expired(db int, key string) {
	s.propagate(db, [][]byte{[]byte("DEL"), []byte(key)})
	s.notifyIn(db, notifyExpired, "expired", []byte(key))
	if len(s.watchers) > 0 {
		s.touch(db, []byte(key))
	}
	if s.trk != nil {
		s.trackInvalidate(nil, key)
		s.trackFlushBcast()
	}
}

func randomHex(n int) string {
	const hexd = "0123456789abcdef"
	b := make([]byte, n)
	f, err := os.Open("/dev/urandom")
	if err == nil {
		io.ReadFull(f, b)
		f.Close()
	} else {
		x := uint64(time.Now().UnixNano())
		for i := range b {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			b[i] = byte(x)
		}
	}
	for i := range b {
		b[i] = hexd[b[i]&15]
	}
	return string(b)
}

// startCPUProfile writes a CPU profile to path until stop is called
// (REDLINE_CPUPROFILE, for scripts/bench-server).
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func notifySignals() <-chan os.Signal {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	return ch
}
