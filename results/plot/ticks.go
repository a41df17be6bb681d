package plot

import (
	"math"
	"strconv"
)

// NiceStep picks a 1-2-5 step giving about n ticks over span.
func NiceStep(span float64, n int) float64 {
	if span <= 0 {
		return 1
	}
	raw := span / float64(max(n, 1))
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*mag {
			return m * mag
		}
	}
	return 10 * mag
}

// logTicks are the powers of ten in [lo, hi], with 2 and 5 between when
// the range spans at most two decades.
func logTicks(lo, hi float64) []float64 {
	var out []float64
	dense := math.Log10(hi/lo) <= 2
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			if m != 1 && !dense {
				continue
			}
			v := m * math.Pow(10, e)
			if v >= lo*0.999 && v <= hi*1.001 {
				out = append(out, v)
			}
		}
	}
	return out
}

// tickLabel writes a round value as a short decimal: rounded to 12
// significant digits first, so that 3 steps of 0.1 read 0.3.
func tickLabel(v float64) string {
	v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// Palette colours series (op types, compared runs) in order of
// appearance: Tableau 10, a categorical palette whose neighbours differ
// in hue and lightness.
var Palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

// Color is the i-th colour of Palette, round again after the last.
func Color(i int) string { return Palette[i%len(Palette)] }
