package results

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/results/plot"
)

// sample is one completed client op: when it was invoked, how long it took
// and how it ended.
type sample struct {
	t       float64 // invocation, seconds since start
	latMs   float64
	f       string
	outcome history.Type
	// series is what the plots call the op: its f, or "counter add" when
	// several workloads share op names.
	series string
	idx    int64   // the invocation's index; of a bounded report, the call's place in completion order
	w      float64 // how many calls it stands for (a bounded report's plots: bounded.go)
}

// eachOp calls fn with every completed client op, its invocation paired
// with its process's next completion. Ops still open at the end of the
// history are left out.
func (d *runData) eachOp(fn func(inv, comp *history.Op)) {
	pending := map[history.Process]int{}
	for i := range d.ops {
		op := &d.ops[i]
		if op.NemesisOp() {
			continue
		}
		if op.Type == history.Invoke {
			pending[op.Process] = i
			continue
		}
		j, ok := pending[op.Process]
		if !ok {
			continue
		}
		delete(pending, op.Process)
		fn(&d.ops[j], op)
	}
}

// samples are the completed client ops with their latency.
func (d *runData) samples() []sample {
	if d.big != nil {
		return d.big.samples
	}
	out := make([]sample, 0, len(d.ops)/2)
	workloadOf := d.workloadOfKey()
	names := map[[2]string]string{}
	d.eachOp(func(inv, op *history.Op) {
		out = append(out, d.sampleOf(inv, op, workloadOf, names))
	})
	return out
}

// sampleOf is the sample of the call inv, op (names: the series made so
// far, each once per workload and f).
func (d *runData) sampleOf(inv, op *history.Op, workloadOf func(string) string, names map[[2]string]string) sample {
	series := inv.F
	if w := workloadOf(inv.Key); w != "" {
		k := [2]string{w, inv.F}
		if series = names[k]; series == "" {
			series = w + " " + inv.F // once per pair, not per op
			names[k] = series
		}
	}
	return sample{t: float64(inv.Time) / 1e9, latMs: float64(op.Time-inv.Time) / 1e6, f: inv.F, outcome: op.Type, series: series, idx: inv.Index, w: 1}
}

// workloadOfKey names the workload a key belongs to when a run has several
// (keys are <prefix><workload>:...), "" otherwise: the plots then tell a
// counter's add from a set's.
func (d *runData) workloadOfKey() func(key string) string {
	ws, _ := d.cfg["workloads"].([]any)
	if len(ws) < 2 {
		return func(string) string { return "" }
	}
	known := map[string]bool{}
	for _, w := range ws {
		known[cell(w)] = true
	}
	prefix := d.str("key_prefix")
	return func(key string) string {
		w, _, _ := strings.Cut(strings.TrimPrefix(key, prefix), ":")
		if known[w] {
			return w
		}
		return ""
	}
}

// scatterBudget bounds the points of the whole latency scatter (about 10
// bytes each), shared by its series with at least minSeriesPoints each.
// Points are first merged by pixel; beyond a series' share by ever coarser
// cells, so that the outliers a reader looks for survive while the page
// stays small.
const (
	scatterBudget   = 60000
	minSeriesPoints = 3000
)

// latencyRawSVG plots every op's latency (log scale) at its invocation time,
// coloured by op type, one series per type and outcome; anomalous ops are
// circled.
func latencyRawSVG(ss []sample, end float64, windows []faultWindow, marks []anomalyMark) template.HTML {
	if len(ss) == 0 {
		return ""
	}
	lo, hi := math.Inf(1), 0.0
	for _, s := range ss {
		if s.latMs > 0 {
			lo = math.Min(lo, s.latMs)
		}
		hi = math.Max(hi, s.latMs)
	}
	if math.IsInf(lo, 1) {
		lo = 0.01
	}
	p := newPlot("latency-raw", end, lo, hi, true, "latency (ms, log scale) of each op at its invocation; ok ops coloured by op, failed ops red squares, unknown ones orange")
	shadeFaults(p, windows)
	p.Axes()
	type key struct {
		f       string
		outcome history.Type
	}
	series := map[key][2][]float64{}
	var fs []string
	for _, s := range ss {
		k := key{s.series, s.outcome}
		if _, ok := series[k]; !ok && !slices.Contains(fs, s.series) {
			fs = append(fs, s.series)
		}
		v := series[k]
		v[0], v[1] = append(v[0], s.t), append(v[1], s.latMs)
		series[k] = v
	}
	share := max(minSeriesPoints, scatterBudget/max(1, len(series)))
	// Ok ops in their op's colour first; failed (red squares) and unknown
	// (orange squares) ops over them, so that no ok point hides one.
	radii := map[history.Type]float64{history.OK: 1.2, history.Fail: 2.2, history.Info: 3}
	outcomeColor := map[history.Type]string{history.Fail: "#d50000", history.Info: "#ff6d00"}
	for _, o := range []history.Type{history.OK, history.Fail, history.Info} {
		for i, f := range fs {
			v, ok := series[key{f, o}]
			if !ok {
				continue
			}
			color := plot.Color(i)
			if c, ok := outcomeColor[o]; ok {
				color = c
			}
			p.Scatter(fmt.Sprintf("%s %s", f, o), color, v[0], v[1], radii[o], o != history.OK, share)
		}
	}
	// The legend says colour = op for ok ops, and the colour and shape of
	// failed and unknown ops, once each, instead of one swatch per series.
	p.Legend = p.Legend[:0]
	for i, f := range fs {
		p.Legend = append(p.Legend, plot.LegendItem{Label: f, Color: plot.Color(i), Radius: 2.5})
	}
	p.Legend = append(p.Legend, plot.LegendItem{Label: "failed", Color: outcomeColor[history.Fail], Radius: radii[history.Fail], Square: true},
		plot.LegendItem{Label: "unknown (info)", Color: outcomeColor[history.Info], Radius: radii[history.Info], Square: true})
	for _, m := range marks {
		if m.latMs > 0 {
			p.Marker(m.t, m.latMs, "#000", m.title)
		}
	}
	return p.SVG()
}

