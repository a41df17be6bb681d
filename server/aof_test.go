package server

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The test binary doubles as a server process: with REDLINE_TEST_SERVER set
// it runs Main with the arguments in that variable (one per line), so tests
// can SIGKILL a real process.
func TestMain(m *testing.M) {
	if args := os.Getenv("REDLINE_TEST_SERVER"); args != "" {
		os.Exit(Main(strings.Split(args, "\n"), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

type proc struct {
	cmd  *exec.Cmd
	addr string
	log  *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func startProc(t *testing.T, port int, args ...string) *proc {
	t.Helper()
	all := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1"}, args...)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "REDLINE_TEST_SERVER="+strings.Join(all, "\n"))
	log := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, addr: fmt.Sprintf("127.0.0.1:%d", port), log: log}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", p.addr)
		if err == nil {
			c.Close()
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not start: %v\n%s", err, log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *proc) kill9(t *testing.T) {
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
}

func procClient(t *testing.T, p *proc) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: p.addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1, PoolSize: 20})
	t.Cleanup(func() { c.Close() })
	return c
}

// TestAOFKill9 writes from several clients with appendfsync always (and then
// everysec), SIGKILLs the process in the middle and checks that every
// acknowledged write survived the restart.
func TestAOFKill9(t *testing.T) {
	for _, fsync := range []string{"always", "everysec"} {
		t.Run(fsync, func(t *testing.T) {
			dir := t.TempDir()
			port := freePort(t)
			args := []string{"--dir", dir, "--appendonly", "yes", "--appendfsync", fsync}
			p := startProc(t, port, args...)
			c := procClient(t, p)
			var mu sync.Mutex
			acked := map[string]string{}
			ackedIncr := 0
			var wg sync.WaitGroup
			stop := make(chan struct{})
			for w := 0; w < 8; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						k, v := fmt.Sprintf("k%d:%d", w, i), fmt.Sprintf("v%d", i)
						if err := c.Set(ctx, k, v, 0).Err(); err != nil {
							return
						}
						if err := c.Incr(ctx, "ctr").Err(); err != nil {
							mu.Lock()
							acked[k] = v
							mu.Unlock()
							return
						}
						mu.Lock()
						acked[k] = v
						ackedIncr++
						mu.Unlock()
					}
				}(w)
			}
			for {
				mu.Lock()
				n := len(acked)
				mu.Unlock()
				if n >= 3000 {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			p.kill9(t)
			close(stop)
			wg.Wait()
			p2 := startProc(t, port, args...)
			c2 := procClient(t, p2)
			missing := 0
			for k, v := range acked {
				if got, err := c2.Get(ctx, k).Result(); err != nil || got != v {
					missing++
				}
			}
			ctr, _ := c2.Get(ctx, "ctr").Int()
			if missing > 0 || ctr < ackedIncr {
				t.Fatalf("after kill -9: %d of %d acknowledged SETs missing, ctr %d < acked %d\n%s", missing, len(acked), ctr, ackedIncr, p2.log.String())
			}
			t.Logf("%d acknowledged SETs, ctr %d (acked %d) all present", len(acked), ctr, ackedIncr)
		})
	}
}

func TestAOFTruncatedTail(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	args := []string{"--dir", dir, "--appendonly", "yes", "--appendfsync", "always"}
	p := startProc(t, port, args...)
	c := procClient(t, p)
	c.Set(ctx, "a", "1", 0)
	c.RPush(ctx, "l", "x", "y")
	c.Set(ctx, "ttl", "v", time.Hour)
	c.Eval(ctx, "redis.call('set', 'fromlua', 'yes'); return 1", nil)
	tx := c.TxPipeline()
	tx.Incr(ctx, "n")
	tx.Incr(ctx, "n")
	tx.Exec(ctx)
	p.kill9(t)
	path := filepath.Join(dir, "appendonlydir", "appendonly.aof")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A torn write: a command cut in the middle, and a transaction without EXEC.
	f.WriteString("*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$10\r\nabc")
	f.Close()
	p2 := startProc(t, port, args...)
	c2 := procClient(t, p2)
	if got := c2.Get(ctx, "a").Val(); got != "1" {
		t.Fatalf("a = %q", got)
	}
	if got := c2.LRange(ctx, "l", 0, -1).Val(); strings.Join(got, ",") != "x,y" {
		t.Fatalf("l = %v", got)
	}
	if ttl := c2.TTL(ctx, "ttl").Val(); ttl < 59*time.Minute {
		t.Fatalf("ttl = %v", ttl)
	}
	if c2.Get(ctx, "fromlua").Val() != "yes" || c2.Get(ctx, "n").Val() != "2" {
		t.Fatal("script or transaction effects lost")
	}
	if c2.Exists(ctx, "b").Val() != 0 {
		t.Fatal("partial command applied")
	}
	time.Sleep(50 * time.Millisecond)
	if !strings.Contains(p2.log.String(), "short read while loading the AOF") {
		t.Fatalf("no log line about the truncated tail:\n%s", p2.log.String())
	}
	// New writes after the truncation are readable after another restart.
	c2.Set(ctx, "after", "ok", 0)
	p2.kill9(t)
	f, _ = os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("*1\r\n$5\r\nMULTI\r\n*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n")
	f.Close()
	p3 := startProc(t, port, args...)
	c3 := procClient(t, p3)
	if c3.Get(ctx, "after").Val() != "ok" || c3.Get(ctx, "n").Val() != "2" {
		t.Fatalf("after second restart: after=%q n=%q\n%s", c3.Get(ctx, "after").Val(), c3.Get(ctx, "n").Val(), p3.log.String())
	}
}

func TestAOFRewrite(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, "--dir", dir, "--appendonly", "yes", "--appendfsync", "no")
	c := newClient(t, s, 3)
	for i := 0; i < 2000; i++ {
		c.Set(ctx, "k", strconv.Itoa(i), 0)
		c.HSet(ctx, "h", fmt.Sprintf("f%d", i%10), i)
	}
	c.ZAdd(ctx, "z", redis.Z{Score: 1.25, Member: "a"}, redis.Z{Score: -3, Member: "b"})
	c.SAdd(ctx, "s", "x", "y")
	c.RPush(ctx, "l", "1", "2", "3")
	c.Set(ctx, "e", "v", time.Hour)
	path := filepath.Join(dir, "appendonlydir", "appendonly.aof")
	s.Lock()
	s.aof.flush(false)
	s.Unlock()
	before, _ := os.Stat(path)
	if err := c.BgRewriteAOF(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	var after os.FileInfo
	for {
		after, _ = os.Stat(path)
		if after.Size() < before.Size()/4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("AOF not rewritten: %d -> %d bytes", before.Size(), after.Size())
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.Incr(ctx, "post")
	s.Close()
	// Reload into a fresh server and compare.
	s2 := startServer(t, "--dir", dir, "--appendonly", "yes")
	c2 := newClient(t, s2, 3)
	if c2.Get(ctx, "k").Val() != "1999" || c2.HGet(ctx, "h", "f9").Val() != "1999" || c2.ZScore(ctx, "z", "a").Val() != 1.25 ||
		c2.SCard(ctx, "s").Val() != 2 || strings.Join(c2.LRange(ctx, "l", 0, -1).Val(), "") != "123" || c2.Get(ctx, "post").Val() != "1" {
		t.Fatal("data differs after rewrite and reload")
	}
	if ttl := c2.TTL(ctx, "e").Val(); ttl < 59*time.Minute {
		t.Fatalf("ttl lost: %v", ttl)
	}
	t.Logf("AOF %d -> %d bytes", before.Size(), after.Size())
}

func TestAOFEnabledAtRuntime(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, "--dir", dir)
	c := newClient(t, s, 2)
	c.Set(ctx, "before", "1", 0)
	if err := c.ConfigSet(ctx, "appendonly", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	c.Set(ctx, "after", "2", 0)
	s.Close()
	s2 := startServer(t, "--dir", dir, "--appendonly", "yes")
	c2 := newClient(t, s2, 2)
	if c2.Get(ctx, "before").Val() != "1" || c2.Get(ctx, "after").Val() != "2" {
		t.Fatal("data written before/after CONFIG SET appendonly yes not in the AOF")
	}
}
