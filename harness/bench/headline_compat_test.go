package bench

import (
	"encoding/json"
	"testing"

	"github.com/redline-dev/redline/checker"
)

// The load driver's figures in results.json are the bytes they were when
// they were a map[string]any (the map below, as Headline wrote it): typed
// figures changed no byte, with and without thresholds and generators.
func TestHeadlineKeepsResultsJSON(t *testing.T) {
	r := &Result{Throughput: 1234.4, LagMaxMs: 1.5, Backlog: 3, CPUMaxCores: 0.75,
		Ops: map[string]*OpFigures{"total": {Failed: 2, Corrected: Quantiles{P50: 0.5, P99: 2.25, P999: 4}, Raw: Quantiles{P99: 1.5, P999: 3}}}}
	r.Counts.Moved, r.Counts.Ask = 7, 1
	old := func(r *Result) checker.Map {
		tot := r.Ops["total"]
		m := checker.Map{"throughput": 1234.0, "p50_ms": tot.Corrected.P50, "p99_ms": tot.Corrected.P99, "p99_9_ms": tot.Corrected.P999,
			"raw_p99_ms": tot.Raw.P99, "raw_p99_9_ms": tot.Raw.P999, "failed": tot.Failed, "moved": r.Counts.Moved, "ask": r.Counts.Ask,
			"lag_max_ms": r.LagMaxMs, "backlog": r.Backlog, "max_gap_s": 0.0, "generator_cores": r.CPUMaxCores}
		if len(r.Thresholds) > 0 {
			m["thresholds"], m["thresholds_failed"] = len(r.Thresholds), 1
		}
		if len(r.Generators) > 0 {
			m["generators"], m["generators_failed"], m["requested_rate"] = len(r.Generators), r.GeneratorsFailed, r.RequestedRate
		}
		return m
	}
	for _, step := range []func(){
		func() {},
		func() { r.Thresholds = []ThresholdResult{{Pass: true}, {Pass: false}} },
		func() { r.Generators, r.GeneratorsFailed, r.RequestedRate = make([]GeneratorFigures, 2), 0, 5000 },
	} {
		step()
		typed, _ := Headline(r)
		got, err := json.Marshal(checker.Result{Valid: checker.Valid, Figures: typed})
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(checker.Result{Valid: checker.Valid, Figures: old(r)})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("results.json changed:\n got %s\nwant %s", got, want)
		}
	}
}
