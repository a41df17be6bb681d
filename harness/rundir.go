package harness

import (
	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/harness/bench"
	"github.com/redline-dev/redline/results"
)

// SaveLoad stores what the load driver (harness/bench) measured in the
// run's directory: bench's own files (bench.Save: bench.json, histograms,
// report.html) and results.json with its headline figures as the "bench"
// checker, valid when it measured something and unknown when no op
// succeeded, so that `results list/show/compare` read a load test as any
// other run.
func SaveLoad(run *results.Run, r *bench.Result) error {
	figures, measured := bench.Headline(r)
	valid := checker.Valid
	if !measured {
		valid = checker.Unknown // no op succeeded: nothing was measured
	}
	s := checker.Summary{Valid: valid, Checkers: map[string]checker.Result{"bench": {Valid: valid, Figures: figures}}}
	if err := run.WriteJSON("results.json", s); err != nil {
		return err
	}
	title := "redline bench: " + run.Test + " " + run.Time.Format("2006-01-02 15:04:05")
	return bench.Save(run, run.Dir, title, run.Test+"/"+run.Time.Format(results.TimeLayout), r)
}
