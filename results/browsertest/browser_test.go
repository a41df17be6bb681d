package browsertest

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/redline-dev/redline/results"
	"github.com/redline-dev/redline/results/resultstest"
)

// browserPath finds the Chromium binary: $REDLINE_CHROMIUM, else Debian's
// headless shell, else a full Chromium.
func browserPath(tb testing.TB) string {
	if p := os.Getenv("REDLINE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium-headless-shell", "chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	tb.Fatal("no headless Chromium found: run scripts/install-deps (it installs Debian's chromium-headless-shell) or set REDLINE_CHROMIUM to a Chromium binary")
	return ""
}

// page is one browser tab plus what the page wrote to the console.
type page struct {
	tb   testing.TB
	ctx  context.Context
	mu   sync.Mutex
	errs []string
}

func newPage(tb testing.TB) *page {
	tb.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browserPath(tb)), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	tb.Cleanup(func() { cancel(); cancelAlloc() })
	p := &page{tb: tb, ctx: ctx}
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		tb.Fatalf("cannot start %s: %v", browserPath(tb), err)
	}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				p.mu.Lock()
				p.errs = append(p.errs, m.String())
				p.mu.Unlock()
			}
		}
	}()
	return p
}

func (p *page) do(steps ...chromedp.Action[chromedp.Void]) {
	p.tb.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.tb.Fatal(err)
	}
}

// open navigates and fails on an HTTP error status.
func (p *page) open(url string) {
	p.tb.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 60*time.Second)
	defer cancel()
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(url))
	if err != nil {
		p.tb.Fatalf("open %s: %v", url, err)
	}
	if resp != nil && resp.Status >= 400 {
		p.tb.Fatalf("open %s: HTTP %d", url, resp.Status)
	}
}

// follow clicks an element that navigates and waits for the new page.
func (p *page) follow(sel string) {
	p.tb.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 60*time.Second)
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel)))
	if err != nil {
		p.tb.Fatalf("click %s: %v", sel, err)
	}
	if resp.Status >= 400 {
		p.tb.Fatalf("click %s: HTTP %d", sel, resp.Status)
	}
}

func eval[T any](p *page, js string) T {
	p.tb.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		p.tb.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// noConsoleErrors fails on anything the pages logged as an error so far.
func (p *page) noConsoleErrors() {
	p.tb.Helper()
	// Console events arrive asynchronously: a round trip to the page after
	// its last action lets the events sent before it arrive first.
	_ = eval[int](p, `1`)
	time.Sleep(100 * time.Millisecond)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.errs {
		p.tb.Errorf("console error: %s", e)
	}
}

// screenshot saves the whole page as an artefact of the test.
func (p *page) screenshot(name string) {
	p.tb.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 60*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100 gives a PNG, below a JPEG
	if err != nil {
		p.tb.Fatalf("screenshot: %v", err)
	}
	p.save(name, png)
}

// elementShot saves one element of the page as an artefact.
func (p *page) elementShot(name, sel string) {
	p.tb.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 60*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(sel)))
	if err != nil {
		p.tb.Fatalf("screenshot of %s: %v", sel, err)
	}
	p.save(name, png)
}

func (p *page) save(name string, png []byte) {
	p.tb.Helper()
	dir := os.Getenv("REDLINE_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "redline-artifacts")
	}
	dir = filepath.Join(dir, "browser")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		p.tb.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.tb.Fatal(err)
	}
	p.tb.Logf("screenshot %s", path)
}

// plotInfo is what the browser laid out for one SVG plot.
type plotInfo struct {
	Plot   string  `json:"plot"`
	Points int     `json:"points"` // data points the series say they draw
	Drawn  float64 `json:"drawn"`  // width of the series' rendered geometry
	Width  float64 `json:"width"`
}

const plotsJS = `Array.from(document.querySelectorAll('svg.plot')).map(s => {
  const series = Array.from(s.querySelectorAll('.series'));
  return {plot: s.dataset.plot,
    points: series.reduce((a, p) => a + Number(p.dataset.points || 0), 0),
    drawn: series.reduce((a, p) => Math.max(a, p.getBBox().width), 0) + Array.from(s.querySelectorAll('rect.role')).reduce((a, r) => Math.max(a, r.getBBox().width), 0),
    width: s.getBoundingClientRect().width};
})`

// wantPlots fails unless each named plot is on the page, laid out, with
// data drawn.
func (p *page) wantPlots(names ...string) map[string]plotInfo {
	p.tb.Helper()
	got := map[string]plotInfo{}
	for _, pi := range eval[[]plotInfo](p, plotsJS) {
		got[pi.Plot] = pi
	}
	for _, n := range names {
		pi, ok := got[n]
		switch {
		case !ok:
			p.tb.Errorf("plot %s is missing (plots on the page: %v)", n, got)
		case pi.Width < 200:
			p.tb.Errorf("plot %s is %.0f px wide", n, pi.Width)
		case pi.Drawn <= 0:
			p.tb.Errorf("plot %s draws no data: %+v", n, pi)
		case n != "topology" && pi.Points == 0:
			p.tb.Errorf("plot %s has no data points: %+v", n, pi)
		}
	}
	return got
}

