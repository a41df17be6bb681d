package server

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redline-dev/redline/server/resp"
)

// notifyScript exercises every event Redis 7.0 emits for the commands this
// server has, one command a line (resp.SplitArgs quoting). "SLEEP ms"
// pauses the test, "ASYNC cmd..." sends a (blocking) command on a second
// connection without waiting for its reply, "DUMP-RESTORE key" restores a DUMP taken on redis-server
// on both servers.
const notifyScript = `
SET k v
SET k v EX 100
SET k v PX 100 KEEPTTL
SET k w XX GET
SETNX k v
SETNX nk v
SETEX se 100 v
PSETEX pe 100000 v
GETSET k x
GETDEL k
GETDEL k
MSET a 1 b 2
MSETNX c 1 d 2
MSETNX c 1 e 2
APPEND a x
INCR n
INCRBY n 5
DECR n
DECRBY n 2
INCRBYFLOAT f 1.5
SETRANGE a 1 zz
SETRANGE a 1 ""
GETEX a EX 100
GETEX a PERSIST
GETEX a
EXPIRE a 100
PEXPIRE a 100000
EXPIREAT a 99999999999
PERSIST a
PERSIST a
EXPIRE c 0
EXPIRE nosuch 10
SETBIT bm 7 1
SETBIT bm 7 1
BITFIELD bf SET u8 0 255
BITFIELD bf GET u8 0
BITOP AND dest bm bf
BITOP AND dest2 nosuch1 nosuch2
PFADD h a b
PFADD h a
PFMERGE h2 h
LPUSH l a b c
RPUSH l d
LPUSHX l e
RPUSHX nope x
LPOP l
RPOP l 2
LPOP l 0
LSET l 0 X
LINSERT l BEFORE X Y
LINSERT l BEFORE nosuch Y
LREM l 1 Y
LREM l 1 nosuch
LTRIM l 0 -1
LTRIM l 0 0
RPUSH l2 p q
RPOPLPUSH l2 l3
LMOVE l2 l3 LEFT RIGHT
LMPOP 1 l3 LEFT COUNT 10
LPUSH ls 3 1 2
SORT ls STORE sorted
SORT nosuch STORE sorted
SADD s1 a b c
SADD s1 a
SREM s1 a
SREM s1 nosuch
SMOVE s1 s2 b
SMOVE s1 s2 c
SADD s3 1 2 3
SPOP s3
SPOP s3 0
SPOP s3 5
SADD s4 1 2 3
SINTERSTORE s5 s4 s4
SUNIONSTORE s6 s4 nosuch
SDIFFSTORE s5 s4 s4
SDIFFSTORE s7 s4 s4
ZADD z 1 a 2 b
ZADD z 1 a
ZADD z INCR 5 a
ZINCRBY z 1 b
ZREM z a
ZREM z nosuch
ZADD z 3 c 4 d 5 e 6 f
ZREMRANGEBYSCORE z 3 3
ZREMRANGEBYSCORE z 100 200
ZREMRANGEBYRANK z 0 0
ZADD zl 0 a 0 b 0 c
ZREMRANGEBYLEX zl [a [a
ZPOPMIN zl
ZPOPMAX zl 5
ZPOPMIN nosuch
ZRANGESTORE zr z 0 -1
ZRANGESTORE zr z 5 10
ZINTERSTORE zi 2 z z
ZUNIONSTORE zu 1 z
ZDIFFSTORE zd 2 z z
ZMPOP 1 z MIN
BZPOPMIN z 0
HSET h1 f v g w
HSETNX h1 g v
HSETNX h1 x v
HINCRBY h1 n 1
HINCRBYFLOAT h1 fl 1.5
HDEL h1 nosuch
HDEL h1 f g n fl x
XADD x 1-1 f v
XADD x MAXLEN 1 2-1 f v
XADD x MAXLEN 5 3-1 f v
XDEL x 3-1
XDEL x 9-9
XTRIM x MAXLEN 0
XTRIM x MAXLEN 0
XGROUP CREATE x g $
XGROUP CREATE xs g $ MKSTREAM
XGROUP CREATECONSUMER x g c1
XGROUP CREATECONSUMER x g c1
XGROUP SETID x g 0
XADD x 4-1 f v
XREADGROUP GROUP g c2 COUNT 1 STREAMS x >
XCLAIM x g c3 0 4-1
XAUTOCLAIM x g c4 0 0
XGROUP DELCONSUMER x g nosuch
XGROUP DELCONSUMER x g c2
XGROUP DESTROY x g
XGROUP DESTROY x g
XSETID x 5-0
RENAME a ra
RENAME ra ra
RENAMENX ra b
RENAMENX ra rb
COPY rb cp
COPY rb cp
COPY rb cp REPLACE
COPY rb cp1 DB 1
MOVE cp 2
MOVE nosuch 2
DEL rb cp nosuch
UNLINK b nosuch
DUMP-RESTORE rs
GET nosuch
MGET nosuch2 n
EXISTS nosuch3
TYPE nosuch4
TTL nosuch5
OBJECT ENCODING nosuch6
STRLEN nosuch7
LRANGE nosuch8 0 -1
HGETALL nosuch9
SMEMBERS nosucha
ZRANGE nosuchb 0 -1
XRANGE nosuchc - +
GEOADD g 13.361389 38.115556 Palermo 15.087269 37.502669 Catania
GEOSEARCHSTORE gs g FROMLONLAT 15 37 BYRADIUS 200 km
GEOSEARCHSTORE gs g FROMLONLAT 15 37 BYRADIUS 1 m
GEORADIUS g 15 37 200 km STORE gr
ASYNC BLPOP bl 0
SLEEP 50
LPUSH bl a
ASYNC BLMOVE bm1 bm2 LEFT RIGHT 0
SLEEP 50
RPUSH bm1 a b
ASYNC BZPOPMAX bz 0
SLEEP 50
ZADD bz 1 a
XGROUP CREATE bx bg $ MKSTREAM
ASYNC XREADGROUP GROUP bg bc BLOCK 0 STREAMS bx >
SLEEP 50
XADD bx 1-1 f v
SET e v PX 1
SLEEP 20
GET e
MULTI
SET t1 v
LPUSH t2 v
EXEC
EVAL "redis.call('set', KEYS[1], 'v'); redis.call('del', KEYS[1])" 1 sk
FLUSHALL
`

