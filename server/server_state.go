// The server's state: the Server and its options and counters, and the
// accessors every part of the engine uses. Its lifecycle (New, Start,
// Close, the connection loop, the cron) is server.go's.

package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redline-dev/redline/server/acl"
	"github.com/redline-dev/redline/server/aof"
	"github.com/redline-dev/redline/server/cluster"
	"github.com/redline-dev/redline/server/cluster/bus"
	"github.com/redline-dev/redline/server/config"
	"github.com/redline-dev/redline/server/resp"
	"github.com/redline-dev/redline/server/store"
	lua "github.com/yuin/gopher-lua"
)

// Options are the knobs a caller (tests, cluster mode) sets beyond the
// configuration.
type Options struct {
	// Clock is the time source (a new real clock when nil).
	Clock *store.Clock
	// Log receives the server log (os.Stdout when nil).
	Log io.Writer
	// ClusterTransport carries the cluster bus (TCP when nil). Tests pass a
	// bus.MemNetwork to run whole clusters in one process and cut links, as
	// memberlist's Config.Transport.
	ClusterTransport bus.Transport
	// DialMaster opens a replica's link to its master (TCP when nil): the
	// replication counterpart of ClusterTransport.
	DialMaster func(addr string) (net.Conn, error)
	// AOFFile, when set, wraps the append-only file the server writes
	// through: tests fail its writes and fsyncs as a full or failing disk
	// does.
	AOFFile func(*os.File) aof.File
}

type stats struct {
	commands      int64
	connections   int64
	rejectedConns int64
	errorReplies  int64
	// errSeen is errorReplies when the last command's accounting ended
	// (failed_calls, as Redis's incrCommandStatsOnError); errCodes counts
	// error replies by code (INFO errorstats, errorstats.go).
	errSeen        int64
	errCodes       map[string]int64
	netIn, netOut  int64
	keyspaceHits   int64
	keyspaceMisses int64
	opsSample      int64
	opsPerSec      int64
	sampleTime     time.Time
}

// Server is one reference-server node.
type Server struct {
	mu       sync.Mutex
	cfg      *config.Config
	clock    *store.Clock
	dbs      []*store.DB
	commands map[string]*Command
	// acl is the users and their rules (acl.go).
	acl *acl.ACL
	// upperCmds indexes the same commands by upper-case name: clients
	// mostly send "SET", and one map hit beats lower-casing first.
	upperCmds map[string]*Command
	log       io.Writer
	logMu     sync.Mutex

	dirty     int64 // writes since start (changes to the dataset)
	stats     stats
	slowStats bool
	intro     introState     // slow log, latency events, histograms (slowlog.go)
	trk       *trackingState // CLIENT TRACKING (tracking.go), nil until used

	clients   map[int64]*Client // guarded by clientsMu (taken after mu)
	clientsMu sync.Mutex
	// replyBuf drives the reply buffer model (replybuf.go).
	replyBuf struct {
		peakResetMs int64
		resizing    bool
	}
	nextID   int64
	nclients atomic.Int64
	// protectedDeny is protected mode in force (protected.go), read by
	// the accept loop without the server lock.
	protectedDeny atomic.Bool
	// queryBufLimit is client-query-buffer-limit (processInput).
	queryBufLimit atomic.Int64
	// subscribers counts the connected clients with a Pub/Sub writer
	// (pubsub.go): a PUBLISH looks for recipients to wait for only then.
	subscribers atomic.Int64
	listeners   []net.Listener
	started     time.Time
	runID       string

	watchers map[watchedKey][]*Client
	monitors []*Client // clients in MONITOR mode

	prop     propagator
	aof      *aofState
	persist  persistState // RDB files (persist.go)
	scripts  *scripting
	busy     busyScript
	pauseEnd time.Time
	pauseAll bool
	pauseCh  chan struct{}
	// pausedClients counts clients waiting for a pause to end;
	// expirePaused and replicaKeyspace decide store.DB.NoLazyExpire.
	pausedClients   int
	expirePaused    bool
	replicaKeyspace bool
	shutdown        chan struct{}
	closeOnce       sync.Once
	wg              sync.WaitGroup
	// ShutdownRequested is closed by SHUTDOWN; Main exits when it is.
	shutdownReq chan struct{}
	reqOnce     sync.Once
	// exited: the server hit what makes Redis exit(1) at once (an AOF it
	// cannot write with appendfsync always): no reply goes out after it,
	// no file is written, and Main returns 1 (exit, aof.go).
	exited  atomic.Bool
	loading bool
	// replLoading: a replica is loading its master's full sync (repl.go):
	// INFO says loading:1 and clients get -LOADING.
	replLoading bool
	// debug holds what DEBUG switches (cmd_debug.go).
	debug debugState
	// ps holds the Pub/Sub subscriptions (pubsub.go); nil until used.
	ps *pubsubState
	// Cluster mode, replication and what they own: plain state of this
	// node, guarded by mu like the rest (doc.go, "Cluster mode and
	// replication").
	cl        clusterState  // the cluster node and its bus (cluster.go)
	repl      *replState    // replication, master and replica side (repl.go)
	oom       oomState      // maxmemory (evict.go)
	mig       migrateConns  // MIGRATE's cached connections (cluster_migrate.go)
	slotStats *slotCounters // CLUSTER SLOT-STATS counters (cluster_slotstats.go)
	asm       *asmRuntime   // CLUSTER MIGRATION tasks (cluster_migration.go)
	// clusterDone stops the goroutines of the node and of replication,
	// clusterWG waits for them (stopNode).
	clusterDone chan struct{}
	clusterWG   sync.WaitGroup
	// propagationTap, when set (tests only), sees every propagated write
	// after the AOF and replication, as Redis's tests attach to the
	// replication stream.
	propagationTap func(db int, argv [][]byte)
	// hidden are the slots whose keys db 0 hides while a CLUSTER
	// MIGRATION task imports them (cluster_migration_hide.go); nil when none.
	hidden *hiddenSlots
	opts   Options // as given to New
	// loops serve connections (eventloop_linux.go); none means a
	// goroutine per connection.
	loops []*eventLoop
	// blk holds the clients blocked on keys (blocking.go).
	blk blockingState
}

