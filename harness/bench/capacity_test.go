package bench

import (
	"context"
	"fmt"
	"html"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseSLO(t *testing.T) {
	s, err := ParseSLO("p99<=2ms, p99.9<=10ms,errors<=0.1%,max<=1s,mean<=500us")
	if err != nil {
		t.Fatal(err)
	}
	want := []Objective{
		{Metric: "p99", Quantile: 99, Limit: 2}, {Metric: "p99.9", Quantile: 99.9, Limit: 10},
		{Metric: "errors", Limit: 0.1}, {Metric: "max", Limit: 1000}, {Metric: "mean", Limit: 0.5},
	}
	if len(s.Objectives) != len(want) {
		t.Fatalf("objectives %+v", s.Objectives)
	}
	for i, w := range want {
		g := s.Objectives[i]
		if g.Metric != w.Metric || g.Quantile != w.Quantile || g.Limit != w.Limit {
			t.Errorf("objective %d = %+v, want %+v", i, g, w)
		}
	}
	for _, bad := range []string{"", "p99<2ms", "p99<=2", "p99<=-1ms", "p100<=1ms", "errors<=5", "latency<=1ms", "p99>=1ms"} {
		if _, err := ParseSLO(bad); err == nil {
			t.Errorf("ParseSLO(%q) accepted", bad)
		}
	}
}

// fakeCluster answers a step like a queue with a knee: p99 grows as
// 0.5 ms / (1 - rate/saturation); shards and the generator as configured.
type fakeCluster struct {
	saturation float64
	slowShard  int     // -1: all shards alike
	genCores   float64 // at and beyond the knee
	dispatchMs float64 // at and beyond the knee
	errPct     float64 // beyond the knee
	knee       float64 // where genCores/dispatchMs/errPct begin
	rates      []float64
}

func (f *fakeCluster) measure(_ context.Context, rate float64) (Step, error) {
	f.rates = append(f.rates, rate)
	p99 := 1e6
	if rate < f.saturation {
		p99 = 0.5 / (1 - rate/f.saturation)
	}
	s := Step{OKPerS: rate, Cores: 2, GeneratorCores: 0.3, Latency: map[string]float64{"p50": p99 / 4, "p99": p99, "p99.9": p99 * 2, "max": p99 * 3}}
	if f.knee > 0 && rate >= f.knee {
		s.GeneratorCores, s.DispatchLagMaxMs, s.ErrorPct = f.genCores, f.dispatchMs, f.errPct
	}
	for i, name := range []string{"n1", "n2", "n3"} {
		sh := ShardStep{Shard: name, OKPerS: rate / 3, P50Ms: p99 / 4, P99Ms: p99, P999Ms: 2 * p99}
		if f.slowShard >= 0 && i != f.slowShard {
			sh.P99Ms, sh.P999Ms = 0.5, 1
		}
		s.Shards = append(s.Shards, sh)
	}
	return s, nil
}

func slo(t *testing.T, s string) SLO {
	t.Helper()
	o, err := ParseSLO(s)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// A knee at 45,000 ops/s for p99<=2ms: the ramp doubles from 1,000 to
// 64,000 (the first miss), bisection narrows it to within 5%.
func TestSearchFindsTheKnee(t *testing.T) {
	f := &fakeCluster{saturation: 60000, slowShard: -1}
	c, err := Search(context.Background(), SearchOptions{SLO: slo(t, "p99<=2ms"), Start: 1000, Measure: f.measure})
	if err != nil {
		t.Fatal(err)
	}
	if c.Rate > 45000 || c.Rate < 0.95*45000 {
		t.Errorf("capacity %v, want within 5%% below the knee at 45000 (rates tried %v)", c.Rate, f.rates)
	}
	if c.Bound <= 45000 || c.Bound > 1.05*c.Rate+1 {
		t.Errorf("bound %v: the first missing rate must lie above the knee, within 5%% of %v", c.Bound, c.Rate)
	}
	if f.rates[0] != 1000 || f.rates[6] != 64000 {
		t.Errorf("ramp %v, want 1000 doubling to 64000", f.rates)
	}
	if len(c.Steps) != len(f.rates) || c.Best == nil || c.Best.Rate != c.Rate || !c.Best.Met {
		t.Errorf("steps %d of %d rates, best %+v", len(c.Steps), len(f.rates), c.Best)
	}
	curve := c.Curve()
	for i := 1; i < len(curve); i++ {
		if curve[i].Rate < curve[i-1].Rate {
			t.Fatalf("curve not by rate: %v", curve)
		}
	}
	if c.LimitKind != "cluster" {
		t.Errorf("limit %s: %s; every shard alike with the generator on time is the cluster as a whole", c.LimitKind, c.Limit)
	}
	if got, want := c.CapacityLine(), fmt.Sprintf("capacity: %.0f ops/s at p99<=2ms", c.Rate); got != want {
		t.Errorf("line %q, want %q", got, want)
	}
}

// What limited the rate is read from the first missing step.
func TestSearchNamesTheLimit(t *testing.T) {
	cases := []struct {
		name string
		f    fakeCluster
		slo  string
		kind string
		says string
	}{
		{"one shard", fakeCluster{saturation: 60000, slowShard: 1}, "p99<=2ms", "shard", "shard n2"},
		{"host contention", fakeCluster{saturation: 60000, slowShard: -1, knee: 40000, genCores: 1.2, dispatchMs: 30}, "p99<=2ms", "host", "host contention"},
		{"one shard on a busy host", fakeCluster{saturation: 60000, slowShard: 1, knee: 40000, genCores: 1.0, dispatchMs: 30}, "p99<=2ms", "host", "shard n2"},
		{"generator", fakeCluster{saturation: 60000, slowShard: -1, knee: 40000, genCores: 1.95, dispatchMs: 30}, "p99<=2ms", "generator", "its own CPU"},
		{"errors", fakeCluster{saturation: 1e9, slowShard: -1, knee: 20000, errPct: 2}, "p99<=2ms,errors<=0.5%", "errors", "2% of ops failed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Search(context.Background(), SearchOptions{SLO: slo(t, tc.slo), Start: 1000, Measure: tc.f.measure})
			if err != nil {
				t.Fatal(err)
			}
			if c.LimitKind != tc.kind || !strings.Contains(c.Limit, tc.says) {
				t.Errorf("limit %s: %q, want %s saying %q", c.LimitKind, c.Limit, tc.kind, tc.says)
			}
		})
	}
}

// A cluster that misses at the first rate: the search walks down; when
// nothing meets the objectives the capacity is 0, said as such.
func TestSearchBelowTheStart(t *testing.T) {
	f := &fakeCluster{saturation: 5000, slowShard: -1}
	c, err := Search(context.Background(), SearchOptions{SLO: slo(t, "p99<=2ms"), Start: 16000, Measure: f.measure})
	if err != nil {
		t.Fatal(err)
	}
	if c.Rate > 3750 || c.Rate < 0.95*3750 {
		t.Errorf("capacity %v, want just below 3750 (rates %v)", c.Rate, f.rates)
	}
	f = &fakeCluster{saturation: 50, slowShard: -1}
	c, err = Search(context.Background(), SearchOptions{SLO: slo(t, "p99<=2ms"), Start: 1000, Measure: f.measure})
	if err != nil {
		t.Fatal(err)
	}
	if c.Rate != 0 || c.Best != nil || !strings.Contains(c.CapacityLine(), "no rate tried met it") {
		t.Errorf("capacity %v, line %q", c.Rate, c.CapacityLine())
	}
}

// A step that did not deliver its rate misses, whatever its latency.
func TestJudgeNeedsTheRate(t *testing.T) {
	s := Step{Rate: 10000, OKPerS: 8000, Latency: map[string]float64{"p99": 1}}
	Judge(&s, slo(t, "p99<=2ms"))
	if s.Met || !strings.Contains(strings.Join(s.Missed, ";"), "delivered 8,000 of 10,000") {
		t.Errorf("met %v, missed %v", s.Met, s.Missed)
	}
	s = Step{Rate: 10000, OKPerS: 10000, Latency: map[string]float64{}}
	Judge(&s, slo(t, "p99<=2ms"))
	if s.Met {
		t.Errorf("a step without latency figures met the objective")
	}
}

func TestNumbersForPeople(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 2340: "2,340", 1234567: "1,234,567", 0.01234: "0.0123", 1.5: "1.5", 12.34: "12.3", 999.4: "999", -1500: "-1,500"} {
		if got := Num(in); got != want {
			t.Errorf("Num(%v) = %q, want %q", in, got, want)
		}
	}
}

