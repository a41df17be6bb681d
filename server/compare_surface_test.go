package server

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/redline-dev/redline/server/resp"
)

// TestSurfaceMatchesRedis sends surfaceCases, in order on one connection
// each, to this server and to redis-server 7.0.15 over RESP2 and RESP3
// and requires byte-identical replies: the commands where later Redis
// versions answer differently (CLIENT SETINFO, CLIENT KILL MAXAGE ...),
// the help texts, script error texts and the orders of small hashes and
// sorted sets. Replies that cannot be equal are in REDIS-SUITE.md with
// their reason (random picks, SCAN cursors over a non-empty keyspace).
func TestSurfaceMatchesRedis(t *testing.T) {
	raddr := startRedisServer(t)
	s := startServer(t)
	for _, proto := range []string{"2", "3"} {
		ref, red := dialRaw(t, s.Addr().String()), dialRaw(t, raddr)
		reset(t, ref, red, proto)
		for _, line := range surfaceCases {
			argv, ok := resp.SplitArgs([]byte(line), nil)
			if !ok {
				t.Fatalf("bad quoting: %s", line)
			}
			if a, b := ref.do(t, argv), red.do(t, argv); !bytes.Equal(a, b) {
				t.Errorf("RESP%s %s:\n  ref   %q\n  redis %q", proto, line, a, b)
			}
		}
	}
}

