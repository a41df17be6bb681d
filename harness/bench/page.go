package bench

import (
	"encoding/json"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/results/plot"
)

// Store is where Save writes: a run directory (results.Run is one).
type Store interface {
	WriteFile(name string, data []byte) error
	WriteJSON(name string, v any) error
}

// Save stores a load test's own files in its run directory dir through
// st: bench.json (the whole Result), the histograms (HistogramFiles) and
// report.html (plots over time) under title, the run named name in it.
// results.json, which every run has, is the harness's (harness.SaveLoad,
// from Headline).
func Save(st Store, dir, title, name string, r *Result) error {
	if err := st.WriteJSON("bench.json", r); err != nil {
		return err
	}
	if err := saveHistograms(st, r); err != nil {
		return err
	}
	cfg, _ := ReadConfig(dir)
	return st.WriteFile("report.html", []byte(Page(title, []Named{{Name: name, R: r, Config: cfg, Exports: true}})))
}

// Outcome is a load test's outcome as the "bench" checker's result: its
// headline figures, valid when it measured something, unknown when no op
// succeeded or generators were left out, invalid when it missed a bound
// its user set (--threshold).
func Outcome(r *Result) checker.Result {
	figures, measured := Headline(r)
	valid := checker.Valid
	if !measured {
		valid = checker.Unknown // no op succeeded: nothing was measured
	}
	if r.GeneratorsFailed > 0 {
		// Generators were left out: the figures are not the rate asked.
		valid = checker.Unknown
		var why []string
		for _, g := range r.Generators {
			if !g.Merged {
				why = append(why, fmt.Sprintf("generator %d of %d (%s) %s: %s", g.Index, len(r.Generators), g.Name, g.Status, g.Problem))
			}
		}
		figures.Reason = strings.Join(why, "; ") + "; the figures leave them out"
	}
	if failed := FailedThresholds(r.Thresholds); len(failed) > 0 && valid == checker.Valid {
		// The run missed bounds its user set (bench --threshold, exit
		// 99): results.json must not read as a pass in `results list`.
		valid = checker.Invalid
		figures.FailedThresholds = failed
		figures.Reason = "--threshold failed: " + strings.Join(failed, "; ")
	}
	return checker.Result{Valid: valid, Figures: figures}
}

// Headline is a load test's figures for results.json, and whether it
// measured anything (false: no op succeeded).
func Headline(r *Result) (figures *checker.BenchFigures, measured bool) {
	tot := r.Ops["total"]
	figures = &checker.BenchFigures{
		Throughput:     math.Round(r.Throughput),
		P50Ms:          tot.Corrected.P50,
		P99Ms:          tot.Corrected.P99,
		P999Ms:         tot.Corrected.P999,
		RawP99Ms:       tot.Raw.P99,
		RawP999Ms:      tot.Raw.P999,
		Failed:         tot.Failed,
		Moved:          r.Counts.Moved,
		Ask:            r.Counts.Ask,
		LagMaxMs:       r.LagMaxMs,
		Backlog:        r.Backlog,
		MaxGapS:        maxGap(r),
		GeneratorCores: r.CPUMaxCores,
	}
	if len(r.Thresholds) > 0 {
		failed := 0
		for _, t := range r.Thresholds {
			if !t.Pass {
				failed++
			}
		}
		n := len(r.Thresholds)
		figures.Thresholds, figures.ThresholdsFailed = &n, &failed
	}
	if len(r.Generators) > 0 {
		n, failed, rate := len(r.Generators), r.GeneratorsFailed, r.RequestedRate
		figures.Generators, figures.GeneratorsFailed, figures.RequestedRate = &n, &failed, &rate
	}
	return figures, r.Throughput != 0
}

func maxGap(r *Result) float64 {
	m := 0.0
	for _, s := range r.Shards {
		m = max(m, s.MaxGapS)
	}
	return m
}

// ReadConfig reads a run directory's config.json as a flat map of
// settings ("target", "nodes", "kv.ratio", ...) for the configuration
// block; nil when there is none.
func ReadConfig(dir string) (map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	out := map[string]string{}
	flatten(out, "", m)
	// Names every cluster gets afresh: never a difference of configuration.
	for _, k := range []string{"versions.cluster", "versions.network", "versions.subnet"} {
		delete(out, k)
	}
	return out, nil
}

