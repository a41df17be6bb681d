package bench

import (
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Numbers for people: counts with thousands separators (12,345), other
// figures to three significant digits without exponents (0.0123, 1.23,
// 123, 1,235), never 2.34e+03.

// Count formats a count or a rate as a whole number with separators.
func Count(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "-"
	}
	neg := f < 0
	s := strconv.FormatInt(int64(math.Abs(math.Round(f))), 10)
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Num formats a figure to three significant digits (whole numbers from
// 1,000 on), trailing zeros dropped.
func Num(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "-"
	}
	a := math.Abs(f)
	if a >= 999.5 {
		return Count(f)
	}
	if a == 0 {
		return "0"
	}
	digits := 2 - int(math.Floor(math.Log10(a)))
	digits = max(0, min(digits, 6))
	s := strconv.FormatFloat(f, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }
