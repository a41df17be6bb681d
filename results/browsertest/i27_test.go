package browsertest

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

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
	// Colour = op once each, shape = outcome once each: 6 ops + 3 outcomes.
	if n := eval[int](p, `document.querySelectorAll('svg[data-plot="latency-raw"] > circle, svg[data-plot="latency-raw"] > rect').length`); n != 9 {
		t.Errorf("latency legend has %d swatches, want 9 (6 ops, 3 outcomes)", n)
	}
	if got := eval[[]string](p, `Array.from(document.querySelectorAll('svg[data-plot="throughput"] .series')).map(s => s.dataset.series)`); len(got) < 6 ||
		!contains(got, "add ok") || !contains(got, "read fail") {
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
	if n := eval[int](p, `document.querySelectorAll('#ops .op.ok').length`); n < 1000 {
		t.Errorf("timeline shows %d ok ops", n)
	}
	if n := eval[int](p, `document.querySelectorAll('#ops .op.fault').length`); n != 2 {
		t.Errorf("timeline shows %d faults, want 2", n)
	}
	if n := eval[int](p, `new Set(Array.from(document.querySelectorAll('#ops .op.ok')).map(b => b.style.left)).size`); n < 5 {
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