func flatten(out map[string]string, prefix string, v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if prefix == "" && hiddenSettings[k] {
				continue
			}
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			flatten(out, key, e)
		}
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, fmt.Sprint(e))
		}
		out[prefix] = strings.Join(parts, " ")
	case float64:
		out[prefix] = strconv.FormatFloat(x, 'f', -1, 64)
	case nil:
	default:
		out[prefix] = fmt.Sprint(x)
	}
}

// hiddenSettings differ between any two runs and say nothing about the
// configuration.
var hiddenSettings = map[string]bool{"key_prefix": true, "started": true, "results_dir": true, "test_index": true}

// mainSettings lead the configuration block, in this order.
var mainSettings = []string{"target", "server_version", "server_binary", "server_config", "client", "nodes", "replicas", "addrs",
	"workload", "kv.set_ratio", "kv.get_ratio", "kv.keys", "kv.pattern", "kv.value_min", "kv.value_max", "kv.pipeline",
	"rate", "concurrency", "time_limit", "capacity.slo", "capacity.step", "capacity.warmup", "capacity.plan", "nemesis", "seed", "command"}

// Named is a result with a label, for pages that overlay several runs.
type Named struct {
	Name string
	R    *Result
	// Config is the run's flattened config.json (ReadConfig), if known.
	Config map[string]string
	// Exports: the page sits in the run's directory, beside its .hgrm
	// and histograms.json, and links them.
	Exports bool
}

// trafficSeconds names the x axis of the plots over time.
const trafficSeconds = "seconds since traffic started"

const pageStyle = `body{font:14px/1.4 sans-serif;margin:2em;max-width:1100px;color:#222}
h2{margin-top:1.6em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:2px 8px;text-align:right;border-bottom:1px solid #e4e4e4}
th{background:#f6f6f6}td.l,th.l{text-align:left}tr.differ td{background:#fff6d5}
#headline p{font-size:16px;margin:.3em 0}.note{color:#555}.bad{color:#a33}
svg.plot{display:block;margin:.8em 0;background:#fff}`

// Page renders the report of one or more runs overlaid: the headline in
// words, the configuration (and how the runs' differ), the capacity curve
// when there was a search, ops by type, plots over time with fault
// windows shaded, the percentile spectrum, each shard by node name, the
// fault windows, the load per slot when keys were skewed, and the notes.
func Page(title string, runs []Named) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><html lang=en><meta charset=utf-8><title>%s</title><style>%s</style><h1>%s</h1>",
		html.EscapeString(title), pageStyle, html.EscapeString(title))
	b.WriteString(`<section id="headline">`)
	for i, n := range runs {
		fmt.Fprintf(&b, `<p><b style="color:%s">%s</b>: %s</p>`, plot.Color(i), html.EscapeString(n.Name), html.EscapeString(headline(n.R)))
	}
	b.WriteString(`</section>`)
	b.WriteString(configBlock(runs))
	b.WriteString(thresholdSection(runs))
	b.WriteString(capacitySection(runs))
	b.WriteString(generatorSection(runs))
	b.WriteString(opsTable(runs))
	b.WriteString(timePlots(runs))
	b.WriteString(spectrumSection(runs))
	b.WriteString(shardSection(runs))
	b.WriteString(windowSection(runs))
	b.WriteString(loadSection(runs))
	b.WriteString(notesSection(runs))
	b.WriteString("</html>")
	return b.String()
}

