package checker

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/redline-dev/redline/history"
)

// genCounter: nkeys counters, opsPerKey ops each (adds of 1..5 and reads),
// a fraction infoFrac of adds indeterminate (half landed), then a
// final-reads marker and one final read per key.
func genCounter(seed uint64, nkeys, opsPerKey, clients int, infoFrac float64) []history.Op {
	r := rand.New(rand.NewPCG(seed, 2))
	var sim []simOp
	nextProc := 0
	var end int64
	for k := range nkeys {
		key := fmt.Sprintf("c%d", k)
		tl := newTimeline(r, clients, &nextProc)
		start := len(sim)
		for range opsPerKey {
			c, call, lin, ret := tl.next()
			s := simOp{proc: tl.proc[c], key: key, call: call, lin: lin, ret: ret, typ: history.OK, completion: true, applied: true}
			if r.IntN(4) == 0 {
				s.f = "read"
			} else {
				s.f = "add"
				s.in = rawInt(int64(1 + r.IntN(5)))
				if r.Float64() < infoFrac {
					s.typ, s.err, s.applied = history.Info, "i/o timeout", r.IntN(2) == 0
					tl.retire(c)
				} else if r.IntN(2) == 0 {
					s.wait = &history.Wait{Want: 1, Acked: r.IntN(2)}
				}
			}
			end = max(end, ret)
			sim = append(sim, s)
		}
		applyCounter(sim[start:])
	}
	// Final reads.
	fin := end + 1000
	for k := range nkeys {
		key := fmt.Sprintf("c%d", k)
		s := simOp{proc: nextProc, f: "read", key: key, call: fin + 1000, lin: fin + 1500, ret: fin + 2000, typ: history.OK, completion: true}
		nextProc++
		sim = append(sim, s)
	}
	var cur = map[string]int64{}
	for _, s := range sim {
		if s.f == "add" && s.applied {
			n, _ := history.ParseInt(s.in)
			cur[s.key] += n
		}
	}
	for i := len(sim) - nkeys; i < len(sim); i++ {
		sim[i].out = rawInt(cur[sim[i].key])
	}
	ops := emit(sim)
	ops = append(ops, history.Op{Time: fin, Process: history.Nemesis, Type: history.Info, F: "final-reads"})
	slices.SortStableFunc(ops, func(a, b history.Op) int { return cmpInt(a.Time, b.Time) })
	for i := range ops {
		ops[i].Index = int64(i)
	}
	return ops
}

func applyCounter(ops []simOp) {
	order := make([]int, len(ops))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmpInt(ops[a].lin, ops[b].lin) })
	var cur int64
	for _, i := range order {
		s := &ops[i]
		switch s.f {
		case "read":
			s.out = rawInt(cur)
		case "add":
			if s.applied {
				n, _ := history.ParseInt(s.in)
				cur += n
			}
		}
	}
}

// genSet: nkeys sets, opsPerKey ops each (unique adds, reads with
// probability readFrac), infoFrac of adds indeterminate, final reads.
func genSet(seed uint64, nkeys, opsPerKey, clients int, infoFrac, readFrac float64) []history.Op {
	r := rand.New(rand.NewPCG(seed, 3))
	var sim []simOp
	nextProc := 0
	var end int64
	elem := int64(0)
	for k := range nkeys {
		key := fmt.Sprintf("s%d", k)
		tl := newTimeline(r, clients, &nextProc)
		start := len(sim)
		for range opsPerKey {
			c, call, lin, ret := tl.next()
			s := simOp{proc: tl.proc[c], key: key, call: call, lin: lin, ret: ret, typ: history.OK, completion: true, applied: true}
			if r.Float64() < readFrac {
				s.f = "read"
			} else {
				s.f = "add"
				elem++
				s.in = rawInt(elem)
				if r.Float64() < infoFrac {
					s.typ, s.err, s.applied = history.Info, "i/o timeout", r.IntN(2) == 0
					tl.retire(c)
				}
			}
			end = max(end, ret)
			sim = append(sim, s)
		}
		c, _, _, _ := tl.next()
		sim = append(sim, simOp{proc: tl.proc[c], f: "read", key: key, call: end + 5000, lin: end + 5500, ret: end + 6000, typ: history.OK, completion: true})
		applySet(sim[start:])
	}
	return emit(sim)
}

func applySet(ops []simOp) {
	order := make([]int, len(ops))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmpInt(ops[a].lin, ops[b].lin) })
	var cur []byte
	for _, i := range order {
		s := &ops[i]
		switch s.f {
		case "read":
			s.out = append(append([]byte{'['}, cur...), ']')
		case "add":
			if s.applied {
				if len(cur) > 0 {
					cur = append(cur, ',')
				}
				cur = append(cur, s.in...)
			}
		}
	}
}

