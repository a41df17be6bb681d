package results

// The report's plots are SVG written by hand rather than with a plotting
// library such as gonum/plot: its SVG backend embeds font data and emits one
// element per glyph and per point, which for a 1M-op run gives megabytes and
// a slow page; here a whole series is one <path> of integer coordinates (a
// point is a zero-length segment with a round cap), every element can carry
// a <title> tooltip and data- attributes the browser tests read, and the
// report keeps no dependency beyond the standard library.

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// plot is one SVG chart: a time axis in seconds and a linear or log10 y axis.
type plot struct {
	id         string // data-plot attribute, what tests look for
	w, h       float64
	left, top  float64 // margins
	right, bot float64
	t0, t1     float64 // x range, seconds
	y0, y1     float64 // y range (in log10 when logY)
	logY       bool
	yLabel     string
	b          strings.Builder
	legend     []legendItem
}

// legendItem is a series' swatch: a line, or a point drawn as the series
// draws its points (radius, square or round) so outcomes can be told apart.
type legendItem struct {
	label, color string
	radius       float64 // 0: a line
	square       bool
	dash         string // a line's stroke-dasharray
}

func newPlot(id string, t1 float64, y0, y1 float64, logY bool, yLabel string) *plot {
	if t1 <= 0 {
		t1 = 1
	}
	p := &plot{id: id, w: 1000, h: 320, left: 60, top: 44, right: 16, bot: 34, t1: t1, logY: logY, yLabel: yLabel}
	if logY {
		y0, y1 = math.Log10(math.Max(y0, 1e-3)), math.Log10(math.Max(y1, 1e-3))
		y0, y1 = math.Floor(y0), math.Ceil(y1)
	}
	if y1 <= y0 {
		y1 = y0 + 1
	}
	p.y0, p.y1 = y0, y1
	return p
}

func (p *plot) x(t float64) float64 {
	return p.left + (p.w-p.left-p.right)*(t-p.t0)/(p.t1-p.t0)
}

func (p *plot) y(v float64) float64 {
	if p.logY {
		v = math.Log10(math.Max(v, 1e-3))
	}
	v = math.Max(p.y0, math.Min(p.y1, v))
	return p.h - p.bot - (p.h-p.top-p.bot)*(v-p.y0)/(p.y1-p.y0)
}

// shade draws the fault windows as labelled bands behind the data.
func (p *plot) shade(ws []faultWindow) {
	var rowEnd []float64 // where the last label of each row ends
	for _, w := range ws {
		x0, x1 := p.x(w.Start), p.x(w.End)
		fmt.Fprintf(&p.b, `<rect class="fault" x="%.1f" y="%.0f" width="%.1f" height="%.0f" fill="%s" opacity="0.25"><title>%s</title></rect>`,
			x0, p.top, math.Max(1.5, x1-x0), p.h-p.top-p.bot, faultColor(w.Fault), template.HTMLEscapeString(w.title()))
		// Each label goes into the first row where it does not overlap
		// the previous one (at most 4 rows; a label that finds none is
		// left to the band's tooltip).
		label := w.label()
		width := 5.6*float64(len([]rune(label))) + 6
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
		fmt.Fprintf(&p.b, `<text class="fault-label" x="%.1f" y="%.0f" font-size="10" fill="#444">%s</text>`,
			x0+2, p.top+10+float64(row)*11, template.HTMLEscapeString(label))
	}
}

// shadeAs draws one run's fault windows in the run's colour (the compare
// page overlays several runs), labelled in its tooltip.
func (p *plot) shadeAs(ws []faultWindow, color, run string) {
	for _, w := range ws {
		x0, x1 := p.x(w.Start), p.x(w.End)
		fmt.Fprintf(&p.b, `<rect class="fault" x="%.1f" y="%.0f" width="%.1f" height="%.0f" fill="%s" opacity="0.12"><title>%s: %s</title></rect>`,
			x0, p.top, math.Max(1.5, x1-x0), p.h-p.top-p.bot, color, template.HTMLEscapeString(run), template.HTMLEscapeString(w.title()))
	}
}