// TestKeyspaceNotificationsMatchRedis runs notifyScript on this server and
// on redis-server 7.0 with every class enabled (AKEmn) and requires the
// same notification messages, byte for byte and in the same order, for a
// RESP2 pattern subscriber and for a RESP3 client that receives them as
// push messages.
func TestKeyspaceNotificationsMatchRedis(t *testing.T) {
	raddr := startRedisServer(t)
	s := startServer(t)
	red := dialRaw(t, raddr)
	red.do(t, rawCmd("SET", "src", "payload"))
	dump := red.do(t, rawCmd("DUMP", "src"))
	// A bulk reply: $<n>\r\n<payload>\r\n.
	payload := string(dump[bytes.Index(dump, []byte("\r\n"))+2 : len(dump)-2])
	red.do(t, rawCmd("DEL", "src"))
	for _, proto := range []string{"2", "3"} {
		got := notificationsOf(t, s.Addr().String(), proto, payload)
		want := notificationsOf(t, raddr, proto, payload)
		for i := 0; i < len(got) || i < len(want); i++ {
			var g, w []byte
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if !bytes.Equal(g, w) {
				t.Errorf("RESP%s: notification %d of %d (redis %d):\n  ref   %q\n  redis %q", proto, i+1, len(got), len(want), g, w)
				break
			}
		}
	}
}

