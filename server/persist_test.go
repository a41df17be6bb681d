package server

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/server/config"
)

// populate writes keys of every type and encoding Redis 7.0 has (listpack,
// intset, quicklist with several nodes, hashtable, skiplist, streams with
// groups, pending entries and deleted entries, big and compressible
// values), expiries and a function library, in databases 0 and 1.
func populate(t *testing.T, addr string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
	defer c.Close()
	c1 := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, DB: 1})
	defer c1.Close()
	must := func(err error) {
		t.Helper()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
	}
	big := make([]byte, 100<<10)
	x := uint32(1)
	for i := range big {
		x = x*1664525 + 1013904223
		big[i] = byte(x >> 24)
	}
	must(c.Set(ctx, "s:int", "12345", 0).Err())
	must(c.Set(ctx, "s:neg", "-70000", 0).Err())
	must(c.Set(ctx, "s:bigint", "123456789012345", 0).Err())
	must(c.Set(ctx, "s:compressible", strings.Repeat("abcdefgh", 500), 0).Err())
	must(c.Set(ctx, "s:random", big, 0).Err())
	must(c.Set(ctx, "s:ttl", "v", 0).Err())
	must(c.PExpireAt(ctx, "s:ttl", time.UnixMilli(time.Now().Add(time.Hour).UnixMilli()+123)).Err())
	must(c.RPush(ctx, "l:small", "a", "1", "b", "-2").Err())
	for i := 0; i < 3000; i += 100 {
		var vs []any
		for j := i; j < i+100; j++ {
			vs = append(vs, fmt.Sprintf("element-%d-%s", j, strings.Repeat("x", j%50)))
		}
		must(c.RPush(ctx, "l:big", vs...).Err())
	}
	must(c.RPush(ctx, "l:bigvalue", "a", big[:20000], "b").Err())
	must(c.SAdd(ctx, "set:intset", 1, 2, 3, -5, 100000, 1<<40).Err())
	must(c.SAdd(ctx, "set:strings", "a", "b", "c").Err())
	var ints []any
	for i := 0; i < 600; i++ {
		ints = append(ints, i*7)
	}
	must(c.SAdd(ctx, "set:bigints", ints...).Err())
	must(c.ZAdd(ctx, "z:small", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2.5, Member: "b"}, redis.Z{Score: -3, Member: "c"}).Err())
	var zs []redis.Z
	for i := 0; i < 300; i++ {
		zs = append(zs, redis.Z{Score: float64(i) / 3, Member: fmt.Sprintf("m%d", i)})
	}
	must(c.ZAdd(ctx, "z:big", zs...).Err())
	must(c.Do(ctx, "ZADD", "z:big", "inf", "top", "-inf", "bottom").Err())
	must(c.HSet(ctx, "h:small", "f1", "v1", "f2", "2", "f3", "").Err())
	var hs []any
	for i := 0; i < 300; i++ {
		hs = append(hs, fmt.Sprintf("field%d", i), fmt.Sprintf("value%d", i))
	}
	must(c.HSet(ctx, "h:big", hs...).Err())
	must(c.HSet(ctx, "h:longvalue", "f", strings.Repeat("v", 100)).Err())
	must(c.PExpireAt(ctx, "h:small", time.UnixMilli(time.Now().Add(2*time.Hour).UnixMilli())).Err())
	for i := 1; i <= 250; i++ {
		args := []any{"XADD", "st", fmt.Sprintf("%d-%d", 1000+i/10, i), "a", i, "b", "x"}
		if i%7 == 0 {
			args = append(args, "c", "other")
		}
		must(c.Do(ctx, args...).Err())
	}
	must(c.Do(ctx, "XDEL", "st", "1005-50", "1010-100").Err())
	must(c.Do(ctx, "XGROUP", "CREATE", "st", "g1", "0").Err())
	must(c.Do(ctx, "XGROUP", "CREATE", "st", "g2", "$").Err())
	must(c.Do(ctx, "XREADGROUP", "GROUP", "g1", "alice", "COUNT", "5", "STREAMS", "st", ">").Err())
	must(c.Do(ctx, "XREADGROUP", "GROUP", "g1", "bob", "COUNT", "3", "STREAMS", "st", ">").Err())
	must(c.Do(ctx, "XACK", "st", "g1", "1000-1").Err())
	must(c.Do(ctx, "XGROUP", "CREATECONSUMER", "st", "g2", "carol").Err())
	must(c.Do(ctx, "XADD", "st:empty", "5-5", "f", "v").Err())
	must(c.Do(ctx, "XDEL", "st:empty", "5-5").Err())
	must(c1.Set(ctx, "db1:key", "in db 1", 0).Err())
	must(c1.SAdd(ctx, "db1:set", "x", "y").Err())
	must(c.Do(ctx, "FUNCTION", "LOAD", "#!lua name=rdblib\nredis.register_function('rdbf', function() return 'from rdb' end)").Err())
}

