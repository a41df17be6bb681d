package server

import (
	"net"
	"strconv"
	"time"

	"github.com/redline-dev/redline/server/resp"
)

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

// makeRoom makes sure c.in has free space after c.rend: it compacts, or
// grows when one request is larger than the buffer.
func (c *Client) makeRoom() {
	if c.rend < len(c.in) {
		return
	}
	if c.rstart > 0 {
		copy(c.in, c.in[c.rstart:c.rend])
		c.rend -= c.rstart
		c.rstart = 0
		return
	}
	nb := make([]byte, len(c.in)*2)
	copy(nb, c.in[:c.rend])
	c.in = nb
}

// growFor makes room for an incomplete request whose end the parser
// knows (need bytes from c.rstart: a declared bulk length), growing with
// what arrived rather than with what was declared: at most twice the
// bytes held plus two read chunks, so that "$536870912\r\n" followed by
// nothing costs kilobytes, not the declared 512 MB (makeRoom doubles the
// buffer as more arrives). Redis reserves a big argument's declared size
// up front (sdsMakeRoomForNonGreedy); the reference does not trust it.
//
// The new buffer always has a read chunk beyond what it must hold: a
// buffer cut to the few bytes a small request still lacks never grows
// again while pipelined requests keep arriving (makeRoom compacts it
// whenever a request was consumed), so the connection went on reading a
// few dozen bytes a call. On a replica's link that slowed the stream a
// primary waits for and made a loaded cluster's slot moves 2-3 times
// slower (TestGrowForKeepsAReadChunk).
func (c *Client) growFor(need int) {
	held := c.rend - c.rstart
	if lim := 2*held + readChunk; need > lim {
		need = lim
	}
	if need <= len(c.in)-c.rstart {
		return
	}
	nb := make([]byte, need+readChunk)
	copy(nb, c.in[c.rstart:c.rend])
	c.rend = held
	c.rstart = 0
	c.in = nb
}

// shrinkIn gives back a large input buffer once the big request is done.
func (c *Client) shrinkIn() {
	if len(c.in) > 4*readChunk && c.rend-c.rstart < readChunk {
		nb := make([]byte, readChunk)
		copy(nb, c.in[c.rstart:c.rend])
		c.rend -= c.rstart
		c.rstart = 0
		c.in = nb
	}
}

// resetOut empties the reply buffer, dropping it when it grew large.
func (c *Client) resetOut() {
	c.noteReplyFlush(len(c.out))
	if cap(c.out) > maxOutKeep {
		c.out = nil
	} else {
		c.out = c.out[:0]
	}
}

const (
	// initialIn is the first read buffer of a connection; it doubles when a
	// read fills it (pipelines, large values), so idle connections stay small.
	initialIn  = 4 * 1024
	readChunk  = 16 * 1024
	maxOutKeep = 64 * 1024
)

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
