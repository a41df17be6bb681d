package server

import (
	"strings"
	"sync"
	"testing"

	"github.com/redline-dev/redline/server/resp"
)

// protocolErrors are Redis 7.0's replies to a request stream that breaks
// the protocol (networking.c), checked against redis-server 7.0.15 in
// TestProtocolErrorsCompare. After one of them the connection closes.
var protocolErrors = []string{
	"-ERR Protocol error: invalid multibulk length\r\n",
	"-ERR Protocol error: invalid bulk length\r\n",
	"-ERR Protocol error: unbalanced quotes in request\r\n",
	"-ERR Protocol error: too big inline request\r\n",
	"-ERR Protocol error: too big mbulk count string\r\n",
	"-ERR Protocol error: too big bulk count string\r\n",
	"-ERR Protocol error: unauthenticated multibulk length\r\n",
	"-ERR Protocol error: unauthenticated bulk length\r\n",
}

// isProtocolError reports whether reply is one of Redis's protocol errors:
// protocolErrors or "expected '$', got 'c'" (c one byte, '\r' and '\n'
// shown as a space, as Redis's addReplyErrorFormat does).
func isProtocolError(reply string) bool {
	for _, e := range protocolErrors {
		if reply == e {
			return true
		}
	}
	const pre, post = "-ERR Protocol error: expected '$', got '", "'\r\n"
	return len(reply) == len(pre)+1+len(post) && strings.HasPrefix(reply, pre) && strings.HasSuffix(reply, post) &&
		reply[len(pre)] != '\r' && reply[len(pre)] != '\n'
}

// fuzzACL is what the fuzzed connections may run: everything but what
// blocks the caller (blocking commands, WAIT, scripts, MONITOR, SYNC,
// CLIENT PAUSE), ends or reconfigures the server (@admin, @dangerous:
// SHUTDOWN, CONFIG, DEBUG, ACL SETUSER, FLUSHALL), or allocates far
// beyond its input as Redis does too (SETRANGE and SETBIT to an offset
// up to proto-max-bulk-len, LCS's table, a random-member count of -2^31):
// those are TestCommandFuzz's and TestCommandEdgeSweep's.
const fuzzACL = "resetchannels &* ~* +@all -@admin -@dangerous -@blocking -@scripting -@pubsub -wait -client " +
	"-setrange -setbit -bitfield -lcs -srandmember -zrandmember -hrandfield"

// streamResult is what a connection answered to a byte stream.
type streamResult struct {
	out     []byte
	replies []string
	closed  bool // the server closed the connection (protocol error, QUIT)
	maxIn   int  // the largest input buffer the connection had
}

// feedStream sends data to a fresh connection of s in pieces of chunk
// bytes (0: all at once), exactly as serveStream reads (makeRoom, a read
// of at most the free space, processInput, shrinkIn), and checks the
// properties that hold after each piece: no handler panicked, the replies
// are well-formed RESP, a protocol error is Redis's and is the last
// reply, and the input buffer stays within twice what arrived plus two read chunks, whatever
// length a request declares.
func feedStream(t *testing.T, s *Server, data []byte, chunk int) streamResult {
	t.Helper()
	c := s.newClient(nil)
	c.addr, c.laddr = "127.0.0.1:50000", "127.0.0.1:6379"
	c.resetAuth()
	c.in = make([]byte, initialIn)
	s.register(c)
	defer s.dropClient(c)
	var r streamResult
	fed := 0
	for rest := data; len(rest) > 0 && !r.closed; {
		n := len(rest)
		if chunk > 0 && chunk < n {
			n = chunk
		}
		piece := rest[:n]
		rest = rest[n:]
		// One or more reads deliver the piece, as many as the buffer needs.
		for len(piece) > 0 && !r.closed {
			c.makeRoom()
			m := copy(c.in[c.rend:], piece)
			piece = piece[m:]
			c.rend += m
			fed += m
			ok := s.processInput(c, false)
			if len(c.in) > r.maxIn {
				r.maxIn = len(c.in)
			}
			if limit := max(initialIn, 2*fed+2*readChunk); len(c.in) > limit {
				t.Fatalf("input buffer of %d bytes after %d arrived (limit %d)", len(c.in), fed, limit)
			}
			r.out = append(r.out, c.out...)
			c.resetOut()
			r.closed = !ok || c.closeNow
			c.shrinkIn()
		}
	}
	checkReplies(t, data, &r)
	return r
}

// checkReplies splits r.out into replies and checks them.
func checkReplies(t *testing.T, data []byte, r *streamResult) {
	t.Helper()
	for rest := r.out; len(rest) > 0; {
		_, n, err := resp.ReadReply(rest)
		if err != nil || n == 0 {
			t.Fatalf("input %q: the replies %q are not well-formed RESP at %q (%v)", clip(data, 200), clip(r.out, 400), clip(rest, 80), err)
		}
		r.replies = append(r.replies, string(rest[:n]))
		rest = rest[n:]
	}
	for i, rep := range r.replies {
		if strings.Contains(rep, "internal error") {
			t.Fatalf("input %q: a handler panicked: %q", clip(data, 200), rep)
		}
		if strings.HasPrefix(rep, "-ERR Protocol error") {
			if !isProtocolError(rep) {
				t.Fatalf("input %q: %q is not one of Redis's protocol errors", clip(data, 200), rep)
			}
			if i != len(r.replies)-1 || !r.closed {
				t.Fatalf("input %q: the connection went on after %q: %q", clip(data, 200), rep, r.replies[i:])
			}
		}
	}
}

