package bench

import (
	"bufio"
	"context"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/redline-dev/redline/workloads/kv"
)

// fakeNode is a minimal RESP server: +OK to SET, a 3-byte value to GET.
// It answers every complete command in a read before flushing, so the
// benchmarks measure the generator, not a server.
func fakeNode(tb testing.TB) string { return listen(tb, serveFake) }

// listen serves each connection to a loopback listener with serve.
func listen(tb testing.TB, serve func(net.Conn)) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return l.Addr().String()
}

func serveFake(c net.Conn) { serveFakeHolding(c, nil) }

// serveFakeHolding is serveFake calling hold (when not nil) before each
// reply: a node that stalls.
func serveFakeHolding(c net.Conn, hold func()) {
	defer c.Close()
	r := bufio.NewReader(c)
	w := bufio.NewWriter(c)
	var verb [8]byte
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		n, _ := atoi(line[1 : len(line)-2])
		isGet := false
		for i := 0; i < n; i++ {
			hdr, err := r.ReadSlice('\n')
			if err != nil {
				return
			}
			size, _ := atoi(hdr[1 : len(hdr)-2])
			if i == 0 && size <= len(verb) {
				if _, err := io.ReadFull(r, verb[:size]); err != nil {
					return
				}
				isGet = string(verb[:size]) == "GET"
				size = 0
			}
			if _, err := r.Discard(size + 2); err != nil {
				return
			}
		}
		if hold != nil {
			hold()
		}
		if isGet {
			w.WriteString("$3\r\nabc\r\n")
		} else {
			w.WriteString("+OK\r\n")
		}
		if r.Buffered() == 0 {
			if w.Flush() != nil {
				return
			}
		}
	}
}

// staticRouter sends every slot to addr.
func staticRouter(addr string) *router {
	r := &router{}
	empty := []string{}
	r.addrs.Store(&empty)
	n := r.node(addr)
	for s := range r.slots {
		r.slots[s].Store(n)
	}
	return r
}

func benchEngine(tb testing.TB, pipeline int) (*engine, *worker) {
	o := Options{KV: testKV(), Concurrency: 1, Duration: time.Hour, OpTimeout: time.Second, Seed: 1}
	o.KV.Pipeline = pipeline
	e := newEngine(o, staticRouter(fakeNode(tb)))
	e.clock = realClock{start: time.Now()}
	return e, e.workers[0]
}

// BenchmarkOp is one op through the whole hot path: generate, route,
// encode, write, read and parse the reply, record in the histograms.
func BenchmarkOp(b *testing.B) {
	for _, c := range []struct {
		p      int
		shared bool
	}{{1, false}, {16, false}, {1, true}, {16, true}} {
		p := c.p
		name := "pipeline=" + strconv.Itoa(p)
		if c.shared {
			name += "/shared" // over the node's shared connection (mux.go)
		}
		b.Run(name, func(b *testing.B) {
			e, w := benchEngine(b, p)
			w.shared = c.shared
			defer e.closeShared()
			ctx := context.Background()
			batch := make([]pending, p)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += p {
				now := e.clock.now()
				for j := range batch {
					batch[j].op, batch[j].sent, batch[j].intended = w.gen.Next(), now, now
				}
				e.exec(w, ctx, batch, e.clock)
				w.record(batch)
			}
			b.StopTimer()
			if ok := w.stats.c.TotalOK(); ok < int64(b.N) {
				b.Fatalf("%d ok of %d", ok, b.N)
			}
		})
	}
}

// BenchmarkRecord is the statistics part of the hot path alone.
func BenchmarkRecord(b *testing.B) {
	e := newEngine(Options{KV: testKV(), Concurrency: 1, Duration: time.Hour, OpTimeout: time.Second}, nil)
	w := e.workers[0]
	batch := []pending{{out: outOK, sent: time.Millisecond, done: 2 * time.Millisecond}}
	b.ReportAllocs()
	for b.Loop() {
		w.record(batch)
	}
}

// BenchmarkCollect is one second's collection with 50 busy workers.
func BenchmarkCollect(b *testing.B) {
	o := Options{KV: testKV(), Concurrency: 50, Duration: time.Hour, OpTimeout: time.Second}
	e := newEngine(o, nil)
	s := newSeries(e.workers, e.shards())
	batch := []pending{{out: outOK, sent: time.Millisecond, done: 2 * time.Millisecond}}
	b.ReportAllocs()
	at := time.Duration(0)
	for b.Loop() {
		for _, w := range e.workers {
			for range 100 {
				w.record(batch)
			}
		}
		at += time.Second
		s.collect(at)
	}
}

// BenchmarkSeriesMemory collects seconds of 50 busy workers and reports the
// memory each collected second keeps (what a long run grows by).
func BenchmarkSeriesMemory(b *testing.B) {
	o := Options{KV: testKV(), Concurrency: 50, Duration: time.Hour, OpTimeout: time.Second}
	e := newEngine(o, nil)
	s := newSeries(e.workers, e.shards())
	rng := rand.New(rand.NewPCG(1, 2))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	at := time.Duration(0)
	for b.Loop() {
		for _, w := range e.workers {
			for range 400 { // 20k ops/s over 50 workers
				d := time.Duration(rng.ExpFloat64() * float64(2*time.Millisecond))
				w.record([]pending{{out: outOK, sent: 0, done: d, op: kv.Op{Set: rng.IntN(2) == 0}}})
			}
		}
		at += time.Second
		s.collect(at)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(b.N), "retained-B/s")
	runtime.KeepAlive(s)
}

// BenchmarkDispatch is the open loop's own part of an op: the dispatcher
// generates, routes and queues it, a lane takes it from the queue.
func BenchmarkDispatch(b *testing.B) {
	o := Options{KV: testKV(), Concurrency: 1, Rate: 1e9, Duration: time.Hour, OpTimeout: time.Second, Seed: 1}
	e := newEngine(o, staticRouter("127.0.0.1:1"))
	var q *nodeQueue
	d := e.newDispatcher(func(_ uint32, nq *nodeQueue) { q = nq })
	ctx := context.Background()
	batch := make([]pending, 16)
	now := time.Duration(0)
	b.ReportAllocs()
	for b.Loop() {
		now += time.Nanosecond // one op due per iteration at 1e9 ops/s
		d.pump(now)
		q.take(ctx, batch, false)
	}
}
