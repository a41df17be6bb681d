package bench

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

// runOf is a stored run of d seconds whose GETs all took get and SETs
// all took set, n of each.
func runOf(t *testing.T, d float64, n int, get, set time.Duration) *Result {
	t.Helper()
	h := newHists()
	var c Counts
	for range n {
		record(h[opGet][corrected], get)
		record(h[opGet][raw], get)
		record(h[opSet][corrected], set)
		record(h[opSet][raw], set)
	}
	c.OK = [numOps]int64{int64(n), int64(n)}
	c.Hits = int64(n)
	c.Wire = [numOps]int64{int64(n) * 40, int64(n) * 140}
	c.Errors[opSet] = 1
	r := &Result{DurationS: d, Rate: 0, Workers: 2, Pipeline: 1, Counts: c, Throughput: float64(2*n) / d, Diagnosis: []string{"closed loop"},
		Ops: map[string]*OpFigures{}, Seconds: []Second{{T: 1, OKPerS: float64(2*n) / d}}}
	for o := range opNames {
		r.Ops[opNames[o]] = &OpFigures{OKPerS: float64(n) / d, Corrected: quantiles(h[o][corrected]), Raw: quantiles(h[o][raw])}
	}
	r.Ops["total"] = &OpFigures{OKPerS: r.Throughput}
	r.encodeHists(h)
	return r
}

// The aggregate's latency is a percentile of every op of every run (the
// histograms merged), not the runs' percentiles averaged: one slow run of
// three makes a third of the ops slow, so the p50 stays fast and the p99
// is the slow run's, where averaging would invent a p50 of 34 ms that no
// op had.
func TestAggregateMergesHistograms(t *testing.T) {
	runs := []*Result{
		runOf(t, 2, 1000, time.Millisecond, 2*time.Millisecond),
		runOf(t, 2, 1000, 100*time.Millisecond, 200*time.Millisecond),
		runOf(t, 4, 1000, time.Millisecond, 2*time.Millisecond),
	}
	a := Aggregate(runs)
	near := func(got, want float64) bool { return math.Abs(got-want) <= want*0.01 }
	get := a.Ops["get"].Corrected
	if get.Count != 3000 || !near(get.P50, 1) || !near(get.P99, 100) || !near(get.Max, 100) {
		t.Errorf("GET latency %+v: want 3000 ops, p50 1 ms, p99 and max 100 ms", get)
	}
	tot := a.Ops["total"].Corrected
	if tot.Count != 6000 || !near(tot.P50, 2) || !near(tot.P99, 200) {
		t.Errorf("total latency %+v: want 6000 ops, p50 2 ms, p99 200 ms", tot)
	}
	if h := a.Hist("total", "raw"); h == nil || h.TotalCount() != 6000 {
		t.Errorf("the merged histograms are not stored")
	}
	if a.DurationS != 8 || a.Throughput != 6000.0/8 || a.Ops["get"].OKPerS != 3000.0/8 || a.Ops["get"].HitsPerS != 3000.0/8 {
		t.Errorf("rates: %v s, %v ops/s, GET %v ops/s: want every op over the 8 s measured", a.DurationS, a.Throughput, a.Ops["get"].OKPerS)
	}
	if a.Ops["get"].KBPerS != 3000.0*40/1024/8 || a.Ops["set"].Failed != 3 || a.Ops["total"].Failed != 3 {
		t.Errorf("KB/s %v, failed %v", a.Ops["get"].KBPerS, a.Ops["set"].Failed)
	}
	if len(a.Runs) != 3 || a.BestRun != 1 || a.WorstRun != 3 {
		t.Errorf("runs %d, best %d, worst %d: want 3, best 1 (1000 ops/s, the first of two), worst 3 (500 ops/s)", len(a.Runs), a.BestRun, a.WorstRun)
	}
	if len(a.Seconds) != 3 || a.Seconds[1].T != 3 || a.Seconds[2].T != 5 {
		t.Errorf("seconds %+v: want the runs back to back", a.Seconds)
	}
	runs[1].Diagnosis = append(runs[1].Diagnosis, "slow")
	if a = Aggregate(runs); strings.Join(a.Diagnosis, "|") != "closed loop|run 2: slow" {
		t.Errorf("notes %q: want a note of every run once, one of some runs with their numbers", a.Diagnosis)
	}
	var out bytes.Buffer
	a.PrintRuns(&out)
	a.PrintSummary(&out)
	for _, want := range []string{"3 runs: 1: 1,000 ops/s; 2: 1,000 ops/s; 3: 500 ops/s;", "BEST RUN RESULTS (run 1 of 3, 2 s)", "WORST RUN RESULTS (run 3 of 3, 4 s)",
		"AGGREGATED AVERAGE RESULTS (3 runs, 8 s; latency from the runs' merged histograms)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printed runs lack %q:\n%s", want, out.String())
		}
	}
	if strings.Count(out.String(), "Totals") != 3 {
		t.Errorf("want three tables (best, worst, aggregate):\n%s", out.String())
	}
	if s := a.Summarize("d", 0); len(s.Runs) != 3 || s.BestRun != 1 || s.WorstRun != 3 {
		t.Errorf("the JSON summary lacks the runs: %+v", s)
	}
}
