package server

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// step is one command and the reply it must produce, rendered by render.
type step struct {
	cmd  []any
	want string
}

// render turns a go-redis reply into a compact string for comparison:
// nil -> "<nil>", errors -> "ERR: <msg>", slices -> [a b], maps -> map[...].
func render(v any, err error) string {
	if err == redis.Nil {
		return "<nil>"
	}
	if err != nil {
		return "ERR: " + err.Error()
	}
	switch x := v.(type) {
	case nil:
		return "<nil>"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = render(e, nil)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprint(v)
}

func runSteps(t *testing.T, c *redis.Client, steps []step) {
	t.Helper()
	for i, st := range steps {
		got := render(c.Do(ctx, st.cmd...).Result())
		if got != st.want {
			t.Errorf("step %d %v: got %q, want %q", i, st.cmd, got, st.want)
		}
	}
}

func TestCommands(t *testing.T) {
	s := startServer(t)
	for _, proto := range []int{2, 3} {
		c := newClient(t, s, proto)
		// REDLINE_COMPARE_ADDR runs the same table against a real Redis
		// (e.g. a local redis-server) to check the expectations themselves.
		if addr := os.Getenv("REDLINE_COMPARE_ADDR"); addr != "" {
			c = redis.NewClient(&redis.Options{Addr: addr, Protocol: proto, DisableIdentity: true, MaxRetries: -1})
			defer c.Close()
		}
		tests := map[string][]step{
			"strings": {
				{[]any{"set", "s", "v"}, "OK"},
				{[]any{"get", "s"}, "v"},
				{[]any{"get", "missing"}, "<nil>"},
				{[]any{"set", "s", "w", "nx"}, "<nil>"},
				{[]any{"set", "s", "w", "xx", "get"}, "v"},
				{[]any{"set", "s", "x", "nx", "xx"}, "ERR: ERR syntax error"},
				{[]any{"set", "s", "x", "ex", "0"}, "ERR: ERR invalid expire time in 'set' command"},
				{[]any{"set", "s", "x", "ex", "abc"}, "ERR: ERR value is not an integer or out of range"},
				{[]any{"set", "s"}, "ERR: ERR wrong number of arguments for 'set' command"},
				{[]any{"append", "s", "yz"}, "3"},
				{[]any{"strlen", "s"}, "3"},
				{[]any{"getset", "s", "new"}, "wyz"},
				{[]any{"getdel", "s"}, "new"},
				{[]any{"exists", "s"}, "0"},
				{[]any{"mset", "a", "1", "b", "2"}, "OK"},
				{[]any{"mset", "a", "1", "b"}, "ERR: ERR wrong number of arguments for 'mset' command"},
				{[]any{"mget", "a", "nope", "b"}, "[1 <nil> 2]"},
				{[]any{"msetnx", "a", "1", "c", "3"}, "0"},
				{[]any{"setnx", "c", "3"}, "1"},
				{[]any{"incr", "a"}, "2"},
				{[]any{"incrby", "a", "10"}, "12"},
				{[]any{"decr", "a"}, "11"},
				{[]any{"decrby", "a", "20"}, "-9"},
				{[]any{"incrbyfloat", "a", "0.5"}, "-8.5"},
				{[]any{"incr", "a"}, "ERR: ERR value is not an integer or out of range"},
				{[]any{"set", "big", "9223372036854775807"}, "OK"},
				{[]any{"incr", "big"}, "ERR: ERR increment or decrement would overflow"},
				{[]any{"incrbyfloat", "big", "abc"}, "ERR: ERR value is not a valid float"},
				{[]any{"setex", "e", "100", "v"}, "OK"},
				{[]any{"ttl", "e"}, "100"},
				{[]any{"setex", "e", "-1", "v"}, "ERR: ERR invalid expire time in 'setex' command"},
				{[]any{"set", "e2", "v", "keepttl", "ex", "5"}, "ERR: ERR syntax error"},
			},
			"keys": {
				{[]any{"flushall"}, "OK"},
				{[]any{"set", "k1", "v"}, "OK"},
				{[]any{"set", "k2", "v"}, "OK"},
				{[]any{"exists", "k1", "k2", "k1", "k3"}, "3"},
				{[]any{"type", "k1"}, "string"},
				{[]any{"type", "zz"}, "none"},
				{[]any{"ttl", "k1"}, "-1"},
				{[]any{"ttl", "zz"}, "-2"},
				{[]any{"expire", "k1", "100"}, "1"},
				{[]any{"expire", "k1", "100", "nx"}, "0"},
				{[]any{"expire", "k1", "200", "gt"}, "1"},
				{[]any{"expire", "k1", "200", "nx", "xx"}, "ERR: ERR NX and XX, GT or LT options at the same time are not compatible"},
				{[]any{"pexpire", "k1", "100000"}, "1"},
				{[]any{"ttl", "k1"}, "100"},
				{[]any{"persist", "k1"}, "1"},
				{[]any{"persist", "k1"}, "0"},
				{[]any{"expire", "zz", "10"}, "0"},
				{[]any{"keys", "k*"}, "[k1 k2]"},
				{[]any{"dbsize"}, "2"},
				{[]any{"rename", "k1", "k3"}, "OK"},
				{[]any{"rename", "nokey", "k4"}, "ERR: ERR no such key"},
				{[]any{"exists", "k1"}, "0"},
				{[]any{"del", "k2", "k3", "k9"}, "2"},
				{[]any{"randomkey"}, "<nil>"},
				{[]any{"set", "gone", "v"}, "OK"},
				{[]any{"pexpire", "gone", "-1"}, "1"},
				{[]any{"exists", "gone"}, "0"},
				{[]any{"expire", "k1", "x"}, "ERR: ERR value is not an integer or out of range"},
			},
			"hash": {
				{[]any{"flushall"}, "OK"},
				{[]any{"hset", "h", "f1", "v1", "f2", "v2"}, "2"},
				{[]any{"hset", "h", "f1"}, "ERR: ERR wrong number of arguments for 'hset' command"},
				{[]any{"hsetnx", "h", "f1", "x"}, "0"},
				{[]any{"hget", "h", "f1"}, "v1"},
				{[]any{"hget", "h", "nope"}, "<nil>"},
				{[]any{"hmget", "h", "f1", "nope", "f2"}, "[v1 <nil> v2]"},
				{[]any{"hlen", "h"}, "2"},
				{[]any{"hexists", "h", "f2"}, "1"},
				{[]any{"hkeys", "h"}, "[f1 f2]"},
				{[]any{"hvals", "h"}, "[v1 v2]"},
				{[]any{"hincrby", "h", "n", "5"}, "5"},
				{[]any{"hincrby", "h", "f1", "5"}, "ERR: ERR hash value is not an integer"},
				{[]any{"hdel", "h", "f1", "f2", "n", "zz"}, "3"},
				{[]any{"exists", "h"}, "0"},
				{[]any{"set", "str", "x"}, "OK"},
				{[]any{"hget", "str", "f"}, "ERR: WRONGTYPE Operation against a key holding the wrong kind of value"},
			},
			"set-list-zset": {
				{[]any{"flushall"}, "OK"},
				{[]any{"sadd", "s", "a", "b", "a"}, "2"},
				{[]any{"sismember", "s", "a"}, "1"},
				{[]any{"scard", "s"}, "2"},
				{[]any{"srem", "s", "a", "z"}, "1"},
				{[]any{"rpush", "l", "a", "b", "c"}, "3"},
				{[]any{"lpush", "l", "z"}, "4"},
				{[]any{"lrange", "l", "0", "-1"}, "[z a b c]"},
				{[]any{"lrange", "l", "-2", "100"}, "[b c]"},
				{[]any{"lindex", "l", "-1"}, "c"},
				{[]any{"lindex", "l", "10"}, "<nil>"},
				{[]any{"llen", "l"}, "4"},
				{[]any{"lpop", "l"}, "z"},
				{[]any{"rpop", "l", "2"}, "[c b]"},
				{[]any{"lpop", "nolist", "2"}, "<nil>"},
				{[]any{"lpop", "l", "-1"}, "ERR: ERR value is out of range, must be positive"},
				{[]any{"zadd", "z", "1", "a", "2", "b"}, "2"},
				{[]any{"zadd", "z", "xx", "ch", "3", "a", "5", "c"}, "1"},
				{[]any{"zadd", "z", "nx", "xx", "1", "a"}, "ERR: ERR XX and NX options at the same time are not compatible"},
				{[]any{"zadd", "z", "abc", "a"}, "ERR: ERR value is not a valid float"},
				{[]any{"zincrby", "z", "1.5", "b"}, "3.5"},
				{[]any{"zscore", "z", "a"}, "3"},
				{[]any{"zscore", "z", "nope"}, "<nil>"},
				{[]any{"zcard", "z"}, "2"},
				{[]any{"zrange", "z", "0", "-1"}, "[a b]"},
				{[]any{"zrange", "z", "(3", "+inf", "byscore"}, "[b]"},
				{[]any{"zrem", "z", "a", "q"}, "1"},
				{[]any{"sadd", "l2", "x"}, "1"},
				{[]any{"lpush", "l2", "x"}, "ERR: WRONGTYPE Operation against a key holding the wrong kind of value"},
			},
			"server": {
				{[]any{"ping"}, "PONG"},
				{[]any{"ping", "hi"}, "hi"},
				{[]any{"echo", "x"}, "x"},
				{[]any{"select", "1"}, "OK"},
				{[]any{"select", "99"}, "ERR: ERR DB index is out of range"},
				{[]any{"select", "0"}, "OK"},
				{[]any{"nosuch", "a", "b"}, "ERR: ERR unknown command 'nosuch', with args beginning with: 'a' 'b' "},
				{[]any{"client", "setname", "bad name"}, "ERR: ERR Client names cannot contain spaces, newlines or special characters."},
				{[]any{"client", "setname", "me"}, "OK"},
				{[]any{"client", "getname"}, "me"},
				{[]any{"auth", "x"}, "ERR: ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"},
				{[]any{"config", "set", "appendfsync", "sometimes"}, "ERR: ERR CONFIG SET failed (possibly related to argument 'appendfsync') - argument(s) must be one of the following: everysec, always, no"},
				{[]any{"config", "set", "nosuch", "1"}, "ERR: ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'"},
				{[]any{"redline", "clock-offset"}, "0"},
				{[]any{"wait", "0", "0"}, "0"},
				{[]any{"hello", "4"}, "ERR: NOPROTO unsupported protocol version"},
				{[]any{"command", "getkeys", "mset", "a", "1", "b", "2"}, "[a b]"},
			},
			"dump-restore": {
				{[]any{"flushall"}, "OK"},
				{[]any{"rpush", "src", "a", "b"}, "2"},
				{[]any{"restore", "dst", "0", "garbage"}, "ERR: ERR DUMP payload version or checksum are wrong"},
			},
		}
		for name, steps := range tests {
			t.Run(fmt.Sprintf("%s/resp%d", name, proto), func(t *testing.T) {
				c.FlushAll(ctx)
				runSteps(t, c, steps)
			})
		}
	}
}

func TestReplyShapes(t *testing.T) {
	s := startServer(t)
	c3 := newClient(t, s, 3)
	c2 := newClient(t, s, 2)
	c3.HSet(ctx, "h", "a", "1", "b", "2")
	for _, c := range []*redis.Client{c2, c3} {
		m, err := c.HGetAll(ctx, "h").Result()
		if err != nil || !reflect.DeepEqual(m, map[string]string{"a": "1", "b": "2"}) {
			t.Fatalf("HGETALL: %v %v", m, err)
		}
		cfg, err := c.ConfigGet(ctx, "appendonly").Result()
		if err != nil || cfg["appendonly"] != "no" {
			t.Fatalf("CONFIG GET: %v %v", cfg, err)
		}
		c.ZAdd(ctx, "z", redis.Z{Score: 1.5, Member: "m"})
		zs, err := c.ZRangeWithScores(ctx, "z", 0, -1).Result()
		if err != nil || len(zs) != 1 || zs[0].Score != 1.5 {
			t.Fatalf("ZRANGE WITHSCORES: %v %v", zs, err)
		}
		info, err := c.Info(ctx, "keyspace", "cluster").Result()
		if err != nil || !strings.Contains(info, "db0:keys=2,expires=0,avg_ttl=0") || !strings.Contains(info, "cluster_enabled:0") {
			t.Fatalf("INFO: %q %v", info, err)
		}
		tm, err := c.Time(ctx).Result()
		if err != nil || tm.IsZero() {
			t.Fatalf("TIME: %v %v", tm, err)
		}
		cmds, err := c.Command(ctx).Result()
		if err != nil || cmds["get"] == nil || !cmds["get"].ReadOnly || cmds["set"].FirstKeyPos != 1 || cmds["mset"].StepCount != 2 {
			t.Fatalf("COMMAND: %v", err)
		}
		keys, cur, err := c.Scan(ctx, 0, "*", 100).Result()
		if err != nil || cur != 0 || len(keys) != 2 {
			t.Fatalf("SCAN: %v %d %v", keys, cur, err)
		}
	}
}

func TestDumpRestore(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s, 3)
	c.RPush(ctx, "l", "a", "b", "c")
	c.ZAdd(ctx, "z", redis.Z{Score: 2, Member: "x"})
	for _, k := range []string{"l", "z"} {
		d, err := c.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Restore(ctx, k, 0, d).Err(); err == nil || err.Error() != "BUSYKEY Target key name already exists." {
			t.Fatalf("RESTORE existing: %v", err)
		}
		if err := c.RestoreReplace(ctx, k+"2", 5*time.Second, d).Err(); err != nil {
			t.Fatal(err)
		}
		if ttl := c.PTTL(ctx, k+"2").Val(); ttl <= 0 || ttl > 5*time.Second {
			t.Fatalf("ttl %v", ttl)
		}
		bad := []byte(d)
		bad[1] ^= 0xff
		if err := c.Restore(ctx, k+"3", 0, string(bad)).Err(); err == nil {
			t.Fatal("corrupt payload accepted")
		}
	}
	if got := c.LRange(ctx, "l2", 0, -1).Val(); strings.Join(got, ",") != "a,b,c" {
		t.Fatalf("restored list %v", got)
	}
}