// brokenLinks fetches every link of the page from the page itself and
// returns those that do not answer 200. A page opened from disk cannot
// fetch: its links are looked up on disk.
func (p *page) brokenLinks() []string {
	p.tb.Helper()
	if strings.HasPrefix(eval[string](p, `location.protocol`), "file") {
		var broken []string
		for _, href := range eval[[]string](p, `Array.from(document.querySelectorAll('a[href]')).map(a => a.href).filter(h => !h.includes('#'))`) {
			u, err := url.Parse(href)
			if err != nil || u.Scheme != "file" {
				broken = append(broken, href+" (not a file next to the report: a mailed report would lose it)")
				continue
			}
			if _, err := os.Stat(u.Path); err != nil {
				broken = append(broken, href)
			}
		}
		return broken
	}
	return eval[[]string](p, `Promise.all(Array.from(document.querySelectorAll('a[href]'))
	  .filter(a => !a.getAttribute('href').startsWith('#'))
	  .map(a => fetch(a.href).then(r => r.ok ? '' : a.href + ' ' + r.status, e => a.href + ' ' + e)))
	  .then(xs => xs.filter(x => x))`)
}

var reportPlots = []string{"latency-raw", "latency-quantiles", "throughput", "rpo", "topology"}

// The report of a run with anomalies, opened from disk as a mailed report
// would be: every plot drawn with data, lost writes and anomalous ops
// marked, the porcupine link followed, no console error.
func TestReportInBrowser(t *testing.T) {
	run, err := resultstest.WriteRun(t.TempDir(), resultstest.Spec{Test: "report", Ops: 50000, Invalid: true, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	p := newPage(t)
	p.open("file://" + run.Path("report.html"))
	p.wantPlots(reportPlots...)
	if n := eval[int](p, `document.querySelectorAll('svg[data-plot="rpo"] .lost').length`); n != 3 {
		t.Errorf("%d lost writes marked on the RPO timeline, want 3", n)
	}
	if n := eval[int](p, `document.querySelectorAll('svg[data-plot="latency-raw"] circle.marker').length`); n < 4 {
		t.Errorf("%d anomalous ops circled, want at least 4", n)
	}
	if v := eval[string](p, `document.getElementById('verdict').textContent`); v != "invalid" {
		t.Errorf("verdict %q", v)
	}
	if txt := eval[string](p, `document.getElementById('headline').innerText`); !strings.Contains(txt, "3 acknowledged writes lost (no WAIT was sent): 3 during the partition of n2") {
		t.Errorf("headline does not say what was lost and when:\n%s", txt)
	}
	p.screenshot("report")
	for _, sec := range []string{"headline", "anomalies", "latency", "rpo", "topology", "faults"} {
		p.elementShot("report-"+sec, "#"+sec)
	}
	if broken := p.brokenLinks(); len(broken) > 0 {
		t.Errorf("broken links: %v", broken)
	}
	p.follow(`a[href="linearizable/register_7.html"]`)
	if title := eval[string](p, `document.title`); title != "porcupine" {
		t.Errorf("the porcupine link led to %q", title)
	}
	p.noConsoleErrors()
}

// The results browser: the runs table narrows with a filter, a run's page
// leads to its report, two ticked runs compare with overlaid plots, suites
// list, and every link on every page resolves.
func TestResultsBrowser(t *testing.T) {
	root := t.TempDir()
	if _, err := resultstest.WriteStore(root, 3000); err != nil {
		t.Fatal(err)
	}
	suite := filepath.Join(root, "suites", "release", "20261130T110000.000")
	if err := os.MkdirAll(suite, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(suite, "summary.json"), []byte(`{"valid":false,"runs":[{},{}]}`), 0o644)
	_ = os.WriteFile(filepath.Join(suite, "summary.html"), []byte(`<!doctype html><title>suite release</title><p>2 runs</p>`), 0o644)
	srv := httptest.NewServer(results.Browser{Store: results.Store{Root: root}}.Handler())
	defer srv.Close()
	p := newPage(t)

	rows := func() int { return eval[int](p, `document.querySelectorAll('#runs tr.run').length`) }
	p.open(srv.URL + "/")
	if n := rows(); n != 3 {
		t.Fatalf("%d runs listed, want 3", n)
	}
	if broken := p.brokenLinks(); len(broken) > 0 {
		t.Errorf("broken links on the runs table: %v", broken)
	}
	p.screenshot("runs")
	p.do(chromedp.SetValue(chromedp.CSS("#verdict"), "invalid"))
	p.follow("#apply")
	if n := rows(); n != 1 {
		t.Errorf("filtering on invalid left %d rows, want 1", n)
	}
	p.do(chromedp.SetValue(chromedp.CSS("#verdict"), ""), chromedp.SetValue(chromedp.CSS("#q"), "register-none"))
	p.follow("#apply")
	if n := rows(); n != 2 {
		t.Errorf("filtering on text left %d rows, want 2", n)
	}
	p.screenshot("runs-filtered")
	p.open(srv.URL + "/?sort=test&desc=0")
	if first := eval[string](p, `document.querySelector('#runs tr.run a.run-link').textContent`); first != "redis-set-partition" {
		t.Errorf("sorted by test, the first run is %s", first)
	}

	p.follow(`#runs tr.run a.run-link`)
	if broken := p.brokenLinks(); len(broken) > 0 {
		t.Errorf("broken links on a run's page: %v", broken)
	}
	p.follow("#report")
	p.wantPlots(reportPlots...)
	if broken := p.brokenLinks(); len(broken) > 0 {
		t.Errorf("broken links in a served report: %v", broken)
	}

	p.open(srv.URL + "/")
	p.do(chromedp.Click(chromedp.CSS(`#runs tr.run:nth-child(2) input`)), chromedp.Click(chromedp.CSS(`#runs tr.run:nth-child(3) input`)))
	p.follow("#compare")
	got := p.wantPlots("compare-throughput", "compare-latency")
	if n := eval[int](p, `document.querySelectorAll('svg[data-plot="compare-throughput"] .series').length`); n != 2 {
		t.Errorf("compare overlays %d runs, want 2 (%+v)", n, got)
	}
	if n := eval[int](p, `document.querySelectorAll('#figures tr').length`); n < 5 {
		t.Errorf("compare shows %d figure rows", n)
	}
	p.screenshot("compare")
	if broken := p.brokenLinks(); len(broken) > 0 {
		t.Errorf("broken links on the compare page: %v", broken)
	}
	p.follow("#only-differ")
	if n := eval[int](p, `document.querySelectorAll('#figures tr:not(.differ)').length`); n != 1 {
		t.Errorf("only-differ shows %d rows that do not differ (want just the header)", n)
	}

	p.open(srv.URL + "/suites/")
	if txt := eval[string](p, `document.getElementById('suites').innerText`); !strings.Contains(txt, "release") || !strings.Contains(txt, "invalid") {
		t.Errorf("suites page:\n%s", txt)
	}
	if broken := p.brokenLinks(); len(broken) > 0 {
		t.Errorf("broken links on the suites page: %v", broken)
	}
	p.screenshot("suites")
	p.noConsoleErrors()
}

// A page that errors must fail the test: the console check is not vacuous.
func TestConsoleErrorsAreCaught(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "bad.html")
	_ = os.WriteFile(f, []byte(`<!doctype html><title>bad</title><script>console.error("boom"); undefinedFunction();</script>`), 0o644)
	p := newPage(t)
	p.open("file://" + f)
	// The console events arrive asynchronously; give a loaded machine time.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		p.mu.Lock()
		n := len(p.errs)
		p.mu.Unlock()
		if n >= 2 {
			return
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	t.Fatalf("the page logged an error and threw, the test saw %v", p.errs)
}

// BenchmarkReport1M measures how long headless Chromium takes to load and
// lay out the report of a 1M-op run, and reports the report's size.
func BenchmarkReport1M(b *testing.B) {
	run, err := resultstest.WriteRun(b.TempDir(), resultstest.Spec{Test: "big", Ops: 1_000_000, Invalid: true, Seed: 5})
	if err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(run.Path("report.html"))
	if err != nil {
		b.Fatal(err)
	}
	if st.Size() > 5<<20 {
		b.Fatalf("report.html of 1M ops weighs %d bytes, over 5 MB", st.Size())
	}
	p := newPage(b)
	report := "file://" + run.Path("report.html")
	b.ResetTimer()
	var load float64
	for b.Loop() {
		p.open(report)
		// Wait for layout of the last plot, then read the navigation timing.
		load += eval[float64](p, `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now()))))`)
	}
	b.StopTimer()
	p.wantPlots(reportPlots...)
	b.ReportMetric(load/float64(b.N), "ms-to-paint")
	b.ReportMetric(float64(st.Size())/(1<<20), "MB")
	fmt.Fprintf(os.Stderr, "report of 1M ops: %.2f MB, painted %.0f ms after navigation\n", float64(st.Size())/(1<<20), load/float64(b.N))
}

// BenchmarkReportFile measures the report named by $REDLINE_BENCH_REPORT
// (a real run's report.html) as BenchmarkReport1M does.
func BenchmarkReportFile(b *testing.B) {
	path := os.Getenv("REDLINE_BENCH_REPORT")
	if path == "" {
		b.Skip("set REDLINE_BENCH_REPORT to a report.html to measure it")
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	p := newPage(b)
	var load float64
	for b.Loop() {
		p.open("file://" + path)
		load += eval[float64](p, `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now()))))`)
	}
	b.ReportMetric(load/float64(b.N), "ms-to-paint")
	b.ReportMetric(float64(st.Size())/(1<<20), "MB")
}
