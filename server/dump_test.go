package server

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/server/rdb"

	"github.com/redis/go-redis/v9"
)

// dumpCase builds one value (the same commands on both servers); exact
// says whether redis-server's DUMP bytes must be reproduced exactly (not
// for values in a hash table, whose order is Redis's own).
type dumpCase struct {
	key   string
	build [][]any
	exact bool
}

func dumpCases() []dumpCase {
	var cs []dumpCase
	add := func(key string, exact bool, cmds ...[]any) {
		cs = append(cs, dumpCase{key, cmds, exact})
	}
	rep := strings.Repeat
	for i, v := range []string{"", "v", "0", "-1", "127", "128", "-128", "-129", "32767", "-32768", "32768", "2147483647",
		"-2147483648", "2147483648", "-2147483649", "9223372036854775807", "-9223372036854775808", "12345678901",
		"007", "-0", "+1", "1.5", " 1", rep("a", 20), rep("a", 21), rep("ab", 30), "abcdefghijklmnopqrstuvwxyz0123456789",
		rep("hello world ", 50), rep("x", 5000), rep("0123456789abcdef", 1000)} {
		add(fmt.Sprintf("s%d", i), true, []any{"SET", fmt.Sprintf("s%d", i), v})
	}
	add("sapp", true, []any{"SET", "sapp", "12"}, []any{"APPEND", "sapp", "3"})
	add("sflt", true, []any{"SET", "sflt", "1"}, []any{"INCRBYFLOAT", "sflt", "1.5"})
	add("sincr", true, []any{"INCRBY", "sincr", "5000000000"})
	add("lsmall", true, []any{"RPUSH", "lsmall", "a", "1", "-5", "5000", "-5000", "70000", "-9000000", "3000000000", "x" + rep("y", 70), rep("z", 5000)})
	add("llpush", true, []any{"LPUSH", "llpush", "a", "b", "c", "1", "2"})
	var big []any
	for i := 0; i < 3000; i++ {
		big = append(big, fmt.Sprintf("element-%d", i))
	}
	add("lbig", true, append([]any{"RPUSH", "lbig"}, big...))
	add("lbig2", true, append([]any{"RPUSH", "lbig2"}, rep("q", 3000), rep("r", 3000), rep("s", 3000), "t"))
	add("lint", true, []any{"RPUSH", "lint", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22})
	add("iset16", true, []any{"SADD", "iset16", 3, 1, 2, -7})
	add("iset32", true, []any{"SADD", "iset32", 1, 70000})
	add("iset64", true, []any{"SADD", "iset64", 1, 5000000000, -3})
	add("isetshrunk", true, []any{"SADD", "isetshrunk", 1, 2, 5000000000}, []any{"SREM", "isetshrunk", 5000000000})
	var ints []any
	for i := 0; i < 200; i++ {
		ints = append(ints, i*7)
	}
	add("isetlong", true, append([]any{"SADD", "isetlong"}, ints...))
	add("sethash", false, []any{"SADD", "sethash", "a", "b", 1})
	add("hsmall", true, []any{"HSET", "hsmall", "f1", "v1", "n", 42, "neg", -70000, "f1", "v2"}, []any{"HSET", "hsmall", "big", 1 << 40})
	add("hdel", true, []any{"HSET", "hdel", "a", 1, "b", 2, "c", 3}, []any{"HDEL", "hdel", "b"})
	add("hlong", true, []any{"HSET", "hlong", "k", rep("v", 64), "k2", rep("abc", 21)})
	add("hhash", false, []any{"HSET", "hhash", "k", rep("v", 65), "a", "b"})
	add("zsmall", true, []any{"ZADD", "zsmall", 1, "a", 1.5, "b", -2, "c", 1e20, "d", "-inf", "e", "+inf", "f", 0, "g", 3.14159, "h", 1e-5, "i", 4611686018427387904.0, "j"})
	add("zsame", true, []any{"ZADD", "zsame", 1, "b", 1, "a", 1, "c"}, []any{"ZINCRBY", "zsame", 0.25, "a"})
	add("zskip", true, []any{"ZADD", "zskip", 1, "a", 2, rep("m", 65), 3.5, "c", -1, "d"})
	var zs []any
	for i := 0; i < 200; i++ {
		zs = append(zs, i%17, fmt.Sprintf("m%d", i))
	}
	add("zbig", true, append([]any{"ZADD", "zbig"}, zs...))
	return cs
}

