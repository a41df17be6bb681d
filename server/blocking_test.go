package server

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/server/config"
	"github.com/redline-dev/redline/server/keyslot"
)

// A blocking scenario: numbered connections send commands; a step either
// runs a command and reads its reply, sends one without reading (it
// blocks), reads the reply a blocked connection got, or waits until the
// server has n clients blocked (INFO blocked_clients). The replies of the
// reference server and of redis-server must be byte-identical.
type bstep struct {
	conn    int
	argv    string // "" for a read-only step
	send    bool   // send argv without reading
	read    bool   // read one reply from conn
	blocked int    // >= 0: wait for this many blocked clients first
	close   bool   // close conn
}

func bRun(conn int, argv string) bstep { return bstep{conn: conn, argv: argv, blocked: -1} }
func bSend(conn int, argv string) bstep {
	return bstep{conn: conn, argv: argv, send: true, blocked: -1}
}
func readOn(conn int) bstep    { return bstep{conn: conn, read: true, blocked: -1} }
func waitBlocked(n int) bstep  { return bstep{blocked: n} }
func closeConn(conn int) bstep { return bstep{conn: conn, close: true, blocked: -1} }
func splitTest(t *testing.T, s string) [][]byte {
	var out [][]byte
	for _, f := range strings.Fields(s) {
		out = append(out, []byte(strings.ReplaceAll(f, "\\s", " ")))
	}
	return out
}

