package bench

import (
	"fmt"
	"html"
	"math"
	"strings"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/results"
)

// Save stores a load test's figures in its run directory: bench.json (the
// whole Result), results.json (headline figures, readable by `results
// list/show/compare`) and report.html (plots over time).
func Save(run *results.Run, r *Result) error {
	if err := run.WriteJSON("bench.json", r); err != nil {
		return err
	}
	if err := saveHistograms(run, r); err != nil {
		return err
	}
	valid := checker.Valid
	if r.Throughput == 0 {
		valid = checker.Unknown // no op succeeded: nothing was measured
	}
	tot := r.Ops["total"]
	s := checker.Summary{Valid: valid, Checkers: map[string]checker.Result{"bench": {Valid: valid, Figures: map[string]any{
		"throughput":      math.Round(r.Throughput),
		"p50_ms":          tot.Corrected.P50,
		"p99_ms":          tot.Corrected.P99,
		"p99_9_ms":        tot.Corrected.P999,
		"raw_p99_ms":      tot.Raw.P99,
		"raw_p99_9_ms":    tot.Raw.P999,
		"failed":          tot.Failed,
		"moved":           r.Counts.Moved,
		"ask":             r.Counts.Ask,
		"lag_max_ms":      r.LagMaxMs,
		"backlog":         r.Backlog,
		"max_gap_s":       maxGap(r),
		"generator_cores": r.CPUMaxCores,
	}}}}
	if err := run.WriteJSON("results.json", s); err != nil {
		return err
	}
	return run.WriteFile("report.html", []byte(Page("redline bench: "+run.Test+" "+run.Time.Format("2006-01-02 15:04:05"), []Named{{Name: run.Dir, R: r}})))
}

func maxGap(r *Result) float64 {
	m := 0.0
	for _, s := range r.Shards {
		m = max(m, s.MaxGapS)
	}
	return m
}

// Named is a result with a label, for pages that overlay several runs.
type Named struct {
	Name string
	R    *Result
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"}

// Page renders the plots of one or more runs overlaid: throughput,
// corrected and raw latency quantiles, failures and redirects over time,
// with fault windows shaded.
func Page(title string, runs []Named) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><meta charset=utf-8><title>%s</title><style>body{font:14px sans-serif;margin:2em}svg{display:block;margin:1em 0}table{border-collapse:collapse}td,th{padding:2px 8px;text-align:right;border-bottom:1px solid #ddd}</style><h1>%s</h1>",
		html.EscapeString(title), html.EscapeString(title))
	b.WriteString("<table><tr><th>run</th><th>throughput ops/s</th><th>p50 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>raw p99 ms</th><th>raw p99.9 ms</th><th>failed</th></tr>")
	for i, n := range runs {
		t := n.R.Ops["total"]
		fmt.Fprintf(&b, "<tr><td style='color:%s;text-align:left'>%s</td><td>%.0f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%d</td></tr>",
			palette[i%len(palette)], html.EscapeString(n.Name), n.R.Throughput, t.Corrected.P50, t.Corrected.P99, t.Corrected.P999, t.Raw.P99, t.Raw.P999, t.Failed)
	}
	b.WriteString("</table>")
	charts := []struct {
		title string
		log   bool
		get   func(Second) float64
	}{
		{"ok ops/s", false, func(s Second) float64 { return s.OKPerS }},
		{"p99 ms, corrected (from the intended send time)", true, func(s Second) float64 { return s.P99Ms }},
		{"p99.9 ms, corrected", true, func(s Second) float64 { return s.P999Ms }},
		{"p99 ms, raw (from the actual send)", true, func(s Second) float64 { return s.RawP99Ms }},
		{"failed ops/s", false, func(s Second) float64 { return s.FailPerS }},
		{"MOVED + ASK /s", false, func(s Second) float64 { return s.MovedPerS + s.AskPerS }},
	}
	for _, c := range charts {
		var lines []line
		for i, n := range runs {
			l := line{color: palette[i%len(palette)]}
			for _, s := range n.R.Seconds {
				l.x = append(l.x, s.T)
				l.y = append(l.y, c.get(s))
			}
			lines = append(lines, l)
		}
		var shade [][2]float64
		if len(runs) > 0 {
			for _, w := range runs[0].R.Windows {
				shade = append(shade, [2]float64{w.StartS, w.EndS})
			}
		}
		b.WriteString(chart(c.title, lines, shade, c.log))
	}
	for _, n := range runs {
		b.WriteString(shardTable(n))
		b.WriteString(shardChart(n, "ok ops/s per shard", false, func(s Second) []float64 { return s.ShardOKPerS }))
		b.WriteString(shardChart(n, "longest wait past the intended time, ms, per shard (ops queued for a node that was behind)", true, func(s Second) []float64 { return s.ShardLagMaxMs }))
	}
	for _, n := range runs {
		b.WriteString(n.R.Load.html(n.Name))
	}
	for _, n := range runs {
		if len(n.R.Windows) == 0 {
			continue
		}
		fmt.Fprintf(&b, "<h2>fault windows of %s</h2><table><tr><th>fault</th><th>window</th><th>s</th><th>ok/s</th><th>errors/s</th><th>redirects/s</th><th>p50 ms</th><th>p99 ms</th><th>p99.9 ms</th></tr>", html.EscapeString(n.Name))
		for _, w := range n.R.Windows {
			for i, f := range []WindowFigures{w.Before, w.During, w.After} {
				fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%.1f-%.1f</td><td>%.0f</td><td>%.1f</td><td>%.1f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td></tr>",
					html.EscapeString(w.Fault), []string{"before", "during", "after"}[i], f.FromS, f.ToS, f.OKPerS, f.ErrorsPerS, f.RedirectsPerS, f.P50Ms, f.P99Ms, f.P999Ms)
			}
		}
		b.WriteString("</table>")
	}
	return b.String()
}