// TestDumpMatchesRedis builds the same values on this server and on a real
// redis-server and requires byte-identical DUMP payloads where Redis's
// encoding is deterministic; every payload of each server RESTOREs on the
// other to the same value.
func TestDumpMatchesRedis(t *testing.T) {
	raddr := startRedisServer(t)
	s := startServer(t)
	ref := newClient(t, s, 2)
	red := redis.NewClient(&redis.Options{Addr: raddr, DisableIdentity: true, MaxRetries: -1, ReadTimeout: 10 * time.Second})
	t.Cleanup(func() { red.Close() })
	for _, c := range dumpCases() {
		for _, cl := range []*redis.Client{ref, red} {
			for _, cmd := range c.build {
				if err := cl.Do(ctx, cmd...).Err(); err != nil {
					t.Fatalf("%s: %v: %v", c.key, cmd, err)
				}
			}
		}
		a, err1 := ref.Dump(ctx, c.key).Result()
		b, err2 := red.Dump(ctx, c.key).Result()
		if err1 != nil || err2 != nil {
			t.Fatalf("DUMP %s: %v, %v", c.key, err1, err2)
		}
		if c.exact && a != b {
			t.Errorf("DUMP %s:\n  ref   %q\n  redis %q", c.key, a, b)
		}
		// Cross-restore and compare the values.
		if err := ref.Restore(ctx, c.key+":r", 0, b).Err(); err != nil {
			t.Errorf("RESTORE of redis's DUMP %s into ref: %v", c.key, err)
			continue
		}
		if err := red.Restore(ctx, c.key+":r", 0, a).Err(); err != nil {
			t.Errorf("RESTORE of ref's DUMP %s into redis: %v", c.key, err)
			continue
		}
		want := valueOf(t, red, c.key)
		for _, v := range []string{valueOf(t, ref, c.key+":r"), valueOf(t, red, c.key+":r"), valueOf(t, ref, c.key)} {
			if v != want {
				t.Errorf("%s after RESTORE: %q, want %q", c.key, v, want)
			}
		}
		if e1, e2 := ref.ObjectEncoding(ctx, c.key+":r").Val(), red.ObjectEncoding(ctx, c.key+":r").Val(); e1 != e2 {
			t.Errorf("%s: OBJECT ENCODING after RESTORE %q, redis %q", c.key, e1, e2)
		}
		// Redis's payload, restored here, dumps back to the same bytes.
		if c.exact {
			if got := ref.Dump(ctx, c.key+":r").Val(); got != b {
				t.Errorf("DUMP of restored %s differs from redis's payload", c.key)
			}
		}
	}
}

// valueOf renders a key's type and contents in a canonical order.
func valueOf(t *testing.T, c *redis.Client, key string) string {
	t.Helper()
	typ := c.Type(ctx, key).Val()
	var parts []string
	switch typ {
	case "string":
		parts = []string{c.Get(ctx, key).Val()}
	case "list":
		parts = c.LRange(ctx, key, 0, -1).Val()
	case "set":
		parts = c.SMembers(ctx, key).Val()
		slices.Sort(parts)
	case "hash":
		for f, v := range c.HGetAll(ctx, key).Val() {
			parts = append(parts, f+"="+v)
		}
		slices.Sort(parts)
	case "zset":
		for _, z := range c.ZRangeWithScores(ctx, key, 0, -1).Val() {
			parts = append(parts, fmt.Sprintf("%v=%v", z.Member, z.Score))
		}
	}
	return typ + ":" + strings.Join(parts, ",")
}

// ziplist assembles a ziplist blob (Redis before 7.0) for tests.
func ziplist(entries ...string) []byte {
	var body []byte
	prev, last := 0, 10
	for _, e := range entries {
		var ent []byte
		if prev < 254 {
			ent = append(ent, byte(prev))
		} else {
			ent = append(ent, 254, byte(prev), byte(prev>>8), byte(prev>>16), byte(prev>>24))
		}
		if v, err := strconv.ParseInt(e, 10, 64); err == nil && strconv.FormatInt(v, 10) == e {
			switch {
			case v >= 0 && v <= 12:
				ent = append(ent, 0xF1+byte(v))
			case v >= -128 && v <= 127:
				ent = append(ent, 0xFE, byte(v))
			case v >= -32768 && v <= 32767:
				ent = append(ent, 0xC0, byte(v), byte(v>>8))
			default:
				ent = binary.LittleEndian.AppendUint64(append(ent, 0xE0), uint64(v))
			}
		} else if len(e) < 64 {
			ent = append(append(ent, byte(len(e))), e...)
		} else {
			ent = append(append(ent, 0x40|byte(len(e)>>8), byte(len(e))), e...)
		}
		last = 10 + len(body)
		body = append(body, ent...)
		prev = len(ent)
	}
	b := binary.LittleEndian.AppendUint32(nil, uint32(10+len(body)+1))
	b = binary.LittleEndian.AppendUint32(b, uint32(last))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(entries)))
	return append(append(b, body...), 0xFF)
}

