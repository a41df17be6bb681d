//go:build linux

package server

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pipeConn is a test client that writes RESP bytes and reads raw replies.
type pipeConn struct {
	t  *testing.T
	c  net.Conn
	rd *bufio.Reader
}

func dialPipe(t *testing.T, s *Server) *pipeConn {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &pipeConn{t: t, c: c, rd: bufio.NewReader(c)}
}

func (r *pipeConn) send(cmds ...[]string) {
	r.t.Helper()
	var b []byte
	for _, argv := range cmds {
		b = append(b, '*')
		b = strconv.AppendInt(b, int64(len(argv)), 10)
		b = append(b, "\r\n"...)
		for _, a := range argv {
			b = append(b, '$')
			b = strconv.AppendInt(b, int64(len(a)), 10)
			b = append(b, "\r\n"...)
			b = append(b, a...)
			b = append(b, "\r\n"...)
		}
	}
	if _, err := r.c.Write(b); err != nil {
		r.t.Fatal(err)
	}
}

// line reads one reply line (status, error, integer or bulk header).
func (r *pipeConn) line() string {
	r.t.Helper()
	r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	l, err := r.rd.ReadString('\n')
	if err != nil {
		r.t.Fatalf("reading a reply: %v", err)
	}
	return strings.TrimRight(l, "\r\n")
}

// bulk reads a bulk reply's body.
func (r *pipeConn) bulk() string {
	r.t.Helper()
	h := r.line()
	if !strings.HasPrefix(h, "$") {
		r.t.Fatalf("want a bulk reply, got %q", h)
	}
	n, _ := strconv.Atoi(h[1:])
	if n < 0 {
		return "(nil)"
	}
	b := make([]byte, n+2)
	if _, err := io.ReadFull(r.rd, b); err != nil {
		r.t.Fatal(err)
	}
	return string(b[:n])
}

func loopClientCount(s *Server) (inLoop, own int) {
	s.clientsMu.Lock()
	defer s.clientsMu.Unlock()
	for _, c := range s.clients {
		if c.loop != nil {
			inLoop++
		} else {
			own++
		}
	}
	return
}

func TestEventLoopServesConnections(t *testing.T) {
	s := startServer(t)
	if len(s.loops) == 0 {
		t.Fatal("no event loop started")
	}
	r := dialPipe(t, s)
	r.send([]string{"SET", "k", "v"}, []string{"GET", "k"})
	if got := r.line(); got != "+OK" {
		t.Fatalf("SET: %q", got)
	}
	if got := r.bulk(); got != "v" {
		t.Fatalf("GET: %q", got)
	}
	if in, _ := loopClientCount(s); in != 1 {
		t.Fatalf("%d connections in an event loop, want 1", in)
	}
}

// A pipeline whose middle command blocks (WAIT) moves the connection to a
// goroutine of its own, with every reply in order and nothing lost.
func TestEventLoopHandsOverBlockingCommand(t *testing.T) {
	s := startServer(t)
	r := dialPipe(t, s)
	r.send([]string{"SET", "a", "1"}, []string{"WAIT", "0", "50"}, []string{"INCR", "a"}, []string{"GET", "a"})
	for i, want := range []string{"+OK", ":0", ":2"} {
		if got := r.line(); got != want {
			t.Fatalf("reply %d: %q, want %q", i, got, want)
		}
	}
	if got := r.bulk(); got != "2" {
		t.Fatalf("GET: %q", got)
	}
	in, own := loopClientCount(s)
	if in != 0 || own != 1 {
		t.Fatalf("after WAIT: %d in a loop, %d on their own; want 0 and 1", in, own)
	}
	r.send([]string{"EVAL", "return redis.call('get', KEYS[1])", "1", "a"})
	if got := r.bulk(); got != "2" {
		t.Fatalf("EVAL on the handed-over connection: %q", got)
	}
}

