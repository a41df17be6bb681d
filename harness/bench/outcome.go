package bench

import (
	"fmt"
	"math"
	"strings"

	"github.com/redline-dev/redline/checker"
)

// Outcome is what a load test found as a checker's result, the "bench"
// checker of its results.json, so that 'results list/show/compare' read a
// load test as any other run: valid when it measured something; unknown
// when no op succeeded or generators were left out (the figures are not
// the rate asked); invalid when it missed a bound its user set
// (--threshold, exit 99), so that results.json never reads as a pass
// then. The figures say why a verdict is not valid.
func Outcome(r *Result) checker.Result {
	figures, measured := figuresOf(r)
	valid := checker.Valid
	if !measured {
		valid = checker.Unknown // no op succeeded: nothing was measured
	}
	if r.GeneratorsFailed > 0 {
		valid = checker.Unknown
		var why []string
		for _, g := range r.Generators {
			if !g.Merged {
				why = append(why, fmt.Sprintf("generator %d of %d (%s) %s: %s", g.Index, len(r.Generators), g.Name, g.Status, g.Problem))
			}
		}
		figures["why"] = strings.Join(why, "; ") + "; the figures leave them out"
	}
	if failed := FailedThresholds(r.Thresholds); len(failed) > 0 && valid == checker.Valid {
		valid = checker.Invalid
		figures["failed_thresholds"] = failed
		figures["why"] = "--threshold failed: " + strings.Join(failed, "; ")
	}
	return checker.Result{Valid: valid, Figures: figures}
}

// figuresOf is a load test's figures for results.json, and whether it
// measured anything (false: no op succeeded).
func figuresOf(r *Result) (figures map[string]any, measured bool) {
	tot := r.Ops["total"]
	figures = map[string]any{
		"throughput":      math.Round(r.Throughput),
		"p50_ms":          tot.Corrected.P50,
		"p99_ms":          tot.Corrected.P99,
		"p99_9_ms":        tot.Corrected.P999,
		"raw_p99_ms":      tot.Raw.P99,
		"raw_p99_9_ms":    tot.Raw.P999,
		"failed":          tot.Failed,
		"moved":           r.Counts.Moved,
		"ask":             r.Counts.Ask,
		"lag_max_ms":      r.LagMaxMs,
		"backlog":         r.Backlog,
		"max_gap_s":       maxGap(r),
		"generator_cores": r.CPUMaxCores,
	}
	if len(r.Thresholds) > 0 {
		failed := 0
		for _, t := range r.Thresholds {
			if !t.Pass {
				failed++
			}
		}
		figures["thresholds"], figures["thresholds_failed"] = len(r.Thresholds), failed
	}
	if len(r.Generators) > 0 {
		figures["generators"], figures["generators_failed"] = len(r.Generators), r.GeneratorsFailed
		figures["requested_rate"] = r.RequestedRate
	}
	return figures, r.Throughput != 0
}

func maxGap(r *Result) float64 {
	m := 0.0
	for _, s := range r.Shards {
		m = max(m, s.MaxGapS)
	}
	return m
}
