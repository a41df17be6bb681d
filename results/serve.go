package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"math"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/results/plot"
)

// Browser serves the results store as a small web UI: the runs table
// (sortable, filterable), each run's report and files, suite summaries and
// a comparison of runs. Pages are rendered on the server with html/template
// and use no script and no asset from the network.
type Browser struct {
	Store Store
}

// Server is the browser as an http.Server, with timeouts that bound what
// a slow or stuck client can hold (a header, a body, an idle connection)
// and leave a big history (184 MB as the JSON lines of older runs) time to
// download.
func (b Browser) Server() *http.Server {
	return &http.Server{
		Handler:           b.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      10 * time.Minute,
		IdleTimeout:       2 * time.Minute,
	}
}

// Handler returns the UI's routes, behind the Host check.
func (b Browser) Handler() http.Handler {
	return loopbackHost(b.routes())
}

// loopbackHost answers only requests addressed to a loopback name
// (localhost, 127.0.0.0/8, ::1): the browser serves on loopback only, and a
// page elsewhere whose name resolves to 127.0.0.1 (DNS rebinding) sends
// its own name as Host, so it cannot read the store.
func loopbackHost(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if hh, _, err := net.SplitHostPort(host); err == nil {
			host = hh
		}
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		ip := net.ParseIP(host)
		if !strings.EqualFold(host, "localhost") && (ip == nil || !ip.IsLoopback()) {
			httpError(w, http.StatusMisdirectedRequest, fmt.Errorf("host %q: the results browser answers only to localhost, 127.0.0.1 and [::1]", r.Host))
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (b Browser) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", b.runs)
	mux.HandleFunc("GET /runs/{test}/{ts}/{$}", b.runPage)
	mux.HandleFunc("GET /runs/{test}/{ts}/{file...}", b.runFile)
	mux.HandleFunc("GET /suites/{$}", b.suites)
	mux.HandleFunc("GET /suites/{name}/{ts}/{file...}", b.suiteFile)
	mux.HandleFunc("GET /rpo/{ts}/{file...}", b.studyFile)
	mux.HandleFunc("GET /compare", b.compare)
	return mux
}

// verdictWord turns results.json's true/false into the words the UI shows.
func verdictWord(v string) string {
	switch v {
	case "true":
		return "valid"
	case "false":
		return "invalid"
	}
	return v
}

// Verdict is the word the UI shows for a run: a load test that measured
// something is "measured", not "valid" (it checks nothing).
func (e Entry) Verdict() string {
	if e.Bench && e.Valid == "true" {
		return "measured"
	}
	return verdictWord(e.Valid)
}

type runsPage struct {
	Runs               []Entry
	Shown, Total       int
	Verdict, Target, Q string
	Sort               string
	Desc               bool
	Targets            []string
	Verdicts           []string
	Root               string
}

func (b Browser) runs(w http.ResponseWriter, r *http.Request) {
	all, err := b.Store.List()
	if err != nil {
		httpError(w, http.StatusInternalServerError, err)
		return
	}
	q := r.URL.Query()
	p := runsPage{Total: len(all), Verdict: q.Get("verdict"), Target: q.Get("target"), Q: strings.TrimSpace(q.Get("q")),
		Sort: q.Get("sort"), Desc: q.Get("desc") == "1", Root: b.Store.Root,
		Verdicts: []string{"valid", "invalid", "unknown", "incomplete", "measured"}}
	if p.Sort == "" {
		p.Sort, p.Desc = "time", true
	}
	targets := map[string]bool{}
	for _, e := range all {
		if e.Target != "" {
			targets[e.Target] = true
		}
		if p.Verdict != "" && e.Verdict() != p.Verdict {
			continue
		}
		if p.Target != "" && e.Target != p.Target {
			continue
		}
		if p.Q != "" && !strings.Contains(strings.ToLower(strings.Join([]string{e.Test, e.Target, e.Workloads, e.Faults, e.KeyFigures, e.Time.Format(TimeLayout)}, " ")), strings.ToLower(p.Q)) {
			continue
		}
		p.Runs = append(p.Runs, e)
	}
	p.Targets = sortedKeys(targets)
	sortEntries(p.Runs, p.Sort, p.Desc)
	p.Shown = len(p.Runs)
	render(w, "runs", p)
}

// sortLink is the URL of the runs table sorted by col, keeping the filter;
// sorting again by the same column flips the order.
func (p runsPage) SortLink(col string) template.URL {
	desc := "0"
	if col == p.Sort && !p.Desc {
		desc = "1"
	}
	v := fmt.Sprintf("?sort=%s&desc=%s", col, desc)
	for _, kv := range [][2]string{{"verdict", p.Verdict}, {"target", p.Target}, {"q", p.Q}} {
		if kv[1] != "" {
			v += "&" + kv[0] + "=" + template.URLQueryEscaper(kv[1])
		}
	}
	return template.URL(v)
}

// SortMark shows the order of the column the table is sorted by.
func (p runsPage) SortMark(col string) string {
	switch {
	case col != p.Sort:
		return ""
	case p.Desc:
		return " ▼"
	}
	return " ▲"
}

// runDir resolves /runs/{test}/{ts} to an existing run directory.
func (b Browser) runDir(r *http.Request) (string, bool) {
	test, ts := r.PathValue("test"), r.PathValue("ts")
	if !safeName(test) || !safeName(ts) {
		return "", false
	}
	if _, err := time.Parse(TimeLayout, ts); err != nil {
		return "", false
	}
	dir := filepath.Join(b.Store.Root, test, ts)
	st, err := os.Stat(dir)
	return dir, err == nil && st.IsDir() && b.inside(dir)
}

// inside says whether dir, its symlinks resolved, lies in the store: a
// run, suite or study directory that is a link out of the store (to a
// home directory, to /) is not served, nor read for a page.
func (b Browser) inside(dir string) bool {
	root, err := filepath.EvalSymlinks(b.Store.Root)
	if err != nil {
		return false
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(root, real)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func safeName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`)
}

type runPageData struct {
	Entry
	Link    string
	Report  bool
	Files   []fileEntry
	Verdict string
}

type fileEntry struct {
	Path string
	Size string
}

func (b Browser) runPage(w http.ResponseWriter, r *http.Request) {
	dir, ok := b.runDir(r)
	if !ok {
		httpError(w, http.StatusNotFound, fmt.Errorf("no run %s/%s in %s", r.PathValue("test"), r.PathValue("ts"), b.Store.Root))
		return
	}
	e := Entry{Test: r.PathValue("test"), Dir: dir, Valid: "incomplete"}
	e.Time, _ = time.Parse(TimeLayout, r.PathValue("ts"))
	e.describe()
	p := runPageData{Entry: e, Link: "/runs/" + e.Test + "/" + r.PathValue("ts") + "/", Verdict: e.Verdict(), Files: listFiles(dir)}
	_, err := os.Stat(filepath.Join(dir, "report.html"))
	p.Report = err == nil
	render(w, "run", p)
}

func listFiles(dir string) []fileEntry {
	var out []fileEntry
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		size := ""
		if info, err := d.Info(); err == nil {
			size = HumanBytes(info.Size())
		}
		out = append(out, fileEntry{filepath.ToSlash(rel), size})
		return nil
	})
	return out
}

// HumanBytes is n bytes in words: B, kB, MB (powers of 1024).
func HumanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func (b Browser) runFile(w http.ResponseWriter, r *http.Request) {
	dir, ok := b.runDir(r)
	if !ok {
		httpError(w, http.StatusNotFound, fmt.Errorf("no run %s/%s", r.PathValue("test"), r.PathValue("ts")))
		return
	}
	serveInside(w, r, dir, r.PathValue("file"))
}

// serveInside serves a file of dir; os.Root refuses any path (.., symlink)
// that leaves dir.
func serveInside(w http.ResponseWriter, r *http.Request, dir, name string) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		httpError(w, http.StatusNotFound, err)
		return
	}
	defer root.Close()
	f, err := root.Open(filepath.FromSlash(name))
	if err != nil && path.Base(name) == history.JSONLinesName {
		// A link to the history as JSON lines (reports and bookmarks of
		// older runs) serves a compressed history decompressed.
		serveLines(w, root, path.Join(path.Dir(name), history.FileName), name)
		return
	}
	if err != nil {
		httpError(w, http.StatusNotFound, fmt.Errorf("no file %s", name))
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		httpError(w, http.StatusNotFound, fmt.Errorf("%s is not a file", name))
		return
	}
	if strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".log") || strings.HasSuffix(name, ".txt") {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	if strings.HasSuffix(name, ".zst") {
		w.Header().Set("Content-Type", "application/zstd")
	}
	http.ServeContent(w, r, st.Name(), st.ModTime(), f)
}

// serveLines serves the history file zst of root as JSON lines (under the
// name asked for). A history torn or corrupt ends with a line saying so:
// the status is sent before the end is read.
func serveLines(w http.ResponseWriter, root *os.Root, zst, asked string) {
	f, err := root.Open(filepath.FromSlash(zst))
	if err != nil {
		httpError(w, http.StatusNotFound, fmt.Errorf("no file %s", asked))
		return
	}
	defer f.Close()
	l, err := history.NewLines(f)
	if err != nil {
		httpError(w, http.StatusInternalServerError, err)
		return
	}
	defer l.Close()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if _, err := io.Copy(w, l); err != nil {
		fmt.Fprintf(w, "\nredline: the history stops here: %v\n", err)
	} else if torn := l.Torn(); torn != "" {
		fmt.Fprintf(w, "\nredline: the history is torn: %s\n", torn)
	}
}

type suiteEntry struct {
	Name, TS, Verdict, Link string
	Page                    string // the entry's own page: summary.html, rpo.html
	Files                   []fileEntry
	Figures                 string
}

func (b Browser) suites(w http.ResponseWriter, r *http.Request) {
	base := filepath.Join(b.Store.Root, "suites")
	names, _ := os.ReadDir(base)
	var out []suiteEntry
	for _, n := range names {
		if !n.IsDir() {
			continue
		}
		tss, _ := os.ReadDir(filepath.Join(base, n.Name()))
		for _, ts := range tss {
			if !ts.IsDir() {
				continue
			}
			dir := filepath.Join(base, n.Name(), ts.Name())
			if !b.inside(dir) {
				continue
			}
			e := suiteEntry{Name: n.Name(), TS: ts.Name(), Link: "/suites/" + n.Name() + "/" + ts.Name() + "/", Page: "summary.html", Files: listFiles(dir)}
			e.Verdict, e.Figures = suiteSummary(filepath.Join(dir, "summary.json"))
			out = append(out, e)
		}
	}
	// RPO studies are suites too (<store>/rpo/<ts>/): their page is rpo.html.
	studies, _ := os.ReadDir(filepath.Join(b.Store.Root, "rpo"))
	for _, ts := range studies {
		if !ts.IsDir() {
			continue
		}
		dir := filepath.Join(b.Store.Root, "rpo", ts.Name())
		if !b.inside(dir) {
			continue
		}
		e := suiteEntry{Name: "RPO study", TS: ts.Name(), Link: "/rpo/" + ts.Name() + "/", Page: "rpo.html", Files: listFiles(dir)}
		if _, err := os.Stat(filepath.Join(dir, "rpo.html")); err != nil {
			e.Page = "summary.html"
		}
		e.Verdict, e.Figures = suiteSummary(filepath.Join(dir, "summary.json"))
		if e.Verdict == "invalid" {
			// A study written before summaries knew studies: its invalid
			// runs are its measurements.
			e.Verdict = "measured"
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TS > out[j].TS })
	render(w, "suites", out)
}

func (b Browser) studyFile(w http.ResponseWriter, r *http.Request) {
	ts := r.PathValue("ts")
	if !safeName(ts) {
		httpError(w, http.StatusNotFound, fmt.Errorf("no RPO study %s", ts))
		return
	}
	file := r.PathValue("file")
	if file == "" {
		file = "rpo.html"
	}
	dir := filepath.Join(b.Store.Root, "rpo", ts)
	if !b.inside(dir) {
		httpError(w, http.StatusNotFound, fmt.Errorf("no RPO study %s", ts))
		return
	}
	serveInside(w, r, dir, file)
}

// suiteSummary reads what it can of a suite's summary.json: its verdict
// and its top-level numbers; the suite's own summary.html says the rest.
func suiteSummary(path string) (verdict, figures string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "incomplete", ""
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return "unreadable", ""
	}
	for _, k := range []string{"valid", "verdict"} {
		if v, ok := m[k]; ok {
			verdict = verdictWord(strings.Trim(cell(v), `"`))
			break
		}
	}
	var parts []string
	if runs, ok := m["runs"].([]any); ok {
		parts = append(parts, fmt.Sprintf("%d runs", len(runs)))
	}
	if counts, ok := m["counts"].(map[string]any); ok {
		for _, k := range sortedKeys(counts) {
			parts = append(parts, k+" "+cell(counts[k]))
		}
	}
	if code, ok := m["exit_code"].(float64); ok {
		parts = append(parts, "exit "+trimFloat(code))
	}
	return verdict, strings.Join(parts, ", ")
}