func rdbStr(b []byte, s string) []byte { return rdb.AppendString(b, []byte(s), false) }

// TestRestoreOldEncodingsAndCorruptPayloads sends hand-built payloads in
// the encodings of older Redis versions (which Redis 7.0 still loads) and
// corrupt ones to both servers: the values, encodings and re-DUMPed bytes,
// or the errors, must be the same.
func TestRestoreOldEncodingsAndCorruptPayloads(t *testing.T) {
	raddr := startRedisServer(t)
	s := startServer(t)
	ref := newClient(t, s, 2)
	red := redis.NewClient(&redis.Options{Addr: raddr, DisableIdentity: true, MaxRetries: -1, ReadTimeout: 10 * time.Second})
	t.Cleanup(func() { red.Close() })
	blob := func(typ byte, b []byte) []byte { return rdb.AppendString([]byte{typ}, b, false) }
	zipmap := []byte{2, 1, 'f', 1, 0, 'v', 2, 'g', 'h', 3, 2, 'x', 'y', 'z', 0, 0, 0xFF}
	linked := rdbStr(rdbStr(rdbStr(rdb.AppendLen([]byte{rdb.TypeList}, 3), "a"), "12"), strings.Repeat("long", 10))
	set1 := rdbStr(rdbStr(rdb.AppendLen([]byte{rdb.TypeSet}, 2), "5"), "-70000")
	set2 := rdbStr(rdbStr(rdb.AppendLen([]byte{rdb.TypeSet}, 2), "5"), "a")
	oldz := append(rdbStr(rdb.AppendLen([]byte{rdb.TypeZSet}, 2), "a"), 3, '1', '.', '5')
	oldz = append(rdbStr(oldz, "b"), 254)
	hash := rdbStr(rdbStr(rdbStr(rdbStr(rdb.AppendLen([]byte{rdb.TypeHash}, 2), "f"), "1"), "g"), "v")
	hashBig := rdbStr(rdbStr(rdb.AppendLen([]byte{rdb.TypeHash}, 1), "f"), strings.Repeat("v", 65))
	ql := rdb.AppendLen([]byte{rdb.TypeListQuicklist}, 2)
	ql = rdb.AppendString(ql, ziplist("a", "b", "7"), false)
	ql = rdb.AppendString(ql, ziplist("300", strings.Repeat("z", 100), "-5", "100000"), false)
	good := map[string][]byte{
		"listzl":  blob(rdb.TypeListZiplist, ziplist("a", "1", "300", "hello", "-100000000000")),
		"ql":      ql,
		"hashzl":  blob(rdb.TypeHashZiplist, ziplist("f", "v", "f2", "7")),
		"zsetzl":  blob(rdb.TypeZSetZiplist, ziplist("c", "-3", "a", "1", "b", "2.5")),
		"zipmap":  blob(rdb.TypeHashZipmap, zipmap),
		"linked":  linked,
		"set1":    set1,
		"set2":    set2,
		"oldz":    oldz,
		"hash":    hash,
		"hashbig": hashBig,
		"lzf":     rdb.AppendString([]byte{rdb.TypeString}, []byte(strings.Repeat("abc", 40)), true),
	}
	for name, body := range good {
		p := string(rdb.Seal(body))
		for _, cl := range []*redis.Client{ref, red} {
			if err := cl.Restore(ctx, name, 0, p).Err(); err != nil {
				t.Errorf("RESTORE %s: %v", name, err)
			}
		}
		if a, b := valueOf(t, ref, name), valueOf(t, red, name); a != b {
			t.Errorf("%s: %q, redis %q", name, a, b)
		}
		if a, b := ref.ObjectEncoding(ctx, name).Val(), red.ObjectEncoding(ctx, name).Val(); a != b {
			t.Errorf("%s: OBJECT ENCODING %q, redis %q", name, a, b)
		}
		// hashbig and set2 are in hash tables; ql keeps its nodes in Redis, where
		// we re-split the list as RPUSH would.
		if a, b := ref.Dump(ctx, name).Val(), red.Dump(ctx, name).Val(); a != b && name != "hashbig" && name != "ql" && name != "set2" {
			t.Errorf("%s: DUMP after RESTORE\n  ref   %q\n  redis %q", name, a, b)
		}
	}
	sealed := func(b []byte) []byte { return rdb.Seal(b) }
	wrongCRC := sealed([]byte{0, 1, 'x'})
	wrongCRC[len(wrongCRC)-1] ^= 1
	v11 := append([]byte{0, 1, 'x', 11, 0}, 0, 0, 0, 0, 0, 0, 0, 0)
	binary.LittleEndian.PutUint64(v11[5:], rdb.CRC64(0, v11[:5]))
	emptyLP := rdb.NewListpack().Bytes()
	bad := map[string][]byte{
		"short":     []byte("x"),
		"crc":       wrongCRC,
		"version":   v11,
		"truncated": sealed([]byte{0, 5, 'a', 'b'}),
		"type":      sealed([]byte{200, 1, 'x'}),
		"emptyhash": sealed(blob(rdb.TypeHashListpack, emptyLP)),
		"emptylist": sealed(rdb.AppendLen([]byte{rdb.TypeListQuicklist2}, 0)),
		"emptyset":  sealed(rdb.AppendLen([]byte{rdb.TypeSet}, 0)),
		"badlp":     sealed(blob(rdb.TypeHashListpack, []byte{1, 2, 3, 4, 5, 6, 7, 8})),
		"badintset": sealed(blob(rdb.TypeSetIntset, []byte{3, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0})),
		"badzl":     sealed(blob(rdb.TypeListZiplist, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})),
		"badlzf":    sealed([]byte{0, 0xC3, 2, 10, 0xFF, 0xFF}),
		"dupset":    sealed(rdbStr(rdbStr(rdb.AppendLen([]byte{rdb.TypeSet}, 2), "a"), "a")),
		"container": sealed(rdb.AppendString(rdb.AppendLen(rdb.AppendLen([]byte{rdb.TypeListQuicklist2}, 1), 3), []byte("x"), false)),
		"nanzset":   sealed(append(rdbStr(rdb.AppendLen([]byte{rdb.TypeZSet}, 1), "a"), 253)),
		"badlen":    sealed([]byte{0, 0x82, 1, 1}),
		"bodyonly":  []byte{0, 1, 'x'},
	}
	for name, p := range bad {
		var errs []string
		for _, cl := range []*redis.Client{ref, red} {
			err := cl.Restore(ctx, "bad:"+name, 0, string(p)).Err()
			errs = append(errs, fmt.Sprint(err))
		}
		if errs[0] != errs[1] {
			t.Errorf("RESTORE %s: %s, redis %s", name, errs[0], errs[1])
		}
	}
}

