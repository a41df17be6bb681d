// Package plot draws the SVG charts of every redline report: the run
// report and the compare page (results), the load driver's report
// (harness/bench), all opened in a browser. One library, so that the
// reports read alike and a fix to an axis is a fix everywhere.
//
// The charts are SVG written by hand rather than with a plotting library
// such as gonum/plot: its SVG backend embeds font data and emits one
// element per glyph and per point, which for a 1M-op run gives megabytes
// and a slow page; here a whole series is one <path> (a point is a
// zero-length segment with a round cap), every element can carry a
// <title> tooltip and data- attributes the browser tests read, and the
// reports keep no dependency beyond the standard library.
//
// What the browser tests look for: each chart is <svg class="plot"
// data-plot=ID>, each series a .series with data-series and data-points,
// each shaded window a rect.fault, ticks .xtick and .ytick, axis names
// .xunit and .yunit, a reference line .hline; the legend's swatches are
// the <svg>'s direct children, the drawing is in one <g> below them.
package plot

import (
	"fmt"
	"html/template"
	"math"
	"strings"
)

// Tick is a value on an axis and its label.
type Tick struct {
	V     float64
	Label string
}

// Axis is one axis of a chart.
type Axis struct {
	// Min and Max are the range drawn. A log axis starts and ends on a
	// power of ten (values at most 0 are drawn at its start).
	Min, Max float64
	Log      bool
	// Name says what the axis measures, drawn under (x) or beside (y)
	// the frame; "" draws none.
	Name string
	// Ticks replace the computed round values when not nil.
	Ticks []Tick
	// Format labels a computed tick (nil: the shortest decimal); Suffix
	// follows every computed label (" s").
	Format func(float64) string
	Suffix string
}

// fit makes the range drawable: a log axis on whole decades of positive
// values, a linear one of some width.
func (a *Axis) fit() {
	if a.Log {
		a.Min = math.Pow(10, math.Floor(math.Log10(math.Max(a.Min, 1e-3))))
		a.Max = math.Pow(10, math.Ceil(math.Log10(math.Max(a.Max, 1e-3))))
		if a.Max <= a.Min {
			a.Max = a.Min * 10
		}
		return
	}
	if a.Max <= a.Min {
		a.Max = a.Min + 1
	}
}

// frac is where v lies along the axis, 0 at Min and 1 at Max (clamped
// when clamp).
func (a Axis) frac(v float64, clamp bool) float64 {
	lo, hi := a.Min, a.Max
	if a.Log {
		v, lo, hi = math.Log10(math.Max(v, a.Min)), math.Log10(lo), math.Log10(hi)
	}
	f := (v - lo) / (hi - lo)
	if clamp {
		f = math.Max(0, math.Min(1, f))
	}
	return f
}

// ticks are the axis's labelled values: its own, or round ones (about n
// on a linear axis; decades, with 2 and 5 between on a narrow log axis).
func (a Axis) ticks(n int) []Tick {
	if a.Ticks != nil {
		return a.Ticks
	}
	format := a.Format
	if format == nil {
		format = tickLabel
	}
	var vs []float64
	if a.Log {
		vs = logTicks(a.Min, a.Max)
	} else {
		step := NiceStep(a.Max-a.Min, n)
		for v := math.Ceil(a.Min/step) * step; v <= a.Max+step*1e-9; v += step {
			vs = append(vs, math.Round(v/step)*step)
		}
	}
	out := make([]Tick, len(vs))
	for i, v := range vs {
		out[i] = Tick{v, format(v) + a.Suffix}
	}
	return out
}

// Chart is one SVG chart being drawn: the caller draws the bands, then
// the axes, then the data (later elements paint over earlier ones), and
// takes the result from SVG.
type Chart struct {
	ID    string // the data-plot attribute
	Title string // the line above the legend: what is drawn, in what unit
	// W and H are the size in SVG units; Left, Top, Right and Bottom the
	// margins around the frame.
	W, H                     float64
	Left, Top, Right, Bottom float64
	X, Y                     Axis
	// Legend is a swatch per entry; Line and Scatter add theirs, a
	// caller may replace them with fewer that say more.
	Legend []LegendItem
	body   strings.Builder
}

// LegendItem is a series' swatch: a line, or a point drawn as the series
// draws its points (radius, square or round) so outcomes can be told apart.
type LegendItem struct {
	Label, Color string
	Radius       float64 // 0: a line
	Square       bool
	Dash         string // a line's stroke-dasharray
}

// New starts a chart of x against y, with the ranges made drawable.
func New(id, title string, x, y Axis) *Chart {
	x.fit()
	y.fit()
	c := &Chart{ID: id, Title: title, W: 1000, H: 320, Left: 60, Top: 44, Right: 16, Bottom: 34, X: x, Y: y}
	if y.Name != "" {
		c.Left = 72 // room for the y axis's name beside its labels
	}
	return c
}

