package server

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/server/keyslot"
)

// keyInSlotOf returns a key with the given hash tag prefix whose slot is
// owned by owner, searching tags t0, t1, ...
func tagOwnedBy(t *testing.T, owner *node) (string, int) {
	t.Helper()
	slots := owner.str("cluster", "nodes")
	var ranges [][2]int
	for _, l := range strings.Split(slots, "\n") {
		if !strings.Contains(l, "myself") {
			continue
		}
		f := strings.Fields(l)
		for _, r := range f[8:] {
			a, b, ok := strings.Cut(r, "-")
			lo, _ := strconv.Atoi(a)
			hi := lo
			if ok {
				hi, _ = strconv.Atoi(b)
			}
			ranges = append(ranges, [2]int{lo, hi})
		}
	}
	for i := 0; i < 100000; i++ {
		tag := fmt.Sprintf("t%d", i)
		s := keyslot.Of(tag)
		for _, r := range ranges {
			if s >= r[0] && s <= r[1] {
				return tag, s
			}
		}
	}
	t.Fatal("no tag found")
	return "", 0
}

// TestClusterGoRedisRedirects: go-redis ClusterClient through MOVED, ASK
// during a live migration, TRYAGAIN and CROSSSLOT, plus the exact errors.
func TestClusterGoRedisRedirects(t *testing.T) {
	nodes := startCluster(t, 3, 0, 2000)
	a, b := nodes[0], nodes[1]
	c := clusterClient(t, nodes)
	tag, slot := tagOwnedBy(t, a)
	k1, k2, k3 := "{"+tag+"}1", "{"+tag+"}2", "{"+tag+"}3"
	for _, k := range []string{k1, k2} {
		if err := c.Set(ctx, k, "v"+k, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// Exact errors from a plain client.
	if got := b.str("get", k1); got != fmt.Sprintf("ERR: MOVED %d %s", slot, a.addr()) {
		t.Fatalf("GET on the wrong node: %s", got)
	}
	if got := a.str("mget", k1, "zzz-other-slot"); !strings.HasPrefix(got, "ERR: CROSSSLOT Keys in request don't hash to the same slot") {
		t.Fatalf("cross-slot MGET: %s", got)
	}
	if err := c.Do(ctx, "mget", k1, "zzz-other-slot").Err(); err == nil || !strings.HasPrefix(err.Error(), "CROSSSLOT") {
		t.Fatalf("cluster client cross-slot MGET: %v", err)
	}
	if got := b.str("eval", "return redis.call('get', KEYS[1])", 1, k1); got != fmt.Sprintf("ERR: MOVED %d %s", slot, a.addr()) {
		t.Fatalf("EVAL on the wrong node: %s", got)
	}
	if got := a.str("eval", "return redis.call('get', KEYS[1])", 1, k1); got != "v"+k1 {
		t.Fatalf("EVAL on the owner: %s", got)
	}
	if got := b.str("eval", "return redis.call('get', ARGV[1])", 0, k1); !strings.Contains(got, "Script attempted to access a non local key in a cluster node") {
		t.Fatalf("EVAL touching a key of another node: %s", got)
	}
	if got := a.str("select", "1"); got != "ERR: ERR SELECT is not allowed in cluster mode" {
		t.Fatalf("SELECT 1: %s", got)
	}
	// Live migration of the slot from a to b.
	if got := b.str("cluster", "setslot", slot, "importing", a.myID()); got != "OK" {
		t.Fatal(got)
	}
	if got := a.str("cluster", "setslot", slot, "migrating", b.myID()); got != "OK" {
		t.Fatal(got)
	}
	if got := a.str("migrate", "127.0.0.1", b.port, "", 0, 5000, "keys", k1); got != "OK" {
		t.Fatalf("MIGRATE: %s", got)
	}
	if got := a.str("migrate", "127.0.0.1", b.port, "{"+tag+"}missing", 0, 5000); got != "NOKEY" {
		t.Fatalf("MIGRATE of a missing key: %s", got)
	}
	if got := a.str("get", k1); got != fmt.Sprintf("ERR: ASK %d %s", slot, b.addr()) {
		t.Fatalf("GET of a migrated key on the source: %s", got)
	}
	if got := b.str("get", k1); got != fmt.Sprintf("ERR: MOVED %d %s", slot, a.addr()) {
		t.Fatalf("GET on the target without ASKING: %s", got)
	}
	if got := a.str("mget", k1, k2); got != "ERR: TRYAGAIN Multiple keys request during rehashing of slot" {
		t.Fatalf("MGET of a half-migrated pair: %s", got)
	}
	// go-redis follows ASK for each key.
	for _, k := range []string{k1, k2} {
		if v, err := c.Get(ctx, k).Result(); err != nil || v != "v"+k {
			t.Fatalf("cluster client GET %s during migration: %q %v", k, v, err)
		}
	}
	if err := c.Set(ctx, k3, "v"+k3, 0).Err(); err != nil {
		t.Fatalf("SET of a new key during migration: %v", err)
	}
	if v := b.client(); v != nil {
		p := v.Pipeline()
		p.Do(ctx, "asking")
		g := p.Get(ctx, k3)
		p.Exec(ctx)
		if g.Val() != "v"+k3 {
			t.Fatalf("a new key during migration should land on the target: %q %v", g.Val(), g.Err())
		}
	}
	if err := c.MGet(ctx, k1, k2).Err(); err == nil || !strings.HasPrefix(err.Error(), "TRYAGAIN") {
		t.Fatalf("cluster client MGET during migration: %v", err)
	}
	// Finish the migration.
	if got := a.str("migrate", "127.0.0.1", b.port, k2, 0, 5000); got != "OK" {
		t.Fatalf("MIGRATE: %s", got)
	}
	for _, n := range nodes {
		if got := n.str("cluster", "setslot", slot, "node", b.myID()); got != "OK" {
			t.Fatalf("SETSLOT NODE on %d: %s", n.port, got)
		}
	}
	vals, err := c.MGet(ctx, k1, k2, k3).Result()
	if err != nil || fmt.Sprint(vals) != fmt.Sprintf("[v%s v%s v%s]", k1, k2, k3) {
		t.Fatalf("MGET after migration (MOVED followed): %v %v", vals, err)
	}
	if got := a.str("get", k1); got != fmt.Sprintf("ERR: MOVED %d %s", slot, b.addr()) {
		t.Fatalf("GET on the old owner: %s", got)
	}
	// MULTI/EXEC: a queued command for another slot aborts EXEC.
	cl := a.client()
	var g *redis.StringCmd
	_, err = cl.TxPipelined(ctx, func(p redis.Pipeliner) error {
		g = p.Get(ctx, k1)
		return nil
	})
	if err == nil || !strings.HasPrefix(err.Error(), "EXECABORT") {
		t.Fatalf("MULTI with a moved key: %v (GET: %v)", err, g.Err())
	}
}

// TestClusterKillFailover: SIGKILL of a primary promotes its replica with
// the data; the restarted process rejoins as a replica and resyncs.
func TestClusterKillFailover(t *testing.T) {
	nodes := startCluster(t, 6, 1, 1000)
	c := clusterClient(t, nodes)
	writeKeys(t, c, "fk", 3000)
	victim := masters(t, nodes)[0]
	var rep *node
	waitFor(t, "the victim's replica to catch up", 20*time.Second, func() bool {
		vi := victim.str("info", "replication")
		for _, n := range nodes {
			ri := n.str("info", "replication")
			if infoField(ri, "role") == "slave" && infoField(ri, "master_port") == strconv.Itoa(victim.port) {
				rep = n
				return infoField(ri, "master_repl_offset") == infoField(vi, "master_repl_offset")
			}
		}
		return false
	})
	victim.kill()
	start := time.Now()
	waitFor(t, "the replica to be promoted", 30*time.Second, func() bool { return rep.role() == "master" })
	t.Logf("replica promoted %v after SIGKILL (node timeout 1s)", time.Since(start).Round(10*time.Millisecond))
	var rest []*node
	for _, n := range nodes {
		if n != victim {
			rest = append(rest, n)
		}
	}
	waitClusterOK(t, rest)
	c2 := clusterClient(t, rest)
	checkKeys(t, c2, "fk", 3000)
	writeKeys(t, c2, "after", 500)
	victim.start()
	waitFor(t, "the old primary to rejoin as a replica in sync", 30*time.Second, func() bool {
		ri := victim.str("info", "replication")
		return infoField(ri, "role") == "slave" && infoField(ri, "master_port") == strconv.Itoa(rep.port) &&
			infoField(ri, "master_link_status") == "up" && victim.str("dbsize") == rep.str("dbsize")
	})
	if got := victim.str("set", "x", "1"); !strings.HasPrefix(got, "ERR: MOVED") {
		t.Fatalf("write on the rejoined replica: %s", got)
	}
}
