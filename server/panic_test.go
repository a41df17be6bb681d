package server

import (
	"io"
	"testing"
	"time"

	"github.com/redline-dev/redline/server/resp"
)

// A handler that panics does not take the server down: the batch's one
// recover (runBatch) answers ERR internal error after the replies of the
// commands before it in the pipeline, closes that connection without
// running what follows, and the server goes on serving others.
func TestPanickingHandlerClosesOnlyItsConnection(t *testing.T) {
	s := startServer(t)
	s.mu.Lock()
	s.commands["boom"] = newCmd("boom", 1, FlagFast, 0, 0, 0, func(c *Client, argv [][]byte) { panic("boom") }, "server")
	s.mu.Unlock()
	rc := dialRaw(t, s.Addr().String())
	var req []byte
	for _, argv := range [][][]byte{rawCmd("SET", "k", "1"), rawCmd("boom"), rawCmd("SET", "k", "2")} {
		req = resp.AppendArray(req, len(argv))
		for _, a := range argv {
			req = resp.AppendBulk(req, a)
		}
	}
	rc.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := rc.c.Write(req); err != nil {
		t.Fatal(err)
	}
	if r := string(rc.read(t)); r != "+OK\r\n" {
		t.Fatalf("SET before the panic: %q", r)
	}
	if r := string(rc.read(t)); r != "-ERR internal error\r\n" {
		t.Fatalf("the panicking command: %q", r)
	}
	if _, err := rc.r.ReadByte(); err != io.EOF {
		t.Fatalf("connection after the panic: %v, want EOF", err)
	}
	other := dialRaw(t, s.Addr().String())
	if r := string(other.do(t, rawCmd("GET", "k"))); r != "$1\r\n1\r\n" {
		t.Fatalf("GET k on another connection: %q (the command after the panic must not run)", r)
	}
}
