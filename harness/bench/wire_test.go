package bench

import (
	"bufio"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// KB/sec counts every byte of request and reply, as memtier's: a GET
// moves its command out and its value back, not nothing. Both closed-loop
// paths (the shared connection and a connection per worker) count each
// op's bytes exactly.
func TestWireBytesCountRequestsAndReplies(t *testing.T) {
	for _, perWorker := range []bool{false, true} {
		serve := func(c net.Conn) {
			defer c.Close()
			br := bufio.NewReader(c)
			for {
				cmd, err := readCommand(br)
				if err != nil {
					return
				}
				if _, err := c.Write([]byte(missOrHit(cmd))); err != nil {
					return
				}
			}
		}
		rt := staticRouter(listen(t, serve))
		rt.lastRefresh.Store(time.Now().Add(time.Hour).UnixNano())
		kv := testKV()
		kv.Keys = 1000
		e := newEngine(Options{KV: kv, Concurrency: 4, Duration: 300 * time.Millisecond, OpTimeout: 2 * time.Second, Seed: 3, ConnPerWorker: perWorker}, rt)
		var mu sync.Mutex
		var ops []pending
		exec := e.exec
		e.exec = func(w *worker, ctx context.Context, batch []pending, clk clock) {
			exec(w, ctx, batch, clk)
			mu.Lock()
			for _, b := range batch {
				b.key = append([]byte(nil), b.key...)
				ops = append(ops, b)
			}
			mu.Unlock()
		}
		r := e.traffic(context.Background())
		if r.Counts.Failed() != 0 || int64(len(ops)) != r.Counts.TotalOK() || r.Counts.OK[opGet] == 0 {
			t.Fatalf("conn per worker %v: %d ops seen, ok %d (get %d), failed %d", perWorker, len(ops), r.Counts.TotalOK(), r.Counts.OK[opGet], r.Counts.Failed())
		}
		var want [numOps]int64
		for _, b := range ops {
			var req []byte
			op := opGet
			if b.op.Set {
				op = opSet
				req = appendCmd(nil, cmdSET, b.key, e.value[:b.op.Size])
			} else {
				req = appendCmd(nil, cmdGET, b.key)
			}
			rep := missOrHit([]string{string(cmdNames[op]), string(b.key)})
			if got := int64(len(req) + len(rep)); b.wire != got {
				t.Fatalf("conn per worker %v: %s %q counted %d bytes, want %d (request %d + reply %d)", perWorker, opNames[op], b.key, b.wire, got, len(req), len(rep))
			}
			want[op] += b.wire
		}
		if r.Counts.Wire != want {
			t.Errorf("conn per worker %v: counted %v bytes by op, want %v", perWorker, r.Counts.Wire, want)
		}
		get := float64(want[opGet]) / 1024 / r.DurationS
		if r.Ops["get"].KBPerS != get || r.Ops["get"].KBPerS == 0 {
			t.Errorf("GET KB/sec %v, want %v", r.Ops["get"].KBPerS, get)
		}
		if tot := float64(want[opGet]+want[opSet]) / 1024 / r.DurationS; diff(r.Ops["total"].KBPerS, tot) > 1e-9 {
			t.Errorf("total KB/sec %v, want %v", r.Ops["total"].KBPerS, tot)
		}
	}
}

var cmdNames = [numOps][]byte{opGet: cmdGET, opSet: cmdSET}

// readReply counts the bytes of every kind of reply, nested ones too.
func TestReplySize(t *testing.T) {
	for _, raw := range []string{"+OK\r\n", "-MOVED 3999 127.0.0.1:6381\r\n", ":12\r\n", "$-1\r\n", "$5\r\nhello\r\n",
		"*2\r\n$1\r\na\r\n*2\r\n:1\r\n$0\r\n\r\n", "*-1\r\n"} {
		c := &conn{r: bufio.NewReader(strings.NewReader(raw + "+NEXT\r\n"))}
		rp, err := c.readReply()
		if err != nil || rp.size != len(raw) {
			t.Errorf("%q: size %d (%v), want %d", raw, rp.size, err, len(raw))
		}
	}
}
