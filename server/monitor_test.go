package server

import (
	"bufio"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestMonitor: a monitoring connection sees each command after it ran, in
// Redis's format; scripts' commands follow EVAL as "lua"; MULTI/EXEC in
// order; secrets redacted; admin commands hidden; RESET ends it.
func TestMonitor(t *testing.T) {
	s := startServer(t)
	conn, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	line := func() string {
		t.Helper()
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("monitor read: %v", err)
		}
		return strings.TrimRight(l, "\r\n")
	}
	// The commands go-redis sends on connecting are not part of the script.
	setup := regexp.MustCompile(`\] "(hello|client)"`)
	next := func() string {
		t.Helper()
		for {
			if l := line(); !setup.MatchString(l) {
				return l
			}
		}
	}
	conn.Write([]byte("MONITOR\r\n"))
	if l := line(); l != "+OK" {
		t.Fatalf("MONITOR: %q", l)
	}
	c := newClient(t, s, 2)
	c.Set(ctx, "foo", "b\"a\nr\x01", 0)
	c.Eval(ctx, "return redis.call('get', KEYS[1])", []string{"foo"})
	c.Do(ctx, "config", "get", "maxmemory") // admin: not shown
	c.Do(ctx, "auth", "secret")
	pipe := c.TxPipeline()
	pipe.Incr(ctx, "n")
	pipe.Exec(ctx)
	head := `^\+\d+\.\d{6} \[0 127\.0\.0\.1:\d+\] `
	for _, want := range []string{
		head + `"set" "foo" "b\\"a\\nr\\x01"$`,
		head + `"eval" "return redis.call\('get', KEYS\[1\]\)" "1" "foo"$`,
		`^\+\d+\.\d{6} \[0 lua\] "get" "foo"$`,
		head + `"auth" "\(redacted\)"$`,
		head + `"multi"$`,
		head + `"incr" "n"$`,
		head + `"exec"$`,
	} {
		if l := next(); !regexp.MustCompile(want).MatchString(l) {
			t.Fatalf("monitor line %q, want %s", l, want)
		}
	}
	if !strings.Contains(c.ClientList(ctx).Val(), "flags=O") {
		t.Fatal("CLIENT LIST does not flag the monitor O")
	}
	conn.Write([]byte("RESET\r\n"))
	if l := line(); l != "+RESET" {
		t.Fatalf("RESET: %q", l)
	}
	c.Set(ctx, "after", "1", 0)
	conn.Write([]byte("PING\r\n"))
	if l := line(); l != "+PONG" {
		t.Fatalf("after RESET the connection still monitors: %q", l)
	}
}
