package plot

import (
	"math"
	"testing"
)

// Which way is good decides better or worse; no change, or a missing
// figure, is neither; a percentage of 0 is none.
func TestCompare(t *testing.T) {
	for _, c := range []struct {
		a, b          float64
		lowerIsBetter bool
		want          Change
	}{
		{100, 112, false, Change{Pct: "+12%", Better: true}},
		{100, 112, true, Change{Pct: "+12%", Worse: true}},
		{2, 1, true, Change{Pct: "-50%", Better: true}},
		{5, 5, true, Change{}},
		{0, 3, true, Change{Worse: true}},
		{math.NaN(), 3, false, Change{}},
		{3, math.NaN(), false, Change{}},
	} {
		if got := Compare(c.a, c.b, c.lowerIsBetter); got != c.want {
			t.Errorf("Compare(%v, %v, %v) = %+v, want %+v", c.a, c.b, c.lowerIsBetter, got, c.want)
		}
	}
}
