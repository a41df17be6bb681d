package bench

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// A small SVG plotter for the bench report: axes with ticks and units,
// linear or log scales, shaded windows (faults, capacity changes) with
// their names, horizontal reference lines (an SLO's limit), a legend.
// Each plot is an <svg class="plot" data-plot=ID>, each line a
// <polyline class="series" data-points=N>, as the run report's plots.

type plotSeries struct {
	name  string
	color string
	x, y  []float64
	dash  bool
	dots  bool // mark each point (a curve of few steps)
}

type shadeSpan struct {
	from, to float64
	label    string
}

type plotSpec struct {
	id, title     string
	xUnit, yUnit  string
	logX, logY    bool
	series        []plotSeries
	shade         []shadeSpan
	hlines        []hline
	xTicks        []tick // custom ticks (nil: computed)
	xMin, xMax    float64
	xMinSet       bool
	width, height float64
	// empty says why a plot with no data point has none (drawn as a
	// line of text instead of an empty frame).
	empty string
}

type hline struct {
	y     float64
	label string
}

type tick struct {
	v     float64
	label string
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"}

// niceTicks are round values (1, 2, 5 x 10^k) spanning [lo, hi].
func niceTicks(lo, hi float64, want int) []float64 {
	if hi <= lo {
		hi = lo + 1
	}
	raw := (hi - lo) / float64(max(want, 1))
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, math.Round(v/step)*step)
	}
	return out
}

// logTicks are the powers of ten in [lo, hi] (with 2 and 5 between
// when the range spans at most two decades).
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

