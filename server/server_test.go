package server

import (
	"bytes"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redline-dev/redline/server/keyslot"
)

// TestPropagationStream: writes propagate as the argv that reproduces them
// (relative TTLs made absolute, INCRBYFLOAT as SET KEEPTTL, scripts wrapped
// in MULTI/EXEC, expired keys as DEL).
func TestPropagationStream(t *testing.T) {
	s := startServer(t)
	recorded := recordPropagation(s)
	c := newClient(t, s, 2)
	c.Set(ctx, "a", "1", time.Minute)
	c.IncrByFloat(ctx, "f", 1.5)
	c.Get(ctx, "a") // reads are not propagated
	c.Eval(ctx, "redis.call('incr', 'n'); redis.call('incr', 'n')", nil)
	c.Set(ctx, "gone", "1", 0)
	c.PExpire(ctx, "gone", time.Millisecond)
	time.Sleep(5 * time.Millisecond)
	c.Get(ctx, "gone")
	got := strings.ToUpper(recorded())
	want := []string{"SELECT 0", "SET a 1 PXAT ", "SET f 1.5 KEEPTTL", "MULTI", "INCR n", "INCR n", "EXEC", "SET gone 1", "PEXPIREAT gone ", "DEL gone"}
	pos := 0
	for _, w := range want {
		i := strings.Index(got[pos:], strings.ToUpper(w))
		if i < 0 {
			t.Fatalf("stream lacks %q after offset %d:\n%s", w, pos, got)
		}
		pos += i + len(w)
	}
	cmd, keys := s.commandKeys([][]byte{[]byte("MSET"), []byte("a"), []byte("1"), []byte("b"), []byte("2")})
	if cmd == nil || len(keys) != 2 || string(keys[1]) != "b" {
		t.Fatalf("commandKeys: %v", keys)
	}
	_, keys = s.commandKeys([][]byte{[]byte("eval"), []byte("x"), []byte("2"), []byte("k1"), []byte("k2"), []byte("arg")})
	if len(keys) != 2 || string(keys[0]) != "k1" {
		t.Fatalf("EVAL keys: %q", keys)
	}
}

func TestSlotIndex(t *testing.T) {
	s := startServer(t, "--cluster-enabled", "yes")
	c := newClient(t, s, 2)
	// New+Start builds the same node as Main: with no slot served yet,
	// keyed commands are refused, also while queueing in MULTI, which then
	// ends in EXECABORT.
	if err := c.Get(ctx, "k").Err(); err == nil || err.Error() != "CLUSTERDOWN Hash slot not served" {
		t.Fatalf("GET on a node without slots: %v", err)
	}
	conn := c.Conn()
	defer conn.Close()
	conn.Do(ctx, "multi")
	conn.Do(ctx, "set", "k", "1")
	if err := conn.Do(ctx, "exec").Err(); err == nil || !strings.HasPrefix(err.Error(), "EXECABORT") {
		t.Fatalf("EXEC after a refusal while queueing: %v", err)
	}
	if err := c.Do(ctx, "cluster", "addslotsrange", 0, 16383).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "cluster_state:ok", 10*time.Second, func() bool {
		info, _ := c.Do(ctx, "cluster", "info").Text()
		return strings.Contains(info, "cluster_state:ok")
	})
	for i := 0; i < 100; i++ {
		c.Set(ctx, fmt.Sprintf("{tag}%d", i), "v", 0)
	}
	c.Del(ctx, "{tag}5")
	if err := c.Do(ctx, "select", "1").Err(); err == nil {
		t.Fatal("SELECT 1 allowed in cluster mode")
	}
	s.Lock()
	defer s.Unlock()
	slot := keyslot.Of("tag")
	if slot != 8338 {
		t.Fatalf("KeySlot(tag) = %d", slot)
	}
	if n := s.DB(0).CountKeysInSlot(slot); n != 99 {
		t.Fatalf("CountKeysInSlot = %d", n)
	}
	if ks := s.DB(0).KeysInSlot(slot, 3); len(ks) != 3 || ks[0] != "{tag}0" {
		t.Fatalf("KeysInSlot = %v", ks)
	}
	if n := s.deleteKeysInSlot(slot); n != 99 || s.DB(0).Len() != 0 {
		t.Fatalf("deleteKeysInSlot = %d, %d keys left", n, s.DB(0).Len())
	}
}

func TestMainArgs(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"--port", "0", "--nosuch", "x"}, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), "Bad directive or wrong number of arguments") {
		t.Fatalf("bad directive: code %d, stderr %q", code, errb.String())
	}
	port := freePort(t)
	done := make(chan int)
	go func() {
		done <- Main([]string{"--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--dir", t.TempDir()}, &syncWriter{w: &out}, &errb)
	}()
	var err error
	for i := 0; i < 200; i++ {
		var nc interface{ Close() error }
		if nc, err = netDial(fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			nc.Close()
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	nc, _ := netDial(fmt.Sprintf("127.0.0.1:%d", port))
	nc.Write([]byte("SHUTDOWN\r\n"))
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit code %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SHUTDOWN did not stop Main")
	}
}