var blockingScenarios = map[string][]bstep{
	"blpop served by a later push": {
		bSend(1, "BLPOP l1 l2 0"), waitBlocked(1), bRun(0, "RPUSH l2 a b"), readOn(1), bRun(0, "LRANGE l2 0 -1"),
	},
	"first come first served": {
		bSend(1, "BLPOP q 0"), waitBlocked(1), bSend(2, "BRPOP q 0"), waitBlocked(2), bSend(3, "BLPOP q 0"), waitBlocked(3),
		bRun(0, "RPUSH q a b"), readOn(1), readOn(2), waitBlocked(1), bRun(0, "INFO keyspace"),
		bRun(0, "LPUSH q c"), readOn(3), bRun(0, "EXISTS q"),
	},
	"first non-empty key in order": {
		bSend(1, "BLPOP k1 k2 k3 0"), waitBlocked(1),
		bRun(0, "MULTI"), bRun(0, "RPUSH k3 c"), bRun(0, "RPUSH k2 b"), bRun(0, "EXEC"), readOn(1), bRun(0, "LRANGE k2 0 -1"), bRun(0, "LRANGE k3 0 -1"),
	},
	"served after EXEC": {
		bSend(1, "BLPOP k 0"), waitBlocked(1),
		bRun(0, "MULTI"), bRun(0, "RPUSH k a b"), bRun(0, "LPOP k"), bRun(0, "EXEC"), readOn(1), bRun(0, "EXISTS k"),
	},
	"served after a script": {
		bSend(1, "BRPOP k 0"), waitBlocked(1),
		bRun(0, "EVAL redis.call('rpush',KEYS[1],'x','y');return\\sredis.call('lpop',KEYS[1]) 1 k"), readOn(1), bRun(0, "EXISTS k"),
	},
	"pipelined commands wait for the blocked one": {
		bSend(1, "BLPOP k 0"), bSend(1, "PING"), bSend(1, "LLEN k"), waitBlocked(1), bRun(0, "RPUSH k a b"),
		readOn(1), readOn(1), readOn(1),
	},
	"a key of the wrong type keeps waiting": {
		bSend(1, "BLPOP k 0"), waitBlocked(1), bRun(0, "SET k v"), waitBlocked(1),
		bRun(0, "DEL k"), bRun(0, "RPUSH k a"), readOn(1),
	},
	"zset pushed to a list waiter": {
		bSend(1, "BLPOP k 0"), waitBlocked(1), bRun(0, "ZADD k 1 a"), waitBlocked(1), bRun(0, "DEL k"), bRun(0, "LPUSH k z"), readOn(1),
	},
	"blmove chain": {
		bSend(1, "BLMOVE src dst RIGHT LEFT 0"), waitBlocked(1), bSend(2, "BLPOP dst 0"), waitBlocked(2),
		bRun(0, "RPUSH src a b"), readOn(1), readOn(2), bRun(0, "LRANGE src 0 -1"), bRun(0, "EXISTS dst"),
	},
	"brpoplpush to a key of the wrong type": {
		bSend(1, "BRPOPLPUSH src str 0"), waitBlocked(1), bRun(0, "SET str v"), bRun(0, "RPUSH src a"), readOn(1),
		bRun(0, "LRANGE src 0 -1"),
	},
	"blmove onto itself": {
		bSend(1, "BLMOVE l l LEFT RIGHT 0"), waitBlocked(1), bRun(0, "RPUSH l a b"), readOn(1), bRun(0, "LRANGE l 0 -1"),
	},
	"blmpop with count": {
		bSend(1, "BLMPOP 0 2 a b RIGHT COUNT 3"), waitBlocked(1), bRun(0, "RPUSH b 1 2 3 4 5"), readOn(1), bRun(0, "LRANGE b 0 -1"),
		bSend(2, "BLMPOP 0 1 c LEFT COUNT 10"), waitBlocked(1), bRun(0, "RPUSH c 1 2"), readOn(2), bRun(0, "EXISTS c"),
	},
	"bzpopmin, bzpopmax and bzmpop": {
		bSend(1, "BZPOPMIN z 0"), waitBlocked(1), bSend(2, "BZPOPMAX z 0"), waitBlocked(2), bSend(3, "BZMPOP 0 1 z MAX COUNT 2"), waitBlocked(3),
		bRun(0, "ZADD z 1 a 2 b 3.5 c 4 d 5 e"), readOn(1), readOn(2), readOn(3), bRun(0, "ZRANGE z 0 -1 WITHSCORES"),
	},
	"zset waiter ignores a list": {
		bSend(1, "BZPOPMIN k 0"), waitBlocked(1), bRun(0, "RPUSH k a"), waitBlocked(1), bRun(0, "DEL k"), bRun(0, "ZADD k 7 m"), readOn(1),
	},
	"timeouts": {
		bRun(1, "BLPOP nokey 0.05"), bRun(1, "BZPOPMIN nokey 0.01"), bRun(1, "BLMOVE nokey d LEFT LEFT 0.01"),
		bRun(1, "BLMPOP 0.01 1 nokey LEFT"), bRun(1, "BZMPOP 0.01 2 a b MIN"), bRun(1, "BRPOPLPUSH nokey d 0.01"),
	},
	"client unblock": {
		bSend(1, "BLPOP k 0"), waitBlocked(1), bRun(0, "CLIENT UNBLOCK $1 TIMEOUT"), readOn(1),
		bSend(1, "BZPOPMIN k 0"), waitBlocked(1), bRun(0, "CLIENT UNBLOCK $1 ERROR"), readOn(1),
		bRun(0, "CLIENT UNBLOCK $1"), bRun(1, "PING"),
	},
	"disconnected waiter is forgotten": {
		bSend(1, "BLPOP k 0"), waitBlocked(1), bSend(2, "BLPOP k 0"), waitBlocked(2), closeConn(1), waitBlocked(1),
		bRun(0, "RPUSH k a b"), readOn(2), bRun(0, "LRANGE k 0 -1"),
	},
	"killed waiter is forgotten": {
		bRun(1, "CLIENT SETNAME victim"), bSend(1, "BLPOP k 0"), waitBlocked(1), bRun(0, "CLIENT KILL ID $1"), waitBlocked(0),
		bRun(0, "RPUSH k a"), bRun(0, "LRANGE k 0 -1"),
	},
	"swapdb wakes a waiter": {
		bRun(1, "SELECT 1"), bSend(1, "BLPOP k 0"), waitBlocked(1), bRun(0, "RPUSH k a"), bRun(0, "SWAPDB 0 1"), readOn(1),
		bRun(0, "SELECT 1"), bRun(0, "EXISTS k"),
	},
	"xread served by a later xadd": {
		bSend(1, "XREAD BLOCK 0 STREAMS s1 s2 0 0"), waitBlocked(1), bRun(0, "XADD s2 1-1 f v"), readOn(1),
	},
	"xread count": {
		bRun(0, "XADD s1 2-1 a 1"), bSend(1, "XREAD COUNT 1 BLOCK 0 STREAMS s1 2-1"), waitBlocked(1),
		bRun(0, "XADD s1 3-1 b 2"), readOn(1),
	},
	"xread served after exec": {
		bSend(2, "XREAD BLOCK 0 STREAMS s1 0"), waitBlocked(1), bRun(0, "MULTI"), bRun(0, "XADD s1 4-1 c 3"),
		bRun(0, "XADD s1 5-1 d 4"), bRun(0, "EXEC"), readOn(2),
	},
	"xreadgroup blocked": {
		bRun(0, "XGROUP CREATE g grp 0 MKSTREAM"), bSend(1, "XREADGROUP GROUP grp alice BLOCK 0 STREAMS g >"), waitBlocked(1),
		bRun(0, "XADD g 1-1 f v"), readOn(1), bRun(0, "XPENDING g grp"), bRun(0, "XINFO GROUPS g"),
		bSend(1, "XREADGROUP GROUP grp bob NOACK COUNT 5 BLOCK 0 STREAMS g >"), waitBlocked(1), bRun(0, "XADD g 2-1 f v"), readOn(1),
		bRun(0, "XPENDING g grp"), bRun(0, "XINFO GROUPS g"),
		bSend(1, "XREADGROUP GROUP grp alice BLOCK 0 STREAMS g >"), waitBlocked(1), bRun(0, "XGROUP DESTROY g grp"), readOn(1),
		bRun(0, "XGROUP CREATE g grp 2-1"), bSend(1, "XREADGROUP GROUP grp alice BLOCK 0 STREAMS g >"), waitBlocked(1),
		bRun(0, "DEL g"), readOn(1),
		bRun(0, "XGROUP CREATE g grp 0 MKSTREAM"), bSend(1, "XREADGROUP GROUP grp alice BLOCK 0 STREAMS g >"), waitBlocked(1),
		bRun(0, "SET g x"), readOn(1),
	},
	"xread timeouts and refusals": {
		bRun(1, "XREAD BLOCK 10 STREAMS nokey 0"), bRun(0, "XGROUP CREATE g grp 0 MKSTREAM"),
		bRun(1, "XREADGROUP GROUP grp c BLOCK 10 STREAMS g >"),
		bRun(0, "MULTI"), bRun(0, "XREAD BLOCK 0 STREAMS nokey 0"), bRun(0, "EXEC"),
		bRun(0, "EVAL return\\sredis.pcall('xread','block','0','streams','nokey','$') 0"),
		bSend(1, "XREAD BLOCK 0 STREAMS s 0"), waitBlocked(1), bRun(0, "CLIENT UNBLOCK $1 ERROR"), readOn(1),
		bSend(1, "XREAD BLOCK 0 STREAMS s 0"), waitBlocked(1), bRun(0, "CLIENT UNBLOCK $1"), readOn(1),
	},
	// CLIENT PAUSE WRITE holds what may write or replicate (PFCOUNT,
	// PUBLISH, EVAL without declared flags, EXEC of a write) and counts it
	// in blocked_clients (a write queued in MULTI waits too, so conn 5
	// queues before the pause); reads, read-only scripts, a read-only
	// transaction and an arity error are answered at once.
	"client pause write": {
		bRun(0, "PFADD h a"), bRun(5, "MULTI"), bRun(5, "SET k v"), bRun(0, "CLIENT PAUSE 60000 WRITE"),
		bRun(1, "SET k"), bRun(1, "EVAL_RO return\\s1 0"), bRun(1, "EVAL_RO return\\sredis.call('publish','ch','m') 0"),
		bRun(1, "MULTI"), bRun(1, "GET k"), bRun(1, "EXEC"),
		bSend(2, "PFCOUNT h"), waitBlocked(1), bSend(3, "PUBLISH ch m"), waitBlocked(2), bSend(4, "EVAL return\\s1 0"), waitBlocked(3),
		bSend(5, "EXEC"), waitBlocked(4),
		bRun(0, "CLIENT UNPAUSE"), readOn(2), readOn(3), readOn(4), readOn(5), bRun(0, "GET k"),
	},
	"rename and move create the key": {
		bSend(1, "BLPOP k 0"), waitBlocked(1), bRun(0, "RPUSH tmp a"), bRun(0, "RENAME tmp k"), readOn(1),
		bRun(2, "SELECT 2"), bSend(2, "BZPOPMIN z 0"), waitBlocked(1), bRun(0, "ZADD z 1 a"), bRun(0, "MOVE z 2"), readOn(2),
	},
}