// TestMigrateBetweenReferenceAndRedis: MIGRATE moves keys both ways
// between this server and a real redis-server (the payload is Redis's).
func TestMigrateBetweenReferenceAndRedis(t *testing.T) {
	raddr := startRedisServer(t)
	s := startExtServer(t)
	ref := newClient(t, s, 2)
	red := redis.NewClient(&redis.Options{Addr: raddr, DisableIdentity: true, MaxRetries: -1, ReadTimeout: 10 * time.Second})
	t.Cleanup(func() { red.Close() })
	host, port, _ := strings.Cut(raddr, ":")
	refHost, refPort, _ := strings.Cut(s.Addr().String(), ":")
	ref.RPush(ctx, "l", "a", 1, strings.Repeat("x", 100))
	ref.HSet(ctx, "h", "f", "v")
	ref.ZAdd(ctx, "z", redis.Z{Score: 1.5, Member: "m"})
	ref.Set(ctx, "s", "12345", time.Hour)
	if err := ref.Do(ctx, "MIGRATE", host, port, "", 0, 5000, "KEYS", "l", "h", "z", "s").Err(); err != nil {
		t.Fatalf("MIGRATE to redis: %v", err)
	}
	if n := ref.Exists(ctx, "l", "h", "z", "s").Val(); n != 0 {
		t.Fatalf("%d keys left behind", n)
	}
	if ttl := red.TTL(ctx, "s").Val(); ttl <= 0 {
		t.Errorf("TTL on redis %v", ttl)
	}
	want := map[string]string{}
	for _, k := range []string{"l", "h", "z", "s"} {
		want[k] = valueOf(t, red, k)
	}
	if err := red.Do(ctx, "MIGRATE", refHost, refPort, "", 0, 5000, "KEYS", "l", "h", "z", "s").Err(); err != nil {
		t.Fatalf("MIGRATE back: %v", err)
	}
	for k, w := range want {
		if got := valueOf(t, ref, k); got != w {
			t.Errorf("%s back on ref: %q, want %q", k, got, w)
		}
	}
}