// qBucket is one time bucket: its completions by outcome and the latency
// quantiles of its ok ops.
type qBucket struct {
	t                   float64
	p50, p95, p99, pmax float64
	counts              map[history.Type]int
}

// buckets cuts the run into about n buckets of a round width (returned).
func buckets(ss []sample, end float64, n int) ([]qBucket, float64) {
	width := plot.NiceStep(end, n)
	nb := int(end/width) + 1
	bs := make([]qBucket, nb)
	lat := make([][]float64, nb)
	for i := range bs {
		bs[i].t = (float64(i) + 0.5) * width
		bs[i].counts = map[history.Type]int{}
	}
	for _, s := range ss {
		i := min(nb-1, max(0, int(s.t/width)))
		bs[i].counts[s.outcome] += int(s.w)
		if s.outcome == history.OK {
			lat[i] = append(lat[i], s.latMs)
		}
	}
	for i := range bs {
		l := lat[i]
		if len(l) == 0 {
			bs[i].p50, bs[i].p95, bs[i].p99, bs[i].pmax = math.NaN(), math.NaN(), math.NaN(), math.NaN()
			continue
		}
		sort.Float64s(l)
		q := func(f float64) float64 { return l[min(len(l)-1, int(f*float64(len(l))))] }
		bs[i].p50, bs[i].p95, bs[i].p99, bs[i].pmax = q(0.5), q(0.95), q(0.99), l[len(l)-1]
	}
	return bs, width
}

func latencyQuantileSVG(bs []qBucket, width, end float64, windows []faultWindow) template.HTML {
	lo, hi := math.Inf(1), 0.0
	for _, b := range bs {
		if !math.IsNaN(b.p50) {
			lo, hi = math.Min(lo, math.Max(b.p50, 1e-3)), math.Max(hi, b.pmax)
		}
	}
	if hi == 0 {
		return ""
	}
	p := newPlot("latency-quantiles", end, lo, hi, true, fmt.Sprintf("latency of ok ops (ms, log scale), quantiles per %s s", trimFloat(width)))
	shadeFaults(p, windows)
	p.Axes()
	ts := make([]float64, len(bs))
	for i, b := range bs {
		ts[i] = b.t
	}
	for _, q := range []struct {
		name  string
		color string
		get   func(qBucket) float64
	}{
		{"p50", "#1e88e5", func(b qBucket) float64 { return b.p50 }},
		{"p95", "#43a047", func(b qBucket) float64 { return b.p95 }},
		{"p99", "#fb8c00", func(b qBucket) float64 { return b.p99 }},
		{"max", "#c62828", func(b qBucket) float64 { return b.pmax }},
	} {
		vs := make([]float64, len(bs))
		for i, b := range bs {
			vs[i] = q.get(b)
		}
		p.Line(q.name, q.color, ts, vs, "", false)
	}
	return p.SVG()
}

// outcomeDash tells outcomes apart by line style in the throughput plot
// (colour is the op), as Jepsen's rate plot does.
var outcomeDash = map[history.Type]string{history.OK: "", history.Fail: "2 2", history.Info: "6 3"}

