package bench

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// scriptedNode answers each command with reply(cmd, asking); asking is
// true when the previous command on the connection was ASKING.
func scriptedNode(t *testing.T, reply func(cmd []string, asking bool) string) string {
	return listen(t, func(c net.Conn) {
		defer c.Close()
		r := bufio.NewReader(c)
		asking := false
		for {
			cmd, err := readCommand(r)
			if err != nil {
				return
			}
			if strings.EqualFold(cmd[0], "ASKING") {
				asking = true
				io.WriteString(c, "+OK\r\n")
				continue
			}
			io.WriteString(c, reply(cmd, asking))
			asking = false
		}
	})
}

func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, _ := atoi([]byte(strings.TrimSpace(line[1:])))
	cmd := make([]string, n)
	for i := range cmd {
		hdr, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		size, _ := atoi([]byte(strings.TrimSpace(hdr[1:])))
		b := make([]byte, size+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		cmd[i] = string(b[:size])
	}
	return cmd, nil
}

// One op through a cluster where node A redirects, node B serves: MOVED
// is followed and updates the slot, ASK is followed with ASKING and does
// not, TRYAGAIN is retried, CLUSTERDOWN ends the op as an error; each is
// counted.
// Both over a worker's own connection and over the node's shared one.
func TestRedirectsFollowedAndCounted(t *testing.T) {
	overBothConns(t, testRedirectsFollowedAndCounted)
}

// overBothConns runs test over a worker's own connections and over the
// nodes' shared ones (the closed loop's, mux.go).
func overBothConns(t *testing.T, test func(t *testing.T, shared bool)) {
	for _, shared := range []bool{false, true} {
		name := "own"
		if shared {
			name = "shared"
		}
		t.Run(name, func(t *testing.T) { test(t, shared) })
	}
}

func testRedirectsFollowedAndCounted(t *testing.T, shared bool) {
	var mu sync.Mutex
	mode := "moved"
	tries := 0
	var b string
	b = scriptedNode(t, func(cmd []string, asking bool) string {
		mu.Lock()
		defer mu.Unlock()
		if mode == "ask" && !asking {
			return "-ERR B got the ASK op without ASKING\r\n"
		}
		return "+OK\r\n"
	})
	a := scriptedNode(t, func(cmd []string, asking bool) string {
		mu.Lock()
		defer mu.Unlock()
		switch mode {
		case "moved":
			return "-MOVED 1 " + b + "\r\n"
		case "ask":
			return "-ASK 1 " + b + "\r\n"
		case "tryagain":
			tries++
			if tries < 3 {
				return "-TRYAGAIN Multiple keys request during rehashing of slot\r\n"
			}
			return "+OK\r\n"
		}
		return "-CLUSTERDOWN The cluster is down\r\n"
	})
	o := Options{KV: testKV(), Concurrency: 1, Duration: time.Hour, OpTimeout: time.Second}
	rt := staticRouter(a)
	rt.lastRefresh.Store(time.Now().Add(time.Hour).UnixNano()) // no topology to refresh from
	e := newEngine(o, rt)
	e.clock = realClock{start: time.Now()}
	w := e.workers[0]
	w.shared = shared
	defer e.closeShared()
	one := func() pending {
		batch := []pending{{op: w.gen.Next()}}
		batch[0].op.Set, batch[0].op.Size = true, 8
		e.exec(w, context.Background(), batch, e.clock)
		w.record(batch)
		return batch[0]
	}
	setMode := func(m string) { mu.Lock(); mode = m; mu.Unlock() }

	setMode("ask")
	p := one()
	if p.out != outOK || w.stats.c.Ask != 1 {
		t.Fatalf("ASK: outcome %v, %d ASK counted", p.out, w.stats.c.Ask)
	}
	// On the wire: the SET and the ASK reply, then ASKING, +OK, the SET
	// again and its +OK (KB/sec counts them all).
	set := len(appendCmd(nil, cmdSET, p.key, e.value[:8]))
	if want := int64(set + len("-ASK 1 "+b+"\r\n") + len(appendCmd(nil, cmdASKING)) + len("+OK\r\n") + set + len("+OK\r\n")); p.wire != want {
		t.Errorf("ASK: %d bytes on the wire counted, want %d", p.wire, want)
	}
	if got := rt.addr(rt.primary(0)); got != a {
		t.Errorf("ASK changed the slot map to %s: it is a one-off redirect", got)
	}
	setMode("tryagain")
	if p := one(); p.out != outOK || w.stats.c.TryAgain != 2 {
		t.Fatalf("TRYAGAIN: outcome %v, %d counted, want ok after 2", p.out, w.stats.c.TryAgain)
	}
	setMode("clusterdown")
	if p := one(); p.out != outError || w.stats.c.ClusterDown != 1 || w.stats.c.Errors[opSet] != 1 {
		t.Fatalf("CLUSTERDOWN: outcome %v, counts %+v", p.out, w.stats.c)
	}
	setMode("moved")
	p = one()
	if p.out != outOK || w.stats.c.Moved != 1 {
		t.Fatalf("MOVED: outcome %v, %d counted", p.out, w.stats.c.Moved)
	}
	if got := rt.addr(rt.primary(p.slot)); got != b {
		t.Errorf("after MOVED the slot is served by %s, want %s", got, b)
	}
	if w.stats.c.Reconnects != 0 {
		t.Errorf("%d reconnects without a broken connection", w.stats.c.Reconnects)
	}
}

// A node that dies mid-run costs its ops and a reconnect, never the run.
// Both over a worker's own connection and over the node's shared one.
func TestBrokenConnectionIsRedialled(t *testing.T) {
	overBothConns(t, testBrokenConnectionIsRedialled)
}

func testBrokenConnectionIsRedialled(t *testing.T, shared bool) {
	var mu sync.Mutex
	hangup := false
	addr := scriptedNode(t, func(cmd []string, _ bool) string {
		mu.Lock()
		defer mu.Unlock()
		if hangup {
			hangup = false
			return "" // no reply: the client times out
		}
		return "+OK\r\n"
	})
	o := Options{KV: testKV(), Concurrency: 1, Duration: time.Hour, OpTimeout: 200 * time.Millisecond}
	rt := staticRouter(addr)
	rt.lastRefresh.Store(time.Now().Add(time.Hour).UnixNano())
	e := newEngine(o, rt)
	e.clock = realClock{start: time.Now()}
	w := e.workers[0]
	w.shared = shared
	defer e.closeShared()
	run := func() outcome {
		batch := []pending{{op: w.gen.Next()}}
		e.exec(w, context.Background(), batch, e.clock)
		w.record(batch)
		return batch[0].out
	}
	if out := run(); out != outOK && out != outMiss {
		t.Fatalf("first op %v", out)
	}
	mu.Lock()
	hangup = true
	mu.Unlock()
	if out := run(); out != outTimeout {
		t.Fatalf("unanswered op: %v, want timeout", out)
	}
	if out := run(); out != outOK && out != outMiss {
		t.Fatalf("op after the timeout: %v", out)
	}
	if w.stats.c.Reconnects != 1 {
		t.Errorf("%d reconnects, want 1", w.stats.c.Reconnects)
	}
}
