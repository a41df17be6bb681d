package plot

import (
	"fmt"
	"html/template"
	"math"
)

// Series is one line of a Lines chart.
type Series struct {
	Name, Color string // "" colour: the palette's, by position
	X, Y        []float64
	Dash        bool // dashed: a second figure of the same colour
	Dots        bool // mark each point (a curve of few steps)
}

// HLine is a horizontal reference line (an objective's limit).
type HLine struct {
	Y     float64
	Label string
}

// Lines is a whole chart of lines fitted to its data: the x range spans
// the points and the bands, the y range starts at 0 (a linear axis) or
// on the decade below the smallest value (a log axis, where values at
// most 0 are not points). The axes' Min and Max are ignored unless
// FixXMin (x starts at X.Min) or X.Max above the data (x reaches it).
type Lines struct {
	ID, Title string
	X, Y      Axis
	FixXMin   bool
	Series    []Series
	Bands     []Band
	HLines    []HLine
	// Height is the chart's height (0: the default).
	Height float64
	// Empty says why a chart with no point has none (drawn as a line of
	// text instead of an empty frame).
	Empty string
}

// SVG draws the chart, or says in a line of text that there is nothing
// to draw: an empty frame on a made-up axis reads as a plot of something.
func (l Lines) SVG() template.HTML {
	x, y := l.X, l.Y
	x.Min, x.Max = math.Inf(1), math.Inf(-1)
	y.Min, y.Max = math.Inf(1), math.Inf(-1)
	points := 0
	for _, s := range l.Series {
		for i := range s.X {
			if !l.point(s, i) {
				continue
			}
			x.Min, x.Max = min(x.Min, s.X[i]), max(x.Max, s.X[i])
			y.Min, y.Max = min(y.Min, s.Y[i]), max(y.Max, s.Y[i])
			points++
		}
	}
	if points == 0 {
		why := l.Empty
		if why == "" {
			why = "nothing to draw (no value above zero)"
		}
		return template.HTML(fmt.Sprintf(`<p class="nodata" data-plot-empty="%s"><b>%s</b>: no data, %s</p>`, esc(l.ID), esc(l.Title), esc(why)))
	}
	for _, h := range l.HLines {
		y.Min, y.Max = min(y.Min, h.Y), max(y.Max, h.Y)
	}
	for _, b := range l.Bands {
		x.Min, x.Max = min(x.Min, b.From), max(x.Max, b.To)
	}
	if l.FixXMin {
		x.Min = l.X.Min
	}
	x.Max = max(x.Max, l.X.Max)
	if !y.Log {
		y.Min = min(0, y.Min)
		if y.Max <= y.Min {
			y.Max = y.Min + 1
		}
		y.Max *= 1.05
	}
	c := New(l.ID, l.Title, x, y)
	if l.Height > 0 {
		c.H = l.Height
	}
	c.Bands(l.Bands)
	c.Axes()
	for _, h := range l.HLines {
		c.HLine(h.Y, h.Label)
	}
	for i, s := range l.Series {
		color := s.Color
		if color == "" {
			color = Color(i)
		}
		dash := ""
		if s.Dash {
			dash = "4 3"
		}
		var xs, ys []float64
		for j := range s.X {
			if l.point(s, j) {
				xs, ys = append(xs, s.X[j]), append(ys, s.Y[j])
			}
		}
		if c.Line(s.Name, color, xs, ys, dash, s.Dots) == 0 {
			// A series with no point still has its place in the legend:
			// its absence is the finding.
			c.Legend = append(c.Legend, LegendItem{Label: s.Name, Color: color, Dash: dash})
		}
	}
	return c.SVG()
}

// point: the i-th point of s is drawn (a log axis has no place for a
// value at most 0).
func (l Lines) point(s Series, i int) bool {
	return !math.IsNaN(s.Y[i]) && !(l.Y.Log && s.Y[i] <= 0) && !(l.X.Log && s.X[i] <= 0)
}