var surfaceCases = []string{
	// CLIENT as 7.0.15: no SETINFO (7.2), no KILL MAXAGE (7.4), NO-EVICT
	// takes ON or OFF, LIST TYPE knows four types.
	"client setinfo lib-name x",
	"client setinfo lib-ver 1",
	"client no-evict maybe",
	"client no-evict on",
	"client no-evict OFF",
	"client no-evict",
	"client no-touch on",
	"client kill maxage 10",
	"client kill maxage -1",
	"client kill type foo",
	"client list type foo",
	"client list type normal id 1",
	"client list id",
	"client list id abc",
	"client list type pubsub",
	"client list type master",
	"client list type replica",
	"client list type slave",
	"client help",
	// SCRIPT and OBJECT texts.
	"script help",
	"script load",
	"script load \"return 1\" extra",
	"script load \"return 1\"",
	"script load \"return\"",
	"script flush bad",
	"object help",
	"object help extra",
	"object refcount nokey",
	"object refcount",
	"set shared 123",
	"object refcount shared",
	"set big 12345",
	"object refcount big",
	"set neg -5",
	"object refcount neg",
	"set str hello",
	"object refcount str",
	"rpush list a",
	"object refcount list",
	// SCAN cursors parse as strtoul: a sign wraps, 2^64 is out of range.
	// Over an empty keyspace both reply a zero cursor, whatever the cursor.
	"flushall",
	"scan -1",
	"scan 18446744073709551615",
	"scan -9223372036854775808",
	"scan 18446744073709551616",
	"scan -18446744073709551616",
	"scan +5",
	"scan 1.5",
	// Small hashes and sorted sets (listpack): insertion order, a field's
	// update keeps its place, a deleted field's return goes to the end.
	"hset h f1 1 f2 2 f3 3",
	"hdel h f1",
	"hset h f1 9 f2 8",
	"hincrby h f0 1",
	"hsetnx h f5 1",
	"hincrbyfloat h f3 1.5",
	"hgetall h",
	"hkeys h",
	"hvals h",
	"hrandfield h 100",
	"hrandfield h 100 withvalues",
	"hrandfield h 5 withvalues",
	"zadd z 1 a 1 b 1 c 0 d",
	"zincrby z 1 d",
	"zrandmember z 100",
	"zrandmember z 100 withscores",
	"zrandmember z 4",
	"zrange z 0 -1 withscores",
	// Scripts: errors and replies Redis 7.0.15 words so.
	"eval \"redis.sha1hex()\" 0",
	"eval \"return redis.sha1hex(1)\" 0",
	"eval \"return redis.sha1hex('')\" 0",
	"eval \"redis.call('cluster','reset','hard')\" 0",
	"eval \"redis.call('cluster','nosuch')\" 0",
	"eval \"redis.call('client')\" 0",
	"eval \"return redis.call('object','encoding','h')\" 0",
	"eval \"return redis.call('get')\" 0",
	"eval \"return redis.call('nosuch')\" 0",
	"eval \"return redis.call()\" 0",
	"eval \"local a = {} for i=1,7999 do a[i] = 1 end return redis.call('lpush', 'l2', unpack(a))\" 0",
	"eval \"return loadstring(string.dump(function() return 1 end))()\" 0",
	"eval \"return {big_number='123\\\\r\\\\n123'}\" 0",
	"eval \"return {verbatim_string={format='txt', string='abc'}}\" 0",
	"eval \"redis.setresp(3) return redis.call('debug', 'protocol', 'true')\" 0",
	"eval \"redis.setresp(3) return redis.call('debug', 'protocol', 'false')\" 0",
	"eval \"redis.setresp(3) return redis.call('debug', 'protocol', 'verbatim')\" 0",
	"eval \"redis.setresp(3) return redis.call('debug', 'protocol', 'bignum')\" 0",
	"eval \"redis.setresp(3) return redis.call('debug', 'protocol', 'attrib')\" 0",
	"eval \"return redis.acl_check_cmd('set','xx',1)\" 0",
	"eval \"return redis.acl_check_cmd('invalid-cmd','arg')\" 0",
	"eval \"return redis.acl_check_cmd('cluster','nosuch')\" 0",
	"eval \"return redis.acl_check_cmd()\" 0",
	"debug set-disable-deny-scripts 1",
	"eval \"redis.setresp(3) return redis.call('debug', 'protocol', 'true')\" 0",
	"eval \"redis.setresp(3) return redis.call('debug', 'protocol', 'false')\" 0",
	"eval \"redis.setresp(3) return redis.call('debug', 'protocol', 'verbatim')\" 0",
	"eval \"redis.setresp(3) return redis.call('debug', 'protocol', 'bignum')\" 0",
	"eval \"redis.setresp(3) return redis.call('debug', 'protocol', 'attrib')\" 0",
	"eval \"redis.setresp(2) return redis.call('debug', 'protocol', 'false')\" 0",
	"debug set-disable-deny-scripts 0",
	"eval \"redis.call('set', 'k', 'v', 'px', 1) redis.call('debug', 'sleep', 0.01) return redis.call('exists', 'k')\" 0",
	// Error stats of scripts: an error is counted where it happens (a
	// refused or failing command inside the script), the script's reply
	// of it not again; the script's command counts as failed.
	"config resetstat",
	"config set maxmemory 1",
	"eval \"return redis.call('set','x','y')\" 1 x",
	"eval \"local t = redis.pcall('set','x','y') return 1\" 1 x",
	"eval \"return redis.pcall('set','x','y')\" 1 x",
	"eval \"return redis.call('get','x','y')\" 1 x",
	"config set maxmemory 0",
	"set x 1",
	"eval \"return redis.call('hget','x','y')\" 1 x",
	"eval \"return {err='My error'}\" 0",
	"info errorstats",
	// Redis's PRNG (rand.c's drand48) behind math.random, seeded from a
	// numeric string as luaL_checkint takes it.
	"eval \"math.randomseed(ARGV[1]) return {tostring(math.random()), math.random(10), math.random(5, 100)}\" 0 10",
	"eval \"return math.random(0)\" 0",
	"eval \"return math.random(3, 2)\" 0",
	// Lua 5.1's number formatting where gopher-lua's is reachable.
	"eval \"return tostring(1e15)\" 0",
	"eval \"return tostring(2^63)\" 0",
	"eval \"return tostring(-0)\" 0",
	"eval \"return tostring(0.1)\" 0",
	"eval \"return tostring(1/3)\" 0",
	"eval \"return tostring(-1/0)\" 0",
	"eval \"return string.format('%q', 'a\\\\0b\\\\n\\\\r\\\\\\\"\\\\\\\\')\" 0",
	"eval \"return string.format('%q|%s|%d|%5.2f|%x|%%|%-5s|%s', 1/3, 1e15, 3.7, 2.5, 255, 'ab', 2^63)\" 0",
	"eval \"return string.format('%s %s', 1)\" 0",
	"eval \"return string.format('%q', {})\" 0",
}

