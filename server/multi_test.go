package server

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestMultiExec(t *testing.T) {
	s := startServer(t)
	for _, proto := range []int{2, 3} {
		c := newClient(t, s, proto)
		conn := c.Conn()
		runSteps2 := func(steps []step) {
			t.Helper()
			for i, st := range steps {
				got := render(conn.Do(ctx, st.cmd...).Result())
				if got != st.want {
					t.Errorf("resp%d step %d %v: got %q, want %q", proto, i, st.cmd, got, st.want)
				}
			}
		}
		runSteps2([]step{
			{[]any{"del", "k"}, fmt.Sprint(conn.Exists(ctx, "k").Val())},
			{[]any{"multi"}, "OK"},
			{[]any{"multi"}, "ERR: ERR MULTI calls can not be nested"},
			{[]any{"incr", "k"}, "QUEUED"},
			{[]any{"incr", "k"}, "QUEUED"},
			{[]any{"exec"}, "[1 2]"},
			{[]any{"exec"}, "ERR: ERR EXEC without MULTI"},
			{[]any{"discard"}, "ERR: ERR DISCARD without MULTI"},
			{[]any{"multi"}, "OK"},
			{[]any{"set", "k"}, "ERR: ERR wrong number of arguments for 'set' command"},
			{[]any{"incr", "k"}, "QUEUED"},
			{[]any{"exec"}, "ERR: EXECABORT Transaction discarded because of previous errors."},
			{[]any{"get", "k"}, "2"},
			{[]any{"multi"}, "OK"},
			{[]any{"set", "s", "x"}, "QUEUED"},
			{[]any{"incr", "s"}, "QUEUED"},
			{[]any{"exec"}, "[OK ERR value is not an integer or out of range]"},
			{[]any{"watch", "k"}, "OK"},
			{[]any{"multi"}, "OK"},
			{[]any{"watch", "k"}, "ERR: ERR WATCH inside MULTI is not allowed"},
			{[]any{"discard"}, "OK"},
		})
		// A change by another client between WATCH and EXEC aborts EXEC.
		if err := conn.Do(ctx, "watch", "k").Err(); err != nil {
			t.Fatal(err)
		}
		c.Incr(ctx, "k")
		conn.Do(ctx, "multi")
		conn.Do(ctx, "incr", "k")
		if got := render(conn.Do(ctx, "exec").Result()); got != "<nil>" {
			t.Fatalf("EXEC after watched change: %q", got)
		}
		conn.Close()
	}
}

// TestWatchRace runs concurrent optimistic increments with WATCH/MULTI: the
// final value must equal the number of successful EXECs.
func TestWatchRace(t *testing.T) {
	s := startServer(t)
	const workers, perWorker = 8, 200
	var wg sync.WaitGroup
	var mu sync.Mutex
	committed, aborted := 0, 0
	for w := 0; w < workers; w++ {
		c := newClient(t, s, 3)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWorker; i++ {
				err := c.Watch(ctx, func(tx *redis.Tx) error {
					v, err := tx.Get(ctx, "counter").Int()
					if err != nil && err != redis.Nil {
						return err
					}
					_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
						p.Set(ctx, "counter", v+1, 0)
						return nil
					})
					return err
				}, "counter")
				mu.Lock()
				switch {
				case err == nil:
					committed++
				case errors.Is(err, redis.TxFailedErr):
					aborted++
				default:
					mu.Unlock()
					t.Error(err)
					return
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	c := newClient(t, s, 2)
	got, _ := c.Get(ctx, "counter").Int()
	if got != committed || committed+aborted != workers*perWorker {
		t.Fatalf("counter = %d, committed = %d, aborted = %d", got, committed, aborted)
	}
	t.Logf("committed %d, aborted %d", committed, aborted)
}

func TestWatchExpiredKey(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s, 2)
	conn := c.Conn()
	defer conn.Close()
	c.Set(ctx, "w", "v", time.Hour)
	conn.Do(ctx, "watch", "w")
	s.Clock().SetOffset(2 * time.Hour.Milliseconds())
	defer s.Clock().SetOffset(0)
	conn.Do(ctx, "multi")
	conn.Do(ctx, "set", "w", "x")
	if got := render(conn.Do(ctx, "exec").Result()); got != "<nil>" {
		t.Fatalf("EXEC after watched key expired: %q", got)
	}
}