// TestBlockingCompareWithRedis runs each scenario against redis-server and
// against the reference server with event loops and with a goroutine per
// connection, over RESP2 and RESP3, and requires the same replies.
func TestBlockingCompareWithRedis(t *testing.T) {
	raddr := startRedisServer(t)
	loop := startServer(t)
	t.Setenv("REDLINE_EVENT_LOOP", "off")
	goroutines := startServer(t)
	for name, steps := range blockingScenarios {
		for _, proto := range []string{"2", "3"} {
			want := runBlockingScenario(t, raddr, proto, steps)
			for kind, s := range map[string]*Server{"event loop": loop, "goroutines": goroutines} {
				got := runBlockingScenario(t, s.Addr().String(), proto, steps)
				if !bytes.Equal(got, want) {
					t.Errorf("%s (RESP%s, %s):\n  ref   %q\n  redis %q", name, proto, kind, got, want)
				}
			}
		}
	}
}

// runBlockingScenario returns every reply of the scenario in order.
func runBlockingScenario(t *testing.T, addr, proto string, steps []bstep) []byte {
	t.Helper()
	return runBlockingScenarioFrom(t, addr, proto, steps, true)
}

func runBlockingScenarioFrom(t *testing.T, addr, proto string, steps []bstep, flush bool) []byte {
	t.Helper()
	ctl := dialRaw(t, addr)
	if flush {
		ctl.do(t, splitTest(t, "FLUSHALL"))
		ctl.do(t, splitTest(t, "SELECT 2"))
		ctl.do(t, splitTest(t, "FLUSHDB"))
		ctl.do(t, splitTest(t, "SELECT 1"))
		ctl.do(t, splitTest(t, "FLUSHDB"))
	}
	conns := map[int]*rawClient{}
	ids := map[int]string{}
	get := func(i int) *rawClient {
		if c := conns[i]; c != nil {
			return c
		}
		c := dialRaw(t, addr)
		c.do(t, splitTest(t, "HELLO "+proto))
		ids[i] = strings.TrimPrefix(strings.TrimSpace(string(c.do(t, splitTest(t, "CLIENT ID")))), ":")
		conns[i] = c
		return c
	}
	var out []byte
	for n, st := range steps {
		switch {
		case st.blocked >= 0:
			waitBlockedClients(t, ctl, st.blocked, fmt.Sprintf("%s step %d", addr, n))
		case st.close:
			get(st.conn).c.Close()
			delete(conns, st.conn)
		case st.read:
			out = append(out, get(st.conn).read(t)...)
		default:
			argv := splitTest(t, st.argv)
			for i, a := range argv {
				if s := string(a); strings.HasPrefix(s, "$") {
					var k int
					fmt.Sscan(s[1:], &k)
					get(k)
					argv[i] = []byte(ids[k])
				}
			}
			c := get(st.conn)
			if st.send {
				c.send(t, argv)
				continue
			}
			r := c.do(t, argv)
			switch strings.ToUpper(string(argv[0])) {
			case "CLIENT", "INFO":
				r = filterInfo(r)
			}
			out = append(out, fmt.Sprintf("#%d ", n)...)
			out = append(out, r...)
		}
	}
	for _, c := range conns {
		c.c.Close()
	}
	waitBlockedClients(t, ctl, 0, addr+" at the end")
	return out
}