// commandsNotIn70 are commands and subcommands the reference server has
// and Redis 7.0.15 has not, each with its reason; COMMAND COUNT, INFO and
// DOCS list them, every other entry is Redis's.
var commandsNotIn70 = map[string]string{
	"redline":            "the reference server's own admin command (clock offset for the harness's clock nemesis)",
	"cluster|migration":  "Redis 8's atomic slot migration, which the harness's migrate nemesis can drive",
	"cluster|slot-stats": "Redis 8's per-slot statistics, which the harness reads for hot-slot reports",
	"cluster|syncslots":  "Redis 8's peer command of atomic slot migration (between nodes)",
}

// commandInfoTolerated are COMMAND INFO entries left out, with reasons.
var commandInfoTolerated = map[string]string{
	// Redis 7.0's OBJECT container has no flags and no keys (its
	// subcommands have them); the reference server's container carries
	// readonly and key 2, because routing (MOVED, READONLY replicas) reads
	// the container's spec, not the subcommand's.
	"object": "container flags and keys: routing reads the container's spec",
}

// commandsNotImplemented are Redis 7.0.15's commands the reference server
// lacks (README); COMMAND leaves them out.
var commandsNotImplemented = map[string]bool{"module": true, "failover": true, "script|debug": true}

// TestCommandMetadataMatchesRedis: COMMAND COUNT, and COMMAND INFO and
// COMMAND DOCS of every command and subcommand redis-server 7.0.15 lists,
// equal Redis's over RESP2 and RESP3. Two things are left out, with
// their reasons: the ACL categories (compared by TestCommandListFilter-
// MatchesRedis and the ACL work) and the order of a container's
// subcommands, which Redis takes from a command dict hashed with a seed
// drawn at start (it changes from one redis-server process to the next),
// so subcommands are compared as sets.
func TestCommandMetadataMatchesRedis(t *testing.T) {
	raddr := startRedisServer(t)
	s := startServer(t)
	for _, proto := range []string{"2", "3"} {
		ref, red := dialRaw(t, s.Addr().String()), dialRaw(t, raddr)
		reset(t, ref, red, proto)
		names := func(c *rawClient) map[string]bool {
			v := decodeReply(t, c.do(t, rawCmd("COMMAND", "LIST")))
			out := map[string]bool{}
			for _, e := range v.Elems {
				out[string(e.Str)] = true
			}
			return out
		}
		refNames, redNames := names(ref), names(red)
		var extraTop, missingTop int64
		for n := range refNames {
			if !redNames[n] && commandsNotIn70[n] == "" {
				t.Errorf("RESP%s: COMMAND LIST has %q, which Redis 7.0.15 has not and commandsNotIn70 does not explain", proto, n)
			}
			if !redNames[n] && !strings.Contains(n, "|") {
				extraTop++
			}
		}
		for n := range redNames {
			if !refNames[n] && !commandsNotImplemented[n] && !commandsNotImplemented[strings.Split(n, "|")[0]] {
				t.Errorf("RESP%s: COMMAND LIST lacks Redis's %q, which commandsNotImplemented does not name", proto, n)
			}
			if !refNames[n] && !strings.Contains(n, "|") {
				missingTop++
			}
		}
		for n := range commandsNotImplemented {
			if refNames[n] {
				t.Errorf("RESP%s: %q is implemented now: take it off commandsNotImplemented", proto, n)
			}
		}
		top := func(m map[string]bool) (n int64) {
			for name := range m {
				if !strings.Contains(name, "|") {
					n++
				}
			}
			return n
		}
		wantCount := top(redNames) - missingTop + extraTop
		if got := decodeReply(t, ref.do(t, rawCmd("COMMAND", "COUNT"))).Int; got != wantCount || top(refNames) != wantCount {
			t.Errorf("RESP%s: COMMAND COUNT %d (listed %d), want Redis's %d without the unimplemented and with the explained extra ones: %d",
				proto, got, top(refNames), top(redNames), wantCount)
		}
		var sorted []string
		for n := range redNames {
			sorted = append(sorted, n)
		}
		sort.Strings(sorted)
		for _, n := range sorted {
			if commandsNotImplemented[n] || commandsNotImplemented[strings.Split(n, "|")[0]] {
				continue
			}
			a := normalizeCommandInfo(decodeReply(t, ref.do(t, rawCmd("COMMAND", "INFO", n))))
			b := normalizeCommandInfo(decodeReply(t, red.do(t, rawCmd("COMMAND", "INFO", n))))
			if !reflect.DeepEqual(a, b) && commandInfoTolerated[n] == "" {
				t.Errorf("RESP%s COMMAND INFO %s:\n  ref   %s\n  redis %s", proto, n, showValue(a), showValue(b))
			}
			a = normalizeCommandDocs(decodeReply(t, ref.do(t, rawCmd("COMMAND", "DOCS", n))))
			b = normalizeCommandDocs(decodeReply(t, red.do(t, rawCmd("COMMAND", "DOCS", n))))
			if !reflect.DeepEqual(a, b) {
				t.Errorf("RESP%s COMMAND DOCS %s:\n  ref   %s\n  redis %s", proto, n, showValue(a), showValue(b))
			}
		}
	}
}

