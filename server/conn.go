package server

import (
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redline-dev/redline/server/acl"
	"github.com/redline-dev/redline/server/resp"
)

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

// Reply writers.

// OK writes +OK.
func (c *Client) OK() { c.out = append(c.out, "+OK\r\n"...) }

// Simple writes a status reply.
func (c *Client) Simple(s string) { c.out = resp.AppendSimple(c.out, s) }

// Error writes an error reply; s includes its prefix ("ERR ...", "MOVED ...").
func (c *Client) Error(s string) {
	c.s.stats.errorReplies++
	c.s.countError(s)
	c.out = resp.AppendError(c.out, s)
}

// Int writes an integer reply.
func (c *Client) Int(n int64) { c.out = resp.AppendInt(c.out, n) }

// Bulk writes a bulk string.
func (c *Client) Bulk(b []byte) { c.out = resp.AppendBulk(c.out, b) }

// BulkString writes a bulk string.
func (c *Client) BulkString(s string) { c.out = resp.AppendBulkString(c.out, s) }

// Null writes a null bulk string ($-1 in RESP2, _ in RESP3).
func (c *Client) Null() {
	if c.proto == 3 {
		c.out = resp.AppendNull(c.out)
	} else {
		c.out = resp.AppendNullBulk(c.out)
	}
}

// NullArray writes a null array (*-1 in RESP2, _ in RESP3).
func (c *Client) NullArray() {
	if c.proto == 3 {
		c.out = resp.AppendNull(c.out)
	} else {
		c.out = resp.AppendNullArray(c.out)
	}
}

// Array writes an array header.
func (c *Client) Array(n int) { c.out = resp.AppendArray(c.out, n) }

// Map writes a map header of n pairs (a flat array of 2n in RESP2).
func (c *Client) Map(n int) {
	if c.proto == 3 {
		c.out = resp.AppendMap(c.out, n)
	} else {
		c.out = resp.AppendArray(c.out, 2*n)
	}
}

// SetHeader writes a set header (an array in RESP2).
func (c *Client) SetHeader(n int) {
	if c.proto == 3 {
		c.out = resp.AppendSet(c.out, n)
	} else {
		c.out = resp.AppendArray(c.out, n)
	}
}

// Double writes a double (a bulk string in RESP2).
func (c *Client) Double(f float64) {
	if c.proto == 3 {
		c.out = resp.AppendDouble(c.out, f)
	} else {
		var tmp [32]byte
		c.out = resp.AppendBulk(c.out, resp.AppendFloat(tmp[:0], f))
	}
}

// Verbatim writes a text blob (a verbatim string in RESP3, bulk in RESP2).
func (c *Client) Verbatim(s string) {
	if c.proto == 3 {
		c.out = resp.AppendVerbatim(c.out, "txt", s)
	} else {
		c.out = resp.AppendBulkString(c.out, s)
	}
}

// Raw appends already-encoded RESP.
func (c *Client) Raw(b []byte) { c.out = append(c.out, b...) }

// Common errors, with Redis's exact text.
const (
	ErrWrongType   = "WRONGTYPE Operation against a key holding the wrong kind of value"
	ErrSyntax      = "ERR syntax error"
	ErrNotInt      = "ERR value is not an integer or out of range"
	ErrNotFloat    = "ERR value is not a valid float"
	ErrNoKey       = "ERR no such key"
	ErrOverflow    = "ERR increment or decrement would overflow"
	ErrNoAuth      = "NOAUTH Authentication required."
	ErrInvalidExp  = "ERR invalid expire time in '%s' command"
	ErrWrongPass   = "WRONGPASS invalid username-password pair or user is disabled."
	ErrOutOfRange  = "ERR index out of range"
	ErrNotIntRange = "ERR value is out of range, must be positive"
)

// ErrArity is the arity error for a command name.
func ErrArity(name string) string {
	return "ERR wrong number of arguments for '" + name + "' command"
}

// Propagate replaces the argv that is propagated (AOF, replication) for the
// current write command, e.g. to turn a relative TTL into an absolute one.
// With no arguments nothing is propagated.
func (c *Client) Propagate(argv ...[]byte) {
	c.propArgv = argv
	c.propSet = true
}

func itob(n int64) []byte { return strconv.AppendInt(nil, n, 10) }