// Clock returns the server clock.
func (s *Server) Clock() *store.Clock { return s.clock }

// Lock takes the server lock, for code outside a command that reads or
// changes the keyspace (tests, an embedding program). Never call it from a
// handler.
func (s *Server) Lock() { s.mu.Lock() }

// Unlock releases the server lock.
func (s *Server) Unlock() { s.mu.Unlock() }

// DB returns database i (lock held).
func (s *Server) DB(i int) *store.DB { return s.dbs[i] }

func (s *Server) db(i int) *store.DB { return s.dbs[i] }

// Logf writes a log line in Redis's format; level is '.', '-', '*' or '#'.
func (s *Server) Logf(level byte, format string, args ...any) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.log, "%d:M %s %c %s\n", os.Getpid(), time.Now().Format("02 Jan 2006 15:04:05.000"), level, fmt.Sprintf(format, args...))
}

// Addr is the first listening address.
func (s *Server) Addr() net.Addr { return s.listeners[0].Addr() }

// Done is closed when SHUTDOWN was requested.
func (s *Server) Done() <-chan struct{} { return s.shutdownReq }

func (s *Server) requestShutdown() {
	s.reqOnce.Do(func() { close(s.shutdownReq) })
}

// wallClock is the system clock, never offset or injected, for
// bookkeeping compared with time.Now (a client's last activity).
var wallClock = store.NewClock(nil)

// unixMs is time.Now().UnixMilli() for bookkeeping that runs once per
// batch: one monotonic reading, the wall clock extrapolated from it
// (Clock.NowMsAt).
func (s *Server) unixMs() int64 { return wallClock.NowMsAt(nanotime()) }

// debugState is what DEBUG switches at runtime.
type debugState struct {
	// noActiveExpire stops the cron's active expiry (DEBUG
	// SET-ACTIVE-EXPIRE 0): keys then expire only when accessed.
	noActiveExpire bool
	// allowDeniedInScripts lets scripts call noscript commands (DEBUG
	// SET-DISABLE-DENY-SCRIPTS 1), as Redis's tests of DEBUG PROTOCOL
	// from Lua need.
	allowDeniedInScripts bool
}

