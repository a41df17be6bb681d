package server

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestDifferentialSequences sends seeded random command sequences over a
// small key space to this server and to a real redis-server and requires
// byte-identical replies, over RESP2 and RESP3. A divergence is shrunk to
// the fewest commands that still diverge before it is reported, so the
// failure reads as a reproducer.
//
// The generator sticks to replies Redis makes deterministic: set members
// are integers (an intset replies in numeric order) and hashes stay small
// (a listpack replies in insertion order); random, time and server-state
// commands are out (see TestCompareWithRedis for hand-written cases).
func TestDifferentialSequences(t *testing.T) {
	raddr := startRedisServer(t)
	s := startServer(t)
	const seeds, length = 40, 300
	for seed := uint64(1); seed <= seeds; seed++ {
		for _, proto := range []string{"2", "3"} {
			seq := randomSequence(rand.New(rand.NewPCG(seed, 15)), length)
			ref := dialRaw(t, s.Addr().String())
			red := dialRaw(t, raddr)
			at := firstDivergence(t, ref, red, proto, seq)
			if at < 0 {
				continue
			}
			min := shrinkDivergence(t, ref, red, proto, seq[:at+1])
			var b strings.Builder
			for _, argv := range min {
				fmt.Fprintf(&b, "\n  %s", quoteArgv(argv))
			}
			a, r := replay(t, ref, red, proto, min)
			t.Errorf("seed %d RESP%s: %d commands diverge, shrunk to %d:%s\n  ref   %q\n  redis %q",
				seed, proto, at+1, len(min), b.String(), a, r)
		}
	}
}

// firstDivergence runs seq on both servers from empty and returns the index
// of the first command whose replies differ, or -1.
func firstDivergence(t *testing.T, ref, red *rawClient, proto string, seq [][][]byte) int {
	reset(t, ref, red, proto)
	for i, argv := range seq {
		if !bytes.Equal(ref.do(t, argv), red.do(t, argv)) {
			return i
		}
	}
	return -1
}

// replay runs seq from empty and returns the replies to its last command.
func replay(t *testing.T, ref, red *rawClient, proto string, seq [][][]byte) ([]byte, []byte) {
	reset(t, ref, red, proto)
	var a, b []byte
	for _, argv := range seq {
		a, b = ref.do(t, argv), red.do(t, argv)
	}
	return a, b
}

func reset(t *testing.T, ref, red *rawClient, proto string) {
	for _, c := range []*rawClient{ref, red} {
		c.do(t, rawCmd("FLUSHALL"))
		c.do(t, rawCmd("HELLO", proto))
	}
}

// shrinkDivergence drops every command whose removal keeps the last
// command diverging (one greedy pass from the front, then repeated until
// nothing more can go).
func shrinkDivergence(t *testing.T, ref, red *rawClient, proto string, seq [][][]byte) [][][]byte {
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(seq)-1; i++ {
			try := append(append([][][]byte{}, seq[:i]...), seq[i+1:]...)
			if a, b := replay(t, ref, red, proto, try); !bytes.Equal(a, b) {
				seq, changed = try, true
				i--
			}
		}
	}
	return seq
}

func quoteArgv(argv [][]byte) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = fmt.Sprintf("%q", a)
	}
	return strings.Join(parts, " ")
}