// A lucky step: the rate the search settles on misses when measured
// again, so the answer falls back to the next lower rate that met.
func TestSearchConfirms(t *testing.T) {
	f := &fakeCluster{saturation: 60000, slowShard: -1}
	seen := map[float64]int{}
	measure := func(ctx context.Context, rate float64) (Step, error) {
		s, err := f.measure(ctx, rate)
		seen[rate]++
		if rate == 32000 && seen[rate] > 1 { // met once, then missed
			s.Latency["p99"] = 50
		}
		return s, err
	}
	c, err := Search(context.Background(), SearchOptions{SLO: slo(t, "p99<=2ms"), Start: 1000, MaxRate: 32000, Confirm: true, Measure: measure})
	if err != nil {
		t.Fatal(err)
	}
	// 32000 misses when measured again: the bisection goes on between
	// 16000 and it (24000, 28000, 30000, 31000) instead of answering
	// 16000, half the knee away, and 31000 is confirmed.
	if c.Rate != 31000 || !c.Confirmed || c.Bound != 32000 {
		t.Errorf("capacity %v (confirmed %v, bound %v), want 31000 confirmed below the unconfirmed 32000 (rates %v)", c.Rate, c.Confirmed, c.Bound, f.rates)
	}
	if want := []float64{1000, 2000, 4000, 8000, 16000, 32000, 32000, 24000, 28000, 30000, 31000, 31000}; !slices.Equal(f.rates, want) {
		t.Errorf("rates %v, want %v", f.rates, want)
	}
	// Every rate meets once and misses when measured again: no answer,
	// said as such.
	flaky := map[float64]int{}
	c, err = Search(context.Background(), SearchOptions{SLO: slo(t, "p99<=2ms"), Start: 1000, MaxRate: 2000, Confirm: true, Measure: func(ctx context.Context, rate float64) (Step, error) {
		s, err := f.measure(ctx, rate)
		if flaky[rate]++; flaky[rate] > 1 {
			s.Latency["p99"] = 50
		}
		return s, err
	}})
	if err != nil || c.Rate != 0 || !strings.Contains(c.CapacityLine(), "no rate met it twice: 1,000, ") || !strings.Contains(c.CapacityLine(), "2,000 ops/s met it once") || len(c.Steps) > 24+6 {
		t.Errorf("flaky: capacity %v, line %q (%v)", c.Rate, c.CapacityLine(), err)
	}
	c, err = Search(context.Background(), SearchOptions{SLO: slo(t, "p99<=2ms"), Start: 1000, Confirm: true, Measure: (&fakeCluster{saturation: 60000, slowShard: -1}).measure})
	if err != nil || !c.Confirmed || c.Rate < 0.95*45000 || c.Rate > 45000 {
		t.Errorf("a steady cluster: capacity %v confirmed %v (%v)", c.Rate, c.Confirmed, err)
	}
}