// notificationsOf runs notifyScript against addr and returns the
// notification messages a PSUBSCRIBE * client received, up to a marker.
func notificationsOf(t *testing.T, addr, proto string, dump string) [][]byte {
	t.Helper()
	cmd := dialRaw(t, addr)
	cmd.do(t, rawCmd("FLUSHALL"))
	cmd.do(t, rawCmd("CONFIG", "SET", "notify-keyspace-events", "AKEmn"))
	defer cmd.do(t, rawCmd("CONFIG", "SET", "notify-keyspace-events", ""))
	sub := dialRaw(t, addr)
	sub.do(t, rawCmd("HELLO", proto))
	sub.do(t, rawCmd("PSUBSCRIBE", "*"))
	async := dialRaw(t, addr)
	pending := 0
	for _, line := range strings.Split(notifyScript, "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		argv, ok := resp.SplitArgs([]byte(line), nil)
		if !ok {
			t.Fatalf("bad line %q", line)
		}
		switch strings.ToUpper(string(argv[0])) {
		case "SLEEP":
			d, _ := time.ParseDuration(string(argv[1]) + "ms")
			time.Sleep(d)
			continue
		case "ASYNC":
			async.send(t, argv[1:])
			pending++
			continue
		case "DUMP-RESTORE":
			argv = [][]byte{[]byte("RESTORE"), argv[1], []byte("0"), []byte(dump)}
		}
		cmd.do(t, argv)
	}
	for ; pending > 0; pending-- {
		async.read(t)
	}
	cmd.do(t, rawCmd("PUBLISH", "end-of-script", "x"))
	var msgs [][]byte
	for {
		m := sub.read(t)
		if bytes.Contains(m, []byte("end-of-script")) {
			return msgs
		}
		msgs = append(msgs, m)
	}
}

// CONFIG GET spells notify-keyspace-events canonically, as Redis does,
// and refuses an unknown class character with Redis's message.
func TestNotifyKeyspaceEventsConfigMatchesRedis(t *testing.T) {
	raddr := startRedisServer(t)
	s := startServer(t)
	ref, red := dialRaw(t, s.Addr().String()), dialRaw(t, raddr)
	for _, v := range []string{"", "KEA", "gKE", "$lshzxeKE", "AKEmn", "Ex", "Kt", "Ag$lshzxetmdnKE", "x", "w", "KEAq"} {
		for _, argv := range [][][]byte{rawCmd("CONFIG", "SET", "notify-keyspace-events", v), rawCmd("CONFIG", "GET", "notify-keyspace-events")} {
			if a, b := ref.do(t, argv), red.do(t, argv); !bytes.Equal(a, b) {
				t.Errorf("%q:\n  ref   %q\n  redis %q", argv, a, b)
			}
		}
	}
}

// Notifications go to this node's subscribers only: a cluster node's
// keyspace events are not sent over the bus to the other nodes (Redis's
// notifyKeyspaceEvent publishes locally), while a PUBLISH is.
func TestKeyspaceNotificationsAreNodeLocal(t *testing.T) {
	nodes := startCluster(t, 3, 0, 2000, "--notify-keyspace-events", "KEA")
	owner := nodes[0]
	tag, _ := tagOwnedBy(t, owner)
	key := "{" + tag + "}k"
	var subs []*redis.PubSub
	for _, n := range nodes {
		ps := n.client().PSubscribe(ctx, "__key*__:*", "marker")
		for i := 0; i < 2; i++ {
			if _, err := ps.Receive(ctx); err != nil {
				t.Fatal(err)
			}
		}
		subs = append(subs, ps)
	}
	if err := owner.client().Set(ctx, key, "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := owner.client().Publish(ctx, "marker", "end").Err(); err != nil {
		t.Fatal(err)
	}
	for i, ps := range subs {
		var got []string
		for {
			m := receiveMessage(t, ps)
			if m.Channel == "marker" {
				break
			}
			got = append(got, m.Channel+" "+m.Payload)
		}
		want := ""
		if i == 0 {
			want = "__keyspace@0__:" + key + " set,__keyevent@0__:set " + key
		}
		if strings.Join(got, ",") != want {
			t.Errorf("node %d received %q before the marker, want %q", i, got, want)
		}
	}
}