// sequenceTemplates are the commands the generator draws from. Placeholders:
// {k} key, {v} string value, {n} small integer, {i} index, {f} hash field,
// {m} integer set member, {z} zset member, {s} score, {sb} score bound,
// {lb} lex bound, {fl} float.
var sequenceTemplates = []string{
	"SET {k} {v}", "SET {k} {n} NX", "SET {k} {v} XX GET", "GET {k}", "APPEND {k} {v}", "INCR {k}",
	"INCRBY {k} {n}", "DECR {k}", "INCRBYFLOAT {k} {fl}", "STRLEN {k}", "GETRANGE {k} {i} {i}",
	"SETRANGE {k} {n} {v}", "GETDEL {k}", "GETSET {k} {v}", "MSET {k} {v} {k} {n}", "MGET {k} {k}",
	"SETNX {k} {v}", "LCS {k} {k}", "LCS {k} {k} IDX WITHMATCHLEN",
	"DEL {k}", "DEL {k} {k}", "EXISTS {k} {k}", "TYPE {k}", "RENAME {k} {k}", "RENAMENX {k} {k}",
	"COPY {k} {k}", "COPY {k} {k} REPLACE", "PERSIST {k}", "OBJECT ENCODING {k}", "DBSIZE",
	"HSET {k} {f} {v}", "HSET {k} {f} {n} {f} {v}", "HDEL {k} {f}", "HGET {k} {f}", "HMGET {k} {f} {f}",
	"HGETALL {k}", "HKEYS {k}", "HVALS {k}", "HLEN {k}", "HINCRBY {k} {f} {n}", "HINCRBYFLOAT {k} {f} {fl}",
	"HSETNX {k} {f} {v}", "HEXISTS {k} {f}", "HSTRLEN {k} {f}",
	"LPUSH {k} {v}", "RPUSH {k} {v} {n}", "LPOP {k}", "RPOP {k} {n}", "LRANGE {k} {i} {i}", "LINDEX {k} {i}",
	"LSET {k} {i} {v}", "LREM {k} {i} {v}", "LTRIM {k} {i} {i}", "LINSERT {k} BEFORE {v} {n}", "LPOS {k} {v}",
	"LPOS {k} {v} RANK {i} COUNT 0", "LMOVE {k} {k} LEFT RIGHT", "RPOPLPUSH {k} {k}", "LLEN {k}", "LPUSHX {k} {v}",
	"SADD {k} {m}", "SADD {k} {m} {m}", "SREM {k} {m}", "SMEMBERS {k}", "SISMEMBER {k} {m}",
	"SMISMEMBER {k} {m} {m}", "SCARD {k}", "SINTER {k} {k}", "SUNION {k} {k}", "SDIFF {k} {k}",
	"SINTERSTORE {k} {k} {k}", "SUNIONSTORE {k} {k} {k}", "SDIFFSTORE {k} {k} {k}", "SMOVE {k} {k} {m}",
	"SINTERCARD 2 {k} {k}",
	"ZADD {k} {s} {z}", "ZADD {k} NX {s} {z} {s} {z}", "ZADD {k} XX CH {s} {z}", "ZADD {k} GT {s} {z}",
	"ZADD {k} INCR {s} {z}", "ZINCRBY {k} {s} {z}", "ZSCORE {k} {z}", "ZMSCORE {k} {z} {z}",
	"ZRANGE {k} {i} {i}", "ZRANGE {k} {i} {i} WITHSCORES", "ZRANGE {k} {sb} {sb} BYSCORE",
	"ZRANGE {k} {sb} {sb} BYSCORE REV LIMIT 0 2", "ZRANGE {k} {lb} {lb} BYLEX", "ZRANGEBYSCORE {k} {sb} {sb} WITHSCORES",
	"ZREVRANGE {k} {i} {i}", "ZRANGEBYLEX {k} {lb} {lb}", "ZCOUNT {k} {sb} {sb}", "ZLEXCOUNT {k} {lb} {lb}",
	"ZCARD {k}", "ZREM {k} {z}", "ZRANK {k} {z}", "ZREVRANK {k} {z}", "ZPOPMIN {k}", "ZPOPMAX {k} {n}",
	"ZREMRANGEBYRANK {k} {i} {i}", "ZREMRANGEBYSCORE {k} {sb} {sb}", "ZREMRANGEBYLEX {k} {lb} {lb}",
	"ZUNION 2 {k} {k} WITHSCORES", "ZINTER 2 {k} {k} AGGREGATE MAX WITHSCORES", "ZDIFF 2 {k} {k}",
	"ZUNIONSTORE {k} 2 {k} {k} WEIGHTS 2 {n}", "ZINTERSTORE {k} 2 {k} {k}", "ZDIFFSTORE {k} 2 {k} {k}",
	"ZRANGESTORE {k} {k} {i} {i}", "ZINTERCARD 2 {k} {k}",
	"SETBIT {k} {n} 1", "GETBIT {k} {n}", "BITCOUNT {k}", "BITCOUNT {k} {i} {i} BIT", "BITPOS {k} 0",
	"BITPOS {k} 1 {i}", "BITOP OR {k} {k} {k}", "BITOP NOT {k} {k}",
}

func randomSequence(r *rand.Rand, n int) [][][]byte {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	fill := map[string]func() string{
		"k":  func() string { return pick("a", "b", "c") },
		"v":  func() string { return pick("x", "yy", "1", "", "x y") },
		"n":  func() string { return fmt.Sprint(r.IntN(7) - 2) },
		"i":  func() string { return fmt.Sprint(r.IntN(9) - 4) },
		"f":  func() string { return pick("f1", "f2", "f3") },
		"m":  func() string { return fmt.Sprint(r.IntN(6) - 1) },
		"z":  func() string { return pick("m1", "m2", "m3", "m4") },
		"s":  func() string { return pick("0", "1", "2.5", "-1", "inf", "3") },
		"sb": func() string { return pick("-inf", "+inf", "0", "(1", "2.5", "(3") },
		"lb": func() string { return pick("-", "+", "[m2", "(m3", "[m1") },
		"fl": func() string { return pick("0.1", "1.5", "-2", "1e3", "3") },
	}
	seq := make([][][]byte, n)
	for i := range seq {
		tmpl := sequenceTemplates[r.IntN(len(sequenceTemplates))]
		words := strings.Fields(tmpl)
		argv := make([][]byte, len(words))
		for j, w := range words {
			if strings.HasPrefix(w, "{") {
				w = fill[strings.Trim(w, "{}")]()
			}
			argv[j] = []byte(w)
		}
		seq[i] = argv
	}
	return seq
}