// countRequests is how many replies data must get from a client that
// needs no password: one per non-empty request up to the first
// incomplete one, one more for a protocol error, none after QUIT's.
func countRequests(data []byte) int {
	p := resp.Parser{NulHidesLineEnd: true} // as a client connection parses
	n := 0
	for len(data) > 0 {
		args, m, _, err := p.Parse(data, nil)
		if err != nil {
			return n + 1
		}
		if m == 0 {
			return n
		}
		data = data[m:]
		if len(args) == 0 {
			continue
		}
		n++
		if strings.EqualFold(string(args[0]), "quit") {
			return n
		}
	}
	return n
}

var fuzzServers struct {
	once        sync.Once
	open, authd *Server
}

// FuzzRequestStream sends hostile byte streams to the server's request
// path (parser, dispatcher, commands) as a connection does, whole and in
// pieces of chunk bytes, to a server whose default user needs no password
// and (locked) to one where it does. Beyond feedStream's properties: the
// reply count is one per request (countRequests), and a stream of at most
// 64 KB gets the same number of replies and the same protocol error
// whether it comes whole or in pieces (a half-sent command waits).
// The seed corpus is testdata/fuzz/FuzzRequestStream; `go test -fuzz
// FuzzRequestStream ./server` mutates it.
func FuzzRequestStream(f *testing.F) {
	seeds := []string{
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",
		"PING\r\nECHO \"a\\x00b\" 'c'\r\n",
		"*-1\r\nPING\r\n",
		"*2147483648\r\n",
		"*1\r\n$536870913\r\n",
		"*1\r\n$536870912\r\nabc",
		"*1\r\n$-1\r\n",
		"*1\r\nx\r\n",
		"*1\r\n*1\r\n$4\r\nPING\r\n",
		"SET k \"abc\r\n",
		"SET k 'a'b\r\n",
		"PI\x00NG\r\n",
		"*2\r\n$3\r\nGET\r\n$1\r\n",
		"MULTI\r\nSET a 1\r\nINCR a\r\nEXEC\r\n",
		"QUIT\r\nPING\r\n",
		"HELLO 3\r\nHGETALL h\r\nHSET h a 1\r\nHGETALL h\r\n",
		"AUTH pw\r\n*12\r\n",
		"*11\r\n",
		"*2\r\n$4\r\nAUTH\r\n$16385\r\n",
	}
	for _, sd := range seeds {
		f.Add([]byte(sd), uint16(0), false)
		f.Add([]byte(sd), uint16(1), true)
	}
	fuzzServers.once.Do(func() {
		// No save points: FLUSHALL between inputs would write an RDB.
		fuzzServers.open = startServer(f, "--save", "")
		fuzzServers.authd = startServer(f, "--save", "", "--requirepass", "pw")
		for _, s := range []*Server{fuzzServers.open, fuzzServers.authd} {
			rules := strings.Fields(fuzzACL)
			if s == fuzzServers.authd {
				rules = append(rules, ">pw")
			}
			s.Lock()
			out := s.execInternal(s.newInternalClient(), rawCmd(append([]string{"ACL", "SETUSER", "default"}, rules...)...))
			s.Unlock()
			if string(out) != "+OK\r\n" {
				f.Fatalf("ACL SETUSER: %q", out)
			}
		}
	})
	f.Fuzz(func(t *testing.T, data []byte, chunk uint16, locked bool) {
		if len(data) > 1<<20 {
			return
		}
		s := fuzzServers.open
		if locked {
			s = fuzzServers.authd
		}
		flush := func() {
			s.Lock()
			s.execInternal(s.newInternalClient(), rawCmd("FLUSHALL"))
			s.Unlock()
		}
		flush()
		whole := feedStream(t, s, data, 0)
		if !locked {
			if want := countRequests(data); len(whole.replies) != want {
				t.Fatalf("input %q: %d replies for %d requests: %q", clip(data, 200), len(whole.replies), want, whole.replies)
			}
		}
		if chunk == 0 || int(chunk) >= len(data) {
			return
		}
		flush()
		parts := feedStream(t, s, data, int(chunk))
		if len(data) <= resp.InlineMax {
			if len(parts.replies) != len(whole.replies) || parts.closed != whole.closed ||
				lastProtocolError(parts.replies) != lastProtocolError(whole.replies) {
				t.Fatalf("input %q: in pieces of %d: %d replies (closed %v) %q; whole: %d (closed %v) %q", clip(data, 200), chunk,
					len(parts.replies), parts.closed, tail(parts.replies), len(whole.replies), whole.closed, tail(whole.replies))
			}
		}
	})
}

func lastProtocolError(replies []string) string {
	if len(replies) > 0 && isProtocolError(replies[len(replies)-1]) {
		return replies[len(replies)-1]
	}
	return ""
}

func tail(replies []string) []string {
	if len(replies) > 3 {
		return replies[len(replies)-3:]
	}
	return replies
}

// clip is the start of b for a failure message.
func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