func (b Browser) suiteFile(w http.ResponseWriter, r *http.Request) {
	name, ts := r.PathValue("name"), r.PathValue("ts")
	if !safeName(name) || !safeName(ts) {
		httpError(w, http.StatusNotFound, fmt.Errorf("no suite %s/%s", name, ts))
		return
	}
	file := r.PathValue("file")
	if file == "" {
		file = "summary.html"
	}
	dir := filepath.Join(b.Store.Root, "suites", name, ts)
	if !b.inside(dir) {
		httpError(w, http.StatusNotFound, fmt.Errorf("no suite %s/%s", name, ts))
		return
	}
	serveInside(w, r, dir, file)
}

type comparePage struct {
	Runs       []compareRun
	Rows       []CompRow
	Config     []CompRow
	Headline   []HeadlineRow
	OnlyDiffer bool
	Query      template.URL
	Throughput template.HTML
	Latency    template.HTML
	Error      string
}

type compareRun struct {
	Name, Link, Verdict, Color string
}

func (b Browser) compare(w http.ResponseWriter, r *http.Request) {
	refs := r.URL.Query()["run"]
	var dirs []string
	for _, ref := range refs {
		test, ts, ok := strings.Cut(ref, "/")
		if !ok || !safeName(test) || !safeName(ts) {
			httpError(w, http.StatusBadRequest, fmt.Errorf("run %q is not test/timestamp", ref))
			return
		}
		dir := filepath.Join(b.Store.Root, test, ts)
		if !b.inside(dir) {
			httpError(w, http.StatusBadRequest, fmt.Errorf("no run %s in %s", ref, b.Store.Root))
			return
		}
		dirs = append(dirs, dir)
	}
	if len(dirs) < 2 {
		httpError(w, http.StatusBadRequest, fmt.Errorf("pick at least two runs to compare (got %d): tick them in the runs table", len(dirs)))
		return
	}
	c, err := Compare(dirs)
	if err != nil {
		httpError(w, http.StatusBadRequest, err)
		return
	}
	p := comparePage{OnlyDiffer: r.URL.Query().Get("differ") == "1", Config: c.Config, Headline: c.Headline}
	for i, run := range c.Runs {
		p.Runs = append(p.Runs, compareRun{Name: run.Name(), Link: "/runs/" + run.Test + "/" + filepath.Base(run.Dir) + "/", Verdict: c.Valid[i], Color: plot.Color(i)})
	}
	for _, row := range c.Rows {
		if !p.OnlyDiffer || row.Differ {
			p.Rows = append(p.Rows, row)
		}
	}
	q := r.URL.Query()
	q.Del("differ")
	p.Query = template.URL(q.Encode())
	p.Throughput, p.Latency = overlay(c.Runs)
	render(w, "compare", p)
}