// Time starts a chart over the seconds of a run, 0 to end: the x axis of
// every plot over time.
func Time(id, title string, end float64, y Axis) *Chart {
	if end <= 0 {
		end = 1
	}
	return New(id, title, Axis{Min: 0, Max: end, Suffix: " s", Name: "time since start"}, y)
}

// Write adds SVG to the drawing: a caller's own elements (bars, spans,
// marks), placed with XPos and YPos.
func (c *Chart) Write(p []byte) (int, error) { return c.body.Write(p) }

// XPos is where x value v is drawn (unclamped: a band may start before
// the range).
func (c *Chart) XPos(v float64) float64 {
	return c.Left + (c.W-c.Left-c.Right)*c.X.frac(v, false)
}

// YPos is where y value v is drawn, kept inside the frame.
func (c *Chart) YPos(v float64) float64 {
	return c.H - c.Bottom - (c.H-c.Top-c.Bottom)*c.Y.frac(v, true)
}

// Axes draws the frame, the ticks with their grid lines and the axes'
// names.
func (c *Chart) Axes() {
	fmt.Fprintf(c, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#999"/>`,
		c.Left, c.Top, c.W-c.Left-c.Right, c.H-c.Top-c.Bottom)
	for _, t := range c.X.ticks(10) {
		if !inside(c.X.frac(t.V, false)) {
			continue
		}
		x := c.XPos(t.V)
		fmt.Fprintf(c, `<text class="xtick" x="%.1f" y="%.0f" text-anchor="middle">%s</text>`, x, c.H-c.Bottom+14, esc(t.Label))
	}
	for _, t := range c.Y.ticks(5) {
		if !inside(c.Y.frac(t.V, false)) {
			continue
		}
		y := c.YPos(t.V)
		fmt.Fprintf(c, `<g class="ytick"><line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#eee"/><text x="%.0f" y="%.1f" text-anchor="end">%s</text></g>`,
			c.Left, c.W-c.Right, y, y, c.Left-4, y+4, esc(t.Label))
	}
	if c.X.Name != "" {
		fmt.Fprintf(c, `<text class="xunit" x="%.0f" y="%.0f" text-anchor="end" fill="#555">%s</text>`, c.W-c.Right, c.H-4, esc(c.X.Name))
	}
	if c.Y.Name != "" {
		mid := c.Top + (c.H-c.Top-c.Bottom)/2
		fmt.Fprintf(c, `<text class="yunit" x="14" y="%.0f" text-anchor="middle" fill="#555" transform="rotate(-90 14 %.0f)">%s</text>`, mid, mid, esc(c.Y.Name))
	}
}

// inside: a fraction of an axis within it (give or take rounding).
func inside(f float64) bool { return f >= -1e-6 && f <= 1+1e-6 }

// Band is a shaded span of x: a fault, a capacity change.
type Band struct {
	From, To float64
	Color    string // "" a neutral red
	Label    string // written at the band's top (if it finds room)
	Title    string // the tooltip
}

// Bands shades spans behind the data, each labelled in the first of up
// to 4 rows where its label does not overlap the previous one (a label
// that finds none is left to the band's tooltip).
func (c *Chart) Bands(bs []Band) {
	var rowEnd []float64 // where the last label of each row ends
	for _, b := range bs {
		x0 := c.band(b, 0.25, b.Title)
		if b.Label == "" {
			continue
		}
		width := 5.6*float64(len([]rune(b.Label))) + 6
		row := -1
		for r := range rowEnd {
			if rowEnd[r] <= x0 {
				row = r
				break
			}
		}
		if row < 0 && len(rowEnd) < 4 {
			rowEnd = append(rowEnd, 0)
			row = len(rowEnd) - 1
		}
		if row < 0 {
			continue
		}
		rowEnd[row] = x0 + width
		fmt.Fprintf(c, `<text class="fault-label" x="%.1f" y="%.0f" font-size="10" fill="#444">%s</text>`,
			x0+2, c.Top+10+float64(row)*11, esc(b.Label))
	}
}

// FaintBands shades spans lightly and without labels: one run's among
// several overlaid, told apart by colour and tooltip.
func (c *Chart) FaintBands(bs []Band) {
	for _, b := range bs {
		c.band(b, 0.12, b.Title)
	}
}

func (c *Chart) band(b Band, opacity float64, title string) float64 {
	color := b.Color
	if color == "" {
		color = "#e57373"
	}
	x0, x1 := c.XPos(math.Max(b.From, c.X.Min)), c.XPos(math.Min(b.To, c.X.Max))
	fmt.Fprintf(c, `<rect class="fault" x="%.1f" y="%.0f" width="%.1f" height="%.0f" fill="%s" opacity="%g"><title>%s</title></rect>`,
		x0, c.Top, math.Max(1.5, x1-x0), c.H-c.Top-c.Bottom, color, opacity, esc(title))
	return x0
}

