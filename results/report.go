package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/harness/history"
)

// headline figures, in the order a person wants them.
var headline = []string{"lost", "unexpected", "recovered", "stale_reads", "anomalous_keys",
	"wait_satisfied", "wait_unsatisfied", "no_wait", "unknown_keys", "anomaly_types", "wrong_total",
	"refused_crossslot", "executed", "ops", "redirects", "affected", "rto_ms", "error"}

// HeadlineFigures renders the figures that matter most in one short line.
func HeadlineFigures(f map[string]any) string {
	var parts []string
	for _, k := range headline {
		v, ok := f[k]
		if !ok {
			continue
		}
		s := shortValue(v)
		if s == "" {
			continue
		}
		parts = append(parts, k+"="+s)
	}
	return strings.Join(parts, " ")
}

func shortValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []any:
		return fmt.Sprint(len(x))
	case []string:
		return fmt.Sprint(len(x))
	case map[string]any:
		if c, ok := x["count"]; ok {
			if p99, ok := x["p99"]; ok {
				// A latency-like summary: count, tail and worst.
				return fmt.Sprintf("{n=%v p50=%v p99=%v max=%v}", c, x["p50"], p99, x["max"])
			}
			return fmt.Sprint(c)
		}
		return fmt.Sprintf("{%d}", len(x))
	case string:
		if len(x) > 60 {
			return fmt.Sprintf("%q", x[:60]+"...")
		}
		return fmt.Sprintf("%q", x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}

type reportData struct {
	Test     string
	Dir      string
	Valid    string
	Config   string
	Checkers []reportChecker
	Events   []reportEvent
	Plot     template.HTML
	Counts   map[string]int
	Files    []string
}

type reportChecker struct {
	Name     string
	Valid    string
	Headline string
	Figures  string
}

type reportEvent struct {
	Time   string
	F      string
	Type   string
	Nodes  string
	Detail string
}

// detailSummary renders a nemesis event's detail in one line, leaving out
// the bulky CLUSTER NODES snapshots.
func detailSummary(raw json.RawMessage) string {
	var m map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if !strings.HasPrefix(k, "cluster_nodes") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+shortValue(m[k]))
	}
	return strings.Join(parts, " ")
}

// WriteReport renders report.html from the run's files.
func WriteReport(r *Run) error {
	var s checker.Summary
	if err := r.ReadJSON("results.json", &s); err != nil {
		return err
	}
	cfg, _ := os.ReadFile(r.Path("config.json"))
	hist, _ := history.ReadFile(r.Path("history.jsonl"))
	d := reportData{Test: r.Test, Dir: r.Dir, Valid: s.Valid.String(), Config: string(cfg), Counts: map[string]int{}}
	names := make([]string, 0, len(s.Checkers))
	for n := range s.Checkers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := s.Checkers[n]
		fig, _ := json.MarshalIndent(c.Figures, "", "  ")
		if len(fig) > 200_000 {
			fig = append(fig[:200_000], []byte("\n... (see results.json)")...)
		}
		d.Checkers = append(d.Checkers, reportChecker{Name: n, Valid: c.Valid.String(), Headline: HeadlineFigures(c.Figures), Figures: string(fig)})
	}
	for _, op := range hist.Ops {
		if op.Process == history.Nemesis {
			d.Events = append(d.Events, reportEvent{
				Time: fmt.Sprintf("%.3f s", float64(op.Time)/1e9), F: op.F, Type: string(op.Type),
				Nodes: strings.Join(op.Nodes, ", "), Detail: detailSummary(op.Detail),
			})
		} else if op.Type != history.Invoke {
			d.Counts[string(op.Type)]++
		}
	}
	d.Plot = template.HTML(throughputSVG(hist.Ops))
	_ = filepath.WalkDir(r.Dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(p, ".html") && filepath.Base(p) != "report.html" {
			rel, _ := filepath.Rel(r.Dir, p)
			d.Files = append(d.Files, rel)
		}
		return nil
	})
	var buf bytes.Buffer
	if err := reportTmpl.Execute(&buf, d); err != nil {
		return err
	}
	return r.WriteFile("report.html", buf.Bytes())
}

