package bench

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// missOrHit is the reply a test node gives a command: a GET of a key
// ending in an even digit misses, any other GET hits, a SET is +OK. The
// outcome an op got thus tells which reply it was given.
func missOrHit(cmd []string) string {
	if !strings.EqualFold(cmd[0], "GET") {
		return "+OK\r\n"
	}
	if k := cmd[1]; (k[len(k)-1]-'0')%2 == 0 {
		return "$-1\r\n"
	}
	return "$3\r\nabc\r\n"
}

func wantOutcome(b *pending) outcome {
	if !b.op.Set && (b.key[len(b.key)-1]-'0')%2 == 0 {
		return outMiss
	}
	return outOK
}

// closedLoop runs a closed loop of workers over one node served by serve
// and returns the result, every op the workers completed and, by op, the
// worker that sent it.
func closedLoop(t *testing.T, workers int, d time.Duration, serve func(net.Conn)) (*Result, []pending, []int) {
	t.Helper()
	rt := staticRouter(listen(t, serve))
	rt.lastRefresh.Store(time.Now().Add(time.Hour).UnixNano()) // no topology to refresh from
	kv := testKV()
	kv.Keys = 1000
	e := newEngine(Options{KV: kv, Concurrency: workers, Duration: d, OpTimeout: 2 * time.Second, Seed: 3}, rt)
	var mu sync.Mutex
	var ops []pending
	var who []int
	exec := e.exec
	e.exec = func(w *worker, ctx context.Context, batch []pending, clk clock) {
		exec(w, ctx, batch, clk)
		mu.Lock()
		for _, b := range batch {
			b.key = append([]byte(nil), b.key...)
			ops = append(ops, b)
			who = append(who, w.id)
		}
		mu.Unlock()
	}
	return e.traffic(context.Background()), ops, who
}

// Forty workers share one connection to the node: the replies, read in
// order, each go to the op they answer, and the node sees the ops of
// many workers in one read.
func TestSharedConnectionRepliesInOrder(t *testing.T) {
	var conns, cmds, reads atomic.Int64
	r, ops, _ := closedLoop(t, 40, 700*time.Millisecond, func(c net.Conn) {
		defer c.Close()
		conns.Add(1)
		br := bufio.NewReader(c)
		w := bufio.NewWriter(c)
		for {
			cmd, err := readCommand(br)
			if err != nil {
				return
			}
			cmds.Add(1)
			w.WriteString(missOrHit(cmd))
			if br.Buffered() == 0 {
				reads.Add(1)
				if w.Flush() != nil {
					return
				}
			}
		}
	})
	if conns.Load() != 1 {
		t.Fatalf("%d connections to the node, want the one shared by the 40 workers", conns.Load())
	}
	if r.Counts.Failed() != 0 || len(ops) < 1000 || int64(len(ops)) != r.Counts.TotalOK() {
		t.Fatalf("%d ops seen, ok %d, failed %d: want every op ok", len(ops), r.Counts.TotalOK(), r.Counts.Failed())
	}
	for _, b := range ops {
		if b.out != wantOutcome(&b) {
			t.Fatalf("op %q (set %v) got %v: a reply went to the wrong op", b.key, b.op.Set, b.out)
		}
	}
	if per := float64(cmds.Load()) / float64(reads.Load()); per < 2 {
		t.Errorf("%.1f commands per read on the node: the workers' ops are not written together", per)
	}
}

// The connection drops while every worker has an op in flight on it:
// exactly those ops fail (as timeouts: they may have run), one each, the
// next op redials (one reconnect) and the loop goes on.
func TestSharedConnectionDropFailsTheOpsInFlight(t *testing.T) {
	const workers, answered = 10, 300
	var conns atomic.Int64
	r, ops, who := closedLoop(t, workers, time.Second, func(c net.Conn) {
		defer c.Close()
		first := conns.Add(1) == 1
		br := bufio.NewReader(c)
		for n, held := 0, 0; ; n++ {
			cmd, err := readCommand(br)
			if err != nil {
				return
			}
			if first && n >= answered {
				// Every worker has one op in flight once this many are held.
				if held++; held == workers {
					return
				}
				continue
			}
			io.WriteString(c, missOrHit(cmd))
		}
	})
	if conns.Load() != 2 || r.Counts.Reconnects != 1 {
		t.Fatalf("%d connections, %d reconnects: want one drop and one redial", conns.Load(), r.Counts.Reconnects)
	}
	other := map[outcome]int{}
	timedOut := map[int]int{} // by worker
	var timeouts int
	for i, b := range ops {
		switch b.out {
		case outTimeout:
			timeouts++
			timedOut[who[i]]++
		case outOK, outMiss:
			if b.out != wantOutcome(&b) {
				t.Fatalf("op %q got %v: a reply went to the wrong op", b.key, b.out)
			}
		default:
			other[b.out]++
		}
	}
	if timeouts != workers || len(timedOut) != workers || len(other) != 0 {
		t.Fatalf("%d timeouts (by worker %v), other failures %v: want exactly the %d ops in flight failed, one a worker",
			timeouts, timedOut, other, workers)
	}
	if got := r.Counts.Timeouts[opGet] + r.Counts.Timeouts[opSet]; got != workers || r.Counts.Failed() != workers {
		t.Fatalf("counted %d timeouts, %d failed: want %d, every failure counted", got, r.Counts.Failed(), workers)
	}
	if ok := r.Counts.TotalOK(); ok <= answered {
		t.Fatalf("%d ok: the loop did not go on after the redial", ok)
	}
}
