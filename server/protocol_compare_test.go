package server

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// exchange sends chunks to addr (a pause between them, so that each
// arrives as a read of its own) and returns what came back until the
// server closed the connection ("<closed>" appended) or was quiet for
// 300 ms. It may run in a goroutine of the test.
func exchange(t *testing.T, addr string, chunks ...[]byte) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err) // not Fatal: exchanges run in goroutines
		return "<no connection>"
	}
	defer c.Close()
	for i, ch := range chunks {
		if i > 0 {
			time.Sleep(30 * time.Millisecond)
		}
		if _, err := c.Write(ch); err != nil {
			break // closed by the server: what it sent is read below
		}
	}
	var out bytes.Buffer
	buf := make([]byte, 64*1024)
	for {
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		n, err := c.Read(buf)
		out.Write(buf[:n])
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return out.String()
		}
		if err != nil {
			// EOF or a reset (the server closed with input unread).
			return out.String() + "<closed>"
		}
	}
}

// TestProtocolErrorsCompare sends hostile request streams to
// redis-server 7.0.15 and to the reference and requires the same bytes
// back and the same close: Redis's protocol errors word for word, and
// what waits for more (a NUL before a header's end hides it, as C's
// strchr does; a bulk header must be whole before its '$' is checked).
func TestProtocolErrorsCompare(t *testing.T) {
	raddr := startRedisServer(t)
	s := startServer(t)
	big := strings.Repeat("x", 64*1024+10)
	cases := []struct {
		name   string
		chunks []string
	}{
		{"negative multibulk", []string{"*-1\r\n*-10\r\nPING\r\n"}},
		{"multibulk over INT_MAX", []string{"*2147483648\r\n"}},
		{"multibulk overflow", []string{"*99999999999999999999\r\n"}},
		{"multibulk not a number", []string{"*x\r\n"}},
		{"multibulk empty", []string{"*\r\n"}},
		{"multibulk plus sign", []string{"*+1\r\n$4\r\nPING\r\n"}},
		{"multibulk leading zero", []string{"*01\r\n$4\r\nPING\r\n"}},
		{"multibulk trailing space", []string{"*1 \r\n$4\r\nPING\r\n"}},
		{"multibulk zero", []string{"*0\r\nPING\r\n"}},
		{"multibulk INT_MAX waits", []string{"*2147483647\r\n$4\r\nPING\r\n"}},
		{"multibulk count with NUL", []string{"*1\x00\r\n$4\r\nPING\r\n"}},
		{"multibulk count with NUL past the limit", []string{"*1\x00\r\n$4\r\nPING\r\n", big}},
		{"too big mbulk count string", []string{"*" + big}},
		{"bulk negative", []string{"*1\r\n$-1\r\n"}},
		{"bulk minus zero", []string{"*1\r\n$-0\r\n"}},
		{"bulk not a number", []string{"*1\r\n$x\r\n"}},
		{"bulk leading zero", []string{"*1\r\n$04\r\nPING\r\n"}},
		{"bulk overflow", []string{"*1\r\n$99999999999999999999\r\n"}},
		{"bulk over proto-max-bulk-len", []string{"*1\r\n$536870913\r\n"}},
		{"bulk of proto-max-bulk-len waits", []string{"*1\r\n$536870912\r\nab"}},
		{"bulk header with NUL", []string{"*1\r\n$4\x00\r\nPING\r\n"}},
		{"bulk header with NUL past the limit", []string{"*1\r\n$4\x00\r\nPING\r\n", big}},
		{"too big bulk count string", []string{"*1\r\n$" + big}},
		{"expected $ got x", []string{"*1\r\nx\r\n"}},
		{"expected $ got colon", []string{"*2\r\n$4\r\nPING\r\n:1\r\n"}},
		{"expected $ got CR", []string{"*1\r\n\r\n"}},
		{"expected $ waits for the line", []string{"*1\r\nx"}},
		{"expected $ when the line ends", []string{"*1\r\nx", "\r\n"}},
		{"nested multibulk", []string{"*1\r\n*1\r\n$4\r\nPING\r\n"}},
		{"garbage type bytes", []string{"\x01\x02\xff\r\n"}},
		{"RESP3 types as a request", []string{"%1\r\n+a\r\n+b\r\n"}},
		{"NUL hides the inline newline", []string{"PI\x00NG\r\nPING\r\n"}},
		{"NUL inline past the limit", []string{"PI\x00NG\r\n", big}},
		{"unbalanced double quotes", []string{"SET k \"abc\r\n"}},
		{"unbalanced single quotes", []string{"SET k 'abc\r\n"}},
		{"closing quote then a char", []string{"SET k \"abc\"d\r\n"}},
		{"escapes", []string{"ECHO \"\\x41\\x4\\n\" 'it\\'s'\r\n"}},
		{"too big inline request", []string{big}},
		{"too big inline request in pieces", []string{big[:40000], big[40000:]}},
		{"half-sent command", []string{"*2\r\n$4\r\nECHO\r\n$3\r\nab"}},
		{"half-sent command completed", []string{"*2\r\n$4\r\nECHO\r\n$3\r\nab", "c\r\n"}},
		{"payload without CRLF", []string{"*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n"}},
		{"header CR without LF", []string{"*1\rX$4\r\nPING\r\n"}},
		{"LF-only multibulk", []string{"*1\n$4\nPING\n"}},
		{"inline LF and empty lines", []string{"PING\n\r\n\n  \r\nPING\r\n"}},
		{"QUIT then more", []string{"QUIT\r\nPING\r\n"}},
	}
	// Every case at once, each on its own connections: the quiet periods
	// overlap.
	got := make([][2]string, len(cases))
	var wg sync.WaitGroup
	for i, tc := range cases {
		chunks := make([][]byte, len(tc.chunks))
		for j, ch := range tc.chunks {
			chunks[j] = []byte(ch)
		}
		wg.Add(2)
		go func() { defer wg.Done(); got[i][0] = exchange(t, raddr, chunks...) }()
		go func() { defer wg.Done(); got[i][1] = exchange(t, s.Addr().String(), chunks...) }()
	}
	wg.Wait()
	for i, tc := range cases {
		if red, ref := got[i][0], got[i][1]; red != ref {
			t.Errorf("%s:\n  redis %q\n  ref   %q", tc.name, clip([]byte(red), 300), clip([]byte(ref), 300))
		}
	}
}