// One stall far below the knee (a step at 8,000 ops/s misses once, as a
// shared host's burst makes it) does not bound the search: the rate is
// measured again, meets, and the ramp goes on to the knee at 45,000. A
// rate past the knee misses twice and bounds it.
func TestSearchRemeasuresAMiss(t *testing.T) {
	f := &fakeCluster{saturation: 60000, slowShard: -1}
	seen := map[float64]int{}
	measure := func(ctx context.Context, rate float64) (Step, error) {
		s, err := f.measure(ctx, rate)
		if seen[rate]++; rate == 8000 && seen[rate] == 1 {
			s.Latency["p99"] = 40
		}
		return s, err
	}
	c, err := Search(context.Background(), SearchOptions{SLO: slo(t, "p99<=2ms"), Start: 1000, Confirm: true, Measure: measure})
	if err != nil {
		t.Fatal(err)
	}
	if c.Rate > 45000 || c.Rate < 0.95*45000 || !c.Confirmed {
		t.Errorf("capacity %v (confirmed %v), want within 5%% below the knee at 45000 despite one stall at 8000 (rates %v)", c.Rate, c.Confirmed, f.rates)
	}
	if c.Bound <= 45000 {
		t.Errorf("bound %v: the stalled 8000 met when measured again and is no bound", c.Bound)
	}
	if want := []float64{1000, 2000, 4000, 8000, 8000, 16000, 32000, 64000, 64000}; !slices.Equal(f.rates[:len(want)], want) {
		t.Errorf("rates %v, want the ramp %v (8000 and 64000 measured twice)", f.rates, want)
	}
	remeasured := 0
	for _, st := range c.Steps {
		if st.Remeasures {
			remeasured++
			if st.Rate != 8000 && st.Met {
				t.Errorf("re-measured %v met: only 8000 was a stall", st.Rate)
			}
		}
	}
	if remeasured < 2 {
		t.Errorf("%d steps re-measured a miss, want 8000 and at least 64000", remeasured)
	}
}

