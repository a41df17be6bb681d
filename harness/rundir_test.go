package harness

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redline-dev/redline/harness/bench"
	"github.com/redline-dev/redline/results"
)

// loadResults are load tests whose results.json is pinned byte for byte
// (testdata/load-results): one that measured, one that measured nothing,
// one that missed a --threshold and one with a generator left out.
func loadResults() map[string]*bench.Result {
	measured := func() *bench.Result {
		return &bench.Result{DurationS: 10, Rate: 1000, Workers: 4, Pipeline: 1, Throughput: 998.5, CPUMaxCores: 0.25, LagMaxMs: 1.5, Backlog: 2,
			Counts: bench.Counts{Moved: 3, Ask: 1},
			Ops: map[string]*bench.OpFigures{
				"get":   {OKPerS: 900, Corrected: bench.Quantiles{Count: 9000, P50: 0.3, P99: 1.2, P999: 3}, Raw: bench.Quantiles{Count: 9000, P99: 0.9, P999: 2}},
				"set":   {OKPerS: 98.5, Corrected: bench.Quantiles{Count: 985, P50: 0.35, P99: 1.4, P999: 3.2}, Raw: bench.Quantiles{Count: 985, P99: 1, P999: 2.1}},
				"total": {OKPerS: 998.5, Failed: 5, Corrected: bench.Quantiles{Count: 9985, P50: 0.31, P99: 1.25, P999: 3.1}, Raw: bench.Quantiles{Count: 9985, P99: 0.95, P999: 2.05}},
			},
			Shards: []bench.ShardGap{{Shard: "n1", MaxGapS: 0.2}, {Shard: "n2", MaxGapS: 1.5}}}
	}
	none := measured()
	none.Throughput = 0
	threshold := measured()
	threshold.Thresholds = []bench.ThresholdResult{{Threshold: bench.Threshold{Text: "p99<1ms", Command: "total", Metric: "p99", Quantile: 99, Cmp: "<", Limit: 1, Unit: "ms"}, Value: 1.25, Measured: true},
		{Threshold: bench.Threshold{Text: "ops>=500", Command: "total", Metric: "ops", Cmp: ">=", Limit: 500, Unit: "ops/s"}, Value: 998.5, Measured: true, Pass: true}}
	generators := measured()
	generators.RequestedRate = 2000
	generators.GeneratorsFailed = 1
	generators.Generators = []bench.GeneratorFigures{{Index: 1, Name: "g1", Status: "ok", Merged: true}, {Index: 2, Name: "g2", Status: "failed", Problem: "no answer"}}
	return map[string]*bench.Result{"measured": measured(), "none": none, "threshold": threshold, "generators": generators}
}

// A load test's results.json stays byte-compatible: the figures, the
// verdict and its why as they were written before the load driver's
// outcome became a checker result.
func TestLoadResultsJSONIsPinned(t *testing.T) {
	for name, r := range loadResults() {
		store := results.Store{Root: t.TempDir()}
		run, err := store.NewRun("bench-reference-kv-none", time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		if err := SaveLoad(run, r); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(run.Path("results.json"))
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("testdata", "load-results", name+".json")
		if os.Getenv("REDLINE_UPDATE_GOLDEN") != "" {
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: results.json changed:\n%s\nwant:\n%s", name, got, want)
		}
	}
}