type aofState struct {
	s        *Server
	w        *aof.Writer
	baseSize int64 // size after the last rewrite (or at load)
	pending  bool  // BGREWRITEAOF requested
	rewrites int64
	// writeErr is the last write's error while it lasts (Redis's
	// aof_last_write_status err): writes are refused with MISCONF until
	// a retry of the buffer succeeds.
	writeErr   error
	lastErrLog time.Time
	// syncedAt is the written size the last fsync was asked for (Redis's
	// aof_last_incr_fsync_offset): everysec fsyncs only when it grew.
	syncedAt int64
}

// blockingState indexes blocked clients by key (Redis's db->blocking_keys)
// and the keys that became ready (server.ready_keys).
type blockingState struct {
	keys     map[watchedKey][]*Client // FIFO per key
	ready    []watchedKey
	readySet map[watchedKey]bool
	n        int // clients blocked on keys (INFO blocked_clients)
}

// clusterState is this node's part of the cluster (cluster-enabled yes).
// The node and everything about it belong to the server lock (s.mu): Step,
// Tick, CLUSTER commands and the handling of each Ready all run with it
// held, as Redis runs the bus handlers and clusterCron on its one thread.
// The bus only moves bytes. Without cluster-enabled, bus and node are nil.
type clusterState struct {
	node     *cluster.Node
	bus      *bus.Bus
	view     *cluster.SlotView // routing snapshot of the last Ready
	confPath string
	// importMarker is what saveImportMarker last wrote ("": no file).
	importMarker string
	pending      bool // a CLUSTER command ran; its outputs wait for the batch's end

	// foreign are slots owned by others that the master's stream wrote
	// (an import under way there), trimmed on promotion (cluster_migration_hide.go).
	foreign map[int]bool
	// taskSlots are the slots the master announced it imports with a
	// CLUSTER MIGRATION task (announceImport); only their writes are foreign.
	taskSlots map[int]bool

	// scratch for routing (server lock held)
	slots []int
	keys  [][]byte
}

type migrateConns struct {
	mu    sync.Mutex
	conns map[string]*migConn
}

// asmRuntime is a node's migration machine and its peer connections
// (server lock held for everything but the senders' I/O).
type asmRuntime struct {
	m     *cluster.Migrations
	peers map[string]*asmPeer
	apply *Client // applies received snapshots and streams
	// sourceEpoch is the config epoch the source sent with its last EOF:
	// the takeover's epoch must exceed it.
	sourceEpoch uint64
	stats       asmStats
	// announced are the import tasks whose slots the replicas were told
	// (announceImport).
	announced map[string]bool
}

// hiddenSlots are the slots whose keys db 0 hides (a task imports them).
type hiddenSlots struct {
	set    [cluster.NumSlots]bool
	slots  []int
	ranges [][]cluster.SlotSpan // what set was built from
}

// slotCounters are the accumulated per-slot figures (server lock held).
type slotCounters struct {
	cpuNanos [cluster.NumSlots]int64
	netIn    [cluster.NumSlots]int64
	netOut   [cluster.NumSlots]int64
	counting bool // a measurement is armed (slot, start, outLen below)
	slot     int
	start    time.Time
	outLen   int
}

// maxmemory as Redis 7.0 (evict.c). Before each command, while used memory
// is over maxmemory, keys are evicted by maxmemory-policy; when nothing can
// be evicted (noeviction, or a volatile policy with no key with a TTL),
// commands flagged denyoom are refused with -OOM (also while queueing in
// MULTI, so EXEC aborts), as Redis's processCommand does.
//
// Used memory is not Go's heap: garbage stays counted there until a
// collection, so an eviction would seem to free nothing and the next check
// would evict again. It is Redis's startup figure plus an estimate of every
// key as Redis would hold it (store/memory.go, objectSize), kept up to date
// by the store on insert and delete and by the command path for the keys a
// write command names. Accounting starts when maxmemory is set or INFO
// first reports memory; before that nothing is measured.
//
// Victims are chosen as evict.c does: the lru, lfu and ttl policies sample
// maxmemory-samples keys of each database into a pool of the 16 best
// candidates (approximate LRU on a 24-bit seconds clock, LFU's logarithmic
// counter with its decay, or the nearest expiry) and evict the best one
// still present; the random policies take a random key, database after
// database. One round stops after maxmemory-eviction-tenacity's time limit
// and the cron finishes the job, as Redis's eviction timer does.
type oomState struct {
	max      int64 // maxmemory in bytes, 0 = none
	policy   evictPolicy
	samples  int
	tenacity int

	accounting bool  // the store estimates key sizes (memory.go)
	evicted    int64 // INFO evicted_keys
	pool       []evictCandidate
	nextDB     int   // the random policies' round robin
	pending    bool  // a round hit its time limit: the cron goes on
	peak       int64 // used_memory_peak
}

