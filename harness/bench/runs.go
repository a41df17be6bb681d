package bench

import (
	"fmt"
	"io"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// `bench --run-count N` runs the same load N times on one cluster, as
// memtier_benchmark's --run-count: it reports the best run, the worst and
// the aggregate. The aggregate's latency comes from the runs' histograms
// merged (a percentile of all the ops), never from the runs' percentiles
// averaged, which is no percentile of anything; its rates are the ops of
// every run over their summed measured time.

// RunFigures are one run's figures of a --run-count series.
type RunFigures struct {
	// Run is 1-based.
	Run        int                   `json:"run"`
	DurationS  float64               `json:"duration_s"`
	Throughput float64               `json:"throughput"`
	Ops        map[string]*OpFigures `json:"ops"`
}

// Aggregate is the result of runs of the same load, one after another:
// counts summed, histograms merged, rates over the summed measured time,
// the per-second series back to back (the second run's first second
// follows the first run's last). Runs holds each run's figures, BestRun
// and WorstRun the ones with the highest and lowest throughput.
func Aggregate(runs []*Result) *Result {
	if len(runs) == 0 {
		return nil
	}
	first := runs[0]
	// Per-shard latency has no stored histogram to merge: the aggregate
	// has no shard table, and the load per slot is the last run's.
	a := &Result{Rate: first.Rate, Workers: first.Workers, Pipeline: first.Pipeline, Cores: first.Cores,
		WarmupS: first.WarmupS, Load: runs[len(runs)-1].Load, Ops: map[string]*OpFigures{}}
	merged := map[string]*hdrhistogram.Histogram{}
	offset := 0.0
	var notes []string
	noteRuns := map[string][]string{}
	for i, r := range runs {
		a.DurationS += r.DurationS
		a.Counts.add(&r.Counts)
		a.Unsent += r.Unsent
		a.Backlog += r.Backlog
		a.LateOps += r.LateOps
		a.LagMaxMs = max(a.LagMaxMs, r.LagMaxMs)
		a.CPUMaxCores = max(a.CPUMaxCores, r.CPUMaxCores)
		a.DispatchLagMaxMs = max(a.DispatchLagMaxMs, r.DispatchLagMaxMs)
		for _, d := range r.Diagnosis {
			if noteRuns[d] == nil {
				notes = append(notes, d)
			}
			noteRuns[d] = append(noteRuns[d], fmt.Sprint(i+1))
		}
		for _, p := range r.Seconds {
			p.T += offset
			a.Seconds = append(a.Seconds, p)
		}
		offset += r.DurationS
		for k, enc := range r.Histograms {
			h, err := hdrhistogram.Decode(enc)
			if err != nil {
				continue
			}
			if merged[k] == nil {
				merged[k] = newHist()
			}
			merged[k].Merge(h)
		}
		a.Runs = append(a.Runs, RunFigures{Run: i + 1, DurationS: r.DurationS, Throughput: r.Throughput, Ops: r.Ops})
		if a.BestRun == 0 || r.Throughput > runs[a.BestRun-1].Throughput {
			a.BestRun = i + 1
		}
		if a.WorstRun == 0 || r.Throughput < runs[a.WorstRun-1].Throughput {
			a.WorstRun = i + 1
		}
	}
	// A note every run had is said once; others name their runs.
	for _, d := range notes {
		if len(noteRuns[d]) < len(runs) {
			d = "run " + strings.Join(noteRuns[d], ", ") + ": " + d
		}
		a.Diagnosis = append(a.Diagnosis, d)
	}
	if a.Load != nil {
		a.Diagnosis = append(a.Diagnosis, fmt.Sprintf("the load per shard and slot is run %d's (the last); per-shard latency is not aggregated", len(runs)))
	}
	var h hists
	for o := range h {
		for k := range h[o] {
			h[o][k] = merged[histKey(o, k)]
			if h[o][k] == nil {
				h[o][k] = newHist()
			}
		}
	}
	a.encodeHists(h)
	secs := max(a.DurationS, 1e-9)
	c := &a.Counts
	all := newHists()
	for o := 0; o < numOps; o++ {
		a.Ops[opNames[o]] = &OpFigures{
			OKPerS: float64(c.OK[o]) / secs, KBPerS: float64(c.Wire[o]) / 1024 / secs,
			Failed:    c.Errors[o] + c.Timeouts[o],
			Corrected: quantiles(h[o][corrected]), Raw: quantiles(h[o][raw]),
		}
		all[0][corrected].Merge(h[o][corrected])
		all[0][raw].Merge(h[o][raw])
	}
	a.Ops["get"].HitsPerS, a.Ops["get"].MissesPerS = float64(c.Hits)/secs, float64(c.Misses)/secs
	a.Ops["total"] = &OpFigures{OKPerS: float64(c.TotalOK()) / secs, Failed: c.Failed(),
		HitsPerS: a.Ops["get"].HitsPerS, MissesPerS: a.Ops["get"].MissesPerS,
		KBPerS:    float64(c.Wire[opGet]+c.Wire[opSet]) / 1024 / secs,
		Corrected: quantiles(all[0][corrected]), Raw: quantiles(all[0][raw])}
	a.Throughput = a.Ops["total"].OKPerS
	return a
}

// PrintRuns prints memtier's three tables of a --run-count series: the
// best run, the worst run and the aggregate (whose full summary the
// caller prints after).
func (r *Result) PrintRuns(w io.Writer) {
	if len(r.Runs) < 2 {
		return
	}
	fmt.Fprintf(w, "\n%d runs:", len(r.Runs))
	for _, run := range r.Runs {
		fmt.Fprintf(w, " %d: %s ops/s;", run.Run, Count(run.Throughput))
	}
	fmt.Fprintln(w)
	for _, t := range []struct {
		head string
		run  int
	}{{"BEST RUN RESULTS", r.BestRun}, {"WORST RUN RESULTS", r.WorstRun}} {
		if t.run < 1 || t.run > len(r.Runs) {
			continue
		}
		run := r.Runs[t.run-1]
		fmt.Fprintf(w, "\n%s (run %d of %d, %s s)", t.head, run.Run, len(r.Runs), Num(run.DurationS))
		(&Result{Ops: run.Ops}).printTable(w)
	}
	fmt.Fprintf(w, "\nAGGREGATED AVERAGE RESULTS (%d runs, %s s; latency from the runs' merged histograms)", len(r.Runs), Num(r.DurationS))
}

// runsHeadline is the headline's word on a series of runs.
func (r *Result) runsHeadline() string {
	if len(r.Runs) < 2 {
		return ""
	}
	var parts []string
	for _, run := range r.Runs {
		parts = append(parts, Count(run.Throughput))
	}
	return fmt.Sprintf(" (aggregate of %d runs: %s ops/s; best run %d, worst run %d)", len(r.Runs), strings.Join(parts, ", "), r.BestRun, r.WorstRun)
}
