package server

import (
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestIsLocalAddr: Redis 7.0 compares the peer's address text with
// "127.0.0.1" and "::1"; anything else over TCP is remote (127.0.0.2 too,
// checked against redis-server 7.0.15), and a unix socket is local.
func TestIsLocalAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:5000":        true,
		"[::1]:5000":            true,
		"[::ffff:127.0.0.1]:1":  true, // a dual-stack listener's IPv4 loopback client
		"@":                     true, // a unix socket's peer
		"":                      true, // an internal client
		"127.0.0.2:5000":        false,
		"192.0.2.2:5000":        false,
		"[fd00::2]:5000":        false,
		"[fe80::1%eth0]:5000":   false,
		"10.0.0.1:6379":         false,
		"[::ffff:10.0.0.1]:637": false,
	} {
		if got := isLocalAddr(addr); got != want {
			t.Errorf("isLocalAddr(%q) = %v, want %v", addr, got, want)
		}
	}
}

// externalIP is an address of this machine's that is not loopback, to
// connect from as an outside client would; "" when there is none.
func externalIP(t *testing.T) string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok || ipn.IP.IsLoopback() || ipn.IP.IsLinkLocalUnicast() || ipn.IP.To4() == nil {
			continue
		}
		// The address must accept connections to itself (it is ours).
		ln, err := net.Listen("tcp4", net.JoinHostPort(ipn.IP.String(), "0"))
		if err != nil {
			continue
		}
		ln.Close()
		return ipn.IP.String()
	}
	return ""
}

// probe connects to ip:port from ip (a non-loopback client), sends PING
// unless the server speaks first, and returns all it reads until the
// server closes or goes quiet for a moment.
func probe(t *testing.T, ip string, port int) string {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Whatever the server sends unasked (DENIED) arrives first; PING only
	// after a quiet moment, so that a denied connection's close is never
	// an RST that could drop the reply.
	var got []byte
	buf := make([]byte, 4096)
	pinged := false
	for {
		c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			return string(got) + "<EOF>"
		}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			if pinged || len(got) > 0 {
				return string(got)
			}
			c.Write([]byte("PING\r\n"))
			pinged = true
			continue
		}
		if err != nil {
			return string(got) + "<" + err.Error() + ">"
		}
	}
}

// TestProtectedMode: with protected-mode yes and a default user without a
// password, a client from a non-loopback address gets Redis's DENIED and
// the connection closes; loopback clients are served; CONFIG SET
// protected-mode no, requirepass or a password for the default user lift
// it, and a bind address does not (Redis 7.0). Both the event-loop and
// the goroutine-per-connection paths. redis-server 7.0.15 answers the
// same bytes (TestProtectedModeCompare).
func TestProtectedMode(t *testing.T) {
	ip := externalIP(t)
	if ip == "" {
		t.Skip("no non-loopback IPv4 address on this machine (TestIsLocalAddr covers the decision)")
	}
	for _, loop := range []string{"on", "off"} {
		t.Run("event-loop-"+loop, func(t *testing.T) {
			t.Setenv("REDLINE_EVENT_LOOP", loop)
			s := startServer(t, "--bind", "*")
			port := s.Addr().(*net.TCPAddr).Port
			local := newClient(t, s, 2)
			if got := probe(t, ip, port); got != deniedReply+"<EOF>" {
				t.Fatalf("from %s: %q", ip, got)
			}
			if v := local.ConfigGet(ctx, "protected-mode").Val()["protected-mode"]; v != "yes" {
				t.Fatalf("protected-mode %q", v)
			}
			info := local.Info(ctx, "stats").Val()
			if !strings.Contains(info, "rejected_connections:1\r\n") || !strings.Contains(info, "total_connections_received:1\r\n") {
				t.Errorf("a denied connection is rejected, not received:\n%s", info)
			}
			steps := []struct {
				cmd  []any
				want string
			}{
				{[]any{"CONFIG", "SET", "protected-mode", "no"}, "+PONG\r\n"},
				{[]any{"CONFIG", "SET", "protected-mode", "yes"}, deniedReply + "<EOF>"},
				{[]any{"CONFIG", "SET", "requirepass", "pw"}, "-NOAUTH Authentication required.\r\n"},
				{[]any{"CONFIG", "SET", "requirepass", ""}, deniedReply + "<EOF>"},
				{[]any{"ACL", "SETUSER", "default", "resetpass", ">pw2"}, "-NOAUTH Authentication required.\r\n"},
				{[]any{"ACL", "SETUSER", "default", "nopass"}, deniedReply + "<EOF>"},
				{[]any{"ACL", "SETUSER", "default", "off"}, deniedReply + "<EOF>"}, // only nopass counts
			}
			for _, st := range steps {
				if err := local.Do(ctx, st.cmd...).Err(); err != nil {
					t.Fatalf("%v: %v", st.cmd, err)
				}
				// The loopback client authenticated when it connected and stays so.
				if got := probe(t, ip, port); got != st.want {
					t.Fatalf("after %v: %q, want %q", st.cmd, got, st.want)
				}
			}
		})
	}
	t.Run("bind", func(t *testing.T) {
		s := startServer(t, "--bind", ip, "127.0.0.1")
		if got := probe(t, ip, s.Addr().(*net.TCPAddr).Port); got != deniedReply+"<EOF>" {
			t.Fatalf("a bind address does not lift protected mode in Redis 7.0: %q", got)
		}
	})
	t.Run("protected-mode-no", func(t *testing.T) {
		s := startServer(t, "--bind", "*", "--protected-mode", "no")
		if got := probe(t, ip, s.Addr().(*net.TCPAddr).Port); got != "+PONG\r\n" {
			t.Fatalf("%q", got)
		}
	})
}

// TestProtectedModeCompare: redis-server 7.0.15 and the reference answer a
// non-loopback client the same bytes, and close.
func TestProtectedModeCompare(t *testing.T) {
	ip := externalIP(t)
	if ip == "" {
		t.Skip("no non-loopback IPv4 address on this machine")
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("redis-server is not installed: run scripts/install-deps (Debian package redis-server)")
	}
	port := freePort(t)
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
		if err == nil {
			c.Close()
			break
		}
		if i > 500 {
			t.Fatalf("redis-server did not start: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	s := startServer(t, "--bind", "*")
	red, ref := probe(t, ip, port), probe(t, ip, s.Addr().(*net.TCPAddr).Port)
	if red != ref || ref != deniedReply+"<EOF>" {
		t.Fatalf("redis %q\nref   %q", red, ref)
	}
}