// HLine draws a horizontal reference line across the frame (an
// objective's limit), labelled at its right end.
func (c *Chart) HLine(y float64, label string) {
	yy := c.YPos(y)
	fmt.Fprintf(c, `<line class="hline" x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#a33" stroke-dasharray="6 3"><title>%s</title></line><text x="%.0f" y="%.1f" fill="#a33" text-anchor="end">%s</text>`,
		c.Left, yy, c.W-c.Right, yy, esc(label), c.W-c.Right-2, yy-3, esc(label))
}

// Line draws a line through (xs, ys), NaN values breaking it, with any
// stroke-dasharray ("" solid); dots marks each point too (a curve of a
// few measured steps). It returns the points drawn.
func (c *Chart) Line(label, color string, xs, ys []float64, dashArray string, dots bool) int {
	var d, marks strings.Builder
	n, pen := 0, false
	for i := range xs {
		if math.IsNaN(ys[i]) || c.X.Log && xs[i] <= 0 {
			pen = false
			continue
		}
		if pen {
			d.WriteString("L")
		} else {
			d.WriteString("M")
		}
		pen = true
		x, y := c.XPos(xs[i]), c.YPos(ys[i])
		fmt.Fprintf(&d, "%.1f %.1f", x, y)
		fmt.Fprintf(&marks, "M%.1f %.1fh0", x, y)
		n++
	}
	if n == 0 {
		return 0
	}
	dash := ""
	if dashArray != "" {
		dash = ` stroke-dasharray="` + dashArray + `"`
	}
	fmt.Fprintf(c, `<path class="series" data-series="%s" data-points="%d" d="%s" fill="none" stroke="%s" stroke-width="1.5"%s><title>%s</title></path>`,
		esc(label), n, d.String(), color, dash, esc(label))
	if dots {
		fmt.Fprintf(c, `<path class="dots" d="%s" stroke="%s" stroke-width="6" stroke-linecap="round"/>`, marks.String(), color)
	}
	c.Legend = append(c.Legend, LegendItem{Label: label, Color: color, Dash: dashArray})
	return n
}

// Marker draws one emphasised point with a tooltip (an anomaly, a lost write).
func (c *Chart) Marker(x, y float64, color, title string) {
	fmt.Fprintf(c, `<circle class="marker" cx="%.1f" cy="%.1f" r="4" fill="none" stroke="%s" stroke-width="2"><title>%s</title></circle>`,
		c.XPos(x), c.YPos(y), color, esc(title))
}

// SVG closes the chart and returns it with its title and legend. The
// legend wraps onto as many rows as it needs between the title and the
// frame; the drawing moves down by the rows added.
func (c *Chart) SVG() template.HTML {
	var legend strings.Builder
	x, row := c.Left, 0
	for _, l := range c.Legend {
		width := 22 + 6*float64(len([]rune(l.Label)))
		if x+width > c.W-c.Right && x > c.Left {
			x, row = c.Left, row+1
		}
		y := 23 + 14*float64(row)
		switch {
		case l.Radius == 0 && l.Dash != "":
			fmt.Fprintf(&legend, `<line x1="%.0f" x2="%.0f" y1="%.0f" y2="%.0f" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>`, x-2, x+11, y, y, l.Color, l.Dash)
		case l.Radius == 0:
			fmt.Fprintf(&legend, `<rect x="%.0f" y="%.0f" width="10" height="4" fill="%s"/>`, x, y-2, l.Color)
		case l.Square:
			fmt.Fprintf(&legend, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`, x+5-l.Radius*1.5, y-l.Radius*1.5, 3*l.Radius, 3*l.Radius, l.Color)
		default:
			fmt.Fprintf(&legend, `<circle cx="%.0f" cy="%.0f" r="%.1f" fill="%s"/>`, x+5, y, l.Radius*1.5, l.Color)
		}
		fmt.Fprintf(&legend, `<text x="%.0f" y="%.0f">%s</text>`, x+13, y+4, esc(l.Label))
		x += width
	}
	extra := 14 * float64(row)
	var out strings.Builder
	fmt.Fprintf(&out, `<svg class="plot" data-plot="%s" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="100%%" style="max-width:%.0fpx" font-family="sans-serif" font-size="11">`,
		esc(c.ID), c.W, c.H+extra, c.W)
	fmt.Fprintf(&out, `<text x="4" y="12" fill="#333" font-size="12">%s</text>`, esc(c.Title))
	out.WriteString(legend.String())
	fmt.Fprintf(&out, `<g transform="translate(0 %.0f)">`, extra)
	out.WriteString(c.body.String())
	out.WriteString(`</g></svg>`)
	return template.HTML(out.String())
}

func esc(s string) string { return template.HTMLEscapeString(s) }
