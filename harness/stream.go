package harness

import (
	"context"
	"fmt"
	"slices"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/results"
)

// checkStreamed runs the checkers that can judge a history in one pass
// (checker.StreamChecker: the measuring and run-wide ones) over the
// history file of the run in dir, all of them in the same scan, entry by entry, and
// returns the checkers with those replaced by their results, as
// checkPartitionedFrom does; p is the history's spill, which found its
// nemesis entries and its end, so that a big history need not be in memory for
// them (issue 42). The pass sees what the whole check's checkers see:
// the entries ReadRun reads (the scan is its, a torn tail dropped the
// same way), then census.json's census when the history carries none
// that decodes (WithCensusFile) when censusOf is a stored run (`redline
// check`; nil at the end of a run, whose checkers read the history as
// written). The scan must find the entries and the tear the spill found,
// or the check fails. attr, when not nil, is the attribution's first
// pass (checker.AttributionPass), which rides along (a pass is made for
// it even when no checker is left to stream).
func checkStreamed(ctx context.Context, dir string, censusOf *results.Run, p *history.Partitions, checkers []checker.Checker, attr *checker.AttributionPass, log *Log) ([]checker.Checker, error) {
	var streams []checker.StreamChecker
	var at []int
	for i, c := range checkers {
		if sc, ok := c.(checker.StreamChecker); ok {
			streams = append(streams, sc)
			at = append(at, i)
		}
	}
	if len(streams) == 0 && attr == nil {
		return checkers, nil
	}
	log.Printf("checking %d checkers in one pass over the history, entry by entry", len(streams))
	runWide := passRunWide(censusOf, p)
	if attr != nil {
		streams = append(streams, attr.StreamChecker())
	}
	pass := checker.NewStreamPass(streams, runWide, p.Latest)
	read, err := history.Scan(history.Path(dir), func(op *history.Op, _ []byte) error {
		pass.Observe(op)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if read.Entries != p.Read.Entries || read.TruncatedTail != p.Read.TruncatedTail {
		return nil, fmt.Errorf("the history changed while it was checked: %d entries when spilled, %d read again", p.Read.Entries, read.Entries)
	}
	checkers = slices.Clone(checkers)
	for j, res := range pass.Results(ctx)[:len(at)] {
		checkers[at[j]] = checked{checkers[at[j]].Name(), res}
	}
	return checkers, nil
}

// passRunWide is what the one pass knows before it: the nemesis entries
// and the run's end, as the spill p found them, with census.json's census
// when the history carries none that decodes (history.CensusOf reads the
// last census entry), appended after the last entry as WithCensusFile
// does.
func passRunWide(censusOf *results.Run, p *history.Partitions) []history.Op {
	runWide := p.RunWide
	if history.CensusOf(runWide) == nil {
		if op, ok := censusFileOp(censusOf, p.NextIndex, p.Latest); ok {
			runWide = append(slices.Clip(runWide), op)
		}
	}
	return runWide
}