func TestLua(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s, 2)
	c.Set(ctx, "x", "5", 0)
	steps := []step{
		{[]any{"eval", "return 1", "0"}, "1"},
		{[]any{"eval", "return 3.99", "0"}, "3"},
		{[]any{"eval", "return 'hi'", "0"}, "hi"},
		{[]any{"eval", "return {1, 'a', {2}, false, 'after-false-dropped?'}", "0"}, "[1 a [2] <nil> after-false-dropped?]"},
		{[]any{"eval", "return {1, nil, 3}", "0"}, "[1]"},
		{[]any{"eval", "return true", "0"}, "1"},
		{[]any{"eval", "return false", "0"}, "<nil>"},
		{[]any{"eval", "return nil", "0"}, "<nil>"},
		{[]any{"eval", "return {ok='FINE'}", "0"}, "FINE"},
		{[]any{"eval", "return {err='MYERR boom'}", "0"}, "ERR: MYERR boom"},
		{[]any{"eval", "return redis.error_reply('bad')", "0"}, "ERR: ERR bad"},
		{[]any{"eval", "return redis.status_reply('S')", "0"}, "S"},
		{[]any{"eval", "return redis.call('get', KEYS[1])", "1", "x"}, "5"},
		{[]any{"eval", "return redis.call('get', 'nokey')", "0"}, "<nil>"},
		{[]any{"eval", "return redis.call('get', 'nokey') == false", "0"}, "1"},
		{[]any{"eval", "return redis.call('incrby', KEYS[1], ARGV[1])", "1", "x", "10"}, "15"},
		{[]any{"eval", "return redis.call('set', 'y', 'z')", "0"}, "OK"},
		{[]any{"eval", "return type(redis.call('set', 'y', 'z'))", "0"}, "table"},
		{[]any{"eval", "return redis.pcall('incr', 'y')", "0"}, "ERR: ERR value is not an integer or out of range"},
		{[]any{"eval", "local r = redis.pcall('incr', 'y'); return r['err']", "0"}, "ERR value is not an integer or out of range"},
		{[]any{"eval", "return redis.call('nosuch')", "0"}, "ERR: ERR Unknown Redis command called from script script: b75fc1d8a2d0ba07a32a5c1d2bf4bc1d2339e5e0, on @user_script."},
		{[]any{"eval", "return 1", "2", "a"}, "ERR: ERR Number of keys can't be greater than number of args"},
		{[]any{"eval", "return 1", "-1"}, "ERR: ERR Number of keys can't be negative"},
		{[]any{"eval", "return 1", "x"}, "ERR: ERR value is not an integer or out of range"},
		{[]any{"evalsha", "ffffffffffffffffffffffffffffffffffffffff", "0"}, "ERR: NOSCRIPT No matching script. Please use EVAL."},
		{[]any{"script", "load", "return ARGV[1]"}, "098e0f0d1448c0a81dafe820f66d460eb09263da"},
		{[]any{"evalsha", "098e0f0d1448c0a81dafe820f66d460eb09263da", "0", "arg"}, "arg"},
		{[]any{"script", "exists", "098e0f0d1448c0a81dafe820f66d460eb09263da", "abc"}, "[1 0]"},
		{[]any{"eval", "return redis.call('eval', 'return 1', 0)", "0"}, "ERR: ERR This Redis command is not allowed from script script: 5fc8f9ecab5bdb8e59ea42bd8aa8a2c30f0e71a8, on @user_script."},
		{[]any{"eval_ro", "return redis.call('set', 'a', 'b')", "0"}, "ERR: ERR Write commands are not allowed from read-only scripts. script: 3e6f1a5a6d6f2fa0ef6f1c5a0ea3a3b5e6d5a6c3, on @user_script."},
	}
	for i, st := range steps {
		got := render(c.Do(ctx, st.cmd...).Result())
		want := st.want
		if strings.Contains(want, " script: ") {
			// The sha differs per script: compare the part before it.
			want = want[:strings.Index(want, " script: ")]
			if j := strings.Index(got, " script: "); j >= 0 {
				got = got[:j]
			}
		}
		if got != want {
			t.Errorf("step %d %v: got %q, want %q", i, st.cmd, got, want)
		}
	}
}

