package harness

import (
	"context"
	"fmt"
	"slices"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

// checkStreamed runs the checkers that can judge a history in one pass
// (checker.StreamChecker: the measuring and run-wide ones) over r's
// history file, all of them in the same scan, entry by entry, and
// returns the checkers with those replaced by their results, as
// checkPartitioned does, so that a big history need not be in memory for
// them (issue 42). The pass sees what the whole check's checkers see:
// the entries ReadRun reads (the scan is its, a torn tail dropped the
// same way), then census.json's census when the history carries none
// that decodes (WithCensusFile). The scan must find the entries and the
// tear the spill found, or the check fails.
func (r *StoredRun) checkStreamed(ctx context.Context, checkers []checker.Checker, log *Log) ([]checker.Checker, error) {
	var streams []checker.StreamChecker
	var at []int
	for i, c := range checkers {
		if sc, ok := c.(checker.StreamChecker); ok {
			streams = append(streams, sc)
			at = append(at, i)
		}
	}
	if len(streams) == 0 {
		return checkers, nil
	}
	log.Printf("checking %d checkers in one pass over the history, entry by entry", len(streams))
	pass := checker.NewStreamPass(streams)
	var lastCensus *history.Op
	var idx, t int64
	read, err := history.Scan(history.Path(r.Run.Dir), func(op *history.Op, _ []byte) error {
		idx, t = max(idx, op.Index+1), max(t, op.Time)
		if op.Process == history.Nemesis && op.F == history.CensusEvent {
			c := *op
			lastCensus = &c
		}
		pass.Observe(op)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if read.Entries != r.History.Entries || read.TruncatedTail != r.History.TruncatedTail {
		return nil, fmt.Errorf("the history changed while it was checked: %d entries when spilled, %d read again", r.History.Entries, read.Entries)
	}
	// history.CensusOf reads the last census entry: none, or one that
	// does not decode, and census.json stands in.
	if lastCensus == nil || history.CensusOf([]history.Op{*lastCensus}) == nil {
		if op, ok := censusFileOp(r.Run, idx, t); ok {
			pass.Observe(&op)
		}
	}
	checkers = slices.Clone(checkers)
	for j, res := range pass.Results(ctx) {
		checkers[at[j]] = checked{checkers[at[j]].Name(), res}
	}
	return checkers, nil
}