func decodeReply(t *testing.T, b []byte) resp.Value {
	t.Helper()
	v, _, err := resp.ReadReply(b)
	if err != nil {
		t.Fatalf("%q: %v", b, err)
	}
	return v
}

// normalizeCommandInfo drops the ACL categories (field 6) of a COMMAND
// INFO reply and its subcommands', the commands Redis 7.0.15 does not
// have, and sorts the subcommands by name.
func normalizeCommandInfo(v resp.Value) resp.Value {
	var entry func(e resp.Value) resp.Value
	entry = func(e resp.Value) resp.Value {
		if len(e.Elems) < 10 {
			return e
		}
		e.Elems = append([]resp.Value(nil), e.Elems...)
		e.Elems[6] = resp.Value{}
		subs := e.Elems[9]
		kept := []resp.Value{}
		for _, sc := range subs.Elems {
			if name := string(sc.Elems[0].Str); commandsNotIn70[name] != "" || commandsNotImplemented[name] {
				continue
			}
			kept = append(kept, entry(sc))
		}
		sort.Slice(kept, func(i, j int) bool { return string(kept[i].Elems[0].Str) < string(kept[j].Elems[0].Str) })
		subs.Elems = kept
		e.Elems[9] = subs
		return e
	}
	for i, e := range v.Elems {
		v.Elems[i] = entry(e)
	}
	return v
}

// normalizeCommandDocs sorts the subcommands map of a COMMAND DOCS reply
// by name and drops the commands Redis 7.0.15 does not have.
func normalizeCommandDocs(v resp.Value) resp.Value {
	var doc func(d resp.Value) resp.Value
	doc = func(d resp.Value) resp.Value {
		if len(d.Elems) == 0 || d.Kind == resp.KindBulk {
			return d
		}
		d.Elems = append([]resp.Value(nil), d.Elems...)
		for i := 0; i+1 < len(d.Elems); i += 2 {
			if string(d.Elems[i].Str) != "subcommands" {
				continue
			}
			subs := d.Elems[i+1]
			type pair struct{ k, v resp.Value }
			var ps []pair
			for j := 0; j+1 < len(subs.Elems); j += 2 {
				if name := string(subs.Elems[j].Str); commandsNotIn70[name] == "" && !commandsNotImplemented[name] {
					ps = append(ps, pair{subs.Elems[j], doc(subs.Elems[j+1])})
				}
			}
			sort.Slice(ps, func(a, b int) bool { return string(ps[a].k.Str) < string(ps[b].k.Str) })
			subs.Elems = nil
			for _, p := range ps {
				subs.Elems = append(subs.Elems, p.k, p.v)
			}
			d.Elems[i+1] = subs
		}
		return d
	}
	for i := 1; i < len(v.Elems); i += 2 {
		v.Elems[i] = doc(v.Elems[i])
	}
	return v
}

// showValue prints a decoded reply compactly for a failure message.
func showValue(v resp.Value) string {
	switch v.Kind {
	case resp.KindArray, resp.KindSet, resp.KindMap, resp.KindPush:
		parts := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			parts[i] = showValue(e)
		}
		return string(v.Kind) + "[" + strings.Join(parts, " ") + "]"
	case resp.KindInt, resp.KindBool:
		return fmt.Sprint(v.Int)
	case 0:
		return "-"
	default:
		return fmt.Sprintf("%q", v.Str)
	}
}