// genListAppend: ntxns serializable transactions of 1-3 micro-ops over a
// pool of 8 active keys; a key retires after 16 appends.
func genListAppend(seed uint64, ntxns, clients int) []history.Op {
	r := rand.New(rand.NewPCG(seed, 4))
	nextProc := 0
	tl := newTimeline(r, clients, &nextProc)
	type mopSpec struct {
		app bool
		k   int
		v   int64
	}
	active := []int{0, 1, 2, 3, 4, 5, 6, 7}
	nextKey := 8
	appends := map[int]int{}
	var sim []simOp
	var specs [][]mopSpec
	for i := range ntxns {
		c, call, lin, ret := tl.next()
		// Serialize: linearization points strictly increasing across txns,
		// each txn overlapping a handful of others (as with ~10 clients).
		lin = int64(i) * 100
		call, ret = lin-int64(r.IntN(400))-1, lin+int64(r.IntN(400))+1
		_ = c
		n := 1 + r.IntN(3)
		var ms []mopSpec
		for range n {
			slot := r.IntN(len(active))
			k := active[slot]
			if r.IntN(2) == 0 {
				appends[k]++
				ms = append(ms, mopSpec{app: true, k: k, v: int64(appends[k])})
				if appends[k] >= 16 {
					active[slot] = nextKey
					nextKey++
				}
			} else {
				ms = append(ms, mopSpec{k: k})
			}
		}
		specs = append(specs, ms)
		sim = append(sim, simOp{proc: nextProc, f: "txn", key: "{t}", call: call, lin: lin, ret: ret, typ: history.OK, completion: true})
		nextProc++
	}
	// Final reads, one transaction per key, as the workload does after
	// healing: without them lost appends would be unknowable.
	for k := range nextKey {
		lin := int64(ntxns+k) * 100
		specs = append(specs, []mopSpec{{k: k}})
		sim = append(sim, simOp{proc: nextProc, f: "txn", key: "{t}", call: lin - 1, lin: lin, ret: lin + 1, typ: history.OK, completion: true})
		nextProc++
	}
	lists := map[int][]int64{}
	for i, ms := range specs {
		var inv, out []byte
		inv, out = append(inv, '['), append(out, '[')
		for j, m := range ms {
			if j > 0 {
				inv, out = append(inv, ','), append(out, ',')
			}
			if m.app {
				s := fmt.Sprintf(`["append","k%d",%d]`, m.k, m.v)
				inv, out = append(inv, s...), append(out, s...)
				lists[m.k] = append(lists[m.k], m.v)
				continue
			}
			inv = fmt.Appendf(inv, `["r","k%d",null]`, m.k)
			out = fmt.Appendf(out, `["r","k%d",[`, m.k)
			for x, v := range lists[m.k] {
				if x > 0 {
					out = append(out, ',')
				}
				out = rawIntAppend(out, v)
			}
			out = append(out, "]]"...)
		}
		sim[i].in, sim[i].out = append(inv, ']'), append(out, ']')
	}
	return emit(sim)
}

func rawIntAppend(b []byte, n int64) []byte { return append(b, rawInt(n)...) }

// withWindows adds a partition window every `every` ns lasting `dur` ns.
func withWindows(ops []history.Op, every, dur int64) []history.Op {
	var end int64
	for i := range ops {
		end = max(end, ops[i].Time)
	}
	for t := every / 2; t+dur < end; t += every {
		ops = append(ops,
			history.Op{Time: t, Process: history.Nemesis, Type: history.Info, F: "start-partition", Ext: &history.Ext{Nodes: []string{"n1"}}},
			history.Op{Time: t + dur, Process: history.Nemesis, Type: history.Info, F: "stop-partition", Ext: &history.Ext{Nodes: []string{"n1"}}})
	}
	slices.SortStableFunc(ops, func(a, b history.Op) int { return cmpInt(a.Time, b.Time) })
	for i := range ops {
		ops[i].Index = int64(i)
	}
	return ops
}

func TestGeneratedHistoriesAreValid(t *testing.T) {
	cases := map[string]struct {
		c   Checker
		ops []history.Op
	}{
		"counter":     {Counter(), genCounter(1, 20, 500, 4, 0.02)},
		"set":         {Set(), genSet(1, 20, 500, 4, 0.02, 0.05)},
		"list-append": {ListAppend(), genListAppend(1, 5000, 5)},
	}
	for name, tc := range cases {
		r := tc.c.Check(context.Background(), NewHistory(tc.ops))
		if r.Valid != Valid {
			t.Errorf("%s: %v %v", name, r.Valid, r.Figures)
		}
	}
}

func runBench(b *testing.B, c Checker, ops []history.Op) {
	b.Helper()
	b.ResetTimer()
	for range b.N {
		start, cpu := time.Now(), cpuTime()
		r := c.Check(context.Background(), NewHistory(ops))
		b.ReportMetric(time.Since(start).Seconds(), "s/check")
		b.ReportMetric((cpuTime() - cpu).Seconds(), "cpu-s/check")
		if r.Valid == Invalid {
			b.Fatalf("valid history judged invalid: %v", r.Figures)
		}
	}
}

