package plot

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Scatter draws the points (xs, ys) as one path, points landing in the
// same cell drawn once; the cells start at a pixel and double until at
// most bound remain, so that the outliers a reader looks for survive
// while the page stays small for any run length. Points are round, or
// square (failed and unknown ops). It returns the points drawn.
func (c *Chart) Scatter(label, color string, xs, ys []float64, radius float64, square bool, bound int) int {
	cell := 1.0
	for c.cells(xs, ys, cell) > bound {
		cell *= 2
	}
	return c.points(label, color, xs, ys, radius, cell, square)
}

func (c *Chart) cells(xs, ys []float64, cell float64) int {
	seen := map[[2]int32]struct{}{}
	for i := range xs {
		seen[[2]int32{int32(c.XPos(xs[i]) / cell), int32(c.YPos(ys[i]) / cell)}] = struct{}{}
	}
	return len(seen)
}

// points draws one point per cell x cell pixels: a zero-length segment
// with a round or square cap, in integer coordinates.
func (c *Chart) points(label, color string, xs, ys []float64, radius, cell float64, square bool) int {
	seen := map[[2]int32]bool{}
	var d strings.Builder
	n := 0
	for i := range xs {
		cx, cy := int32(c.XPos(xs[i])/cell), int32(c.YPos(ys[i])/cell)
		k := [2]int32{cx, cy}
		if seen[k] {
			continue
		}
		seen[k] = true
		d.WriteString("M")
		d.WriteString(strconv.Itoa(int(math.Round((float64(cx) + 0.5) * cell))))
		d.WriteByte(' ')
		d.WriteString(strconv.Itoa(int(math.Round((float64(cy) + 0.5) * cell))))
		d.WriteString("h0")
		n++
	}
	if n == 0 {
		return 0
	}
	linecap := "round"
	if square {
		linecap = "square"
	}
	fmt.Fprintf(c, `<path class="series" data-series="%s" data-points="%d" d="%s" stroke="%s" stroke-width="%.1f" stroke-linecap="%s" opacity="0.7"><title>%s (%d ops, %d points drawn)</title></path>`,
		esc(label), n, d.String(), color, 2*radius, linecap, esc(label), len(xs), n)
	c.Legend = append(c.Legend, LegendItem{Label: label, Color: color, Radius: radius, Square: square})
	return n
}