// dataset is every key of databases 0 and 1 with its type, encoding,
// absolute expiry and value in a comparable form, and the function list.
func dataset(t *testing.T, addr string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for db := 0; db < 2; db++ {
		c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, DB: db})
		keys, err := c.Keys(ctx, "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			typ := c.Type(ctx, k).Val()
			v := fmt.Sprintf("%s %s exp=%d ", typ, c.ObjectEncoding(ctx, k).Val(), c.PExpireTime(ctx, k).Val())
			switch typ {
			case "string":
				v += c.Get(ctx, k).Val()
			case "list":
				v += strings.Join(c.LRange(ctx, k, 0, -1).Val(), ",")
			case "set":
				m := c.SMembers(ctx, k).Val()
				sort.Strings(m)
				v += strings.Join(m, ",")
			case "zset":
				v += fmt.Sprint(c.ZRangeWithScores(ctx, k, 0, -1).Val())
			case "hash":
				var fs []string
				for f, x := range c.HGetAll(ctx, k).Val() {
					fs = append(fs, f+"="+x)
				}
				sort.Strings(fs)
				v += strings.Join(fs, ",")
			case "stream":
				v += fmt.Sprint(c.Do(ctx, "XRANGE", k, "-", "+").Val())
				full, _ := c.Do(ctx, "XINFO", "STREAM", k, "FULL").Slice()
				for i := 0; i+1 < len(full); i += 2 {
					if f := fmt.Sprint(full[i]); f != "radix-tree-keys" && f != "radix-tree-nodes" {
						v += fmt.Sprintf(" %s=%v", f, full[i+1])
					}
				}
			}
			out[fmt.Sprintf("%d/%s", db, k)] = v
		}
		if db == 0 {
			out["functions"] = fmt.Sprint(c.Do(ctx, "FUNCTION", "LIST", "WITHCODE").Val())
		}
		c.Close()
	}
	return out
}

func compareDatasets(t *testing.T, want, got map[string]string) {
	t.Helper()
	if len(want) < 20 {
		t.Fatalf("the written dataset has only %d entries", len(want))
	}
	for k, w := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("%s: missing after load", k)
		} else if g != w {
			t.Errorf("%s differs after load:\n  written %.300s\n  loaded  %.300s", k, w, g)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: loaded but never written", k)
		}
	}
}

// redisServer runs Debian's redis-server 7.0 in dir until the test ends.
func redisServer(t *testing.T, dir string, extra ...string) (addr string, stop func()) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed (scripts/install-deps)")
	}
	port := freePort(t)
	cmd := exec.Command(bin, append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir}, extra...)...)
	log := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop = func() {
		if cmd.Process != nil {
			cmd.Process.Kill()
			cmd.Wait()
			cmd.Process = nil
		}
	}
	t.Cleanup(stop)
	addr = fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server did not start\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return addr, stop
}

func save(t *testing.T, addr string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
	defer c.Close()
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatalf("SAVE on %s: %v", addr, err)
	}
}

// TestRDBFromRedisLoads: a dump.rdb written by redis-server 7.0.15 loads
// in the reference server with every key, type, encoding, expiry, stream
// group and function equal.
func TestRDBFromRedisLoads(t *testing.T) {
	dir := t.TempDir()
	addr, stop := redisServer(t, dir)
	populate(t, addr)
	want := dataset(t, addr)
	save(t, addr)
	stop()
	s := startServer(t, "--dir", dir)
	compareDatasets(t, want, dataset(t, s.Addr().String()))
}

// TestRDBToRedisLoads: a dump.rdb written by the reference server loads in
// redis-server 7.0.15 with everything equal.
func TestRDBToRedisLoads(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, "--dir", dir)
	populate(t, s.Addr().String())
	want := dataset(t, s.Addr().String())
	save(t, s.Addr().String())
	s.Close()
	addr, _ := redisServer(t, dir)
	compareDatasets(t, want, dataset(t, addr))
}

// TestRDBRoundTrip: BGSAVE, then a restart in the same directory, gives
// the same dataset, with rdbcompression and rdbchecksum both ways.
func TestRDBRoundTrip(t *testing.T) {
	for _, opt := range [][]string{{"--rdbcompression", "yes", "--rdbchecksum", "yes"}, {"--rdbcompression", "no", "--rdbchecksum", "no"}} {
		dir := t.TempDir()
		s := startServer(t, append([]string{"--dir", dir}, opt...)...)
		populate(t, s.Addr().String())
		want := dataset(t, s.Addr().String())
		c := newClient(t, s, 2)
		before := c.LastSave(ctx).Val()
		time.Sleep(1100 * time.Millisecond) // LASTSAVE has second resolution
		if v := c.BgSave(ctx).Val(); v != "Background saving started" {
			t.Fatalf("BGSAVE: %q", v)
		}
		waitForServer(t, "the background save", func() bool {
			return infoField(c.Info(ctx, "persistence").Val(), "rdb_bgsave_in_progress") == "0"
		})
		info := c.Info(ctx, "persistence").Val()
		if infoField(info, "rdb_last_bgsave_status") != "ok" || infoField(info, "rdb_changes_since_last_save") != "0" || c.LastSave(ctx).Val() <= before {
			t.Fatalf("after BGSAVE: LASTSAVE %d (before %d)\n%s", c.LastSave(ctx).Val(), before, info)
		}
		s.Close()
		s2 := startServer(t, append([]string{"--dir", dir}, opt...)...)
		compareDatasets(t, want, dataset(t, s2.Addr().String()))
		if got := infoField(newClient(t, s2, 2).Info(ctx, "persistence").Val(), "rdb_last_load_keys_loaded"); got == "0" {
			t.Fatalf("rdb_last_load_keys_loaded %s", got)
		}
	}
}

func waitForServer(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestRDBCorruptFileStopsStart: a flipped byte fails the CRC and the
// server refuses to start, as Redis; with rdbchecksum no it is not checked.
func TestRDBCorruptFileStopsStart(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, "--dir", dir)
	c := newClient(t, s, 2)
	c.Set(ctx, "k", "vvvvvvvvvv", 0) // short: stored as is, not LZF
	save(t, s.Addr().String())
	s.Close()
	path := filepath.Join(dir, "dump.rdb")
	data, _ := os.ReadFile(path)
	i := strings.Index(string(data), "vvvv")
	data[i] = 'w'
	os.WriteFile(path, data, 0o644)
	cfg, err := config.ParseArgs([]string{"--port", "0", "--bind", "127.0.0.1", "--dir", dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(cfg, Options{Log: io.Discard}); err == nil || !strings.Contains(err.Error(), "CRC") {
		t.Fatalf("a corrupt file loaded: %v", err)
	}
	s2 := startServer(t, "--dir", dir, "--rdbchecksum", "no")
	if v := newClient(t, s2, 2).Get(ctx, "k").Val(); v != "wvvvvvvvvv" {
		t.Fatalf("rdbchecksum no: %q", v)
	}
}

// TestRDBSaveScheduleAndShutdown: a save point writes dump.rdb from the
// cron; SHUTDOWN saves when a save point exists, SHUTDOWN NOSAVE does
// not; expired keys are not loaded by a master.
func TestRDBSaveScheduleAndShutdown(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dump.rdb")
	s := startServer(t, "--dir", dir, "--save", "1 2", "--enable-debug-command", "yes")
	c := newClient(t, s, 2)
	c.Do(ctx, "DEBUG", "SET-ACTIVE-EXPIRE", "0") // "gone" stays stored until the save, however slow the machine
	c.Set(ctx, "a", "1", 0)
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Stat(path); err == nil {
		t.Fatal("saved after 1 change with save 1 2")
	}
	c.Set(ctx, "b", "2", 0)
	c.Set(ctx, "gone", "x", 300*time.Millisecond)
	waitForServer(t, "dump.rdb from the save point", func() bool { _, err := os.Stat(path); return err == nil })
	c.Set(ctx, "c", "3", 0)
	c.Do(ctx, "SHUTDOWN")
	s.Close()
	time.Sleep(400 * time.Millisecond) // "gone" expires
	s2 := startServer(t, "--dir", dir, "--save", "1 2")
	c2 := newClient(t, s2, 2)
	if n := c2.DBSize(ctx).Val(); n != 3 || c2.Get(ctx, "c").Val() != "3" {
		t.Fatalf("after SHUTDOWN with a save point: %d keys %v", n, c2.Keys(ctx, "*").Val())
	}
	if v := infoField(c2.Info(ctx, "persistence").Val(), "rdb_last_load_keys_expired"); v != "1" {
		t.Fatalf("rdb_last_load_keys_expired %s", v)
	}
	c2.Set(ctx, "d", "4", 0)
	c2.Do(ctx, "SHUTDOWN", "NOSAVE")
	s2.Close()
	s3 := startServer(t, "--dir", dir)
	if n := newClient(t, s3, 2).DBSize(ctx).Val(); n != 3 {
		t.Fatalf("SHUTDOWN NOSAVE saved: %d keys", n)
	}
}

// TestDebugReload: DEBUG RELOAD keeps the dataset; NOFLUSH without MERGE
// fails on the libraries already there; NOSAVE NOFLUSH MERGE loads the
// last file over the current dataset.
func TestDebugReload(t *testing.T) {
	s := startServer(t, "--enable-debug-command", "yes")
	c := newClient(t, s, 2)
	c.Set(ctx, "x", "1", 0)
	c.Do(ctx, "FUNCTION", "LOAD", "#!lua name=t1\nredis.register_function('t1', function() return 'hello' end)")
	if err := c.Do(ctx, "DEBUG", "RELOAD").Err(); err != nil {
		t.Fatal(err)
	}
	if c.Get(ctx, "x").Val() != "1" || c.Do(ctx, "FCALL", "t1", "0").Val() != "hello" {
		t.Fatal("DEBUG RELOAD lost data")
	}
	if err := c.Do(ctx, "DEBUG", "RELOAD", "NOFLUSH").Err(); err == nil || !strings.Contains(err.Error(), "Error trying to load the RDB") {
		t.Fatalf("NOFLUSH: %v", err)
	}
	c.Do(ctx, "FUNCTION", "LOAD", "#!lua name=t2\nredis.register_function('t2', function() return 'hello2' end)")
	c.Set(ctx, "y", "2", 0)
	if err := c.Do(ctx, "DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE").Err(); err != nil {
		t.Fatal(err)
	}
	if c.Do(ctx, "FCALL", "t1", "0").Val() != "hello" || c.Do(ctx, "FCALL", "t2", "0").Val() != "hello2" || c.Get(ctx, "y").Val() != "2" {
		t.Fatal("NOSAVE NOFLUSH MERGE")
	}
	if err := c.Do(ctx, "DEBUG", "RELOAD", "BAD").Err(); err == nil || !strings.Contains(err.Error(), "only supports the MERGE, NOFLUSH and NOSAVE") {
		t.Fatalf("bad option: %v", err)
	}
}

// TestReplicaRestartedFromRDBKeepsExpiredKeys: a replica restarted from
// its RDB keeps the keys whose time passed while it was down (its master
// expires them), takes the file's replication ID and offset to continue
// with a partial resync, and deletes them when its master's DELs arrive,
// as cluster suite 14-consistency-check checks.
func TestReplicaRestartedFromRDBKeepsExpiredKeys(t *testing.T) {
	m := startServer(t, "--enable-debug-command", "yes")
	mc := newClient(t, m, 2)
	_, port, _ := net.SplitHostPort(m.Addr().String())
	dir := t.TempDir()
	r := startServer(t, "--dir", dir, "--replicaof", "127.0.0.1", port)
	rc := newClient(t, r, 2)
	mc.Set(ctx, "p", "1", 0)
	for i := 0; i < 20; i++ {
		mc.Set(ctx, fmt.Sprint("k", i), "v", 1500*time.Millisecond)
	}
	waitForServer(t, "the replica to sync", func() bool { return rc.DBSize(ctx).Val() == 21 })
	save(t, r.Addr().String())
	r.Close()
	mc.Do(ctx, "DEBUG", "SET-ACTIVE-EXPIRE", "0")
	time.Sleep(1600 * time.Millisecond)
	r2 := startServer(t, "--dir", dir, "--replicaof", "127.0.0.1", port)
	rc2 := newClient(t, r2, 2)
	if n := rc2.DBSize(ctx).Val(); n != 21 {
		t.Fatalf("replica restarted with %d keys, want 21 (expired ones kept)", n)
	}
	waitForServer(t, "the replica's link", func() bool {
		return infoField(rc2.Info(ctx, "replication").Val(), "master_link_status") == "up"
	})
	mc.Do(ctx, "DEBUG", "SET-ACTIVE-EXPIRE", "1")
	waitForServer(t, "the master's DELs to reach the replica", func() bool { return rc2.DBSize(ctx).Val() == 1 })
}

// TestFlushAllSaves: with save points FLUSHALL saves the empty dataset
// (a restart does not bring the keys back) and resets the changes
// counter; without, the counter keeps counting, as unit/other checks.
func TestFlushAllSaves(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, "--dir", dir, "--save", "")
	c := newClient(t, s, 2)
	c.Set(ctx, "k", "v", 0)
	save(t, s.Addr().String())
	c.Set(ctx, "k2", "v", 0)
	c.FlushAll(ctx)
	if n := infoField(c.Info(ctx, "persistence").Val(), "rdb_changes_since_last_save"); n == "0" {
		t.Fatal("FLUSHALL without save points reset the changes counter")
	}
	c.ConfigSet(ctx, "save", "3600 1")
	c.Set(ctx, "k", "v", 0)
	c.FlushAll(ctx)
	if n := infoField(c.Info(ctx, "persistence").Val(), "rdb_changes_since_last_save"); n != "0" {
		t.Fatalf("rdb_changes_since_last_save %s after FLUSHALL with save points", n)
	}
	s.Close()
	s2 := startServer(t, "--dir", dir)
	if n := newClient(t, s2, 2).DBSize(ctx).Val(); n != 0 {
		t.Fatalf("restarted after FLUSHALL with %d keys", n)
	}
}

// TestBgsaveInProgress: with rdb-key-save-delay a background save is
// observable: a second BGSAVE and SAVE are refused, BGREWRITEAOF is
// scheduled, INFO shows it; a save that cannot write makes a master with
// save points refuse writes (MISCONF) until a save succeeds.
func TestBgsaveInProgress(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, "--dir", dir, "--save", "3600 1", "--appendonly", "yes", "--enable-protected-configs", "yes")
	c := newClient(t, s, 2)
	for i := 0; i < 50; i++ {
		c.Set(ctx, fmt.Sprint("k", i), "v", 0)
	}
	c.ConfigSet(ctx, "rdb-key-save-delay", "20000") // 20 ms a key: a 1 s save
	if v := c.BgSave(ctx).Val(); v != "Background saving started" {
		t.Fatalf("BGSAVE: %q", v)
	}
	if err := c.BgSave(ctx).Err(); err == nil || !strings.Contains(err.Error(), "already in progress") {
		t.Fatalf("second BGSAVE: %v", err)
	}
	if err := c.Save(ctx).Err(); err == nil || !strings.Contains(err.Error(), "already in progress") {
		t.Fatalf("SAVE during BGSAVE: %v", err)
	}
	if v := c.BgRewriteAOF(ctx).Val(); !strings.Contains(v, "scheduled") {
		t.Fatalf("BGREWRITEAOF during BGSAVE: %q", v)
	}
	if v := infoField(c.Info(ctx, "persistence").Val(), "rdb_bgsave_in_progress"); v != "1" {
		t.Fatalf("rdb_bgsave_in_progress %s", v)
	}
	c.ConfigSet(ctx, "rdb-key-save-delay", "0")
	waitForServer(t, "the background save", func() bool {
		return infoField(c.Info(ctx, "persistence").Val(), "rdb_bgsave_in_progress") == "0"
	})

	gone := filepath.Join(dir, "gone")
	os.Mkdir(gone, 0o755)
	if err := c.ConfigSet(ctx, "dir", gone).Err(); err != nil {
		t.Fatal(err)
	}
	os.Remove(gone)
	c.BgSave(ctx)
	waitForServer(t, "the failed background save", func() bool {
		return infoField(c.Info(ctx, "persistence").Val(), "rdb_last_bgsave_status") == "err"
	})
	if err := c.Set(ctx, "x", "1", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "MISCONF") {
		t.Fatalf("a write after a failed save: %v", err)
	}
	if v := c.Get(ctx, "k1").Val(); v != "v" {
		t.Fatalf("a read after a failed save: %q", v)
	}
	c.ConfigSet(ctx, "dir", dir)
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "x", "1", 0).Err(); err != nil {
		t.Fatalf("a write after a good save: %v", err)
	}
}

// TestRDBAccessInfoCrossLoad: under an LRU policy the file carries each
// key's idle time, under an LFU one its access counter, both ways between
// redis-server 7.0.15 and the reference server.
func TestRDBAccessInfoCrossLoad(t *testing.T) {
	for _, tc := range []struct{ policy, opt, value string }{
		{"allkeys-lru", "IDLETIME", "1000"}, {"allkeys-lfu", "FREQ", "100"},
	} {
		for _, refWrites := range []bool{true, false} {
			dir := t.TempDir()
			var addr string
			var stop func()
			if refWrites {
				s := startServer(t, "--dir", dir, "--maxmemory-policy", tc.policy)
				addr, stop = s.Addr().String(), func() { s.Close() }
			} else {
				addr, stop = redisServer(t, dir, "--maxmemory-policy", tc.policy)
			}
			c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
			c.Set(ctx, "src", "v", 0)
			payload := c.Dump(ctx, "src").Val()
			if err := c.Do(ctx, "RESTORE", "k", "0", payload, tc.opt, tc.value).Err(); err != nil {
				t.Fatal(err)
			}
			want, _ := c.Do(ctx, "OBJECT", tc.opt, "k").Int64()
			save(t, addr)
			c.Close()
			stop()
			if refWrites {
				addr, _ = redisServer(t, dir, "--maxmemory-policy", tc.policy)
			} else {
				addr = startServer(t, "--dir", dir, "--maxmemory-policy", tc.policy).Addr().String()
			}
			c = redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
			got, err := c.Do(ctx, "OBJECT", tc.opt, "k").Int64()
			c.Close()
			if err != nil || got < want-2 || got > want+2 || want < 50 {
				t.Errorf("%s, written by the reference %v: OBJECT %s %d after load, %d before (%v)", tc.policy, refWrites, tc.opt, got, want, err)
			}
		}
	}
}

// TestFullSyncCarriesStoredExpiredKeys: a full sync holds the keys whose
// time has passed but that the master still stores (as Redis's RDB does),
// so a new replica counts what its master counts until the master's DELs.
func TestFullSyncCarriesStoredExpiredKeys(t *testing.T) {
	m := startServer(t, "--enable-debug-command", "yes")
	mc := newClient(t, m, 2)
	mc.Do(ctx, "DEBUG", "SET-ACTIVE-EXPIRE", "0")
	mc.Set(ctx, "p", "1", 0)
	for i := 0; i < 10; i++ {
		mc.Set(ctx, fmt.Sprint("k", i), "v", 200*time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	_, port, _ := net.SplitHostPort(m.Addr().String())
	r := startServer(t, "--replicaof", "127.0.0.1", port)
	rc := newClient(t, r, 2)
	waitForServer(t, "the replica to sync", func() bool {
		return infoField(rc.Info(ctx, "replication").Val(), "master_link_status") == "up"
	})
	if n, want := rc.DBSize(ctx).Val(), mc.DBSize(ctx).Val(); n != want || n != 11 {
		t.Fatalf("replica DBSIZE %d after a full sync, master %d (want 11 both)", n, want)
	}
	mc.Do(ctx, "DEBUG", "SET-ACTIVE-EXPIRE", "1")
	waitForServer(t, "the master's DELs", func() bool { return rc.DBSize(ctx).Val() == 1 })
}