func (p plotSpec) svg() string {
	W, H := p.width, p.height
	if W == 0 {
		W = 900
	}
	if H == 0 {
		H = 240
	}
	const L, R, T, B = 70.0, 16.0, 44.0, 40.0
	xmin, xmax := math.Inf(1), math.Inf(-1)
	ymin, ymax := math.Inf(1), math.Inf(-1)
	points := 0
	for _, s := range p.series {
		for i := range s.x {
			if p.logY && s.y[i] <= 0 || p.logX && s.x[i] <= 0 {
				continue
			}
			xmin, xmax = min(xmin, s.x[i]), max(xmax, s.x[i])
			ymin, ymax = min(ymin, s.y[i]), max(ymax, s.y[i])
			points++
		}
	}
	for _, h := range p.hlines {
		ymin, ymax = min(ymin, h.y), max(ymax, h.y)
	}
	for _, s := range p.shade {
		xmin, xmax = min(xmin, s.from), max(xmax, s.to)
	}
	if p.xMinSet {
		xmin = p.xMin
	}
	if p.xMax > 0 {
		xmax = max(xmax, p.xMax)
	}
	if points == 0 && len(p.hlines) == 0 {
		// An empty frame on a made-up 0-1 axis reads as a plot of
		// something: say there is nothing to draw instead.
		why := p.empty
		if why == "" {
			why = "nothing to draw (no value above zero)"
		}
		return fmt.Sprintf(`<p class="nodata" data-plot-empty="%s"><b>%s</b>: no data, %s</p>`, p.id, html.EscapeString(p.title), html.EscapeString(why))
	}
	if points == 0 {
		xmin, xmax, ymin, ymax = 0, 1, 0, 1
		if p.logY {
			ymin = 0.1
		}
	}
	if !p.logY {
		ymin = min(0, ymin)
		if ymax <= ymin {
			ymax = ymin + 1
		}
		ymax *= 1.05
	} else {
		ymin = math.Pow(10, math.Floor(math.Log10(ymin)))
		ymax = math.Pow(10, math.Ceil(math.Log10(ymax*1.0001)))
	}
	if xmax <= xmin {
		xmax = xmin + 1
	}
	fx := func(v float64) float64 {
		if p.logX {
			return L + (math.Log10(v)-math.Log10(xmin))/(math.Log10(xmax)-math.Log10(xmin))*(W-L-R)
		}
		return L + (v-xmin)/(xmax-xmin)*(W-L-R)
	}
	fy := func(v float64) float64 {
		if p.logY {
			if v <= 0 {
				return H - B
			}
			return H - B - (math.Log10(v)-math.Log10(ymin))/(math.Log10(ymax)-math.Log10(ymin))*(H-T-B)
		}
		return H - B - (v-ymin)/(ymax-ymin)*(H-T-B)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="plot" data-plot="%s" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" xmlns="http://www.w3.org/2000/svg" font-family="sans-serif" font-size="11">`, p.id, W, H, W, H)
	fmt.Fprintf(&b, `<text x="%.0f" y="16" font-size="13" font-weight="bold">%s</text>`, L, html.EscapeString(p.title))
	for _, s := range p.shade {
		x0, x1 := fx(max(s.from, xmin)), fx(min(s.to, xmax))
		fmt.Fprintf(&b, `<rect class="fault" x="%.1f" y="%.0f" width="%.1f" height="%.0f" fill="#f3d9d9"><title>%s</title></rect><text x="%.1f" y="%.0f" fill="#a33" font-size="10">%s</text>`,
			x0, T, math.Max(1, x1-x0), H-T-B, html.EscapeString(s.label), x0+2, T+10, html.EscapeString(s.label))
	}
	// Axes, ticks, grid.
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#666"/><line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#666"/>`, L, H-B, W-R, H-B, L, T, L, H-B)
	var yt []float64
	if p.logY {
		yt = logTicks(ymin, ymax)
	} else {
		yt = niceTicks(ymin, ymax, 5)
	}
	for _, v := range yt {
		y := fy(v)
		if y < T-1 || y > H-B+1 {
			continue
		}
		fmt.Fprintf(&b, `<g class="ytick"><line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#eee"/><line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#666"/><text x="%.0f" y="%.1f" text-anchor="end">%s</text></g>`,
			L, y, W-R, y, L-4, y, L, y, L-6, y+4, Num(v))
	}
	xt := p.xTicks
	if xt == nil {
		var vs []float64
		if p.logX {
			vs = logTicks(xmin, xmax)
		} else {
			vs = niceTicks(xmin, xmax, 8)
		}
		for _, v := range vs {
			xt = append(xt, tick{v, Num(v)})
		}
	}
	for _, t := range xt {
		x := fx(t.v)
		if x < L-1 || x > W-R+1 {
			continue
		}
		fmt.Fprintf(&b, `<g class="xtick"><line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#666"/><text x="%.1f" y="%.0f" text-anchor="middle">%s</text></g>`,
			x, H-B, x, H-B+4, x, H-B+16, html.EscapeString(t.label))
	}
	fmt.Fprintf(&b, `<text class="xunit" x="%.0f" y="%.0f" text-anchor="middle">%s</text>`, L+(W-L-R)/2, H-6, html.EscapeString(p.xUnit))
	fmt.Fprintf(&b, `<text class="yunit" x="14" y="%.0f" text-anchor="middle" transform="rotate(-90 14 %.0f)">%s</text>`, T+(H-T-B)/2, T+(H-T-B)/2, html.EscapeString(p.yUnit))
	for _, h := range p.hlines {
		y := fy(h.y)
		fmt.Fprintf(&b, `<line class="hline" x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#a33" stroke-dasharray="6 3"/><text x="%.0f" y="%.1f" fill="#a33" text-anchor="end">%s</text>`,
			L, y, W-R, y, W-R-2, y-3, html.EscapeString(h.label))
	}
	for i, s := range p.series {
		color := s.color
		if color == "" {
			color = palette[i%len(palette)]
		}
		var pts []string
		n := 0
		for j := range s.x {
			if p.logY && s.y[j] <= 0 || p.logX && s.x[j] <= 0 {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", fx(s.x[j]), fy(s.y[j])))
			n++
		}
		dash := ""
		if s.dash {
			dash = ` stroke-dasharray="4 3"`
		}
		fmt.Fprintf(&b, `<polyline class="series" data-name="%s" data-points="%d" fill="none" stroke="%s" stroke-width="1.6"%s points="%s"/>`,
			html.EscapeString(s.name), n, color, dash, strings.Join(pts, " "))
		if s.dots {
			for _, pt := range pts {
				xy := strings.Split(pt, ",")
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`, xy[0], xy[1], color)
			}
		}
	}
	// Legend: a row under the title.
	x := L
	for i, s := range p.series {
		color := s.color
		if color == "" {
			color = palette[i%len(palette)]
		}
		dash := ""
		if s.dash {
			dash = ` stroke-dasharray="4 3"`
		}
		fmt.Fprintf(&b, `<g class="legend"><line x1="%.0f" y1="30" x2="%.0f" y2="30" stroke="%s" stroke-width="3"%s/><text x="%.0f" y="34">%s</text></g>`, x, x+16, color, dash, x+20, html.EscapeString(s.name))
		x += float64(6*len(s.name) + 34)
	}
	b.WriteString("</svg>")
	return b.String()
}