// persistState is the RDB side of the server; its zero value is a server
// that never saved. Guarded by the server lock.
type persistState struct {
	lastSave      time.Time // rdb_last_save_time; zero: the start time
	lastTry       time.Time // of the last background save, for the retry delay
	dirtyAtSave   int64     // s.dirty when the last successful save snapshotted
	bgErr         error     // the last background save failed (rdb_last_bgsave_status:err)
	bgRan         bool
	bgDuration    time.Duration
	saves         int64
	scheduled     bool // BGSAVE SCHEDULE, or a BGSAVE asked inside MULTI
	bg            *bgSave
	loadedKeys    int64
	expiredKeys   int64
	loadedRepl    *replInfo // replication state of the loaded file, for a replica's PSYNC
	asyncLoading  bool      // a replica loads a full sync beside its old data (repl-diskless-load swapdb)
	purgeOnMaster bool      // the file was loaded before the role was known (cluster mode)
}

// Propagation: writes go to the AOF and the Propagated hook, with SELECT
// when the DB changes. A transaction or script that writes more than once
// is wrapped in MULTI/EXEC; one that writes once propagates that write
// alone, as Redis 7.0 does (propagatePendingCommands).
type propagator struct {
	depth   int // >0 while inside EXEC or a script
	writes  int // writes propagated by the current block
	held    heldWrite
	lastDB  int
	started bool
}

// heldWrite is a block's first write, held back until a second write
// shows the block needs MULTI/EXEC or the block ends with it alone.
type heldWrite struct {
	db   int
	argv [][]byte
}

type pubsubState struct {
	channels map[string]map[*Client]struct{}
	patterns map[string]map[*Client]struct{}
	shard    map[string]map[*Client]struct{}
}

// Replication, Redis style: a master keeps a backlog of its write stream
// (the propagated commands as RESP, offsets counted in bytes), serves PSYNC
// with +CONTINUE from the backlog or +FULLRESYNC with an RDB of the
// dataset (as Redis's, so redis-server replicas and masters interoperate
// with ours), and streams every later write. Replicas load the RDB, apply
// the stream with an internal client, copy it verbatim into their own
// backlog (so siblings can partially resync with a promoted replica
// through replid2), and ACK their offset every second and on REPLCONF
// GETACK. Everything but the atomics is guarded by the server
// lock.
type replState struct {
	s *Server

	replid, replid2 string
	offset          int64 // master_repl_offset (a replica: processed offset)
	secondOffset    int64

	backlog []byte // stream bytes (offset-len(backlog), offset]
	// backlogActive: the stream is kept (and the offset moves) only once a
	// replica has synced from us or we from a master, as Redis creates its
	// backlog then: a primary that never had a replica saves the encoding.
	backlogActive bool
	enc           []byte

	replicas []*replicaLink
	lastPing time.Time
	ackCh    chan struct{} // closed and replaced on every ACK
	// ackPending: a WAIT asked for a GETACK while clients were paused
	ackPending bool

	// replica side
	masterHost string
	masterPort int
	gen        int64 // bumped whenever the master changes
	stopCh     chan struct{}
	linkConn   net.Conn
	state      string // connect, connecting, sync, connected
	masterCl   *Client

	// shared with the replica link goroutine, which reads and writes them
	// without the server lock (ACKs, last I/O); the cluster node reads them
	// before each Tick
	offsetA atomic.Int64
	// unflushed: feed gave a replica bytes no event loop has written to
	// its socket yet (eventLoop.process holds the pass's replies).
	unflushed atomic.Bool
	// loopFeed: the commands running now are an event loop's, which
	// writes what they feed at the end of its pass (finishPass): the
	// replica writers need no wakeup for it (under the server lock).
	loopFeed   bool
	linkUp     atomic.Bool
	lastIOA    atomic.Int64 // unix ms of the last data from the master
	downSinceA atomic.Int64

	// plantedLastLen and plantedHeld serve the planted-bug study's
	// defects (planted_hooks.go); never set in the shipped build.
	plantedLastLen int64
	plantedHeld    [][]byte
}