// overlay draws the runs' ok throughput and p99 latency on shared axes
// (time since each run's start), one colour per run.
func overlay(runs []*Run) (template.HTML, template.HTML) {
	type series struct {
		bs      []qBucket
		width   float64
		windows []faultWindow
	}
	var all []series
	end := 0.0
	var names []string
	for _, r := range runs {
		d, err := loadRun(r)
		if err != nil {
			all = append(all, series{})
			names = append(names, r.Name())
			continue
		}
		e := d.duration()
		end = math.Max(end, e)
		bs, width := buckets(d.samples(), e, 120)
		all = append(all, series{bs, width, d.windows()})
		names = append(names, r.Name())
	}
	peak, lo, hi := 1.0, math.Inf(1), 0.0
	for _, s := range all {
		for _, b := range s.bs {
			peak = math.Max(peak, float64(b.counts[history.OK])/s.width)
			if !math.IsNaN(b.p99) {
				lo, hi = math.Min(lo, math.Max(b.p50, 1e-3)), math.Max(hi, b.p99)
			}
		}
	}
	tp := newPlot("compare-throughput", end, 0, peak*1.05, false, "ok ops per second, each run from its start; each run's faults shaded in its colour")
	lp := newPlot("compare-latency", end, math.Min(lo, hi), hi, true, "p99 latency of ok ops (ms, log scale)")
	for i, s := range all {
		shadeFaultsAs(tp, s.windows, plot.Color(i), names[i])
		shadeFaultsAs(lp, s.windows, plot.Color(i), names[i])
	}
	tp.Axes()
	lp.Axes()
	for i, s := range all {
		if len(s.bs) == 0 {
			continue
		}
		ts, ok, p99 := make([]float64, len(s.bs)), make([]float64, len(s.bs)), make([]float64, len(s.bs))
		for j, b := range s.bs {
			ts[j], ok[j], p99[j] = b.t, float64(b.counts[history.OK])/s.width, b.p99
		}
		color := plot.Color(i)
		tp.Line(names[i], color, ts, ok, "", false)
		if hi > 0 {
			lp.Line(names[i], color, ts, p99, "", false)
		}
	}
	if hi == 0 {
		return tp.SVG(), ""
	}
	return tp.SVG(), lp.SVG()
}

