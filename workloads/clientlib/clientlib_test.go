package clientlib

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin/localcluster"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads"
	_ "github.com/redline-dev/redline/workloads/all" // workload(t, "ttl") looks it up by name
	"github.com/redline-dev/redline/workloads/ttl"
)

// needAdapters fails (never skips) when a bundled adapter's library is
// missing: CI installs them with scripts/install-deps.
func needAdapters(t *testing.T, name string) {
	t.Helper()
	switch name {
	case "redis-py":
		if err := exec.Command("/usr/bin/python3", "-c", "import redis.cluster").Run(); err != nil {
			t.Fatalf("redis-py adapter: Debian's python3-redis is missing (run scripts/install-deps): %v", err)
		}
	case "node-redis":
		if _, err := os.Stat("/usr/share/nodejs/redis/package.json"); err != nil {
			t.Fatalf("node-redis adapter: Debian's node-redis is missing (run scripts/install-deps): %v", err)
		}
	}
}

var allLibs = []string{"go-redis", "go-redis-noretry", "go-redis:readonly", "rueidis", "rueidis:cache", "rueidis:nopipe", "redis-py", "node-redis"}

func workload(t *testing.T, name string) workloads.Workload {
	t.Helper()
	w, err := workloads.New(name, workloads.Config{Prefix: "redline-test:"})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func op(f, key string, v any) history.Op {
	o := history.Op{F: f, Key: key, Type: history.Invoke}
	if v != nil {
		o.SetValue(v)
	}
	return o
}

// Every library runs the three workloads' ops on a real cluster and its
// completions decode as redline's own client's do.
func TestLibrariesOnLocalCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lc, err := localcluster.Start(ctx, t.TempDir(), 3, 0, time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Stop()
	for _, name := range allLibs {
		t.Run(name, func(t *testing.T) {
			needAdapters(t, name)
			c, err := Open(ctx, name, Options{Seeds: lc.Addrs, Timeout: time.Second, Concurrency: 4})
			if err != nil {
				t.Fatal(err)
			}
			info := c.Info()
			if info.Version == "" || info.Version == "unknown" || info.Library == "" || info.Retries == "" {
				t.Errorf("info %+v: library, version and retries must be named", info)
			}
			tag := strings.NewReplacer(":", "-").Replace(name)
			counter, set, register := workload(t, "counter"), workload(t, "set"), workload(t, "register")
			ck, sk, rk := "redline-test:counter:"+tag, "redline-test:set:"+tag, "redline-test:register:"+tag
			for _, d := range []int{2, 3} {
				if got := c.Invoke(ctx, counter, op("add", ck, d)); got.Type != history.OK {
					t.Fatalf("add: %+v %s", got, got.ErrorText())
				}
			}
			got := c.Invoke(ctx, counter, op("read", ck, nil))
			if got.Type != history.OK || string(got.Value) != "5" {
				t.Fatalf("counter read: %s %s (%s)", got.Type, got.Value, got.ErrorText())
			}
			if !strings.HasPrefix(name, "rueidis") && !slices.Contains(lc.Addrs, got.Node) {
				t.Errorf("read served by %q, not a node of the cluster %v: the node is not attributed", got.Node, lc.Addrs)
			}
			if got := c.Invoke(ctx, counter, op("read", ck+":absent", nil)); got.Type != history.OK || string(got.Value) != "null" {
				t.Fatalf("read of an absent key: %s %s (%s)", got.Type, got.Value, got.ErrorText())
			}
			for _, e := range []int{7, 3} {
				if got := c.Invoke(ctx, set, op("add", sk, e)); got.Type != history.OK {
					t.Fatalf("set add: %s %s", got.Type, got.ErrorText())
				}
			}
			if got := c.Invoke(ctx, set, op("read", sk, nil)); got.Type != history.OK || string(got.Value) != "[3,7]" {
				t.Fatalf("set read: %s %s (%s)", got.Type, got.Value, got.ErrorText())
			}
			if got := c.Invoke(ctx, register, op("write", rk, 1)); got.Type != history.OK {
				t.Fatalf("write: %s %s", got.Type, got.ErrorText())
			}
			if got := c.Invoke(ctx, register, op("cas", rk, []int{1, 4})); got.Type != history.OK {
				t.Fatalf("cas 1->4: %s %s", got.Type, got.ErrorText())
			}
			if got := c.Invoke(ctx, register, op("cas", rk, []int{1, 2})); got.Type != history.Fail || got.ErrorText() != workloads.CASMismatch {
				t.Fatalf("cas 1->2 on 4: %s %s, want fail %s", got.Type, got.ErrorText(), workloads.CASMismatch)
			}
			if got := c.Invoke(ctx, register, op("read", rk, nil)); got.Type != history.OK || string(got.Value) != "4" {
				t.Fatalf("register read: %s %s (%s)", got.Type, got.Value, got.ErrorText())
			}
			// ttl: SET PX, the read script (value and PTTL), PERSIST.
			tw, tk := workload(t, "ttl"), "redline-test:ttl:"+tag
			if got := c.Invoke(ctx, tw, op("set", tk, map[string]any{"value": "v1", "ttl_ms": 60000})); got.Type != history.OK {
				t.Fatalf("ttl set: %+v %s", got, got.ErrorText())
			}
			var tv ttl.Value
			if got := c.Invoke(ctx, tw, op("read", tk, nil)); got.Type != history.OK || got.DecodeValue(&tv) != nil ||
				tv.Got == nil || *tv.Got != "v1" || tv.PTTL == nil || *tv.PTTL <= 0 || *tv.PTTL > 60000 {
				t.Fatalf("ttl read: %s %s (%s)", got.Type, got.Value, got.ErrorText())
			}
			if got := c.Invoke(ctx, tw, op("persist", tk, nil)); got.Type != history.OK || string(got.Value) != `{"reply":1}` {
				t.Fatalf("ttl persist: %s %s (%s)", got.Type, got.Value, got.ErrorText())
			}
			if got := c.Invoke(ctx, tw, op("read", tk+":absent", nil)); got.Type != history.OK || string(got.Value) != `{"pttl":-2}` {
				t.Fatalf("ttl read of no key: %s %s (%s)", got.Type, got.Value, got.ErrorText())
			}
			if err := c.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
		})
	}
}

// dropProxy forwards one node's clients to a real redis-server, command
// by command, and drops the reply of the first INCRBY of each trapped key
// (the server has executed it): the client sees its connection die after
// sending, the case where a retrying library applies a write twice.
type dropProxy struct {
	l        net.Listener
	upstream string
	mu       sync.Mutex
	dropped  map[string]bool
	drops    atomic.Int64
}

func (p *dropProxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		go p.conn(c)
	}
}