// busyScript tracks the running Lua script so that, like Redis, clients
// arriving while a script runs longer than busy-reply-threshold get a BUSY
// error instead of waiting, and SCRIPT KILL can stop a script that has not
// written yet. It is read without the server lock.
type busyScript struct {
	start  atomic.Int64 // unix ns when the running script started; 0 = none
	wrote  atomic.Bool
	killed atomic.Bool
	mu     sync.Mutex
	cancel func()
	// fn describes a running FCALL for FUNCTION STATS and FUNCTION KILL
	// (script_functions.go); nil while an EVAL script runs.
	fn *busyFunction
}

// scripting runs EVAL scripts in one gopher-lua state, under the server lock,
// so a script is atomic like in Redis.
type scripting struct {
	s *Server
	L *lua.LState
	// loadRedis is the redis table of FUNCTION LOAD (script_functions.go).
	loadRedis *lua.LTable
	// allowOOM: the running script or function has the allow-oom flag
	// (its commands run over maxmemory, evict.go).
	allowOOM bool
	bodies   map[string]string
	funcs    map[string]*lua.LFunction
	caller   *Client
	fake     *Client
	readOnly bool
	sandbox  *luaSandbox
	fns      *functionLibs    // FUNCTION libraries (script_functions.go); nil until first used
	shebangs map[string]uint8 // flags of the scripts that declare them (script_shebang.go), by sha
}

// introState is the server's slow log, latency events and histograms.
type introState struct {
	slowThreshold int64 // slowlog-log-slower-than, µs (<0 off)
	slowMax       int
	latThreshold  int64       // latency-monitor-threshold, ms (0 off)
	slowlog       []slowEntry // newest first
	slowID        int64
	events        map[string]*latencyEvent
	hist          map[string]*cmdHistogram
	peak, startup int64 // MEMORY STATS: heap figures
	// histGen is bumped when hist is reset: a Command.hist of an older
	// generation is stale.
	histGen uint64
}

type trackingState struct {
	clients  map[*Client]*clientTracking
	keys     map[string]map[*Client]struct{}
	items    int
	prefixes map[string]map[*Client]struct{}
	// bcastPending: keys changed under a prefix, with the client that
	// changed each last, sent after the command.
	bcastPending map[string]map[string]*Client
	// scriptKeys are the declared keys of the running EVAL: a read inside
	// it tracks them for the caller, as Redis does.
	scriptKeys [][]byte
	// running is the client whose command runs now: invalidations for it
	// wait in self until its reply is out (Redis's tracking_pending_keys).
	running *Client
	self    [][]string // key lists; nil entry = flush (all keys)
	// maxKeys is tracking-table-max-keys (0 = no limit).
	maxKeys int
}

type migConn struct {
	conn   net.Conn
	rd     *bufio.Reader
	db     int64 // last SELECTed db, -1 unknown
	lastUs time.Time
}

// asmPeer is the ordered outbound connection to one primary.
type asmPeer struct {
	queue  chan []byte
	done   chan struct{}
	queued atomic.Int64 // bytes in queue (INFO's output buffer)
}

// asmStats are the counters CLUSTER INFO and INFO report.
type asmStats struct {
	trimStarted, trimCompleted int64
	inputPeak                  int64 // largest message applied at once
}

type evictCandidate struct {
	idle uint64 // larger is evicted first
	key  string
	db   int
}

type evictPolicy uint8

// bgSave is a background save in progress.
type bgSave struct {
	start   time.Time
	dirty   int64
	done    chan struct{}
	cancel  chan struct{}
	err     error
	keys    int
	stopped bool
}

type replInfo struct {
	id       string
	offset   int64
	streamDB int // the database the stream was in at offset (repl-stream-db)
}

// replicaLink is one replica connected to this master.
type replicaLink struct {
	r    *replState
	c    *Client
	conn net.Conn
	ip   string
	port int
	mu   sync.Mutex
	buf  []byte
	// wmu is held by whoever takes buf to write it (writeLoop, an event
	// loop's writeNow), so the stream's bytes reach the socket in order.
	wmu sync.Mutex
	// raw is conn's descriptor for an event loop's writes that never wait
	// (nil over TLS); live is set once writeLoop has sent a paced full
	// sync, before which no one else may write.
	raw  syscall.RawConn
	live atomic.Bool
	// pbuf[poff:] is what a writer took from buf and the socket has not
	// taken yet (under wmu): it goes before buf.
	pbuf   []byte
	poff   int
	notify chan struct{}
	done   chan struct{}
	once   sync.Once

	ackOff  int64
	ackTime time.Time
	// paced is a full sync's RDB sent slowly (rdb-key-save-delay)
	// before buf; nil when none (persist.go).
	paced *pacedSync
}