// throughputSVG plots ok/fail/info completions per second, with fault
// windows shaded, as an inline SVG (the report stays one file).
func throughputSVG(ops []history.Op) string {
	if len(ops) == 0 {
		return ""
	}
	end := ops[len(ops)-1].Time
	secs := int(end/1e9) + 1
	if secs > 3600 {
		secs = 3600
	}
	series := map[history.Type][]int{history.OK: make([]int, secs), history.Fail: make([]int, secs), history.Info: make([]int, secs)}
	type window struct {
		from, to float64
		f        string
	}
	var windows []window
	open := map[string]float64{}
	peak := 1
	for _, op := range ops {
		s := int(op.Time / 1e9)
		if s >= secs {
			s = secs - 1
		}
		if op.Process == history.Nemesis {
			t := float64(op.Time) / 1e9
			if f, ok := strings.CutPrefix(op.F, "start-"); ok {
				open[f] = t
			} else if f, ok := strings.CutPrefix(op.F, "stop-"); ok {
				if st, ok := open[f]; ok {
					windows = append(windows, window{st, t, f})
					delete(open, f)
				}
			}
			continue
		}
		if ser, ok := series[op.Type]; ok {
			ser[s]++
			if ser[s] > peak {
				peak = ser[s]
			}
		}
	}
	for f, st := range open {
		windows = append(windows, window{st, float64(end) / 1e9, f})
	}
	const w, h, pad = 900.0, 260.0, 40.0
	x := func(t float64) float64 { return pad + (w-2*pad)*t/float64(secs) }
	y := func(v int) float64 { return h - pad - (h-2*pad)*float64(v)/float64(peak) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="11">`, w, h)
	for _, win := range windows {
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#f4c7c3" opacity="0.6"><title>%s %.1f-%.1f s</title></rect>`,
			x(win.from), pad, math.Max(1, x(win.to)-x(win.from)), h-2*pad, template.HTMLEscapeString(win.f), win.from, win.to)
	}
	colors := []struct {
		t history.Type
		c string
	}{{history.OK, "#2e7d32"}, {history.Fail, "#c62828"}, {history.Info, "#ef6c00"}}
	for i, sc := range colors {
		var pts []string
		for s, v := range series[sc.t] {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(float64(s)+0.5), y(v)))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, sc.c, strings.Join(pts, " "))
		fmt.Fprintf(&b, `<text x="%.0f" y="14" fill="%s">%s/s</text>`, pad+float64(i)*80, sc.c, sc.t)
	}
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#555"/>`, pad, h-pad, w-pad, h-pad)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#555"/>`, pad, pad, pad, h-pad)
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f">%d</text><text x="4" y="%.0f">0</text>`, 4.0, pad+4, peak, h-pad)
	for s := 0; s <= secs; s += max(1, secs/10) {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%ds</text>`, x(float64(s)), h-pad+16, s)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

var reportTmpl = template.Must(template.New("report").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>redline {{.Test}}: {{.Valid}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px;color:#222}
.v-valid{color:#fff;background:#2e7d32}.v-invalid{color:#fff;background:#c62828}.v-unknown{color:#fff;background:#ef6c00}
.badge{padding:.2em .6em;border-radius:4px;font-weight:bold}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}
pre{background:#f6f6f6;padding:.6em;overflow:auto;max-height:30em;font-size:12px}
details{margin:.3em 0}
</style></head><body>
<h1>{{.Test}} <span class="badge v-{{.Valid}}">{{.Valid}}</span></h1>
<p>{{.Dir}}</p>
<p>completions: {{range $k, $v := .Counts}}{{$k}} {{$v}} &nbsp; {{end}}</p>
<h2>Checkers</h2>
<table><tr><th>checker</th><th>verdict</th><th>figures</th></tr>
{{range .Checkers}}<tr><td>{{.Name}}</td><td><span class="badge v-{{.Valid}}">{{.Valid}}</span></td><td>{{.Headline}}</td></tr>
{{end}}</table>
{{range .Checkers}}<details><summary>{{.Name}}: all figures</summary><pre>{{.Figures}}</pre></details>{{end}}
<h2>Throughput (completions per second, faults shaded)</h2>
{{.Plot}}
<h2>Faults</h2>
{{if .Events}}<table><tr><th>time</th><th>event</th><th>type</th><th>nodes</th><th>detail</th></tr>
{{range .Events}}<tr><td>{{.Time}}</td><td>{{.F}}</td><td>{{.Type}}</td><td>{{.Nodes}}</td><td>{{.Detail}}</td></tr>{{end}}</table>{{else}}<p>none</p>{{end}}
{{if .Files}}<h2>Anomaly pages</h2><ul>{{range .Files}}<li><a href="{{.}}">{{.}}</a></li>{{end}}</ul>{{end}}
<h2>Configuration</h2><pre>{{.Config}}</pre>
</body></html>
`))