func (p *dropProxy) conn(c net.Conn) {
	defer c.Close()
	up, err := net.Dial("tcp", p.upstream)
	if err != nil {
		return
	}
	defer up.Close()
	cr, ur := bufio.NewReader(c), bufio.NewReader(up)
	for {
		raw, args, err := readCommand(cr)
		if err != nil {
			return
		}
		if _, err := up.Write(raw); err != nil {
			return
		}
		reply, err := readValue(ur)
		if err != nil {
			return
		}
		if len(args) >= 2 && strings.EqualFold(args[0], "incrby") && strings.Contains(args[1], "trap") {
			p.mu.Lock()
			first := !p.dropped[args[1]]
			p.dropped[args[1]] = true
			p.mu.Unlock()
			if first {
				p.drops.Add(1)
				return // executed, reply lost
			}
		}
		if _, err := c.Write(reply); err != nil {
			return
		}
	}
}

// readCommand reads one RESP array of bulk strings, raw and parsed.
func readCommand(r *bufio.Reader) ([]byte, []string, error) {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return nil, nil, err
	}
	if len(line) < 3 || line[0] != '*' {
		return nil, nil, fmt.Errorf("not a command: %q", line)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(line[1:])))
	if err != nil {
		return nil, nil, err
	}
	raw := append([]byte(nil), line...)
	args := make([]string, n)
	for i := range args {
		h, err := r.ReadBytes('\n')
		if err != nil {
			return nil, nil, err
		}
		size, err := strconv.Atoi(strings.TrimSpace(string(h[1:])))
		if err != nil {
			return nil, nil, err
		}
		body := make([]byte, size+2)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, nil, err
		}
		raw = append(append(raw, h...), body...)
		args[i] = string(body[:size])
	}
	return raw, args, nil
}