func TestClientPause(t *testing.T) {
	s := startServer(t)
	admin := newClient(t, s, 2)
	w := newClient(t, s, 2)
	if err := admin.Do(ctx, "client", "pause", "60000", "write").Err(); err != nil {
		t.Fatal(err)
	}
	if err := w.Get(ctx, "x").Err(); err == nil || err.Error() != "redis: nil" {
		t.Fatalf("read during WRITE pause: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- w.Set(ctx, "x", "1", 0).Err() }()
	select {
	case err := <-done:
		t.Fatalf("write ran during pause: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := admin.Do(ctx, "client", "unpause").Err(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestBlockPropagation: a transaction or script that writes once
// propagates that write alone, one that writes more is wrapped in
// MULTI/EXEC, and one that writes nothing propagates nothing (Redis 7.0).
func TestBlockPropagation(t *testing.T) {
	s := startServer(t)
	recorded := recordPropagation(s)
	c := newClient(t, s, 1)
	conn := c.Conn()
	defer conn.Close()
	for _, cmd := range [][]any{{"multi"}, {"set", "one", "1"}, {"get", "one"}, {"exec"},
		{"multi"}, {"set", "a", "1"}, {"set", "b", "2"}, {"exec"},
		{"multi"}, {"get", "a"}, {"exec"},
		{"eval", "redis.call('set', 'e', '1') return redis.call('get', 'e')", "0"},
		{"set", "last", "1"}} {
		if err := conn.Do(ctx, cmd...).Err(); err != nil && err.Error() != "redis: nil" {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	got := strings.ToLower(recorded())
	want := strings.Join([]string{"select 0", "set one 1", "multi", "set a 1", "set b 2", "exec", "set e 1", "set last 1"}, "\n")
	if got != want {
		t.Fatalf("stream:\n%s\nwant:\n%s", got, want)
	}
}

// TestStartBuildsMainsServer: New+Start and Main build the same server: the
// same command table (COMMAND's raw reply is byte-identical), one WAIT and
// one ROLE (replication's), and maxmemory's OOM refusal from the start.
func TestStartBuildsMainsServer(t *testing.T) {
	port := freePort(t)
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--dir", t.TempDir(), "--maxmemory", "1"},
			&syncWriter{w: &out}, &errb)
	}()
	mainSrv := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), Protocol: 2, DisableIdentity: true, MaxRetries: -1})
	t.Cleanup(func() {
		mainSrv.Do(ctx, "shutdown", "nosave")
		mainSrv.Close()
		<-done
	})
	waitFor(t, "Main serving", 10*time.Second, func() bool { return mainSrv.Ping(ctx).Err() == nil })
	started := newClient(t, startServer(t, "--maxmemory", "1"), 2)
	raw := func(c *redis.Client, args ...any) string {
		v, err := c.Do(ctx, args...).Result()
		if err != nil {
			return "error: " + err.Error()
		}
		return fmt.Sprint(v)
	}
	for _, cmd := range [][]any{{"command"}, {"command", "count"}, {"command", "docs"}, {"role"}, {"wait", "0", "0"},
		{"set", "k", "v"}, {"info", "replication"}} {
		a, b := raw(mainSrv, cmd...), raw(started, cmd...)
		if cmd[0] == "info" {
			// The replication ids are random per server.
			a, b = stripReplIDs(a), stripReplIDs(b)
		}
		if a != b {
			t.Errorf("%v differs:\nMain:      %.300s\nNew+Start: %.300s", cmd, a, b)
		}
	}
	if v := raw(started, "set", "k", "v"); !strings.HasPrefix(v, "error: OOM command not allowed") {
		t.Errorf("SET over maxmemory on New+Start: %s", v)
	}
	if v := raw(started, "role"); !strings.HasPrefix(v, "[master ") {
		t.Errorf("ROLE on New+Start: %s", v)
	}
}

func stripReplIDs(info string) string {
	var keep []string
	for _, l := range strings.Split(info, "\n") {
		if !strings.HasPrefix(l, "master_replid") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// TestConfigSetPortLikeRedis: CONFIG SET port to a port in use fails as
// Redis's ("Unable to listen on this port") and leaves the other
// directives of the call as they were; to its own value it succeeds.
func TestConfigSetPortLikeRedis(t *testing.T) {
	used, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer used.Close()
	usedPort := fmt.Sprint(used.Addr().(*net.TCPAddr).Port)
	raddr := startRedisServer(t)
	s := startServer(t)
	for name, addr := range map[string]string{"redis": raddr, "reference": s.Addr().String()} {
		c := dialRaw(t, addr)
		_, port, _ := net.SplitHostPort(addr)
		got := string(c.do(t, splitTest(t, "CONFIG SET maxmemory 10000001 port "+usedPort))) +
			string(c.do(t, splitTest(t, "CONFIG GET maxmemory"))) +
			string(c.do(t, splitTest(t, "CONFIG SET port "+port)))
		want := "-ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs.\r\n" +
			"*2\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n+OK\r\n"
		if got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}