// The warm-up is driven, not measured: two slow seconds before it ends
// leave no trace in the figures, the rate or the length.
func TestWarmupIsNotMeasured(t *testing.T) {
	e := newEngine(Options{KV: testKV(), Concurrency: 1, Duration: 10 * time.Second, OpTimeout: time.Second}, nil)
	s := newSeries(e.workers, e.shards())
	s.warmup = 2 * time.Second
	w := e.workers[0]
	for sec := 1; sec <= 10; sec++ {
		n, lat := 1000, time.Millisecond
		if sec <= 2 {
			n, lat = 300, 100*time.Millisecond
		}
		for i := 0; i < n; i++ {
			w.record([]pending{{out: outOK, sent: 0, done: lat}})
		}
		s.collect(time.Duration(sec)*time.Second + 5*time.Millisecond) // a tick fires a little late
	}
	e.series = s
	r := e.result(10*time.Second + 5*time.Millisecond)
	if r.WarmupS < 2 || r.WarmupS > 2.01 || r.DurationS < 7.99 || r.DurationS > 8.01 {
		t.Errorf("warm-up %.3f s, measured %.3f s, want 2 and 8", r.WarmupS, r.DurationS)
	}
	if tot := r.Ops["total"]; tot.Corrected.Count != 8000 || tot.Corrected.Max > 1.1 || r.Throughput < 999 || r.Throughput > 1001 {
		t.Errorf("measured %d ops, max %.3f ms, %.1f ops/s: the warm-up's slow ops leaked in", tot.Corrected.Count, tot.Corrected.Max, r.Throughput)
	}
	if len(r.Seconds) != 8 || r.Percentile(99) > 1.1 {
		t.Errorf("%d seconds, p99 %.3f ms", len(r.Seconds), r.Percentile(99))
	}
}

// A rate that met once by luck and missed when measured again does not
// stand as the answer, and the answer says how far from it a repeat
// search could land: MetAbove is that rate, Noise says so in words. A
// search whose steps all agree has no noise line.
func TestSearchNamesARateThatWentBothWays(t *testing.T) {
	f := &fakeCluster{saturation: 60000, slowShard: -1}
	lucky := 0.0
	measure := func(ctx context.Context, rate float64) (Step, error) {
		s, err := f.measure(ctx, rate)
		if rate > 45000 && lucky == 0 {
			lucky = rate
			s.Latency["p99"] = 1
		}
		return s, err
	}
	c, err := Search(context.Background(), SearchOptions{SLO: slo(t, "p99<=2ms"), Start: 1000, Confirm: true, Measure: measure})
	if err != nil {
		t.Fatal(err)
	}
	if c.Rate > 45000 {
		t.Fatalf("capacity %v: the lucky step at %v stood as the answer (rates %v)", c.Rate, lucky, f.rates)
	}
	if c.MetAbove != lucky || !strings.Contains(c.Noise, Count(lucky)) {
		t.Errorf("met above %v, noise %q; want %v named", c.MetAbove, c.Noise, lucky)
	}
	var out strings.Builder
	c.Print(&out)
	if !strings.Contains(out.String(), "noise: ") {
		t.Errorf("the printed curve has no noise line:\n%s", out.String())
	}
	clean, err := Search(context.Background(), SearchOptions{SLO: slo(t, "p99<=2ms"), Start: 1000, Confirm: true, Measure: (&fakeCluster{saturation: 60000, slowShard: -1}).measure})
	if err != nil {
		t.Fatal(err)
	}
	if clean.MetAbove != 0 || clean.Noise != "" {
		t.Errorf("a search whose steps agree: met above %v, noise %q", clean.MetAbove, clean.Noise)
	}
}

// The printed curve and the report's are one table: the same rows in the
// same order (by rate), each with its place in the search, cell for cell.
func TestCapacityTableIsOneValue(t *testing.T) {
	c, err := Search(context.Background(), SearchOptions{SLO: slo(t, "p99<=2ms"), Start: 1000, Confirm: true, Measure: (&fakeCluster{saturation: 60000, slowShard: 1}).measure})
	if err != nil {
		t.Fatal(err)
	}
	tab := c.Table()
	if len(tab.Rows) != len(c.Steps) || len(tab.Rows) < 3 {
		t.Fatalf("%d rows for %d steps", len(tab.Rows), len(c.Steps))
	}
	var printed strings.Builder
	c.Print(&printed)
	page := capacitySection([]Named{{Name: "a", R: &Result{Capacity: c}}})
	lines := strings.Split(printed.String(), "\n")
	for i, row := range tab.Rows {
		if len(row) != len(tab.Head) {
			t.Fatalf("row %d has %d cells for %d columns", i, len(row), len(tab.Head))
		}
		if i > 0 && c.Steps[stepNo(t, row[0])-1].Rate < c.Steps[stepNo(t, tab.Rows[i-1][0])-1].Rate {
			t.Errorf("row %d is not in rate order", i)
		}
		if got := strings.Fields(lines[3+i]); got[0] != row[0] || got[1] != row[1] {
			t.Errorf("printed row %d %q, table row %q", i, lines[3+i], row)
		}
		at := 0
		for _, v := range row {
			k := strings.Index(page[at:], ">"+html.EscapeString(v)+"</td>")
			if k < 0 {
				t.Fatalf("the report lacks row %q (cell %q)", row, v)
			}
			at += k + 1
		}
	}
}

func stepNo(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
