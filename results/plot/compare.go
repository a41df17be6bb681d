package plot

import (
	"fmt"
	"math"
)

// Change is how a figure moved from one run (a) to another (b), for the
// pages and tables that compare runs: the run report's compare page and
// 'results compare', and the load driver's A/B (bench --versus).
type Change struct {
	// Pct is the change in percent of a ("+12%"), "" when a is 0 or a
	// figure is missing (NaN).
	Pct string
	// Better and Worse say which way it moved, given which way is good;
	// neither when it did not move or a figure is missing.
	Better, Worse bool
}

// Compare is the change from a to b of a figure for which lower is
// better (latency, errors) or not (throughput).
func Compare(a, b float64, lowerIsBetter bool) Change {
	var c Change
	if math.IsNaN(a) || math.IsNaN(b) || a == b {
		return c
	}
	if a != 0 {
		c.Pct = fmt.Sprintf("%+.0f%%", 100*(b-a)/math.Abs(a))
	}
	c.Better = (b < a) == lowerIsBetter
	c.Worse = !c.Better
	return c
}