// filterInfo keeps what both servers report alike: the flags of CLIENT
// LIST, the error counts of INFO errorstats, INFO keyspace's key counts.
func filterInfo(r []byte) []byte {
	var keep []string
	for _, l := range strings.Split(string(r), "\n") {
		for _, f := range strings.Fields(l) {
			if strings.HasPrefix(f, "flags=") || strings.HasPrefix(f, "errorstat_") || strings.HasPrefix(f, "db") || strings.HasPrefix(f, "cmd=") {
				if i := strings.Index(f, ",expires"); i > 0 {
					f = f[:i]
				}
				keep = append(keep, f)
			}
		}
	}
	if len(keep) == 0 {
		return r
	}
	return []byte(strings.Join(keep, " ") + "\n")
}

// waitBlockedClients polls INFO clients until blocked_clients is n.
func waitBlockedClients(t *testing.T, ctl *rawClient, n int, where string) {
	t.Helper()
	want := fmt.Sprintf("blocked_clients:%d\r", n)
	for i := 0; ; i++ {
		if bytes.Contains(ctl.do(t, splitTest(t, "INFO clients")), []byte(want)) {
			return
		}
		if i > 2000 {
			t.Fatalf("%s: never %d blocked clients", where, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestBlockingPropagationLikeRedis watches both servers' replication
// streams (SYNC, as Redis's test suite does) while blocked clients are
// served: each served pop goes out in its non-blocking form (LPOP, RPOP
// with a count, LMOVE, RPOPLPUSH, ZPOPMIN, ZPOPMAX), after the command
// that woke it, and a timeout propagates nothing.
func TestBlockingPropagationLikeRedis(t *testing.T) {
	raddr := startRedisServer(t)
	cfg, err := config.ParseArgs([]string{"--port", "0", "--bind", "127.0.0.1", "--dir", t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, Options{Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	var propagated []string
	s.propagationTap = func(db int, argv [][]byte) {
		propagated = append(propagated, string(bytes.Join(argv, []byte(" "))))
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	steps := []bstep{
		bRun(0, "RPUSH l a b c"), bRun(0, "BLPOP l 0"), bRun(0, "BLMPOP 0 1 l RIGHT COUNT 5"),
		bRun(0, "ZADD z 1 a 2 b"), bRun(0, "BZPOPMAX z 0"), bRun(0, "BZMPOP 0 1 z MIN COUNT 3"),
		bSend(1, "BLPOP l 0"), waitBlocked(1), bRun(0, "RPUSH l x"), readOn(1),
		bSend(1, "BRPOP l 0"), waitBlocked(1), bRun(0, "MULTI"), bRun(0, "RPUSH l y"), bRun(0, "RPUSH l z"), bRun(0, "EXEC"), readOn(1),
		bSend(1, "BLMPOP 0 1 l2 LEFT COUNT 9"), waitBlocked(1), bRun(0, "RPUSH l2 1 2"), readOn(1),
		bSend(1, "BLMOVE s d RIGHT LEFT 0"), waitBlocked(1), bRun(0, "RPUSH s m"), readOn(1),
		bSend(1, "BRPOPLPUSH s d 0"), waitBlocked(1), bRun(0, "RPUSH s n"), readOn(1),
		bSend(1, "BZPOPMIN zz 0"), waitBlocked(1), bRun(0, "ZADD zz 3 q 4 r"), readOn(1),
		bSend(1, "BZMPOP 0 1 z2 MAX COUNT 4"), waitBlocked(1), bRun(0, "ZADD z2 5 s 6 t"), readOn(1),
		bRun(1, "SELECT 3"), bSend(1, "BLPOP k3 0"), waitBlocked(1), bRun(2, "SELECT 3"), bRun(2, "LPUSH k3 v"), readOn(1),
		bRun(0, "BLPOP nokey 0.01"),
		bRun(2, "XGROUP CREATE xs grp 0 MKSTREAM"), bSend(1, "XREADGROUP GROUP grp bob NOACK BLOCK 0 STREAMS xs >"), waitBlocked(1),
		bRun(2, "XADD xs 1-1 f v"), readOn(1), bRun(2, "XADD xs MAXLEN ~ 0 2-1 f v"), bRun(2, "XTRIM xs MAXLEN 0"),
		bRun(0, "SET done 1"),
	}
	stream := func(addr string) string {
		repl := syncAsReplica(t, addr)
		runBlockingScenario(t, addr, "2", steps)
		var cmds []string
		for {
			r := repl.read(t)
			v := strings.Join(strings.Fields(strings.ReplaceAll(string(r), "\r\n", " ")), " ")
			if strings.Contains(v, "PING") {
				continue
			}
			cmds = append(cmds, v)
			if strings.Contains(v, "done") {
				return strings.Join(cmds, "\n")
			}
		}
	}
	want := stream(raddr)
	runBlockingScenario(t, s.Addr().String(), "2", steps)
	s.Lock()
	got := strings.Join(propagated, "\n")
	s.Unlock()
	// Redis's stream names each bulk: "*2 $6 SELECT $1 0" -> "SELECT 0".
	var words []string
	for _, l := range strings.Split(want, "\n") {
		var w []string
		for _, f := range strings.Fields(l) {
			if !strings.HasPrefix(f, "*") && !strings.HasPrefix(f, "$") {
				w = append(w, f)
			}
		}
		words = append(words, strings.Join(w, " "))
	}
	want = strings.Join(words, "\n")
	if got != want {
		t.Errorf("propagated commands differ:\nref:\n%s\nredis:\n%s", got, want)
	}
}

// TestBlockedClientsWhenTurningReplica: REPLICAOF answers every blocked
// client -UNBLOCKED and closes it, as Redis's disconnectAllBlockedClients.
func TestBlockedClientsWhenTurningReplica(t *testing.T) {
	raddr := startRedisServer(t)
	s := startExtServer(t)
	dead := fmt.Sprint(freePort(t))
	steps := []bstep{
		bSend(1, "BLPOP k 0"), bSend(2, "BZPOPMIN z 0"), waitBlocked(2), bRun(0, "REPLICAOF 127.0.0.1 "+dead),
		readOn(1), readOn(2), waitBlocked(0), bRun(0, "REPLICAOF NO ONE"),
	}
	for _, proto := range []string{"2", "3"} {
		want := runBlockingScenario(t, raddr, proto, steps)
		got := runBlockingScenario(t, s.Addr().String(), proto, steps)
		if !bytes.Equal(got, want) {
			t.Errorf("RESP%s:\n  ref   %q\n  redis %q", proto, got, want)
		}
	}
}

// startRedisCluster runs redis-server as a one-node cluster serving every
// slot, with cluster-require-full-coverage no.
func startRedisCluster(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	port := freePort(t)
	cmd := exec.Command("redis-server", "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--cluster-enabled", "yes", "--cluster-config-file", dir+"/nodes.conf", "--cluster-require-full-coverage", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
		if i > 500 {
			t.Fatal("redis-server did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestBlockedClientsWhenSlotGoesAway: a client blocked on a key whose slot
// the node stops serving is answered from the cron, as Redis's
// clusterRedirectBlockedClientIfNeeded: -CLUSTERDOWN for an unassigned
// slot. Compared with a one-node redis-server cluster.
func TestBlockedClientsWhenSlotGoesAway(t *testing.T) {
	raddr := startRedisCluster(t)
	dir := t.TempDir()
	s := startExtServer(t, "--cluster-enabled", "yes", "--cluster-config-file", dir+"/nodes.conf", "--cluster-require-full-coverage", "no")
	slot := fmt.Sprint(keyslot.Of("k"))
	for _, addr := range []string{raddr, s.Addr().String()} {
		c := dialRaw(t, addr)
		c.do(t, splitTest(t, "CLUSTER ADDSLOTSRANGE 0 16383"))
		for i := 0; !bytes.Contains(c.do(t, splitTest(t, "CLUSTER INFO")), []byte("cluster_state:ok")); i++ {
			if i > 1000 {
				t.Fatalf("%s: cluster_state never ok", addr)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	steps := []bstep{
		bSend(1, "BLPOP k 0"), waitBlocked(1), bRun(0, "CLUSTER DELSLOTS "+slot), readOn(1), waitBlocked(0),
		bRun(0, "CLUSTER ADDSLOTS "+slot), bSend(1, "BZPOPMIN k 0"), waitBlocked(1), bRun(0, "ZADD k 1 a"), readOn(1),
	}
	want := runClusterScenario(t, raddr, steps)
	got := runClusterScenario(t, s.Addr().String(), steps)
	t.Logf("replies: %q", got)
	if !bytes.Equal(got, want) {
		t.Errorf("\n  ref   %q\n  redis %q", got, want)
	}
}

// runClusterScenario is runBlockingScenario without the FLUSHALL and
// SELECTs a cluster node refuses.
func runClusterScenario(t *testing.T, addr string, steps []bstep) []byte {
	return runBlockingScenarioFrom(t, addr, "2", steps, false)
}

// TestSlowlogServedBlockingCommand: a blocked BLPOP is logged when it is
// served, with its own arguments (it propagates as LPOP), so an entry
// survives a SLOWLOG RESET between its block and its serving, as Redis's
// updateStatsOnUnblock (unit/slowlog's "Rewritten commands are logged as
// their original command").
func TestSlowlogServedBlockingCommand(t *testing.T) {
	s := startServer(t)
	ctl := dialRaw(t, s.Addr().String())
	ctl.do(t, splitTest(t, "CONFIG SET slowlog-log-slower-than 0"))
	rd := dialRaw(t, s.Addr().String())
	rd.send(t, splitTest(t, "BLPOP l 0"))
	waitBlockedClients(t, ctl, 1, "BLPOP")
	ctl.do(t, splitTest(t, "SLOWLOG RESET"))
	ctl.do(t, splitTest(t, "RPUSH l foo"))
	if got := string(rd.read(t)); got != "*2\r\n$1\r\nl\r\n$3\r\nfoo\r\n" {
		t.Fatalf("BLPOP: %q", got)
	}
	got := string(ctl.do(t, splitTest(t, "SLOWLOG GET")))
	want := "*3\r\n$5\r\nBLPOP\r\n$1\r\nl\r\n$1\r\n0\r\n"
	if !strings.Contains(got, want) {
		t.Fatalf("SLOWLOG GET has no BLPOP l 0 entry: %q", got)
	}
}