// busyFunction is what FUNCTION STATS reports about a running FCALL while
// the script holds the server lock.
type busyFunction struct {
	name        string
	argv        []string
	libs, funcs int
}

// functionLibs is the set of loaded libraries; functions are unique across
// libraries. Both maps are keyed by lower-case name: Redis compares library
// and function names without case.
type functionLibs struct {
	libs  map[string]*fnLibrary
	funcs map[string]*luaFunction
	// loading collects the functions registered by the library being loaded;
	// nil outside FUNCTION LOAD (redis.register_function then errors).
	loading *fnLibrary
}

type luaSandbox struct {
	L *lua.LState
	// globals holds the values behind the _G scripts see; KEYS and ARGV are
	// stored here for each run.
	globals *lua.LTable
	// env is the _G of every script: the read-only proxy of globals.
	env *lua.LTable
	// guarded maps each proxy to the table it protects.
	guarded map[*lua.LTable]*lua.LTable
	// newindex refuses every write through a proxy.
	newindex *lua.LFunction
}

type cmdHistogram struct {
	calls   int64
	buckets [64]int64 // by bit length of the duration in microseconds
}

type latencyEvent struct {
	samples []latencySample // at most 160, oldest first
	max     int64
}

type slowEntry struct {
	id   int64
	at   int64 // unix seconds
	usec int64
	argv []string
	addr string
	name string
}

type clientTracking struct {
	bcast, optin, optout, noloop bool
	redirect                     int64
	prefixes                     []string
	caching                      bool // CLIENT CACHING given for the next command
	broken                       bool
}

// pacedSync is a full sync's RDB written to a replica one key at a
// time with rdb-key-save-delay between keys: Redis's tests slow a master's
// transfer with it to watch a replica's loading states.
type pacedSync struct {
	data  []byte
	ends  []int // where each key's record ends in data
	delay time.Duration
}

type fnLibrary struct {
	name, code string
	funcs      []*luaFunction // in registration order
}

type luaFunction struct {
	name, desc string
	flags      uint8
	fn         *lua.LFunction
	lib        *fnLibrary
}

type latencySample struct {
	at int64 // unix seconds
	ms int64
}

