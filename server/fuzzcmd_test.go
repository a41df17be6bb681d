package server

import (
	"math/rand"
	"os"
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
		"return 1", "return redis.call('get', KEYS[1])", "ASYNC", "SYNC", "ALL", "WRITE", "all", "default",
		"-0", "0x10", "1e3", "536870912", "4294967296", "-9223372036854775807", "9223372036854775806"}
	c := s.newInternalClient()
	seed := [][]string{{"set", "str", "v"}, {"hset", "h", "f", "1"}, {"rpush", "l", "a", "b"}, {"sadd", "s", "m"}, {"zadd", "z", "1", "m"}}
	cmds := s.commandList()
	for iter := 0; iter < 30000; iter++ {
		if iter%500 == 0 {
			s.Lock()
			for _, sd := range seed {
				argv := make([][]byte, len(sd))
				for i, a := range sd {
					argv[i] = []byte(a)
				}
				s.execInternal(c, argv)
			}
			s.Unlock()
		}
		cmd := cmds[r.Intn(len(cmds))]
		argv := [][]byte{[]byte(strings.ToUpper(cmd.Name))}
		for n := r.Intn(7); n > 0; n-- {
			argv = append(argv, []byte(pool[r.Intn(len(pool))]))
		}
		c.proto = 2 + r.Intn(2)
		execChecked(t, s, c, argv)
	}
}

// fuzzSkipped are commands that would end the test's server or client, or
// take seconds whatever their arguments (PFSELFTEST adds ten million
// elements, as Redis's does).
var fuzzSkipped = map[string]bool{"shutdown": true, "debug": true, "quit": true, "multi": true, "reset": true, "redline": true,
	"pfselftest": true}

// subscribeFamily answers with one confirmation per channel named.
var subscribeFamily = map[string]bool{"subscribe": true, "psubscribe": true, "ssubscribe": true,
	"unsubscribe": true, "punsubscribe": true, "sunsubscribe": true}

// execChecked runs argv through the dispatcher and fails the test if a
// handler panics or the reply is not exactly one RESP value.
func execChecked(t *testing.T, s *Server, c *Client, argv [][]byte) {
	t.Helper()
	if fuzzSkipped[strings.ToLower(string(argv[0]))] {
		return
	}
	if eq(argv[0], "client") && len(argv) > 1 && (eq(argv[1], "kill") || eq(argv[1], "pause")) {
		return
	}
	s.Lock()
	defer s.Unlock()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("%q panicked: %v", argv, p)
		}
	}()
	out := append([]byte(nil), s.execInternal(c, argv)...)
	if c.multi {
		s.execInternal(c, [][]byte{[]byte("DISCARD")})
	}
	if subscribeFamily[strings.ToLower(string(argv[0]))] {
		// One reply per channel (Redis's (un)subscribe confirmations),
		// then leave the subscribed state so later calls see a plain client.
		for rest := out; len(rest) > 0; {
			_, n, err := resp.ReadReply(rest)
			if err != nil || n == 0 {
				t.Fatalf("%q: reply %q is not a sequence of RESP values (%v)", argv, out, err)
			}
			rest = rest[n:]
		}
		for _, u := range []string{"UNSUBSCRIBE", "PUNSUBSCRIBE", "SUNSUBSCRIBE"} {
			s.execInternal(c, [][]byte{[]byte(u)})
		}
	} else if _, n, err := resp.ReadReply(out); err != nil || n == 0 || n != len(out) {
		t.Fatalf("%q: reply %q is not exactly one RESP value (%d, %v)", argv, out, n, err)
	}
	if strings.Contains(string(out), "internal error") {
		t.Fatalf("%q: %q", argv, out)
	}
}

// TestCommandEdgeSweep calls every command and subcommand with each edge
// value (int64 limits, -0, huge lengths, empty) in each argument position,
// the other arguments ordinary, on keys of every type: the random fuzz can
// miss the one combination that overflows (SETRANGE k <max int64> x did).
func TestCommandEdgeSweep(t *testing.T) {
	s := startServer(t)
	c := s.newInternalClient()
	edges := []string{"9223372036854775807", "-9223372036854775808", "9223372036854775806", "-9223372036854775807",
		"4294967296", "536870912", "-1", "-0", "0", "", "1e308", "-inf", "nan", "0x10"}
	calls := 0
	defer func() { t.Logf("%d calls", calls) }()
	ordinary := []string{"str", "1", "a", "1", "2", "1", "1"}
	for _, cmd := range s.commandList() {
		names := [][]string{{cmd.Name}}
		for _, sc := range cmd.Subcommands {
			names = append(names, []string{cmd.Name, sc.Name[strings.IndexByte(sc.Name, '|')+1:]})
		}
		for _, name := range names {
			for _, key := range []string{"str", "h", "l", "s", "z", "missing"} {
				for extra := 1; extra <= 5; extra++ {
					for pos := 0; pos < extra; pos++ {
						for _, e := range edges {
							for _, sd := range [][]string{{"set", "str", "v"}, {"hset", "h", "f", "1"}, {"rpush", "l", "a", "b"}, {"sadd", "s", "m", "1"}, {"zadd", "z", "1", "m"}} {
								execChecked(t, s, c, rawCmd(sd...))
							}
							args := append([]string(nil), name...)
							args = append(args, key)
							args = append(args, ordinary[:extra-1]...)
							args[len(name)+pos] = e
							c.proto = 2 + pos%2
							calls++
							execChecked(t, s, c, rawCmd(args...))
						}
					}
				}
			}
		}
	}
}

// FuzzCommandLine runs one command line (redis-cli quoting) through the
// dispatcher: no input may panic a handler or produce anything but one
// reply. The seeds are every case of testdata/compare.txt; `go test
// -fuzz FuzzCommandLine ./server` mutates them. Scripts are left out (a
// mutated script may loop until SCRIPT KILL).
func FuzzCommandLine(f *testing.F) {
	data, err := os.ReadFile(compareFile)
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			f.Add(line)
		}
	}
	s := startServer(f)
	c := s.newInternalClient()
	f.Fuzz(func(t *testing.T, line string) {
		argv, ok := resp.SplitArgs([]byte(line), nil)
		if !ok || len(argv) == 0 || len(argv) > 64 {
			return
		}
		switch strings.ToLower(string(argv[0])) {
		case "eval", "evalsha", "eval_ro", "evalsha_ro", "wait", "flushall", "flushdb":
			return
		}
		c.db = 0
		execChecked(t, s, c, argv)
	})
}