// axes draws the frame, time ticks and y ticks.
func (p *plot) axes() {
	fmt.Fprintf(&p.b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#999"/>`,
		p.left, p.top, p.w-p.left-p.right, p.h-p.top-p.bot)
	step := niceStep(p.t1-p.t0, 10)
	for t := math.Ceil(p.t0/step) * step; t <= p.t1+1e-9; t += step {
		fmt.Fprintf(&p.b, `<text x="%.1f" y="%.0f" text-anchor="middle">%s s</text>`, p.x(t), p.h-p.bot+14, trimFloat(t))
	}
	fmt.Fprintf(&p.b, `<text x="%.0f" y="%.0f" text-anchor="end" fill="#555">time since start</text>`, p.w-p.right, p.h-4)
	if p.logY {
		for e := p.y0; e <= p.y1; e++ {
			v := math.Pow(10, e)
			yy := p.y(v)
			fmt.Fprintf(&p.b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#eee"/><text x="%.0f" y="%.1f" text-anchor="end">%s</text>`,
				p.left, p.w-p.right, yy, yy, p.left-4, yy+4, trimFloat(v))
		}
	} else {
		step := niceStep(p.y1-p.y0, 5)
		for v := math.Ceil(p.y0/step) * step; v <= p.y1+1e-9; v += step {
			yy := p.y(v)
			fmt.Fprintf(&p.b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#eee"/><text x="%.0f" y="%.1f" text-anchor="end">%s</text>`,
				p.left, p.w-p.right, yy, yy, p.left-4, yy+4, trimFloat(v))
		}
	}
}