// headline says what the run measured in one or two sentences.
func headline(r *Result) string {
	tot := r.Ops["total"]
	var s strings.Builder
	if r.GeneratorsFailed > 0 {
		var who []string
		for _, g := range r.Generators {
			if !g.Merged {
				who = append(who, fmt.Sprintf("generator %d %s", g.Index, g.Status))
			}
		}
		fmt.Fprintf(&s, "Not a measurement of the %s ops/s asked: %d of %d generators left out (%s). ", Count(r.RequestedRate), r.GeneratorsFailed, len(r.Generators), strings.Join(who, ", "))
	}
	if c := r.Capacity; c != nil {
		if c.Rate > 0 {
			fmt.Fprintf(&s, "Capacity %s ops/s at %s", Count(c.Rate), c.SLO.Text)
			if c.Confirmed {
				s.WriteString(" (met twice)")
			}
			fmt.Fprintf(&s, "; what limited it: %s. ", c.Limit)
			if c.Noise != "" {
				fmt.Fprintf(&s, "Noise: %s. ", c.Noise)
			}
		} else {
			fmt.Fprintf(&s, "Capacity %s; %s. ", strings.TrimPrefix(c.CapacityLine(), "capacity: "), c.Limit)
		}
		fmt.Fprintf(&s, "The step at %s ops/s: ", Count(r.Rate))
	}
	if r.Rate > 0 {
		fmt.Fprintf(&s, "%s ops/s delivered of %s scheduled for %s s", Count(r.Throughput), Count(r.Rate), Num(r.DurationS))
	} else {
		fmt.Fprintf(&s, "%s ops/s, closed loop, %d workers, for %s s", Count(r.Throughput), r.Workers, Num(r.DurationS))
	}
	s.WriteString(r.runsHeadline())
	if tot.Corrected.Count > 0 {
		kind := "corrected"
		if r.Rate <= 0 {
			kind = "raw"
		}
		fmt.Fprintf(&s, "; p50 %s ms, p99 %s ms, p99.9 %s ms, max %s ms (%s)", Num(tot.Corrected.P50), Num(tot.Corrected.P99), Num(tot.Corrected.P999), Num(tot.Corrected.Max), kind)
	}
	if f := tot.Failed; f > 0 {
		fmt.Fprintf(&s, "; %s ops failed", Count(float64(f)))
	} else {
		s.WriteString("; no op failed")
	}
	if g := maxGap(r); g >= gapWorth.Seconds() {
		fmt.Fprintf(&s, "; the longest a shard served nothing: %s s", Num(g))
	}
	s.WriteString(".")
	for _, w := range r.Windows {
		fmt.Fprintf(&s, " %s from %s s to %s s", w.Fault, Num(w.StartS), Num(w.EndS))
		if w.TookS > 0 {
			fmt.Fprintf(&s, " (the change took %s s)", Num(w.TookS))
		}
		if w.Before.Seconds > 0 && w.During.Seconds > 0 {
			fmt.Fprintf(&s, ": p99 %s ms before, %s ms during, %s ms after", Num(w.Before.P99Ms), Num(w.During.P99Ms), Num(w.After.P99Ms))
		}
		s.WriteString(".")
	}
	if len(r.Diagnosis) > 0 && r.Rate > 0 {
		first := r.Diagnosis[0]
		if i := strings.Index(first, ":"); i > 0 && i < 60 {
			first = first[:i]
		}
		fmt.Fprintf(&s, " Note: %s (see the notes).", first)
	}
	return s.String()
}

