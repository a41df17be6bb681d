package server

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redline-dev/redline/server/config"
	"github.com/redline-dev/redline/server/internal/planted"
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
		cmd.holdsCaller = commandHoldsCaller(cmd.Name)
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

// commandHoldsCaller names the commands that may hold their caller: a
// handed-over connection's goroutine waits, or runs a script while the
// server answers others BUSY.
func commandHoldsCaller(name string) bool {
	switch name {
	case "wait", "psync", "sync", "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro", "monitor",
		"subscribe", "psubscribe", "ssubscribe":
		return true
	}
	return false
}