// TestLuaAtomic: a script that reads, sleeps in a busy loop and writes is
// never interleaved with concurrent INCRs.
func TestLuaAtomic(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s, 2)
	script := `local v = tonumber(redis.call('get', KEYS[1]) or '0')
for i = 1, 20000 do end
redis.call('set', KEYS[1], v + 1)
return v + 1`
	var wg sync.WaitGroup
	const n = 4
	for w := 0; w < n; w++ {
		wc := newClient(t, s, 2)
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if err := wc.Eval(ctx, script, []string{"ctr"}).Err(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if err := wc.Incr(ctx, "ctr").Err(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got, _ := c.Get(ctx, "ctr").Int(); got != n*200 {
		t.Fatalf("ctr = %d, want %d (lost updates mean scripts were not atomic)", got, n*200)
	}
}

func TestExpiryAndClockOffset(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s, 3)
	c.Set(ctx, "lazy", "v", 10*time.Second)
	c.Set(ctx, "active", "v", 10*time.Second)
	c.Set(ctx, "forever", "v", 0)
	if err := c.Do(ctx, "redline", "clock-offset", "20000").Err(); err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Do(ctx, "redline", "clock-offset").Int64(); v != 20000 {
		t.Fatalf("offset = %d", v)
	}
	tm := c.Time(ctx).Val()
	if d := time.Until(tm); d < 19*time.Second || d > 21*time.Second {
		t.Fatalf("TIME not offset: %v", d)
	}
	if c.Exists(ctx, "lazy").Val() != 0 {
		t.Fatal("lazy expiry: key still visible")
	}
	// Active expiry removes the other key without it being touched.
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.Lock()
		n := s.DB(0).Len()
		s.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("active expiry did not run: %d keys", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.Do(ctx, "redline", "clock-offset", "0")
	info := c.Info(ctx, "stats").Val()
	if !strings.Contains(info, "expired_keys:2") {
		t.Fatalf("INFO stats: %s", info)
	}
}

// rawConn sends raw bytes and reads one reply line.
func rawConn(t *testing.T, s *Server) (net.Conn, *bufio.Reader) {
	t.Helper()
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc, bufio.NewReader(nc)
}

func TestProtocolRobustness(t *testing.T) {
	s := startServer(t)
	good := newClient(t, s, 2)
	cases := []struct{ in, want string }{
		{"*1\r\n$600000000\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"*x\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
		{"*1\r\n:5\r\n", "-ERR Protocol error: expected '$', got ':'\r\n"},
		{"SET \"a b\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n"},
		{"PING\r\n*1\r\n$4\r\nPING\r\n", "+PONG\r\n+PONG\r\n"},
		{"ECHO \"a\\x41\"\r\n", "$2\r\naA\r\n"},
	}
	for _, tc := range cases {
		nc, r := rawConn(t, s)
		nc.Write([]byte(tc.in))
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, len(tc.want))
		if _, err := io_ReadFull(r, buf); err != nil || string(buf) != tc.want {
			t.Errorf("%q: got %q (%v), want %q", tc.in, buf, err, tc.want)
		}
		if strings.HasPrefix(tc.want, "-ERR Protocol") {
			if _, err := r.ReadByte(); err == nil {
				t.Errorf("%q: connection not closed after protocol error", tc.in)
			}
		}
	}
	// Random garbage, then a dropped half-command: others keep working.
	for i := 0; i < 20; i++ {
		nc, _ := rawConn(t, s)
		junk := make([]byte, 512)
		for j := range junk {
			junk[j] = byte(i*131 + j*7)
		}
		nc.Write(junk)
		nc.Close()
	}
	nc, _ := rawConn(t, s)
	nc.Write([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100\r\nabc"))
	nc.Close()
	// A large value in pieces works.
	big := strings.Repeat("x", 3<<20)
	if err := good.Set(ctx, "big", big, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v := good.Get(ctx, "big").Val(); v != big {
		t.Fatal("big value differs")
	}
	if err := good.Ping(ctx).Err(); err != nil {
		t.Fatalf("server stopped serving: %v", err)
	}
}

// TestManyIdleConnections opens 10k idle connections (fewer if the file
// limit is low) to a server process and checks it keeps serving.
func TestManyIdleConnections(t *testing.T) {
	var lim syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	n := 10000
	if int(lim.Cur)-200 < n {
		n = int(lim.Cur) - 200
	}
	p := startProc(t, freePort(t), "--dir", t.TempDir(), "--maxclients", "20000")
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", p.addr)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		conns = append(conns, c)
	}
	c := procClient(t, p)
	deadline := time.Now().Add(30 * time.Second)
	for {
		info := c.Info(ctx, "clients").Val()
		if strings.Contains(info, "connected_clients:"+strconv.Itoa(n+1)+"\r\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("want %d clients: %s", n+1, info)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for i := 0; i < 100; i++ {
		if err := c.Incr(ctx, "x").Err(); err != nil {
			t.Fatal(err)
		}
	}
	// And one of the idle ones still works.
	conns[n/2].Write([]byte("PING\r\n"))
	r := bufio.NewReader(conns[n/2])
	if line, _ := r.ReadString('\n'); line != "+PONG\r\n" {
		t.Fatalf("idle conn reply %q", line)
	}
	t.Logf("%d idle connections", n)
}

func TestMaxClientsAndAuth(t *testing.T) {
	s := startServer(t, "--requirepass", "secret", "--maxclients", "3")
	nc, r := rawConn(t, s)
	nc.Write([]byte("GET k\r\n"))
	if line, _ := r.ReadString('\n'); line != "-NOAUTH Authentication required.\r\n" {
		t.Fatalf("got %q", line)
	}
	nc.Write([]byte("AUTH nope\r\n"))
	if line, _ := r.ReadString('\n'); line != "-WRONGPASS invalid username-password pair or user is disabled.\r\n" {
		t.Fatalf("got %q", line)
	}
	nc.Write([]byte("AUTH secret\r\nPING\r\n"))
	if line, _ := r.ReadString('\n'); line != "+OK\r\n" {
		t.Fatalf("got %q", line)
	}
	c2, _ := rawConn(t, s)
	c3, _ := rawConn(t, s)
	_, _ = c2, c3
	time.Sleep(100 * time.Millisecond)
	_, r4 := rawConn(t, s)
	if line, _ := r4.ReadString('\n'); line != "-ERR max number of clients reached\r\n" {
		t.Fatalf("got %q", line)
	}
}