// configBlock lists the settings; with several runs, the differing
// ones first and marked.
func configBlock(runs []Named) string {
	var b strings.Builder
	b.WriteString(`<section id="config"><h2>configuration</h2>`)
	keys := map[string]bool{}
	for _, n := range runs {
		for k := range n.Config {
			keys[k] = true
		}
	}
	engine := func(r *Result) map[string]string {
		// Lengths to a tenth of a second: a few ms of timer slack are no
		// difference between two runs.
		tenth := func(v float64) string { return Num(math.Round(v*10) / 10) }
		return map[string]string{"measured s": tenth(r.DurationS), "warm-up s": tenth(r.WarmupS), "connections per primary": strconv.Itoa(r.Workers),
			"pipeline": strconv.Itoa(r.Pipeline), "scheduled ops/s": Count(r.Rate), "generator cores": strconv.Itoa(r.Cores)}
	}
	var order []string
	for _, k := range []string{"scheduled ops/s", "connections per primary", "pipeline", "measured s", "warm-up s", "generator cores"} {
		order = append(order, k)
	}
	for _, k := range mainSettings {
		if keys[k] {
			order = append(order, k)
			delete(keys, k)
		}
	}
	var rest []string
	for k := range keys {
		rest = append(rest, k)
	}
	sort.Strings(rest)
	order = append(order, rest...)
	value := func(n Named, k string) string {
		if v, ok := engine(n.R)[k]; ok {
			return v
		}
		return n.Config[k]
	}
	differ := func(k string) bool {
		for _, n := range runs[1:] {
			if value(n, k) != value(runs[0], k) {
				return true
			}
		}
		return false
	}
	if len(runs) > 1 {
		var d []string
		for _, k := range order {
			if differ(k) {
				d = append(d, k)
			}
		}
		if len(d) == 0 {
			b.WriteString("<p>the runs' configurations are the same</p>")
		} else {
			fmt.Fprintf(&b, `<p id="config-differ">the runs differ in: %s</p>`, html.EscapeString(strings.Join(d, ", ")))
		}
	}
	b.WriteString(`<table><tr><th class=l>setting</th>`)
	for i, n := range runs {
		fmt.Fprintf(&b, `<th class=l style="color:%s">%s</th>`, plot.Color(i), html.EscapeString(n.Name))
	}
	b.WriteString("</tr>")
	for _, k := range order {
		cls := ""
		if len(runs) > 1 && differ(k) {
			cls = ` class="differ"`
		}
		fmt.Fprintf(&b, `<tr%s><td class=l>%s</td>`, cls, html.EscapeString(k))
		for _, n := range runs {
			v := value(n, k)
			if v == "" {
				v = "-"
			}
			fmt.Fprintf(&b, `<td class=l>%s</td>`, html.EscapeString(v))
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table></section>")
	return b.String()
}

// capacitySection draws the latency-throughput curve of every run that
// was a capacity search, per shard for a single run, with the SLO's limit.
func capacitySection(runs []Named) string {
	var with []Named
	for _, n := range runs {
		if n.R.Capacity != nil {
			with = append(with, n)
		}
	}
	if len(with) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<section id="capacity"><h2>capacity: the latency-throughput curve</h2>`)
	spec := plot.Lines{ID: "capacity-curve", Title: "corrected latency against the delivered throughput of each step (shards: their p99 at the step's total)",
		X: axis("delivered ops/s", false), Y: axis("p99 ms", true), FixXMin: true, Height: 300}
	var limit *Objective
	for i, n := range with {
		c := n.R.Capacity
		color := plot.Color(i)
		name := n.Name + " "
		if len(with) == 1 {
			name = ""
		}
		tot := plot.Series{Name: name + "p99", Color: color, Dots: true}
		p999 := plot.Series{Name: name + "p99.9", Color: color, Dash: true, Dots: true}
		for _, st := range c.Curve() {
			tot.X, tot.Y = append(tot.X, st.OKPerS), append(tot.Y, st.Latency["p99"])
			p999.X, p999.Y = append(p999.X, st.OKPerS), append(p999.Y, st.Latency["p99.9"])
		}
		spec.Series = append(spec.Series, tot)
		if len(with) == 1 {
			spec.Series = append(spec.Series, p999)
			curve := c.Curve()
			if len(curve) > 0 {
				for j, sh := range curve[0].Shards {
					ps := plot.Series{Name: sh.Shard + " p99", Color: plot.Color(j + 2), Dash: true}
					for _, st := range curve {
						if j < len(st.Shards) {
							ps.X, ps.Y = append(ps.X, st.OKPerS), append(ps.Y, st.Shards[j].P99Ms)
						}
					}
					spec.Series = append(spec.Series, ps)
				}
			}
		}
		for j, o := range c.SLO.Objectives {
			if o.Metric != "errors" && limit == nil {
				limit = &c.SLO.Objectives[j]
			}
		}
	}
	if limit != nil {
		spec.HLines = append(spec.HLines, plot.HLine{Y: limit.Limit, Label: limit.Text})
	}
	b.WriteString(string(spec.SVG()))
	for _, n := range with {
		c := n.R.Capacity
		fmt.Fprintf(&b, `<p><b>%s</b>: %s. %s</p>`, html.EscapeString(n.Name), html.EscapeString(c.CapacityLine()), html.EscapeString("Limit: "+c.Limit))
		b.WriteString(c.Table().HTML())
	}
	b.WriteString("</section>")
	return b.String()
}

// opsTable splits the ops by type, as memtier does.
func opsTable(runs []Named) string {
	var b strings.Builder
	b.WriteString(`<section id="ops"><h2>operations by type</h2><table><tr><th class=l>run</th><th class=l>type</th><th>ops/s</th><th>hits/s</th><th>misses/s</th><th>KB/s</th><th>failed</th><th>mean ms</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>max ms</th><th>raw p50 ms</th><th>raw p99 ms</th><th>raw p99.9 ms</th></tr>`)
	for i, n := range runs {
		for _, op := range []string{"get", "set", "total"} {
			f := n.R.Ops[op]
			if f == nil {
				continue
			}
			hits, misses := Count(f.HitsPerS), Count(f.MissesPerS)
			if op == "set" {
				hits, misses = "-", "-"
			}
			c, rw := f.Corrected, f.Raw
			fmt.Fprintf(&b, `<tr class="op-%s"><td class=l style="color:%s">%s</td><td class=l>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>`,
				op, plot.Color(i), html.EscapeString(n.Name), strings.ToUpper(op), Count(f.OKPerS), hits, misses, Num(f.KBPerS), Count(float64(f.Failed)),
				qNum(c, c.Mean), qNum(c, c.P50), qNum(c, c.P90), qNum(c, c.P99), qNum(c, c.P999), qNum(c, c.Max), qNum(rw, rw.P50), qNum(rw, rw.P99), qNum(rw, rw.P999))
		}
	}
	b.WriteString("</table></section>")
	return b.String()
}

// pct writes a percentile exactly (99.99, not Num's 100).
func pct(q float64) string { return strconv.FormatFloat(q, 'f', -1, 64) }

// qNum is a latency figure, or "-" when nothing was measured (never 0).
func qNum(q Quantiles, v float64) string {
	if q.Count == 0 {
		return "-"
	}
	return Num(v)
}

// shadeOf is a run's fault and change windows as bands of a chart.
func shadeOf(r *Result) []plot.Band {
	var out []plot.Band
	for _, w := range r.Windows {
		out = append(out, plot.Band{From: w.StartS, To: w.EndS, Label: w.Fault, Title: w.Fault})
	}
	return out
}

// axis is a chart's axis named name, its ticks numbers for people.
func axis(name string, log bool) plot.Axis { return plot.Axis{Name: name, Log: log, Format: Num} }

// timePlots are the figures over time, fault windows shaded.
func timePlots(runs []Named) string {
	var b strings.Builder
	b.WriteString(`<section id="plots"><h2>over time</h2>`)
	if len(runs) > 0 && runs[0].R.WarmupS > 0 {
		fmt.Fprintf(&b, "<p class=note>the first %s s were warm-up: driven, not measured, not drawn</p>", Num(runs[0].R.WarmupS))
	}
	get := func(n Named, name, color string, dash bool, f func(Second) float64) plot.Series {
		s := plot.Series{Name: name, Color: color, Dash: dash}
		for _, p := range n.R.Seconds {
			s.X, s.Y = append(s.X, p.T), append(s.Y, f(p))
		}
		return s
	}
	single := len(runs) == 1
	var shade []plot.Band
	if len(runs) > 0 {
		shade = shadeOf(runs[0].R)
	}
	closed := 0 // closed-loop runs: no schedule, no corrected latency
	for _, n := range runs {
		if n.R.Rate <= 0 {
			closed++
		}
	}
	empty := map[string]string{}
	if closed == len(runs) {
		empty["generator"] = "a closed loop has no schedule, so no op is sent late"
	}
	mk := func(id, title, unit string, logY bool, lines func(i int, n Named) []plot.Series) string {
		spec := plot.Lines{ID: id, Title: title, X: axis(trafficSeconds, false), Y: axis(unit, logY), Bands: shade, Empty: empty[id]}
		for i, n := range runs {
			spec.Series = append(spec.Series, lines(i, n)...)
		}
		return string(spec.SVG())
	}
	b.WriteString(mk("throughput", "ok ops per second", "ops/s", false, func(i int, n Named) []plot.Series {
		if single {
			return []plot.Series{get(n, "total", plot.Color(0), false, func(p Second) float64 { return p.OKPerS }),
				get(n, "GET", plot.Color(2), false, func(p Second) float64 { return p.GetPerS }),
				get(n, "SET", plot.Color(4), false, func(p Second) float64 { return p.SetPerS })}
		}
		return []plot.Series{get(n, n.Name, plot.Color(i), false, func(p Second) float64 { return p.OKPerS })}
	}))
	latencyTitle := "corrected latency per second (from the intended send time)"
	switch {
	case closed == len(runs):
		latencyTitle = "latency per second, closed loop (from the actual send: no schedule, so no coordinated-omission correction)"
	case closed > 0:
		latencyTitle = "latency per second (open loop: corrected, from the intended send time; closed loop: from the actual send, uncorrected)"
	}
	b.WriteString(mk("latency", latencyTitle, "ms (log)", true, func(i int, n Named) []plot.Series {
		if single && n.R.Rate <= 0 {
			// Raw and "corrected" are the same figure in a closed loop.
			return []plot.Series{get(n, "p50", plot.Color(2), false, func(p Second) float64 { return p.P50Ms }),
				get(n, "p99", plot.Color(0), false, func(p Second) float64 { return p.P99Ms }),
				get(n, "p99.9", plot.Color(1), false, func(p Second) float64 { return p.P999Ms })}
		}
		if single {
			return []plot.Series{get(n, "p50", plot.Color(2), false, func(p Second) float64 { return p.P50Ms }),
				get(n, "p99", plot.Color(0), false, func(p Second) float64 { return p.P99Ms }),
				get(n, "p99.9", plot.Color(1), false, func(p Second) float64 { return p.P999Ms }),
				get(n, "raw p99", plot.Color(3), true, func(p Second) float64 { return p.RawP99Ms })}
		}
		c := plot.Color(i)
		return []plot.Series{get(n, n.Name+" p99", c, false, func(p Second) float64 { return p.P99Ms }),
			get(n, n.Name+" p99.9", c, true, func(p Second) float64 { return p.P999Ms })}
	}))
	b.WriteString(mk("errors", "failed ops and redirects per second", "per second", false, func(i int, n Named) []plot.Series {
		c := plot.Color(i)
		if single {
			return []plot.Series{get(n, "failed", plot.Color(1), false, func(p Second) float64 { return p.FailPerS }),
				get(n, "MOVED", plot.Color(0), false, func(p Second) float64 { return p.MovedPerS }),
				get(n, "ASK", plot.Color(2), false, func(p Second) float64 { return p.AskPerS }),
				get(n, "TRYAGAIN", plot.Color(4), false, func(p Second) float64 { return float64(p.TryAgain) })}
		}
		return []plot.Series{get(n, n.Name+" failed", c, false, func(p Second) float64 { return p.FailPerS }),
			get(n, n.Name+" MOVED+ASK", c, true, func(p Second) float64 { return p.MovedPerS + p.AskPerS })}
	}))
	b.WriteString(mk("generator", "the generator: how late ops were sent, and how late the schedule itself ran", "ms (log)", true, func(i int, n Named) []plot.Series {
		c := plot.Color(i)
		name := ""
		if !single {
			name = n.Name + " "
		}
		return []plot.Series{get(n, name+"send lag max", c, false, func(p Second) float64 { return p.LagMaxMs }),
			get(n, name+"schedule lag max", c, true, func(p Second) float64 { return p.DispatchLagMaxMs })}
	}))
	b.WriteString("</section>")
	return b.String()
}

// spectrumSection draws HdrHistogram's percentile spectrum: latency
// against 1/(1-percentile), so the tail gets the room it needs.
func spectrumSection(runs []Named) string {
	var b strings.Builder
	b.WriteString(`<section id="spectrum"><h2>percentile spectrum</h2>`)
	spec := plot.Lines{ID: "spectrum", Title: "latency by percentile (HdrHistogram)", X: plot.Axis{Name: "percentile", Log: true, Min: 1, Max: 1 / (1 - 0.99999)},
		Y: axis("ms (log)", true), FixXMin: true, Height: 300}
	for _, t := range []float64{0, 90, 99, 99.9, 99.99, 99.999} {
		spec.X.Ticks = append(spec.X.Ticks, plot.Tick{V: 1 / (1 - t/100), Label: pct(t) + "%"})
	}
	type row struct {
		name string
		q    []float64
	}
	var rows []row
	qs := []float64{50, 90, 99, 99.9, 99.99, 100}
	for i, n := range runs {
		for _, kind := range kindNames {
			if n.R.Rate <= 0 && kind != "raw" {
				continue // a closed loop's "corrected" is its raw latency
			}
			h := n.R.Hist("total", kind)
			if h == nil {
				continue
			}
			s := plot.Series{Name: kind, Color: plot.Color(i), Dash: kind == "raw" && n.R.Rate > 0}
			if n.R.Rate <= 0 {
				s.Name = "closed loop, from the send"
			}
			if len(runs) > 1 {
				s.Name = n.Name + " " + s.Name
			}
			for _, p := range Spectrum(h) {
				if p.Percentile >= 100 {
					continue // 1/(1-1) is infinite: the max is in the table
				}
				s.X, s.Y = append(s.X, 1/(1-p.Percentile/100)), append(s.Y, p.Ms)
			}
			spec.Series = append(spec.Series, s)
			r := row{name: s.Name}
			for _, q := range qs {
				r.q = append(r.q, float64(h.ValueAtQuantile(q))/1000)
			}
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		b.WriteString("<p>no histogram stored (a result from before histograms were kept)</p></section>")
		return b.String()
	}
	b.WriteString(string(spec.SVG()))
	b.WriteString(`<table><tr><th class=l>latency, ms</th>`)
	for _, q := range qs {
		fmt.Fprintf(&b, "<th>p%s</th>", pct(q))
	}
	b.WriteString("</tr>")
	for _, r := range rows {
		fmt.Fprintf(&b, "<tr><td class=l>%s</td>", html.EscapeString(r.name))
		for _, v := range r.q {
			fmt.Fprintf(&b, "<td>%s</td>", Num(v))
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table>")
	for _, n := range runs {
		if !n.Exports {
			continue
		}
		b.WriteString(`<p id="exports">histograms for HdrHistogram's tools: `)
		for i, f := range HistogramFiles() {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, `<a href="%s">%s</a>`, f, f)
		}
		b.WriteString(" (values in ms; histograms.json has each histogram's compressed V2 encoding, base64)</p>")
	}
	b.WriteString("</section>")
	return b.String()
}