// throughputSVG plots completions per second by op (colour) and outcome
// (line style): Jepsen's rate plot.
func throughputSVG(ss []sample, bs []qBucket, width, end float64, windows []faultWindow) template.HTML {
	type key struct {
		f       string
		outcome history.Type
	}
	rates := map[key][]float64{}
	var fs []string
	for _, s := range ss {
		k := key{s.series, s.outcome}
		r, ok := rates[k]
		if !ok {
			r = make([]float64, len(bs))
			rates[k] = r
			if !slices.Contains(fs, s.series) {
				fs = append(fs, s.series)
			}
		}
		r[min(len(bs)-1, max(0, int(s.t/width)))] += s.w
	}
	peak := 1.0
	for _, r := range rates {
		for i := range r {
			r[i] /= width
			peak = math.Max(peak, r[i])
		}
	}
	p := newPlot("throughput", end, 0, peak*1.05, false, fmt.Sprintf("completions per second by op (colour) and outcome (line: ok solid, fail dotted, info dashed), per %s s", trimFloat(width)))
	shadeFaults(p, windows)
	p.Axes()
	ts := make([]float64, len(bs))
	for i, b := range bs {
		ts[i] = b.t
	}
	for i, f := range fs {
		for _, o := range []history.Type{history.OK, history.Fail, history.Info} {
			if r, ok := rates[key{f, o}]; ok {
				p.Line(f+" "+o.String(), plot.Color(i), ts, r, outcomeDash[o], false)
			}
		}
	}
	p.Legend = p.Legend[:0]
	for i, f := range fs {
		p.Legend = append(p.Legend, plot.LegendItem{Label: f, Color: plot.Color(i)})
	}
	for _, o := range []history.Type{history.OK, history.Fail, history.Info} {
		p.Legend = append(p.Legend, plot.LegendItem{Label: o.String(), Color: "#555", Dash: map[string]string{"": "10 0"}[outcomeDash[o]] + outcomeDash[o]})
	}
	return p.SVG()
}

// writeFs are the op names that change state; their ok completions are the
// acknowledged writes of the RPO timeline.
var writeFs = map[string]bool{"write": true, "cas": true, "add": true, "incr": true, "append": true, "txn": true, "transfer": true}

// lostMark is an acknowledged write found missing, at its acknowledgement.
type lostMark struct {
	t     float64
	title string
}

// rpoSVG plots acknowledged writes per second and marks each lost write at
// the time it was acknowledged; per-window losses (of counters, where only
// amounts are known) are drawn as spans over the acknowledgements they may
// have been.
func rpoSVG(ss []sample, bs []qBucket, width, end float64, windows []faultWindow, lost []lostMark, spans []lossSpan) template.HTML {
	counts := make([]float64, len(bs))
	for _, s := range ss {
		if s.outcome == history.OK && writeFs[s.f] {
			i := min(len(bs)-1, max(0, int(s.t/width)))
			counts[i] += s.w
		}
	}
	peak := 1.0
	ts := make([]float64, len(bs))
	for i := range counts {
		counts[i] /= width
		peak = math.Max(peak, counts[i])
		ts[i] = bs[i].t
	}
	rows := 0
	for _, sp := range spans {
		rows = max(rows, sp.row+1)
	}
	p := newPlot("rpo", end, 0, peak*(1.1+0.08*float64(rows)), false, "acknowledged writes per second; red bars: when the writes each RPO checker found lost had been acknowledged; ×: lost writes known one by one")
	shadeFaults(p, windows)
	p.Axes()
	p.Line("acknowledged writes/s", "#2e7d32", ts, counts, "", false)
	for _, sp := range spans {
		x0, x1 := p.XPos(sp.from), p.XPos(sp.to)
		y := p.Top + 2 + 12*float64(sp.row)
		fmt.Fprintf(p, `<rect class="loss-span" x="%.1f" y="%.0f" width="%.1f" height="10" fill="#c62828" opacity="0.85"><title>%s</title></rect>`,
			x0, y, math.Max(2, x1-x0), template.HTMLEscapeString(sp.title))
		if x1-x0 > 6*float64(len(sp.label)) {
			fmt.Fprintf(p, `<text x="%.1f" y="%.0f" fill="#fff" font-size="9">%s</text>`, x0+2, y+8, template.HTMLEscapeString(sp.label))
		}
	}
	// Lost writes acknowledged within a few pixels of each other stack
	// upwards instead of blurring into one mark; each keeps its tooltip.
	sorted := slices.Clone(lost)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].t < sorted[j].t })
	lastX, stack := math.Inf(-1), 0
	for _, l := range sorted {
		x := p.XPos(l.t)
		if x-lastX < 4 {
			stack++
		} else {
			stack, lastX = 0, x
		}
		y := p.YPos(peak*1.05) + 8*float64(min(stack, 4))
		fmt.Fprintf(p, `<path class="lost" d="M%.1f %.1fl6 6m0 -6l-6 6" stroke="#c62828" stroke-width="2"><title>%s</title></path>`,
			x-3, y-3, template.HTMLEscapeString(l.title))
	}
	if len(lost) > 0 || len(spans) > 0 {
		p.Legend = append(p.Legend, plot.LegendItem{Label: "lost", Color: "#c62828"})
	}
	return p.SVG()
}

// lossSpan is the span of acknowledgements of the writes an RPO checker
// found lost in one fault window.
type lossSpan struct {
	from, to     float64
	row          int // one row per checker
	label, title string
}

func (s lossSpan) checker() string { n, _, _ := strings.Cut(s.label, ":"); return n }
