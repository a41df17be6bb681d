package bench

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
)

// Machine-readable summaries (`bench --json`, `bench --csv`) for CI: the
// figures of the memtier-like table, the thresholds and the exit code,
// printed on stdout while the human output goes to stderr. The schema is
// documented in docs/load-tests.md; fields are only ever added.

// SummarySchema names the JSON summary's version.
const SummarySchema = "redline-bench-summary/1"

// Summary is a run's figures for a machine.
type Summary struct {
	Schema string `json:"schema"`
	// Dir is the run's results directory.
	Dir string `json:"dir"`
	// Mode is "open-loop" (Rate ops/s scheduled) or "closed-loop".
	Mode      string  `json:"mode"`
	Rate      float64 `json:"rate"`
	DurationS float64 `json:"duration_s"`
	Workers   int     `json:"workers"`
	Pipeline  int     `json:"pipeline"`
	// Throughput is ok ops/s over the measured run.
	Throughput float64 `json:"throughput"`
	// Ops is "get", "set" and "total".
	Ops         map[string]SummaryOp `json:"ops"`
	Unsent      int64                `json:"unsent"`
	Moved       int64                `json:"moved"`
	Ask         int64                `json:"ask"`
	TryAgain    int64                `json:"tryagain"`
	ClusterDown int64                `json:"clusterdown"`
	Reconnects  int64                `json:"reconnects"`
	// Thresholds are --threshold's bounds with the values measured;
	// ThresholdsPassed is true when there are none.
	Thresholds       []ThresholdResult `json:"thresholds,omitempty"`
	ThresholdsPassed bool              `json:"thresholds_passed"`
	// Runs are each run's figures of a --run-count series (the summary's
	// own figures are then the aggregate's), BestRun and WorstRun the
	// 1-based runs with the highest and lowest throughput.
	Runs     []RunFigures `json:"runs,omitempty"`
	BestRun  int          `json:"best_run,omitempty"`
	WorstRun int          `json:"worst_run,omitempty"`
	// ExitCode is the code redline exits with.
	ExitCode int `json:"exit_code"`
}

// SummaryOp is one row of the table.
type SummaryOp struct {
	OpsPerS    float64 `json:"ops_per_s"`
	HitsPerS   float64 `json:"hits_per_s"`
	MissesPerS float64 `json:"misses_per_s"`
	KBPerS     float64 `json:"kb_per_s"`
	OK         int64   `json:"ok"`
	Failed     int64   `json:"failed"`
	// LatencyMs is corrected (from the intended send time in the open
	// loop; equal to raw in the closed loop), RawMs from the actual send.
	LatencyMs Quantiles `json:"latency_ms"`
	RawMs     Quantiles `json:"raw_latency_ms"`
}

// Summarize is r's summary for a machine.
func (r *Result) Summarize(dir string, exitCode int) Summary {
	s := Summary{Schema: SummarySchema, Dir: dir, Mode: "closed-loop", Rate: r.Rate, DurationS: r.DurationS,
		Workers: r.Workers, Pipeline: r.Pipeline, Throughput: r.Throughput, Ops: map[string]SummaryOp{},
		Unsent: r.Unsent, Moved: r.Counts.Moved, Ask: r.Counts.Ask, TryAgain: r.Counts.TryAgain,
		ClusterDown: r.Counts.ClusterDown, Reconnects: r.Counts.Reconnects,
		Thresholds: r.Thresholds, ThresholdsPassed: ThresholdsPassed(r.Thresholds), ExitCode: exitCode,
		Runs: r.Runs, BestRun: r.BestRun, WorstRun: r.WorstRun}
	if r.Rate > 0 {
		s.Mode = "open-loop"
	}
	for n, f := range r.Ops {
		s.Ops[n] = SummaryOp{OpsPerS: f.OKPerS, HitsPerS: f.HitsPerS, MissesPerS: f.MissesPerS, KBPerS: f.KBPerS,
			OK: f.Corrected.Count, Failed: f.Failed, LatencyMs: f.Corrected, RawMs: f.Raw}
	}
	return s
}

// WriteJSON writes the summary as one line of JSON.
func (s Summary) WriteJSON(w io.Writer) error {
	return json.NewEncoder(w).Encode(s)
}

// CSVHeader is the header row of WriteCSV.
var CSVHeader = []string{"type", "ops_per_s", "hits_per_s", "misses_per_s", "kb_per_s", "ok", "failed",
	"avg_ms", "p50_ms", "p90_ms", "p99_ms", "p99_9_ms", "max_ms", "raw_p50_ms", "raw_p99_ms", "raw_p99_9_ms"}

// WriteCSV writes the table's rows (sets, gets, totals) as CSV, after
// the header row when header is set.
func (s Summary) WriteCSV(w io.Writer, header bool) error {
	cw := csv.NewWriter(w)
	if header {
		_ = cw.Write(CSVHeader)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, n := range []string{"set", "get", "total"} {
		o, ok := s.Ops[n]
		if !ok {
			continue
		}
		c, raw := o.LatencyMs, o.RawMs
		_ = cw.Write([]string{n, f(o.OpsPerS), f(o.HitsPerS), f(o.MissesPerS), f(o.KBPerS),
			strconv.FormatInt(o.OK, 10), strconv.FormatInt(o.Failed, 10),
			f(c.Mean), f(c.P50), f(c.P90), f(c.P99), f(c.P999), f(c.Max), f(raw.P50), f(raw.P99), f(raw.P999)})
	}
	cw.Flush()
	return cw.Error()
}