// anyRun: some run has what has asks for.
func anyRun(runs []Named, has func(*Result) bool) bool {
	for _, n := range runs {
		if has(n.R) {
			return true
		}
	}
	return false
}

// shardSection shows each shard by its primary's node name.
func shardSection(runs []Named) string {
	if !anyRun(runs, func(r *Result) bool { return len(r.Shards) > 0 }) {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<section id="shards"><h2>per shard (primaries as at the start)</h2>`)
	for _, n := range runs {
		r := n.R
		if len(r.Shards) == 0 {
			continue
		}
		fmt.Fprintf(&b, `<p>%s</p>`, html.EscapeString(n.Name))
		b.WriteString(r.ShardTable().HTML())
		for _, pl := range []struct {
			id, title, unit string
			logY            bool
			get             func(Second) []float64
		}{
			{"shard-throughput", "ok ops per second per shard", "ops/s", false, func(s Second) []float64 { return s.ShardOKPerS }},
			{"shard-lag", "longest wait in the node's queue per shard (a node that was behind)", "ms (log)", true, func(s Second) []float64 { return s.ShardLagMaxMs }},
		} {
			spec := plot.Lines{ID: pl.id, Title: pl.title + ", " + n.Name, X: axis(trafficSeconds, false), Y: axis(pl.unit, pl.logY), Bands: shadeOf(r)}
			if pl.id == "shard-lag" && r.Rate <= 0 {
				spec.Empty = "a closed loop has no queues: a worker sends its next op when the last one completed"
			}
			for i, sh := range r.Shards {
				s := plot.Series{Name: sh.Shard, Color: plot.Color(i)}
				for _, p := range r.Seconds {
					if v := pl.get(p); i < len(v) {
						s.X, s.Y = append(s.X, p.T), append(s.Y, v[i])
					}
				}
				spec.Series = append(spec.Series, s)
			}
			b.WriteString(string(spec.SVG()))
		}
	}
	b.WriteString("</section>")
	return b.String()
}

// windowSection lists each fault or capacity change with the same length
// of time before and after it.
func windowSection(runs []Named) string {
	if !anyRun(runs, func(r *Result) bool { return len(r.Windows) > 0 }) {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<section id="windows"><h2>fault and change windows</h2>`)
	for _, n := range runs {
		if len(n.R.Windows) == 0 {
			continue
		}
		fmt.Fprintf(&b, `<p>%s</p>`, html.EscapeString(n.Name))
		b.WriteString(n.R.WindowTable().HTML())
	}
	b.WriteString("</section>")
	return b.String()
}

