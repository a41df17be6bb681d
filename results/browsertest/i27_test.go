package browsertest

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/redline-dev/redline/results"
	"github.com/redline-dev/redline/results/resultstest"
)

// The report a person reads without a decoder: one row per fault window
// in seconds and node names, fault bands labelled with mode and nodes, a
// legend that names each op once, throughput by op and outcome, no table
// running off a 1400 px window, and timeline.html beside it with one box
// per op in its process's column.
func TestReportReadsWithoutADecoder(t *testing.T) {
	run, err := resultstest.WriteRun(t.TempDir(), resultstest.Spec{Test: "report", Ops: 20000, Invalid: true, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	p := newPage(t)
	p.do(chromedp.EmulateViewport(1400, 900))
	p.open("file://" + run.Path("report.html"))
	p.wantPlots(reportPlots...)

	if got := eval[[]string](p, `Array.from(document.querySelectorAll('#window-table tr')).map(r => r.innerText.replace(/\s+/g, ' ').trim())`); len(got) != 3 ||
		!strings.HasPrefix(got[1], "0 partition isolate-primary n2 15.00–25.03 s 3") || !strings.HasPrefix(got[2], "1 failover replica-of-n2 n5") {
		t.Errorf("fault window table: %q", got)
	}
	if got := eval[[]string](p, `Array.from(document.querySelectorAll('svg[data-plot="latency-raw"] text.fault-label')).map(t => t.textContent)`); len(got) != 2 || got[0] != "partition isolate-primary n2" {
		t.Errorf("fault labels on the latency plot: %q (want fault, mode and nodes)", got)
	}
	// Colour = op once each for ok ops, then failed and unknown ops once
	// each: 6 ops + 2 outcomes.
	if n := eval[int](p, `document.querySelectorAll('svg[data-plot="latency-raw"] > circle, svg[data-plot="latency-raw"] > rect').length`); n != 8 {
		t.Errorf("latency legend has %d swatches, want 8 (6 ops, failed, unknown)", n)
	}
	if got := eval[[]string](p, `Array.from(document.querySelectorAll('svg[data-plot="throughput"] .series')).map(s => s.dataset.series)`); len(got) < 6 ||
		!contains(got, "add ok") || !contains(got, "register read fail") {
		t.Errorf("throughput series %q: want one per op and outcome", got)
	}
	for _, h := range eval[[]string](p, `Array.from(document.querySelectorAll('th')).map(t => t.textContent)`) {
		if strings.Contains(h, "_") {
			t.Errorf("a table header is a raw field name: %q", h)
		}
	}
	if txt := eval[string](p, `document.getElementById('rpo').innerText`); strings.Contains(txt, "outside_windows") || strings.Contains(txt, "rpo_ms") {
		t.Errorf("the RPO section prints raw field names:\n%s", txt)
	}
	if w := eval[int](p, `document.documentElement.scrollWidth`); w > 1400 {
		t.Errorf("the report is %d px wide in a 1400 px window", w)
	}
	p.screenshot("report-after")
	p.elementShot("report-after-rpo", "#rpo")
	p.elementShot("report-after-latency", "#latency")
	p.elementShot("report-after-throughput", "#throughput")

	p.follow("#timeline-link")
	if n := eval[int](p, `document.querySelectorAll('.ops .op.ok').length`); n < 1000 {
		t.Errorf("timeline shows %d ok ops", n)
	}
	// 20,000 ops are more than one page holds: spans around the faults'
	// starts and stops, each drawing its fault.
	if got := eval[[]string](p, `Array.from(new Set(Array.from(document.querySelectorAll('.ops .op.fault')).map(f => f.textContent)))`); len(got) != 2 {
		t.Errorf("timeline shows the faults %q, want the partition and the failover", got)
	}
	if n := eval[int](p, `new Set(Array.from(document.querySelectorAll('.ops .op.ok')).map(b => b.style.left)).size`); n < 5 {
		t.Errorf("timeline draws %d process columns", n)
	}
	p.do(chromedp.EmulateViewport(1400, 900))
	p.screenshot("timeline")
	p.noConsoleErrors()
}

func contains(xs []string, x string) bool {
	for _, e := range xs {
		if e == x {
			return true
		}
	}
	return false
}

// The results browser a person reads without a decoder: key figures for a
// valid run too, a bench run "measured" with its throughput, the run page
// is the report with the files beside it, an RPO study listed among the
// suites as "measured", and a compare page with the configurations'
// differences and the key figures' deltas.
func TestBrowserReadsWithoutADecoder(t *testing.T) {
	root := t.TempDir()
	if _, err := resultstest.WriteStore(root, 3000); err != nil {
		t.Fatal(err)
	}
	bench := filepath.Join(root, "bench-reference-kv-none", "20261130T120000.000")
	must(t, os.MkdirAll(filepath.Join(bench, "nodes"), 0o755))
	must(t, os.WriteFile(filepath.Join(bench, "config.json"), []byte(`{"target":"reference","workloads":["kv"],"nemesis":["none"],"bench":true}`), 0o644))
	must(t, os.WriteFile(filepath.Join(bench, "results.json"), []byte(`{"valid":true,"checkers":{"bench":{"valid":true,"throughput":41234,"p99_ms":1.7}}}`), 0o644))
	study := filepath.Join(root, "rpo", "20261130T130000.000")
	must(t, os.MkdirAll(study, 0o755))
	must(t, os.WriteFile(filepath.Join(study, "summary.json"), []byte(`{"name":"rpo","study":true,"verdict":"measured","exit_code":0,"counts":{"invalid":3,"valid":1},"runs":[{},{},{},{}]}`), 0o644))
	must(t, os.WriteFile(filepath.Join(study, "rpo.html"), []byte(`<!doctype html><title>RPO study</title><p>study</p>`), 0o644))
	srv := httptest.NewServer(results.Browser{Store: results.Store{Root: root}}.Handler())
	defer srv.Close()
	p := newPage(t)
	p.do(chromedp.EmulateViewport(1400, 900))

	p.open(srv.URL + "/")
	figs := eval[map[string]string](p, `Object.fromEntries(Array.from(document.querySelectorAll('#runs tr.run')).map(r => [r.querySelector('a.run-link').textContent + ' ' + r.cells[1].textContent, r.querySelector('td.figures').textContent + ' | ' + r.querySelector('.badge').textContent]))`)
	valid, benchRow := "", ""
	for k, v := range figs {
		switch {
		case strings.HasPrefix(k, "reference-register-none"):
			valid = v
		case strings.HasPrefix(k, "bench-"):
			benchRow = v
		}
	}
	if !strings.HasPrefix(valid, "no anomaly") || !strings.HasSuffix(valid, "| valid") {
		t.Errorf("a valid run's key figures: %q", valid)
	}
	if benchRow != "throughput 41234 ops/s, p99 latency 1.7 ms | measured" {
		t.Errorf("the bench run's row: %q (want its throughput, measured)", benchRow)
	}
	p.screenshot("browser-runs-after")

	p.follow(`#runs tr.run a.run-link[href^="/runs/redis-set-partition/"]`)
	if n := eval[int](p, `document.querySelectorAll('#files a').length`); n < 3 {
		t.Errorf("the run page lists %d files beside the report", n)
	}
	if src := eval[string](p, `document.getElementById('report-frame').getAttribute('src')`); !strings.HasSuffix(src, "/report.html") {
		t.Errorf("the run page shows %q, not the report", src)
	}
	if w := eval[float64](p, `document.getElementById('report-frame').getBoundingClientRect().width`); w < 800 {
		t.Errorf("the report beside the files is %.0f px wide", w)
	}
	p.screenshot("browser-run-after")

	p.open(srv.URL + "/suites/")
	if txt := eval[string](p, `document.getElementById('suites').innerText`); !strings.Contains(txt, "RPO study") || !strings.Contains(txt, "measured") || strings.Contains(txt, "RPO study\t20261130T130000.000\tinvalid") {
		t.Errorf("the suites page does not list the RPO study as measured:\n%s", txt)
	}
	if broken := p.brokenLinks(); len(broken) > 0 {
		t.Errorf("broken links on the suites page: %v", broken)
	}

	p.open(srv.URL + "/")
	p.do(chromedp.Click(chromedp.CSS(`#runs tr.run:nth-child(3) input`)), chromedp.Click(chromedp.CSS(`#runs tr.run:nth-child(4) input`)))
	p.follow("#compare")
	cfg := eval[[]string](p, `Array.from(document.querySelectorAll('#config-diff tr')).map(r => r.cells[0].textContent)`)
	if !contains(cfg, "target") || !contains(cfg, "seed") || contains(cfg, "started") || contains(cfg, "concurrency") {
		t.Errorf("configuration differences: %q (want target and seed, not started or what is alike)", cfg)
	}
	rows := eval[[]string](p, `Array.from(document.querySelectorAll('#headline-deltas tr')).map(r => r.innerText.replace(/\s+/g, ' ').trim())`)
	if !contains(rows, "lost 0 3 (+3)") {
		t.Errorf("key figure deltas: %q", rows)
	}
	if n := eval[int](p, `document.querySelectorAll('#headline-deltas td.worse').length`); n < 1 {
		t.Errorf("no delta is marked worse")
	}
	p.wantPlots("compare-throughput", "compare-latency")
	// The synthetic runs have two fault windows each: four bands, in two
	// colours (the runs').
	if got := eval[[]string](p, `Array.from(document.querySelectorAll('svg[data-plot="compare-throughput"] rect.fault')).map(r => r.getAttribute('fill'))`); len(got) != 4 || got[0] == got[3] {
		t.Errorf("fault bands on the compared throughput: %q, want 2 per run in the run's colour", got)
	}
	p.screenshot("browser-compare-after")
	p.noConsoleErrors()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