// A reply larger than the socket buffers, to a client that does not read
// yet, must neither block the loop for others nor be cut short.
func TestEventLoopLargeReplyToSlowReader(t *testing.T) {
	s := startServer(t)
	big := strings.Repeat("x", 40<<20) // more than socket buffers can hold (tcp_rmem max is 32 MB here)
	w := dialPipe(t, s)
	w.send([]string{"SET", "big", big})
	if got := w.line(); got != "+OK" {
		t.Fatalf("SET big: %q", got)
	}
	slow := dialPipe(t, s)
	slow.send([]string{"GET", "big"}, []string{"PING"})
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, own := loopClientCount(s); own == 1 {
			break // the slow reader has a goroutine of its own
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow reader was never handed over")
		}
		time.Sleep(10 * time.Millisecond)
	}

	other := dialPipe(t, s)
	other.send([]string{"PING"})
	if got := other.line(); got != "+PONG" {
		t.Fatalf("other client while a large reply is pending: %q", got)
	}
	if got := slow.bulk(); len(got) != len(big) || got != big {
		t.Fatalf("large reply: %d bytes, want %d", len(got), len(big))
	}
	if got := slow.line(); got != "+PONG" {
		t.Fatalf("reply after the large one: %q", got)
	}
}

func TestEventLoopClientKillAndTimeout(t *testing.T) {
	s := startServer(t, "--timeout", "1")
	victim := dialPipe(t, s)
	victim.send([]string{"CLIENT", "ID"})
	id := strings.TrimPrefix(victim.line(), ":")
	admin := dialPipe(t, s)
	admin.send([]string{"CLIENT", "KILL", "ID", id})
	if got := admin.line(); got != ":1" {
		t.Fatalf("CLIENT KILL ID: %q", got)
	}
	victim.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := victim.rd.ReadByte(); err == nil {
		t.Fatal("killed connection still open")
	}

	// admin stays idle past the 1 s timeout: the cron closes it.
	admin.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	if _, err := admin.rd.ReadByte(); err == nil || time.Since(start) > 9*time.Second {
		t.Fatalf("idle connection not closed by timeout (err %v after %v)", err, time.Since(start))
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.nclients.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d clients still counted", s.nclients.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Killing the event loops' server closes their connections and returns.
func TestEventLoopShutdown(t *testing.T) {
	s := startServer(t)
	var conns []*pipeConn
	for i := 0; i < 20; i++ {
		r := dialPipe(t, s)
		r.send([]string{"PING"})
		if got := r.line(); got != "+PONG" {
			t.Fatal(got)
		}
		conns = append(conns, r)
	}
	done := make(chan error, 1)
	go func() { done <- s.Close() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	for _, r := range conns {
		r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := r.rd.ReadByte(); err == nil {
			t.Fatal("connection open after Close")
		}
	}
}

// A script queued in MULTI runs in EXEC; the connection left the loop when
// it queued the script, so a loop client arriving meanwhile gets BUSY.
func TestEventLoopScriptInExecLeavesLoop(t *testing.T) {
	s := startServer(t, "--busy-reply-threshold", "50")
	runner := dialPipe(t, s)
	runner.send([]string{"MULTI"}, []string{"EVAL", "local t0 = redis.call('time')[1]; while true do if tonumber(redis.call('time')[1]) > t0 + 1 then break end end return 1", "0"})
	for i, want := range []string{"+OK", "+QUEUED"} {
		if got := runner.line(); got != want {
			t.Fatalf("reply %d: %q, want %q", i, got, want)
		}
	}
	runner.send([]string{"EXEC"})
	other := dialPipe(t, s)
	deadline := time.Now().Add(10 * time.Second)
	for s.busy.start.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the EXEC'd script never started")
		}
		time.Sleep(time.Millisecond)
	}
	for {
		other.send([]string{"GET", "x"})
		got := other.line()
		if strings.HasPrefix(got, "-BUSY") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never got BUSY while the EXEC'd script ran; last reply %q", got)
		}
		if got == "$-1" {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		t.Fatalf("unexpected reply %q", got)
	}
	if got := runner.line(); got != "*1" {
		t.Fatalf("EXEC: %q", got)
	}
	if got := runner.line(); got != ":1" {
		t.Fatalf("EXEC's script reply: %q", got)
	}
}