// Each benchmark checks one history of about 1M client ops (2M entries).

func BenchmarkCounter1M(b *testing.B) { runBench(b, Counter(), genCounter(1, 1000, 1000, 5, 0.01)) }

func BenchmarkSet1M(b *testing.B) { runBench(b, Set(), genSet(1, 1000, 1000, 5, 0.01, 0.01)) }

func BenchmarkListAppend1M(b *testing.B) { runBench(b, ListAppend(), genListAppend(1, 1_000_000, 10)) }

func BenchmarkPerf1M(b *testing.B) {
	runBench(b, Perf(), stretch(genCounter(1, 1000, 1000, 5, 0.01), 600))
}

func BenchmarkRTO1M(b *testing.B) {
	ops := withWindows(stretch(genCounter(1, 1000, 1000, 5, 0.01), 600), int64(20*time.Second), int64(5*time.Second))
	runBench(b, RTO(), ops)
}

func BenchmarkRPO1M(b *testing.B) {
	ops := withWindows(stretch(genSet(1, 1000, 1000, 5, 0.01, 0.01), 600), int64(20*time.Second), int64(5*time.Second))
	runBench(b, RPO(), ops)
}

// stretch rescales times so that the history spans about `seconds`.
func stretch(ops []history.Op, seconds int64) []history.Op {
	var end int64
	for i := range ops {
		end = max(end, ops[i].Time)
	}
	f := float64(seconds) * 1e9 / float64(end)
	for i := range ops {
		ops[i].Time = int64(float64(ops[i].Time) * f)
	}
	return ops
}

// BenchmarkScaling checks histories of 250k and 1M ops to show the cost is
// near-linear in the history size (ops per key held constant).
func BenchmarkScaling(b *testing.B) {
	for _, n := range []int{250, 1000} { // keys; 1000 ops per key
		b.Run(fmt.Sprintf("counter-%dk", n), func(b *testing.B) { runBench(b, Counter(), genCounter(1, n, 1000, 5, 0.01)) })
		b.Run(fmt.Sprintf("set-%dk", n), func(b *testing.B) { runBench(b, Set(), genSet(1, n, 1000, 5, 0.01, 0.01)) })
		b.Run(fmt.Sprintf("register-%dk", n), func(b *testing.B) { runBench(b, Linearizable(), genRegister(1, n, 1000, 5, 0.02)) })
		b.Run(fmt.Sprintf("list-append-%dk", n), func(b *testing.B) { runBench(b, ListAppend(), genListAppend(1, n*1000, 10)) })
	}
}

// BenchmarkDecodeCheck is `redline check` in small: decode a stored
// history (JSON lines) and Run a workload's checkers on it, as one
// iteration. Besides the usual figures per iteration (-benchmem) it
// reports them per history entry (ns, bytes and allocations), and the
// heap the decoded history holds per entry (live-B/entry), which is what
// bounds the memory of checking a long history.
func BenchmarkDecodeCheck(b *testing.B) {
	day := int64(20 * time.Second)
	cases := []struct {
		name     string
		ops      []history.Op
		checkers []Checker
	}{
		{"counter", withWindows(stretch(genCounter(1, 100, 1000, 5, 0.01), 600), day, day/4),
			[]Checker{Counter(), RPO(), Perf(), RTO()}},
		{"register", withWindows(stretch(genRegister(1, 100, 1000, 5, 0.02), 600), day, day/4),
			[]Checker{Linearizable(), Perf(), RTO()}},
	}
	for _, tc := range cases {
		var buf bytes.Buffer
		for i := range tc.ops {
			if err := history.Encode(&buf, &tc.ops[i]); err != nil {
				b.Fatal(err)
			}
		}
		raw := buf.Bytes()
		entries := float64(len(tc.ops))
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			var live uint64
			b.ResetTimer()
			for range b.N {
				res, err := history.Decode(bytes.NewReader(raw), "bench")
				if err != nil {
					b.Fatal(err)
				}
				if live == 0 {
					b.StopTimer()
					var ms runtime.MemStats
					runtime.GC()
					runtime.ReadMemStats(&ms)
					live = ms.HeapAlloc - min(ms.HeapAlloc, before.HeapAlloc)
					b.StartTimer()
				}
				s := Run(context.Background(), res.Ops, tc.checkers, nil)
				if s.Valid == Invalid {
					b.Fatalf("valid history judged invalid: %v", s.Checkers)
				}
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			n := float64(b.N) * entries
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/entry")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/entry")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/entry")
			b.ReportMetric(float64(live)/entries, "live-B/entry")
		})
	}
}