// skewed: the load per slot is worth its tables when the busiest shard
// carries 25% more than the mean or one slot 5% of all ops; uniform keys
// spread over thousands of slots show neither, whatever their noise.
func (l *LoadReport) skewed() bool {
	if l == nil || len(l.Shards) == 0 {
		return false
	}
	top := 0.0
	if len(l.TopSlots) > 0 {
		top = l.TopSlots[0].Share
	}
	return l.ShardSkew >= 1.25 || top >= 0.05
}

func loadSection(runs []Named) string {
	var b strings.Builder
	for _, n := range runs {
		l := n.R.Load
		if l == nil || len(l.Shards) == 0 {
			continue
		}
		if !l.skewed() {
			top := 0.0
			if len(l.TopSlots) > 0 {
				top = l.TopSlots[0].Share
			}
			fmt.Fprintf(&b, `<p class="load-even">%s: keys spread evenly (busiest shard %sx the mean, busiest slot %s%% of ops over %s slots touched): no hot-slot table</p>`,
				html.EscapeString(n.Name), Num(l.ShardSkew), Num(100*top), Count(float64(l.SlotsTouched)))
		} else {
			b.WriteString(`<section id="load">`)
			b.WriteString(l.html(n.Name))
			b.WriteString(`</section>`)
		}
		b.WriteString(l.nodesHTML(n.Name))
	}
	return b.String()
}