// shardTable lists each shard's own figures over the run.
func shardTable(n Named) string {
	if len(n.R.Shards) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<h2>shards of %s</h2><table><tr><th>shard</th><th>ok/s</th><th>backlog</th><th>lag max ms</th><th>p50 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>max ms</th><th>longest gap s</th></tr>", html.EscapeString(n.Name))
	for _, sh := range n.R.Shards {
		c := sh.Corrected
		fmt.Fprintf(&b, "<tr><td style='text-align:left'>%s</td><td>%.0f</td><td>%d</td><td>%.1f</td><td>%.3g</td><td>%.3g</td><td>%.3g</td><td>%.3g</td><td>%.2f</td></tr>",
			html.EscapeString(sh.Shard), float64(sh.OK)/max(n.R.DurationS, 1e-9), sh.Backlog, sh.LagMaxMs, c.P50, c.P99, c.P999, c.Max, sh.MaxGapS)
	}
	b.WriteString("</table>")
	return b.String()
}

// shardChart plots a per-shard figure of one run: a shard that stops
// serving shows as a line at zero while the others go on.
func shardChart(n Named, title string, logY bool, get func(Second) []float64) string {
	if len(n.R.Shards) == 0 {
		return ""
	}
	var lines []line
	var names []string
	for i, sh := range n.R.Shards {
		l := line{color: palette[i%len(palette)]}
		for _, s := range n.R.Seconds {
			if v := get(s); i < len(v) {
				l.x = append(l.x, s.T)
				l.y = append(l.y, v[i])
			}
		}
		lines = append(lines, l)
		names = append(names, fmt.Sprintf("<span style='color:%s'>%s</span>", l.color, html.EscapeString(sh.Shard)))
	}
	var shade [][2]float64
	for _, w := range n.R.Windows {
		shade = append(shade, [2]float64{w.StartS, w.EndS})
	}
	return "<p>" + html.EscapeString(title) + " (shards as at the start) of " + html.EscapeString(n.Name) + ": " + strings.Join(names, ", ") + "</p>" +
		chart(title, lines, shade, logY)
}

type line struct {
	color string
	x, y  []float64
}

// chart draws lines on shared axes as inline SVG; log scales the y axis
// (latency spans orders of magnitude during a fault).
func chart(title string, lines []line, shade [][2]float64, logY bool) string {
	const W, H, L, R, T, B = 900.0, 220.0, 60.0, 10.0, 24.0, 24.0
	xmax, ymax, ymin := 1.0, 0.0, math.Inf(1)
	for _, l := range lines {
		for i := range l.x {
			xmax = max(xmax, l.x[i])
			ymax = max(ymax, l.y[i])
			if l.y[i] > 0 {
				ymin = min(ymin, l.y[i])
			}
		}
	}
	if ymax <= 0 {
		ymax = 1
	}
	fy := func(v float64) float64 { return H - B - v/ymax*(H-T-B) }
	if logY {
		lo := math.Floor(math.Log10(math.Min(ymin, ymax)))
		if math.IsInf(lo, 0) || math.IsNaN(lo) {
			lo = -2
		}
		hi := math.Ceil(math.Log10(ymax))
		if hi <= lo {
			hi = lo + 1
		}
		fy = func(v float64) float64 {
			if v <= 0 {
				return H - B
			}
			return H - B - (math.Log10(v)-lo)/(hi-lo)*(H-T-B)
		}
	}
	fx := func(v float64) float64 { return L + v/xmax*(W-L-R) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg width="%.0f" height="%.0f" xmlns="http://www.w3.org/2000/svg"><text x="%.0f" y="16">%s</text>`, W, H, L, html.EscapeString(title))
	for _, s := range shade {
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.0f" width="%.1f" height="%.0f" fill="#f3d9d9"/>`, fx(s[0]), T, math.Max(1, fx(s[1])-fx(s[0])), H-T-B)
	}
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#999"/><line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#999"/>`, L, H-B, W-R, H-B, L, T, L, H-B)
	fmt.Fprintf(&b, `<text x="2" y="%.0f" font-size="11">%s</text><text x="2" y="%.0f" font-size="11">%s</text>`, T+10, trimFloat(ymax), H-B, map[bool]string{true: "log", false: "0"}[logY])
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="11">%.0f s</text>`, W-R-40, H-6, xmax)
	for _, l := range lines {
		var pts []string
		for i := range l.x {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", fx(l.x[i]), fy(l.y[i])))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, l.color, strings.Join(pts, " "))
	}
	b.WriteString("</svg>")
	return b.String()
}