// readValue reads one RESP2/RESP3 reply, raw.
func readValue(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return nil, err
	}
	raw := append([]byte(nil), line...)
	n, _ := strconv.Atoi(strings.TrimSpace(string(line[1:])))
	switch line[0] {
	case '$', '!', '=':
		if n < 0 {
			return raw, nil
		}
		body := make([]byte, n+2)
		if _, err := io.ReadFull(r, body); err != nil {
			return nil, err
		}
		return append(raw, body...), nil
	case '*', '~', '>', '%', '|':
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			v, err := readValue(r)
			if err != nil {
				return nil, err
			}
			raw = append(raw, v...)
		}
	}
	return raw, nil
}

// trapNode is a one-node cluster of a real redis-server that announces the
// address of a dropProxy in front of it: every client reaches it only
// through the proxy.
func trapNode(t *testing.T, ctx context.Context) (proxyAddr string, direct *redis.Client, p *dropProxy) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("redis-server not found: run scripts/install-deps")
	}
	real, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	pport := l.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	srv := exec.Command(bin, "--port", strconv.Itoa(real), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
		"--cluster-config-file", filepath.Join(dir, "nodes.conf"), "--save", "", "--appendonly", "no", "--dir", dir,
		"--cluster-announce-ip", "127.0.0.1", "--cluster-announce-port", strconv.Itoa(pport),
		"--cluster-announce-bus-port", strconv.Itoa(real+10000), "--logfile", filepath.Join(dir, "server.log"))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	direct = redis.NewClient(cluster.SendOnceOptions(fmt.Sprintf("127.0.0.1:%d", real), time.Second, 2))
	t.Cleanup(func() { direct.Close() })
	localcluster.Eventually(t, 10*time.Second, func() string {
		if err := direct.Ping(ctx).Err(); err != nil {
			return err.Error()
		}
		return ""
	})
	if err := direct.Do(ctx, "cluster", "addslotsrange", 0, 16383).Err(); err != nil {
		t.Fatal(err)
	}
	localcluster.Eventually(t, 10*time.Second, func() string {
		info, _ := direct.ClusterInfo(ctx).Result()
		if !strings.Contains(info, "cluster_state:ok") {
			return "cluster_state not ok yet"
		}
		return ""
	})
	p = &dropProxy{l: l, upstream: fmt.Sprintf("127.0.0.1:%d", real), dropped: map[string]bool{}}
	go p.serve()
	return l.Addr().String(), direct, p
}