// Client is one connection. Handlers receive it to read connection state and
// to write replies; its methods must only be called with the server lock held
// (that is, from a command handler or hook).
type Client struct {
	s     *Server
	conn  net.Conn
	id    int64
	name  string
	proto int
	db    int
	// authenticated is true once AUTH succeeded (or no password is set).
	authenticated bool
	// user is the ACL user the connection acts as: the default user until
	// AUTH, nil (a superuser) for the server's own clients (acl.go).
	user *acl.User
	// replyMode is CLIENT REPLY's state (replyOn when zero; tracking.go).
	replyMode uint8

	in []byte
	// rstart:rend is the unparsed input in in.
	rstart, rend int
	out          []byte
	parser       resp.Parser
	argvBuf      [][]byte
	closeNow     bool // close after flushing the pending replies
	// leaveLoop: an event loop must hand the connection to a goroutine
	// before its next command runs (see Server.blocksCaller).
	leaveLoop bool
	// loopHeld: the loop holds its replies until the end of the pass
	// (eventLoop.process).
	loopHeld bool
	// loop is the event loop serving the connection, nil when it has a
	// goroutine of its own (eventloop_linux.go).
	loop *loopClient

	multi    bool
	queue    [][][]byte
	multiErr bool
	watched  []watchedKey
	watchBad bool // a watched key was touched
	// unwatchPending: a transaction ended while a script was busy; its
	// WATCHes go when the client next takes the server lock.
	unwatchPending bool
	monitor        bool // in MONITOR mode (Server.monitors)

	// cluster-mode state the cluster package may use.
	Asking   bool
	ReadOnly bool
	// asmFlag is the CLIENT LIST flag of a slot migration connection
	// ('o' importing, 'g' migrating), 0 for others (cluster_migration_hide.go).
	asmFlag byte
	// repl is the connection's part in replication (cluster.go).
	repl clientRepl

	addr, laddr string
	created     time.Time
	lastCmd     string
	lastActive  atomic.Int64 // unix ms
	killed      atomic.Bool

	// propagation override set by a handler (see Client.Propagate).
	propArgv [][]byte
	propSet  bool
	// untouched is the index of a key the current write command left
	// unchanged (SMOVE's destination already holding the member): WATCH
	// does not see it modified, as Redis signals only changed keys.
	untouched int

	// ps is the Pub/Sub state of a client that subscribed (pubsub.go).
	ps *subscriber
	// inReads counts the reads of a goroutine-served connection that
	// returned input, inDone the count whose input has run: a PUBLISH
	// lets a recipient with input pending run it first (pubsub_order.go).
	inReads, inDone atomic.Uint64

	// blk is the state of a client blocked on keys (BLPOP ...) until its
	// own goroutine or loop takes the reply (blocking.go); blocked mirrors
	// blk != nil for that goroutine's lock-free check, woken asks it to
	// stop reading.
	blk     *blockedOn
	blocked atomic.Bool
	woken   atomic.Bool

	// foreign holds pushes other clients' commands produced for this one
	// while its owner (loop or goroutine) may be writing out; the owner
	// takes them before its next batch (deliverPush, takeForeign). Server
	// lock; foreignPending is its lock-free hint.
	foreign        []byte
	foreignPending atomic.Bool

	// lastName and lastLookup cache the last command name looked up
	// (Client.lookupCommand).
	lastName   []byte
	lastLookup *Command

	// rbufSize and rbufPeak model Redis's reply buffer (replybuf.go);
	// rbufPeakReset is when the cron last restarted the peak (unix ms).
	rbufSize, rbufPeak atomic.Int64
	rbufPeakReset      int64

	// inScript is set on the fake client that runs redis.call.
	inScript bool
	// current command
	cmd *Command
}

type watchedKey struct {
	db  int
	key string
}

// blockedOn is what a blocked client waits for.
type blockedOn struct {
	db     int
	keys   []string // distinct, in the order given
	kind   store.Kind
	cmd    *Command
	left   bool   // pop from the head (LEFT, MIN)
	toLeft bool   // BLMOVE: push to the head
	target []byte // BLMOVE/BRPOPLPUSH destination
	// count is -1 for a single element (BLPOP, BZPOPMIN, BLMOVE), else
	// BLMPOP/BZMPOP's COUNT.
	count int64
	timer *time.Timer
	// slowArgv and slowUs are the blocking call's arguments and time:
	// its slowlog entry is written when it is served (Redis's
	// updateStatsOnUnblock), not when it blocks nor when it times out.
	slowArgv [][]byte
	slowUs   int64

	// XREAD/XREADGROUP: the ID each key's entries must follow, the group
	// and consumer, NOACK (count is COUNT, 1000 when not given).
	xids      map[string]store.StreamID
	xgroup    []byte
	xconsumer []byte
	xnoack    bool

	// Set when the client is answered (served, timed out, unblocked): the
	// reply its owner sends, and whether to close after it.
	served     bool
	reply      []byte
	closeAfter bool
}

// clientRepl is a connection's part in replication.
type clientRepl struct {
	woff       int64 // master offset after the client's last command (WAIT)
	replica    *replicaLink
	master     bool   // the connection applying our master's stream
	listenPort int    // REPLCONF listening-port
	listenIP   string // REPLCONF ip-address
}

// subscriber is the Pub/Sub state of one client (Client.ps).
type subscriber struct {
	c                         *Client
	channels, patterns, shard map[string]struct{}

	mu      sync.Mutex
	pending []byte
	spare   []byte
	wake    chan struct{}
	done    chan struct{}
	conn    net.Conn
}

func (r *replState) isReplica() bool { return r.masterHost != "" }

// clientsPaused is Redis's checkClientPauseTimeoutAndReturnIfPaused: a
// CLIENT PAUSE or a manual failover's pause is on (server lock held).
func (s *Server) clientsPaused(now time.Time) bool {
	return !s.pauseEnd.IsZero() && now.Before(s.pauseEnd)
}

// kv is the keyspace of the client's selected database.
func (c *Client) kv() *store.DB { return c.s.dbs[c.db] }
