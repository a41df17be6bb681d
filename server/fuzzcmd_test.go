package server

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/redline-dev/redline/server/resp"
)

// TestCommandFuzz calls every command with random arguments drawn from
// tricky values, directly through the dispatcher: no handler may panic, and
// every call must produce exactly one well-formed reply.
func TestCommandFuzz(t *testing.T) {
	s := startServer(t)
	r := rand.New(rand.NewSource(3))
	pool := []string{"", "0", "1", "-1", "2", "10", "-100", "3.5", "inf", "-inf", "nan", "9223372036854775807",
		"-9223372036854775808", "99999999999999999999", "k", "h", "l", "s", "z", "str", "*", "{t}a",
		"NX", "XX", "GT", "LT", "CH", "INCR", "EX", "PX", "EXAT", "PXAT", "KEEPTTL", "GET", "WITHSCORES",
		"BYSCORE", "REV", "LIMIT", "MATCH", "COUNT", "TYPE", "REPLACE", "ABSTTL", "(1", "+inf", "GET", "SET",
		"ID", "LIST", "KILL", "SETNAME", "PAUSE", "INFO", "DOCS", "GETKEYS", "LOAD", "EXISTS", "FLUSH",
		"return 1", "return redis.call('get', KEYS[1])", "ASYNC", "SYNC", "ALL", "WRITE", "all", "default"}
	skip := map[string]bool{"shutdown": true, "debug": true, "quit": true, "client": false, "multi": true, "reset": true, "redline": true,
		// (un)subscribing to n channels answers n replies, as in Redis
		"subscribe": true, "psubscribe": true, "ssubscribe": true, "unsubscribe": true, "punsubscribe": true, "sunsubscribe": true}
	c := s.NewInternalClient()
	seed := [][]string{{"set", "str", "v"}, {"hset", "h", "f", "1"}, {"rpush", "l", "a", "b"}, {"sadd", "s", "m"}, {"zadd", "z", "1", "m"}}
	cmds := s.Commands()
	for iter := 0; iter < 30000; iter++ {
		if iter%500 == 0 {
			s.Lock()
			for _, sd := range seed {
				argv := make([][]byte, len(sd))
				for i, a := range sd {
					argv[i] = []byte(a)
				}
				s.Exec(c, argv)
			}
			s.Unlock()
		}
		cmd := cmds[r.Intn(len(cmds))]
		if skip[cmd.Name] {
			continue
		}
		argv := [][]byte{[]byte(strings.ToUpper(cmd.Name))}
		for n := r.Intn(7); n > 0; n-- {
			argv = append(argv, []byte(pool[r.Intn(len(pool))]))
		}
		if cmd.Name == "client" && len(argv) > 1 && strings.EqualFold(string(argv[1]), "kill") {
			continue
		}
		if cmd.Name == "client" && len(argv) > 1 && strings.EqualFold(string(argv[1]), "pause") {
			continue
		}
		c.proto = 2 + r.Intn(2)
		s.Lock()
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("%q panicked: %v", argv, p)
				}
			}()
			out := append([]byte(nil), s.Exec(c, argv)...)
			if c.multi {
				s.Exec(c, [][]byte{[]byte("DISCARD")})
			}
			if _, n, err := resp.ReadReply(out); err != nil || n == 0 || n != len(out) {
				t.Fatalf("%q: reply %q is not exactly one RESP value (%d, %v)", argv, out, n, err)
			}
		}()
		s.Unlock()
	}
}
