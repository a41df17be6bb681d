package harness

import (
	"time"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/harness/history"
	"github.com/redline-dev/redline/results"
)

// Attribute sets s.Attribution: what happened to each anomaly the checkers
// named, from the history (its key census and journal entries) and the
// servers' own logs in the run directory (run nil: none).
func Attribute(run *results.Run, ops []history.Op, s *checker.Summary) {
	var wall time.Time
	c := history.CensusOf(ops)
	if c != nil {
		wall = c.WallStart
	}
	s.Attribution = checker.Attribute(ops, *s, results.ServerLogLines(run, wall))
	s.Census = checker.SummarizeCensus(c)
}
