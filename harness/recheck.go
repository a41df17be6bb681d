package harness

import (
	"context"
	"fmt"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/harness/history"
	"github.com/redline-dev/redline/results"
)

// StoredRun is a stored run as `redline check` reads it: its config and
// its history as written (a torn last line kept for the run-files
// checker).
type StoredRun struct {
	Run     *results.Run
	Config  Config
	History history.ReadResult
}

// ReadStoredRun reads run's config.json and history.jsonl. An error means
// the run cannot be checked at all (no config, a history that does not
// decode): the caller's bad arguments.
func ReadStoredRun(run *results.Run) (*StoredRun, error) {
	r := &StoredRun{Run: run}
	if err := run.ReadJSON("config.json", &r.Config); err != nil {
		return nil, fmt.Errorf("cannot read the run's config: %w", err)
	}
	var err error
	if r.History, err = history.ReadFile(run.Path("history.jsonl")); err != nil {
		return nil, err
	}
	return r, nil
}

// Check re-runs the checkers on the stored run, as `redline check` does:
// its config picks the checkers, census.json stands in for a census line
// the history lost, the run's files are cross-examined (RunFiles) and the
// verdict is attributed from the run's logs. An error means the config
// names checkers that do not exist (an unknown workload). pr and log may
// be nil.
func (r *StoredRun) Check(ctx context.Context, pr *Progress, log *Log) (checker.Summary, error) {
	if r.History.TruncatedTail {
		log.Printf("the last line of the history was torn (the run crashed mid-write); it was left out")
	}
	var censusFrom string
	if r.History.Ops, censusFrom = WithCensusFile(r.Run, r.History.Ops); censusFrom == history.CensusFile {
		log.Printf("the history carries no census (its line torn or missing): read %s", history.CensusFile)
	}
	checkers, err := CheckersFor(r.Config)
	if err != nil {
		return checker.Summary{}, err
	}
	if len(checkers) > 0 {
		// The files themselves are witnesses too: a torn history (a
		// prefix was checked), an index given twice, topology samples
		// out of order make the verdict unknown, in results.json and the
		// verdict line, not only on stderr.
		checkers = append(checkers, RunFiles(r.Run, &r.History))
	}
	s := Check(ctx, r.History.Ops, checkers, pr, log)
	Attribute(r.Run, r.History.Ops, &s)
	return s, nil
}
