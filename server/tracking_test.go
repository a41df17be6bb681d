package server

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestClientReplyMatchesRedis: CLIENT REPLY OFF / SKIP / ON drop the same
// replies as Redis (the stream of bytes after a pipeline is compared).
func TestClientReplyMatchesRedis(t *testing.T) {
	raddr := startRedisServer(t)
	s := startServer(t)
	script := [][]string{
		{"CLIENT", "REPLY", "OFF"}, {"SET", "a", "1"}, {"GET", "a"}, {"CLIENT", "REPLY", "ON"},
		{"CLIENT", "REPLY", "SKIP"}, {"SET", "a", "2"}, {"GET", "a"},
		{"CLIENT", "REPLY", "SKIP"}, {"NOSUCH"}, {"GET", "a"},
		{"CLIENT", "REPLY", "OFF"}, {"CLIENT", "REPLY", "SKIP"}, {"GET", "a"}, {"CLIENT", "REPLY", "ON"},
		{"CLIENT", "REPLY", "MAYBE"}, {"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "ON"}, {"PING"}, {"ECHO", "end"},
	}
	var got [][]byte
	for _, addr := range []string{s.Addr().String(), raddr} {
		c := dialRaw(t, addr)
		for _, cmd := range script {
			c.send(t, rawCmd(cmd...))
		}
		var all []byte
		for {
			r := c.read(t)
			all = append(all, r...)
			if bytes.Equal(r, []byte("$3\r\nend\r\n")) {
				break
			}
		}
		got = append(got, all)
	}
	if !bytes.Equal(got[0], got[1]) {
		t.Fatalf("replies:\n  ref   %q\n  redis %q", got[0], got[1])
	}
}

// TestClientTrackingMatchesRedis drives tracking scenarios on both servers
// with the same connections and compares every byte each connection gets.
func TestClientTrackingMatchesRedis(t *testing.T) {
	raddr := startRedisServer(t)
	s := startServer(t)
	type step struct {
		conn int      // 0 tracker, 1 writer, 2 redirect target (+10: read and ignore, ids differ)
		cmd  []string // nil: read one reply or push
	}
	scenarios := map[string][]step{
		"default": {
			{0, []string{"HELLO", "3"}}, {10, nil}, {0, []string{"CLIENT", "TRACKING", "ON"}}, {0, nil},
			{0, []string{"GET", "k"}}, {0, nil}, {1, []string{"SET", "k", "v"}}, {1, nil}, {0, nil},
			{1, []string{"SET", "k", "w"}}, {1, nil}, {0, []string{"GET", "k"}}, {0, nil},
			{0, []string{"SET", "k", "x"}}, {0, nil}, {0, nil},
			{0, []string{"MGET", "a", "b"}}, {0, nil}, {1, []string{"FLUSHALL"}}, {1, nil}, {0, nil},
			{0, []string{"CLIENT", "TRACKINGINFO"}}, {0, nil}, {0, []string{"CLIENT", "GETREDIR"}}, {0, nil},
			{0, []string{"CLIENT", "TRACKING", "OFF"}}, {0, nil}, {0, []string{"CLIENT", "GETREDIR"}}, {0, nil},
		},
		"bcast-noloop": {
			{0, []string{"HELLO", "3"}}, {10, nil},
			{0, []string{"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a:", "PREFIX", "b:", "NOLOOP"}}, {0, nil},
			{1, []string{"MSET", "a:1", "1", "c:1", "1"}}, {1, nil}, {0, nil},
			{0, []string{"SET", "a:2", "1"}}, {0, nil}, {1, []string{"SET", "b:1", "1"}}, {1, nil}, {0, nil},
			{0, []string{"CLIENT", "TRACKINGINFO"}}, {0, nil},
			{0, []string{"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a"}}, {0, nil},
			{0, []string{"CLIENT", "TRACKING", "ON"}}, {0, nil},
		},
		"optin-redirect": {
			{2, []string{"CLIENT", "ID"}}, {2, nil}, {2, []string{"SUBSCRIBE", "__redis__:invalidate"}}, {2, nil},
			{0, []string{"CLIENT", "TRACKING", "ON", "REDIRECT", "$ID", "OPTIN"}}, {0, nil},
			{0, []string{"GET", "x"}}, {0, nil}, {0, []string{"CLIENT", "CACHING", "YES"}}, {0, nil},
			{0, []string{"GET", "y"}}, {0, nil}, {1, []string{"MSET", "x", "1", "y", "2"}}, {1, nil}, {2, nil},
			{0, []string{"CLIENT", "GETREDIR"}}, {10, nil}, {0, []string{"CLIENT", "CACHING", "NO"}}, {0, nil},
		},
		"errors": {
			{0, []string{"CLIENT", "TRACKING", "ON", "PREFIX", "a"}}, {0, nil},
			{0, []string{"CLIENT", "TRACKING", "ON", "OPTIN", "OPTOUT"}}, {0, nil},
			{0, []string{"CLIENT", "TRACKING", "ON", "BCAST", "OPTIN"}}, {0, nil},
			{0, []string{"CLIENT", "TRACKING", "ON", "REDIRECT", "999999"}}, {0, nil},
			{0, []string{"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "ab", "PREFIX", "a"}}, {0, nil},
			{0, []string{"CLIENT", "TRACKING", "MAYBE"}}, {0, nil}, {0, []string{"CLIENT", "TRACKING", "ON", "FOO"}}, {0, nil},
			{0, []string{"CLIENT", "CACHING", "YES"}}, {0, nil}, {0, []string{"CLIENT", "TRACKINGINFO"}}, {0, nil},
		},
	}
	for name, steps := range scenarios {
		var outs [2][3][]byte
		for si, addr := range []string{s.Addr().String(), raddr} {
			conns := [3]*rawClient{dialRaw(t, addr), dialRaw(t, addr), dialRaw(t, addr)}
			conns[0].do(t, rawCmd("FLUSHALL"))
			id := ""
			for _, st := range steps {
				if st.conn >= 10 {
					conns[st.conn-10].read(t)
					continue
				}
				c := conns[st.conn]
				if st.cmd == nil {
					r := c.read(t)
					if st.conn == 2 && id == "" {
						id = strings.TrimSpace(strings.TrimPrefix(string(r), ":"))
						continue
					}
					outs[si][st.conn] = append(outs[si][st.conn], r...)
					continue
				}
				cmd := slices.Clone(st.cmd)
				for i, a := range cmd {
					if a == "$ID" {
						cmd[i] = id
					}
				}
				c.send(t, rawCmd(cmd...))
			}
		}
		for i := range 3 {
			if !bytes.Equal(outs[0][i], outs[1][i]) {
				t.Errorf("%s, connection %d:\n  ref   %q\n  redis %q", name, i, outs[0][i], outs[1][i])
			}
		}
	}
}

// A RESP3 client that another client's tracking redirects to gets the
// invalidation push at once, without sending a command of its own, both
// when an event loop serves it and when its own goroutine does (after a
// BLPOP it left the loop). Before, the push waited in its output for its
// next reply (Redis's unit/tracking waited for it in vain), and its
// output was appended by the writer's goroutine while its owner could be
// writing it (go test -race).
func TestRedirectTargetGetsInvalidationWithoutAsking(t *testing.T) {
	for _, owner := range []string{"loop", "goroutine"} {
		t.Run(owner, func(t *testing.T) {
			s := startServer(t)
			addr := s.Addr().String()
			target := dialRaw(t, addr)
			target.do(t, splitTest(t, "HELLO 3"))
			if owner == "goroutine" {
				// A blocking command hands the connection to a goroutine
				// of its own, which keeps it.
				target.do(t, splitTest(t, "BLPOP nolist 0.01"))
			}
			id := string(target.do(t, splitTest(t, "CLIENT ID")))
			id = strings.TrimSpace(strings.TrimPrefix(id, ":"))
			tracker := dialRaw(t, addr)
			if r := string(tracker.do(t, splitTest(t, "CLIENT TRACKING on REDIRECT "+id))); r != "+OK\r\n" {
				t.Fatalf("CLIENT TRACKING: %q", r)
			}
			tracker.do(t, splitTest(t, "GET k"))
			writer := dialRaw(t, addr)
			writer.do(t, splitTest(t, "SET k v"))
			got := string(target.read(t)) // no command sent: the push alone
			if want := ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n"; got != want {
				t.Fatalf("the redirect target got %q, want %q", got, want)
			}
			// And its own replies still follow, in order.
			if r := string(target.do(t, splitTest(t, "PING"))); r != "+PONG\r\n" {
				t.Fatalf("PING after the push: %q", r)
			}
		})
	}
}
