package server

import (
	"strings"
	"testing"
)

func rawCmd(args ...string) [][]byte {
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	return argv
}

// TestScriptCannotBreakScripting: a script that overwrites or creates
// globals is refused (as Redis 7.0 refuses it), and scripting keeps
// working for every client afterwards. Before the sandbox, `redis = nil`
// broke every later EVAL until restart.
func TestScriptCannotBreakScripting(t *testing.T) {
	s := startServer(t)
	a := dialRaw(t, s.Addr().String())
	b := dialRaw(t, s.Addr().String())
	attacks := []string{
		"redis = nil return 1",
		"redis.call = nil return 1",
		"string.len = nil return 1",
		"_G.redis = nil return 1",
		"rawset(_G, 'redis', nil) return 1",
		"rawset(redis, 'call', nil) return 1",
		"setmetatable(_G, nil) return 1",
		"getmetatable(_G).__index = nil return 1",
		"getmetatable('').__index = nil return 1",
		"table.insert(redis, 1) return 1",
		"leak = 1 return 1",
		"function leakfn() return 1 end return 1",
		"loadstring('redis = nil')() return 1",
		"KEYS = nil return 1",
	}
	for _, attack := range attacks {
		got := string(a.do(t, rawCmd("EVAL", attack, "0")))
		if !strings.Contains(got, "Attempt to modify a readonly table") {
			t.Errorf("%q: %q, want the readonly error", attack, got)
		}
		for _, c := range []*rawClient{a, b} {
			if got := string(c.do(t, rawCmd("EVAL", "return redis.call('ping')", "0"))); got != "+PONG\r\n" {
				t.Fatalf("after %q scripting is broken: %q", attack, got)
			}
			if got := string(c.do(t, rawCmd("EVAL", "return string.len('abc') + ('ab'):len() + #KEYS", "1", "k"))); got != ":6\r\n" {
				t.Fatalf("after %q the libraries are broken: %q", attack, got)
			}
		}
	}
	// Nothing a script stored is visible to the next one.
	for _, probe := range []string{"return leak", "return leakfn()", "return rawget(redis, 1)", "return rawget(_G, 'leak')"} {
		got := string(b.do(t, rawCmd("EVAL", probe, "0")))
		if got != "$-1\r\n" && !strings.Contains(got, "nonexistent global variable") {
			t.Errorf("%q: %q, a global leaked between scripts", probe, got)
		}
	}
	if got := string(a.do(t, rawCmd("EVAL", "return undefined_name", "0"))); !strings.Contains(got, "Script attempted to access nonexistent global variable 'undefined_name'") {
		t.Errorf("reading an undefined global: %q", got)
	}
	for _, removed := range []string{"print", "newproxy", "getfenv", "setfenv", "dofile", "loadfile", "require"} {
		if got := string(a.do(t, rawCmd("EVAL", "return type("+removed+")", "0"))); !strings.Contains(got, "nonexistent global") {
			t.Errorf("%s is available to scripts: %q", removed, got)
		}
	}
}

// TestScriptRepliesCannotInjectProtocol: CR and LF in a status or error
// reply built by a script become spaces; before, the next command on the
// connection received the injected reply.
func TestScriptRepliesCannotInjectProtocol(t *testing.T) {
	s := startServer(t)
	for _, proto := range []string{"2", "3"} {
		c := dialRaw(t, s.Addr().String())
		c.do(t, rawCmd("HELLO", proto))
		cases := []struct{ script, want string }{
			{"return redis.status_reply('OK\\r\\n:666')", "+OK  :666\r\n"},
			{"return {ok='a\\nb'}", "+a b\r\n"},
			{"return redis.error_reply('My\\r\\nerr')", "-ERR My  err\r\n"},
			{"return {err='My\\r\\n:7'}", "-My  :7\r\n"},
		}
		for _, tc := range cases {
			if got := string(c.do(t, rawCmd("EVAL", tc.script, "0"))); got != tc.want {
				t.Errorf("RESP%s %s: %q, want %q", proto, tc.script, got, tc.want)
			}
			if got := string(c.do(t, rawCmd("PING"))); got != "+PONG\r\n" {
				t.Fatalf("RESP%s after %s the connection is out of step: PING got %q", proto, tc.script, got)
			}
		}
	}
}

// TestSetRangeHugeOffset: offsets near the int64 limit get Redis's size
// error instead of a panic from an overflowed length.
func TestSetRangeHugeOffset(t *testing.T) {
	s := startServer(t)
	c := dialRaw(t, s.Addr().String())
	const tooBig = "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n"
	for _, off := range []string{"9223372036854775807", "9223372036854775806", "536870912", "536870911"} {
		for _, key := range []string{"missing", "present"} {
			c.do(t, rawCmd("SET", "present", "v"))
			if got := string(c.do(t, rawCmd("SETRANGE", key, off, "xy"))); got != tooBig {
				t.Errorf("SETRANGE %s %s xy: %q", key, off, got)
			}
		}
	}
	// An empty value writes nothing and Redis checks no size then.
	if got := string(c.do(t, rawCmd("SETRANGE", "present", "9223372036854775807", ""))); got != ":1\r\n" {
		t.Errorf("SETRANGE present max \"\": %q", got)
	}
	if got := string(c.do(t, rawCmd("PING"))); got != "+PONG\r\n" {
		t.Fatalf("connection lost: %q", got)
	}
}