// TestQueryBufferLimit: a client whose unparsed input passes
// client-query-buffer-limit is closed without a reply, as redis-server
// 7.0.15 does ("Closing client that reached max query buffer length" in
// its log); a request within the limit is served.
func TestQueryBufferLimit(t *testing.T) {
	raddr := startRedisServer(t)
	var log lockedBuffer
	s := startServerWith(t, Options{Log: &log})
	set := func(n int) []byte {
		return []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + itoa(n) + "\r\n" + strings.Repeat("v", n) + "\r\n")
	}
	for _, addr := range []string{raddr, s.Addr().String()} {
		if got := exchange(t, addr, []byte("CONFIG SET client-query-buffer-limit 1mb\r\n")); got != "+OK\r\n" {
			t.Fatalf("%s: %q", addr, got)
		}
		if got := exchange(t, addr, set(900_000)); got != "+OK\r\n" {
			t.Errorf("%s: 900 KB within the limit: %q", addr, got)
		}
		if got := exchange(t, addr, set(2_000_000)); got != "<closed>" {
			t.Errorf("%s: 2 MB past the limit: %q", addr, clip([]byte(got), 200))
		}
		// A pipeline of small requests is parsed as it comes: never over.
		if got := exchange(t, addr, bytes.Repeat([]byte("PING\r\n"), 300_000)); got != strings.Repeat("+PONG\r\n", 300_000) {
			t.Errorf("%s: 1.8 MB of PINGs: %d bytes back", addr, len(got))
		}
	}
	if !strings.Contains(log.String(), "Closing client that reached max query buffer length: id=") {
		t.Errorf("no log line:\n%s", log.String())
	}
	if got := exchange(t, s.Addr().String(), []byte("CONFIG GET client-query-buffer-limit\r\n")); got != "*2\r\n$25\r\nclient-query-buffer-limit\r\n$7\r\n1048576\r\n" {
		t.Errorf("%q", got)
	}
}

// TestProtoMaxBulkLen: a bulk longer than proto-max-bulk-len is "invalid
// bulk length" and the connection closes, on both servers; one of exactly
// the limit is served.
func TestProtoMaxBulkLen(t *testing.T) {
	raddr := startRedisServer(t)
	s := startServer(t)
	const limit = 1 << 20
	for _, addr := range []string{raddr, s.Addr().String()} {
		if got := exchange(t, addr, []byte("CONFIG SET proto-max-bulk-len 1mb\r\n")); got != "+OK\r\n" {
			t.Fatalf("%s: %q", addr, got)
		}
		over := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + itoa(limit+1) + "\r\n"
		if got := exchange(t, addr, []byte(over)); got != "-ERR Protocol error: invalid bulk length\r\n<closed>" {
			t.Errorf("%s: %q", addr, got)
		}
		at := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + itoa(limit) + "\r\n" + strings.Repeat("v", limit) + "\r\nSTRLEN k\r\n"
		if got := exchange(t, addr, []byte(at)); got != "+OK\r\n:1048576\r\n" {
			t.Errorf("%s: %q", addr, got)
		}
	}
}

func itoa(n int) string { return string(itob(int64(n))) }