func notesSection(runs []Named) string {
	var b strings.Builder
	b.WriteString(`<section id="notes"><h2>notes</h2>`)
	for _, n := range runs {
		r := n.R
		fmt.Fprintf(&b, "<p>%s: generator up to %s of %d cores; ops sent up to %s ms late (%s ops more than 1 ms), the schedule itself up to %s ms late; %s scheduled ops unsent; MOVED %s, ASK %s, TRYAGAIN %s, CLUSTERDOWN %s, reconnects %s</p><ul>",
			html.EscapeString(n.Name), Num(r.CPUMaxCores), r.Cores, Num(r.LagMaxMs), Count(float64(r.LateOps)), Num(r.DispatchLagMaxMs), Count(float64(r.Unsent)),
			Count(float64(r.Counts.Moved)), Count(float64(r.Counts.Ask)), Count(float64(r.Counts.TryAgain)), Count(float64(r.Counts.ClusterDown)), Count(float64(r.Counts.Reconnects)))
		for _, d := range r.Diagnosis {
			fmt.Fprintf(&b, "<li>%s</li>", html.EscapeString(d))
		}
		b.WriteString("</ul>")
	}
	b.WriteString("</section>")
	return b.String()
}

// thresholdSection lists each run's --threshold bounds: measured, limit,
// pass or fail.
func thresholdSection(runs []Named) string {
	if !anyRun(runs, func(r *Result) bool { return len(r.Thresholds) > 0 }) {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<section id="thresholds"><h2>thresholds</h2><table><tr><th class=l>run</th><th class=l>threshold</th><th>measured</th><th>limit</th><th class=l>verdict</th></tr>`)
	for _, n := range runs {
		for _, t := range n.R.Thresholds {
			verdict := "pass"
			if !t.Pass {
				verdict = "<b>FAIL</b>"
			}
			fmt.Fprintf(&b, "<tr><td class=l>%s</td><td class=l>%s</td><td>%s</td><td>%s %s</td><td class=l>%s</td></tr>",
				html.EscapeString(n.Name), html.EscapeString(t.Text), html.EscapeString(t.formatValue()), html.EscapeString(t.Cmp), html.EscapeString(t.format(t.Limit)), verdict)
		}
	}
	b.WriteString("</table></section>")
	return b.String()
}

// generatorSection lists a distributed run's generators: each one's
// share, what it measured, its start and whether it is in the figures.
func generatorSection(runs []Named) string {
	if !anyRun(runs, func(r *Result) bool { return len(r.Generators) > 0 }) {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<section id="generators"><h2>generators</h2><p>Each generator ran its share of the rate from one start in the cluster's clock; the figures above are the merge (counts summed, histograms merged) of those marked merged.</p><table><tr><th class=l>run</th><th>generator</th><th class=l>name</th><th class=l>status</th><th>rate</th><th>seconds</th><th>ok</th><th>failed</th><th>p99 ms</th><th>start skew ms</th><th class=l>problem</th></tr>`)
	for _, n := range runs {
		for _, g := range n.R.Generators {
			status := g.Status
			if g.Merged {
				status += ", merged"
			}
			fmt.Fprintf(&b, "<tr><td class=l>%s</td><td>%d</td><td class=l>%s</td><td class=l>%s</td><td>%s</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s &plusmn; %s</td><td class=l>%s</td></tr>",
				html.EscapeString(n.Name), g.Index, html.EscapeString(g.Name), html.EscapeString(status), Count(g.Rate), g.Seconds, Count(float64(g.OK)), Count(float64(g.Failed)),
				Num(g.P99Ms), Num(g.StartSkewMs), Num(g.ClockUncertaintyMs), html.EscapeString(g.Problem))
		}
	}
	b.WriteString("</table></section>")
	return b.String()
}