func httpError(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_ = pageTmpl.ExecuteTemplate(w, "error", struct {
		Code int
		Err  string
	}{code, err.Error()})
}

func render(w http.ResponseWriter, name string, data any) {
	var buf bytes.Buffer
	if err := pageTmpl.ExecuteTemplate(&buf, name, data); err != nil {
		httpError(w, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

var pageTmpl = template.Must(template.New("pages").Funcs(template.FuncMap{"verdict": verdictWord, "ts": func(t time.Time) string { return t.Format(TimeLayout) }}).Parse(`
{{define "head"}}<!doctype html><html lang="en"><head><meta charset="utf-8"><title>redline results: {{.}}</title><style>` + reportCSS + `
.filter label{margin-right:1em}tr.differ td{background:#fff8e1}
.runpage{display:flex;gap:1em;align-items:flex-start}.runpage aside{flex:0 0 22em;max-width:22em;overflow-wrap:anywhere}
.runpage aside h1{font-size:1.2em}#report-frame{flex:1;min-width:0;height:calc(100vh - 4em);border:1px solid #ccc}
td.figures{max-width:28em}.better{color:#2e7d32}.worse{color:#c62828}</style></head><body>
<nav><a href="/">runs</a><a href="/suites/">suites</a></nav>{{end}}

{{define "error"}}{{template "head" "error"}}<h1>{{.Code}}</h1><p id="error">{{.Err}}</p></body></html>{{end}}

{{define "runs"}}{{template "head" "runs"}}<h1>Runs in {{.Root}}</h1>
<form class="filter" id="filter" method="get" action="/">
<label>verdict <select name="verdict" id="verdict"><option value="">any</option>{{range .Verdicts}}<option value="{{.}}"{{if eq . $.Verdict}} selected{{end}}>{{.}}</option>{{end}}</select></label>
<label>target <select name="target" id="target"><option value="">any</option>{{range .Targets}}<option value="{{.}}"{{if eq . $.Target}} selected{{end}}>{{.}}</option>{{end}}</select></label>
<label>text <input name="q" id="q" value="{{.Q}}" placeholder="test, workload, fault ..."></label>
<input type="hidden" name="sort" value="{{.Sort}}"><input type="hidden" name="desc" value="{{if .Desc}}1{{else}}0{{end}}">
<button type="submit" id="apply">filter</button> <a href="/">clear</a></form>
<p id="shown">{{.Shown}} of {{.Total}} runs</p>
<form method="get" action="/compare" id="compare-form">
<table id="runs"><tr><th>compare</th><th><a href="{{.SortLink "time"}}">time</a>{{.SortMark "time"}}</th><th><a href="{{.SortLink "test"}}">test</a>{{.SortMark "test"}}</th><th><a href="{{.SortLink "target"}}">target</a>{{.SortMark "target"}}</th><th><a href="{{.SortLink "workloads"}}">workloads</a>{{.SortMark "workloads"}}</th><th><a href="{{.SortLink "faults"}}">faults</a>{{.SortMark "faults"}}</th><th><a href="{{.SortLink "verdict"}}">verdict</a>{{.SortMark "verdict"}}</th><th><a href="{{.SortLink "figures"}}">key figures</a>{{.SortMark "figures"}}</th><th>report</th></tr>
{{range .Runs}}{{$link := printf "/runs/%s/%s/" .Test (ts .Time)}}<tr class="run"><td><input type="checkbox" name="run" value="{{.Test}}/{{ts .Time}}"></td><td>{{.Time.Format "2006-01-02 15:04:05"}}</td><td><a class="run-link" href="{{$link}}">{{.Test}}</a></td><td>{{.Target}}</td><td>{{.Workloads}}</td><td>{{.Faults}}</td><td><span class="badge v-{{.Verdict}}">{{.Verdict}}</span></td><td class="figures">{{.KeyFigures}}</td><td><a class="report-link" href="{{$link}}report.html">report</a></td></tr>
{{else}}<tr><td colspan="9">no run matches</td></tr>{{end}}</table>
<button type="submit" id="compare">compare selected</button></form></body></html>{{end}}

{{define "run"}}{{template "head" .Test}}<div class="runpage"><aside id="side"><h1>{{.Test}} <span class="badge v-{{.Verdict}}">{{.Verdict}}</span></h1>
<table><tr><th>time</th><td>{{.Time.Format "2006-01-02 15:04:05"}} UTC</td></tr><tr><th>target</th><td>{{.Target}}</td></tr><tr><th>workloads</th><td>{{.Workloads}}</td></tr><tr><th>faults</th><td>{{.Faults}}</td></tr><tr><th>key figures</th><td id="key-figures">{{.KeyFigures}}</td></tr></table>
{{if .Report}}<p><a id="report" href="{{.Link}}report.html">the report alone</a></p>{{end}}
<h2>Files</h2><table id="files">{{range .Files}}<tr><td><a href="{{$.Link}}{{.Path}}">{{.Path}}</a></td><td class="nw">{{.Size}}</td></tr>{{end}}</table><p class="why">{{.Dir}}</p></aside>
{{if .Report}}<iframe id="report-frame" src="{{.Link}}report.html" title="report"></iframe>{{else}}<p>No report yet: 'redline check {{.Dir}}' writes one.</p>{{end}}</div></body></html>{{end}}

{{define "suites"}}{{template "head" "suites"}}<h1>Suites</h1>
{{if .}}<table id="suites"><tr><th>suite</th><th>time</th><th>verdict</th><th>figures</th><th>files</th></tr>
{{range .}}{{$link := .Link}}<tr><td><a href="{{.Link}}{{.Page}}">{{.Name}}</a></td><td>{{.TS}}</td><td><span class="badge v-{{.Verdict}}">{{.Verdict}}</span></td><td>{{.Figures}}</td><td>{{range .Files}}<a href="{{$link}}{{.Path}}">{{.Path}}</a> {{end}}</td></tr>{{end}}</table>
{{else}}<p>No suite has run yet: 'redline suite FILE' writes them under suites/.</p>{{end}}</body></html>{{end}}

{{define "compare"}}{{template "head" "compare"}}<h1>Compare {{len .Runs}} runs</h1>
<table><tr><th>run</th><th>verdict</th></tr>{{range .Runs}}<tr><td><span style="color:{{.Color}}">■</span> <a href="{{.Link}}">{{.Name}}</a></td><td><span class="badge v-{{.Verdict}}">{{.Verdict}}</span></td></tr>{{end}}</table>
<h2>Key figures</h2><p class="why">Each run against the first: green is better, red worse.</p>
<table id="headline-deltas"><tr><th>figure</th>{{range .Runs}}<th>{{.Name}}</th>{{end}}</tr>
{{range .Headline}}{{$h := .}}<tr><td>{{.Name}}</td>{{range $i, $v := .Values}}<td class="{{if index $h.Worse $i}}worse{{else if index $h.Better $i}}better{{end}}">{{$v}}{{with index $h.Deltas $i}}{{if ne . "="}} <span class="delta">({{.}})</span>{{end}}{{end}}</td>{{end}}</tr>{{end}}</table>
<h2>Configuration differences</h2>{{if .Config}}<table id="config-diff"><tr><th>setting</th>{{range .Runs}}<th>{{.Name}}</th>{{end}}</tr>
{{range .Config}}<tr><td>{{.Name}}</td>{{range .Values}}<td>{{.}}</td>{{end}}</tr>{{end}}</table>{{else}}<p id="config-diff">The runs were configured alike.</p>{{end}}
{{.Throughput}}{{.Latency}}
<h2>Figures</h2><p>{{if .OnlyDiffer}}<a href="/compare?{{.Query}}">show all figures</a>{{else}}<a id="only-differ" href="/compare?{{.Query}}&amp;differ=1">show only figures that differ</a>{{end}}</p>
<table id="figures"><tr><th>figure</th>{{range .Runs}}<th>{{.Name}}</th>{{end}}</tr>
{{range .Rows}}<tr{{if .Differ}} class="differ"{{end}}><td>{{.Name}}</td>{{range .Values}}<td>{{.}}</td>{{end}}</tr>{{end}}</table></body></html>{{end}}
`))