// A library that sends a write again after losing its reply must say so in
// the history: the number of times the server executed the INCRBY equals
// the attempts recorded (1 when none are), and every send after the lost
// reply is counted as resent. An adapter that retried silently fails here.
func TestLibraryRetriesAreRecorded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	addr, direct, proxy := trapNode(t, ctx)
	counter := workload(t, "counter")
	for _, name := range []string{"go-redis", "go-redis-noretry", "rueidis", "rueidis:nopipe", "redis-py", "node-redis"} {
		t.Run(name, func(t *testing.T) {
			needAdapters(t, name)
			c, err := Open(ctx, name, Options{Seeds: []string{addr}, Timeout: time.Second, Concurrency: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			key := "redline-test:counter:trap:" + strings.ReplaceAll(name, ":", "-")
			before := proxy.drops.Load()
			got := c.Invoke(ctx, counter, op("add", key, 1))
			if proxy.drops.Load() != before+1 {
				t.Fatalf("the proxy dropped no reply: the test did not happen (%s %s)", got.Type, got.ErrorText())
			}
			execs, err := direct.Get(ctx, key).Int()
			if err != nil {
				t.Fatal(err)
			}
			sends := max(1, got.AttemptCount())
			t.Logf("%s: %s %q, server executed it %d times, history says sent %d, resent %d",
				name, got.Type, got.ErrorText(), execs, sends, got.ResentCount())
			if execs != sends {
				t.Fatalf("the server executed the INCRBY %d times, the history says it was sent %d times: a silent retry", execs, sends)
			}
			if got.ResentCount() != execs-1 {
				t.Fatalf("resent %d, want %d (each send after the lost reply)", got.ResentCount(), execs-1)
			}
			if execs == 1 && got.Type != history.Info {
				t.Fatalf("the only send lost its reply: want info, got %s", got.Type)
			}
		})
	}
}

// adapterScript is a fake client process: it reads a batch of ops and
// completes them in reverse order, each with a value derived from its own
// key, so a completion matched to the wrong op shows as a wrong value.
const adapterScript = `
import json, sys
hello = json.loads(sys.stdin.readline())
print(json.dumps({"type": "hello", "protocol": 1, "library": "fake", "version": "0.1", "retries": "none"}), flush=True)
batch = []
for line in sys.stdin:
    op = json.loads(line)
    batch.append(op)
    if len(batch) == int(sys.argv[1]):
        for o in reversed(batch):
            print(json.dumps({"id": o["id"], "type": "ok", "value": o["key"].rsplit(":", 1)[1], "elapsed_ms": 0.1}), flush=True)
        batch = []
    if len(sys.argv) > 2 and op["key"].endswith(":7"):
        print(json.dumps({"id": op["id"], "type": "ok", "value": "7"}), flush=True)
`

func fakeAdapter(t *testing.T, args string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fake.py")
	if err := os.WriteFile(path, []byte(adapterScript), 0o644); err != nil {
		t.Fatal(err)
	}
	return ExecPrefix + "/usr/bin/python3 " + path + " " + args
}

// Completions that arrive out of order reach the ops that sent them.
func TestExecMatchesCompletionsByID(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const n = 16
	c, err := Open(ctx, fakeAdapter(t, strconv.Itoa(n)), Options{Seeds: []string{"127.0.0.1:1"}, Timeout: time.Second, Concurrency: n})
	if err != nil {
		t.Fatal(err)
	}
	counter := workload(t, "counter")
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := c.Invoke(ctx, counter, op("read", fmt.Sprintf("redline-test:counter:%d", i), nil))
			if got.Type != history.OK || string(got.Value) != strconv.Itoa(i) {
				errs <- fmt.Errorf("op on key %d completed with %s %s", i, got.Type, got.Value)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if info := c.Info(); info.Library != "fake" || info.Version != "0.1" {
		t.Errorf("hello not read: %+v", info)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// A completion for an op that is not in flight (here: one completed
// twice) breaks the protocol, and Close says so.
func TestExecDuplicateCompletionIsAnError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Open(ctx, fakeAdapter(t, "1 dup"), Options{Seeds: []string{"127.0.0.1:1"}, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	counter := workload(t, "counter")
	for i := 0; i < 9; i++ {
		c.Invoke(ctx, counter, op("read", fmt.Sprintf("redline-test:counter:%d", i), nil))
	}
	err = c.Close()
	if err == nil || !strings.Contains(err.Error(), "not in flight") {
		t.Fatalf("close: %v, want a protocol error about a completion not in flight", err)
	}
}

// A hello that is missing or wrong stops the run before traffic.
func TestExecBadHello(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Open(ctx, ExecPrefix+"echo nonsense", Options{Seeds: []string{"127.0.0.1:1"}})
	if err == nil || !strings.Contains(err.Error(), "no JSON hello") {
		t.Fatalf("want a hello error, got %v", err)
	}
	if err := Validate("go-redis:nonsense"); err == nil {
		t.Fatal("an unknown client name must be refused")
	}
	if err := Validate("exec:"); err == nil {
		t.Fatal("exec without a command must be refused")
	}
}

// The fallback version of rueidis is go.mod's.
func TestRueidisVersionMatchesGoMod(t *testing.T) {
	b, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "github.com/redis/rueidis "+rueidisVersion+"\n") {
		t.Fatalf("go.mod does not require rueidis %s: update rueidisVersion", rueidisVersion)
	}
}

// go-redis:readonly serves reads from replicas, and the history marks
// them (judged as possibly stale); reads of the default go-redis are not.
func TestReplicaReadsAreMarked(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lc, err := localcluster.Start(ctx, t.TempDir(), 6, 1, time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Stop()
	// Replicas are listed in CLUSTER SLOTS once attached; the library
	// reads its slot map once at start, from whichever seed answers first,
	// so every node's map must list them (one node's is not enough: on a
	// loaded machine another node learned of a replica later, the library
	// read its map there, and sent every "replica" read to the primary).
	for _, addr := range lc.Addrs {
		admin := redis.NewClient(cluster.SendOnceOptions(addr, time.Second, 1))
		localcluster.Eventually(t, 30*time.Second, func() string {
			ranges, err := admin.ClusterSlots(ctx).Result()
			if err != nil {
				return err.Error()
			}
			for _, r := range ranges {
				if len(r.Nodes) < 2 {
					return addr + ": a slot range has no replica yet"
				}
			}
			return ""
		})
		admin.Close()
	}
	counter := workload(t, "counter")
	for _, tc := range []struct {
		name    string
		replica bool
	}{{"go-redis:readonly", true}, {"go-redis", false}} {
		c, err := Open(ctx, tc.name, Options{Seeds: lc.Addrs, Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if c.Info().ReplicaReads != tc.replica {
			t.Errorf("%s: info says replica reads %v", tc.name, c.Info().ReplicaReads)
		}
		key := "redline-test:counter:replica"
		if got := c.Invoke(ctx, counter, op("add", key, 1)); got.Type != history.OK {
			t.Fatalf("%s add: %s %s", tc.name, got.Type, got.ErrorText())
		}
		marked := 0
		for i := 0; i < 10; i++ {
			got := c.Invoke(ctx, counter, op("read", key, nil))
			if got.Type != history.OK {
				t.Fatalf("%s read: %s %s", tc.name, got.Type, got.ErrorText())
			}
			if got.FromReplica() {
				marked++
			}
			if i == 0 {
				t.Logf("%s: read served by %s, attempts %d, redirects %d", tc.name, got.Node, got.AttemptCount(), got.RedirectCount())
			}
		}
		if tc.replica && marked == 0 || !tc.replica && marked > 0 {
			t.Errorf("%s: %d of 10 reads marked as replica reads", tc.name, marked)
		}
		c.Close()
	}
}

// An adapter that dies mid-run: ops in flight end unknown, later ones fail
// (nothing was sent), and Close reports the exit.
func TestExecAdapterExit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	script := `read h; echo '{"type":"hello","protocol":1,"library":"dying","version":"1"}'; read op; exit 3`
	c, err := Open(ctx, ExecPrefix+script, Options{Seeds: []string{"127.0.0.1:1"}, Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	counter := workload(t, "counter")
	if got := c.Invoke(ctx, counter, op("add", "redline-test:counter:1", 1)); got.Type != history.Info {
		t.Fatalf("op in flight when the adapter died: %s %s, want info", got.Type, got.ErrorText())
	}
	if got := c.Invoke(ctx, counter, op("add", "redline-test:counter:1", 1)); got.Type != history.Fail {
		t.Fatalf("op after the adapter died: %s %s, want fail", got.Type, got.ErrorText())
	}
	if err := c.Close(); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("close: %v, want the exit status", err)
	}
}