// pointsCell draws a series of (t, v) points as one path; points landing
// in the same cell (of cell x cell pixels) are drawn once, so the element
// stays small for any run length.
func (p *plot) pointsCell(label, color string, ts, vs []float64, radius, cell float64, square bool) int {
	seen := map[[2]int32]bool{}
	var d strings.Builder
	n := 0
	for i := range ts {
		cx, cy := int32(p.x(ts[i])/cell), int32(p.y(vs[i])/cell)
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
	fmt.Fprintf(&p.b, `<path class="series" data-series="%s" data-points="%d" d="%s" stroke="%s" stroke-width="%.1f" stroke-linecap="%s" opacity="0.7"><title>%s (%d ops, %d points drawn)</title></path>`,
		template.HTMLEscapeString(label), n, d.String(), color, 2*radius, linecap, template.HTMLEscapeString(label), len(ts), n)
	p.legend = append(p.legend, legendItem{label: label, color: color, radius: radius, square: square})
	return n
}

// line draws a polyline through (t, v); NaN values break the line.
func (p *plot) line(label, color string, ts, vs []float64, dashed bool) {
	dash := ""
	if dashed {
		dash = "4 3"
	}
	p.styledLine(label, color, ts, vs, dash)
}

// styledLine is line with any stroke-dasharray ("" for solid).
func (p *plot) styledLine(label, color string, ts, vs []float64, dashArray string) {
	var d strings.Builder
	n, pen := 0, false
	for i := range ts {
		if math.IsNaN(vs[i]) {
			pen = false
			continue
		}
		if pen {
			d.WriteString("L")
		} else {
			d.WriteString("M")
		}
		pen = true
		fmt.Fprintf(&d, "%.1f %.1f", p.x(ts[i]), p.y(vs[i]))
		n++
	}
	if n == 0 {
		return
	}
	dash := ""
	if dashArray != "" {
		dash = ` stroke-dasharray="` + dashArray + `"`
	}
	fmt.Fprintf(&p.b, `<path class="series" data-series="%s" data-points="%d" d="%s" fill="none" stroke="%s" stroke-width="1.5"%s><title>%s</title></path>`,
		template.HTMLEscapeString(label), n, d.String(), color, dash, template.HTMLEscapeString(label))
	p.legend = append(p.legend, legendItem{label: label, color: color, dash: dashArray})
}

// marker draws one emphasised point with a tooltip (an anomaly, a lost write).
func (p *plot) marker(t, v float64, color, title string) {
	fmt.Fprintf(&p.b, `<circle class="marker" cx="%.1f" cy="%.1f" r="4" fill="none" stroke="%s" stroke-width="2"><title>%s</title></circle>`,
		p.x(t), p.y(v), color, template.HTMLEscapeString(title))
}

// svg closes the chart and returns it with its title and legend. The
// legend wraps onto as many rows as it needs between the title and the
// frame; the chart moves down by the rows added.
func (p *plot) svg() template.HTML {
	var legend strings.Builder
	x, row := p.left, 0
	for _, l := range p.legend {
		width := 22 + 6*float64(len([]rune(l.label)))
		if x+width > p.w-p.right && x > p.left {
			x, row = p.left, row+1
		}
		y := 23 + 14*float64(row)
		switch {
		case l.radius == 0 && l.dash != "":
			fmt.Fprintf(&legend, `<line x1="%.0f" x2="%.0f" y1="%.0f" y2="%.0f" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>`, x-2, x+11, y, y, l.color, l.dash)
		case l.radius == 0:
			fmt.Fprintf(&legend, `<rect x="%.0f" y="%.0f" width="10" height="4" fill="%s"/>`, x, y-2, l.color)
		case l.square:
			fmt.Fprintf(&legend, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`, x+5-l.radius*1.5, y-l.radius*1.5, 3*l.radius, 3*l.radius, l.color)
		default:
			fmt.Fprintf(&legend, `<circle cx="%.0f" cy="%.0f" r="%.1f" fill="%s"/>`, x+5, y, l.radius*1.5, l.color)
		}
		fmt.Fprintf(&legend, `<text x="%.0f" y="%.0f">%s</text>`, x+13, y+4, template.HTMLEscapeString(l.label))
		x += width
	}
	extra := 14 * float64(row)
	var out strings.Builder
	fmt.Fprintf(&out, `<svg class="plot" data-plot="%s" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" width="100%%" style="max-width:%.0fpx" font-family="sans-serif" font-size="11">`,
		p.id, p.w, p.h+extra, p.w)
	fmt.Fprintf(&out, `<text x="4" y="12" fill="#333" font-size="12">%s</text>`, template.HTMLEscapeString(p.yLabel))
	out.WriteString(legend.String())
	fmt.Fprintf(&out, `<g transform="translate(0 %.0f)">`, extra)
	out.WriteString(p.b.String())
	out.WriteString(`</g></svg>`)
	return template.HTML(out.String())
}

// niceStep picks a 1-2-5 step giving about n ticks over span.
func niceStep(span float64, n int) float64 {
	if span <= 0 {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*mag {
			return m * mag
		}
	}
	return 10 * mag
}

func trimFloat(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

var faultColors = map[string]string{
	"partition": "#e53935", "kill": "#8e24aa", "pause": "#fb8c00", "clock": "#3949ab",
	"migrate": "#00897b", "failover": "#6d4c41", "member": "#546e7a", "delay": "#fdd835", "loss": "#c0ca33",
	"power": "#212121", "disk": "#795548",
	"slow-link": "#f06292", "slow": "#5d4037",
}

func faultColor(f string) string {
	if c, ok := faultColors[f]; ok {
		return c
	}
	return "#e57373"
}

// outcomeColors colour ok/fail/info consistently in every plot.
var outcomeColors = map[string]string{"ok": "#2e7d32", "fail": "#c62828", "info": "#ef6c00"}

// palette colours op types (read, write, ...) and compared runs in order
// of appearance: Tableau 10, a categorical palette whose neighbours differ
// in hue and lightness (the previous one had near-identical purples).
var palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}
