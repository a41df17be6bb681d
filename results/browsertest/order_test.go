package browsertest

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/redline-dev/redline/results/resultstest"
)

// Issue 39 item 3: a run that lost hundreds of writes reads in order:
// the headline, the plots, then the anomalies grouped by cause, each group
// with its count and three examples (the documented loss of the isolated
// primary amber, the unexplained one red); no table cell wraps inside a
// number, even in a narrow window; failed ops show in the latency plot;
// and the timeline of the faulted run shows its fault windows although
// the run has more ops than one page holds.
func TestReportReadsInOrder(t *testing.T) {
	run, err := resultstest.WriteRun(t.TempDir(), resultstest.Spec{Test: "order", Ops: 40000, Lost: 300, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	p := newPage(t)
	p.do(chromedp.EmulateViewport(1280, 900))
	p.open("file://" + run.Path("report.html"))
	p.wantPlots(reportPlots...)

	type box struct {
		Sel string  `json:"sel"`
		Top float64 `json:"top"`
	}
	tops := eval[[]box](p, `['#headline', 'svg.plot', '#attribution', '#anomalies'].map(s => {
	  const e = document.querySelector(s);
	  return {sel: s, top: e ? e.getBoundingClientRect().top + window.scrollY : -1};
	})`)
	for i, b := range tops {
		if b.Top < 0 {
			t.Fatalf("the report has no %s", b.Sel)
		}
		if i > 0 && b.Top <= tops[i-1].Top {
			t.Errorf("%s (at %.0f px) does not come after %s (at %.0f px)", b.Sel, b.Top, tops[i-1].Sel, tops[i-1].Top)
		}
	}

	type group struct {
		Cause string `json:"cause"`
		Count string `json:"count"`
		Badge string `json:"badge"`
		Words string `json:"words"`
		Cards int    `json:"cards"`
		More  string `json:"more"`
	}
	groups := eval[[]group](p, `Array.from(document.querySelectorAll('#attribution .group')).map(g => ({
	  cause: g.dataset.cause, count: g.dataset.count,
	  badge: g.querySelector(':scope > p > .badge').className, words: g.querySelector(':scope > p').innerText,
	  cards: g.querySelectorAll('.attribution').length,
	  more: (g.querySelector('details.more > summary') || {innerText: ''}).innerText}))`)
	if len(groups) != 2 {
		t.Fatalf("%d anomaly groups, want 2 (the unexplained losses on n1, the documented ones on n2): %+v", len(groups), groups)
	}
	if g := groups[0]; g.Cause != "server-lost" || g.Count != "2" || !strings.Contains(g.Badge, "v-invalid") || !strings.Contains(g.Words, "the server lost it") || g.Cards != 2 {
		t.Errorf("first group %+v, want the 2 unexplained losses, red", g)
	}
	if g := groups[1]; g.Cause != "documented" || g.Count != "48" || !strings.Contains(g.Badge, "v-documented") || g.Cards != 3 || g.More != "and 45 more" ||
		!strings.Contains(g.Words, "documented asynchronous replication: the isolated primary n2 acknowledged for ~") {
		t.Errorf("second group %+v, want the 48 attributed losses of n2 as documented, amber, 3 examples and 45 more", g)
	}
	if n := eval[int](p, `document.querySelectorAll('#attribution .attribution').length`); n != 5 {
		t.Errorf("%d attribution cards, want 5 (three examples per group at most)", n)
	}
	if n := eval[int](p, `document.querySelectorAll('svg[data-plot="latency-raw"] .series[data-series$=" fail"][stroke="#d50000"]').length`); n == 0 {
		t.Error("no failed op drawn red in the latency plot")
	}

	// No cell that reads as a number wraps, in a wide or a narrow window.
	const numericCells = `(() => {
	  const num = /^[-+≤~]?[\d.,:–\- ]*\d[\d.,:–\- ]*(\s*(s|ms|µs|%))?$/;
	  const bad = [];
	  let n = 0;
	  for (const td of document.querySelectorAll('td')) {
	    const txt = td.innerText.trim();
	    if (!num.test(txt) || td.offsetParent === null) continue;
	    n++;
	    const r = document.createRange();
	    r.selectNodeContents(td);
	    const lines = new Set(Array.from(r.getClientRects()).filter(x => x.width > 0).map(x => Math.round(x.top)));
	    if (lines.size > 1) bad.push(txt + ' (' + lines.size + ' lines)');
	  }
	  return {n, bad};
	})()`
	type cells struct {
		N   int      `json:"n"`
		Bad []string `json:"bad"`
	}
	for _, w := range []int64{1280, 700} {
		p.do(chromedp.EmulateViewport(w, 900))
		c := eval[cells](p, numericCells)
		if c.N < 20 {
			t.Errorf("%d px: only %d numeric cells measured", w, c.N)
		}
		if len(c.Bad) > 0 {
			t.Errorf("%d px: numeric cells wrap inside: %q", w, c.Bad)
		}
	}
	p.do(chromedp.EmulateViewport(1280, 900))
	p.elementShot("order-attribution", "#attribution")
	p.noConsoleErrors()

	// The timeline: 40,000 ops, shown in spans around the partition's
	// start (15 s) and stop (25.03 s) and the failover (40 s), each fault
	// drawn with a height.
	p.follow("#timeline-link")
	type seg struct {
		From   float64  `json:"from"`
		To     float64  `json:"to"`
		Faults []string `json:"faults"`
		Ops    int      `json:"ops"`
	}
	segs := eval[[]seg](p, `Array.from(document.querySelectorAll('section.segment')).map(s => ({
	  from: Number(s.dataset.from), to: Number(s.dataset.to),
	  faults: Array.from(s.querySelectorAll('.op.fault')).filter(f => f.getBoundingClientRect().height >= 2).map(f => f.textContent),
	  ops: s.querySelectorAll('.op.ok, .op.fail, .op.info').length}))`)
	for _, c := range []struct {
		at    float64
		fault string
	}{{15, "partition isolate-primary n2"}, {25.03, "partition isolate-primary n2"}, {40, "failover replica-of-n2 n5"}} {
		found := false
		for _, s := range segs {
			if s.From <= c.at && c.at <= s.To && contains(s.Faults, c.fault) && s.Ops > 0 {
				found = true
			}
		}
		if !found {
			t.Errorf("no span around %.2f s draws %q with its ops: %+v", c.at, c.fault, segs)
		}
	}
	if n := eval[int](p, `document.querySelectorAll('.op.ok, .op.fail, .op.info').length`); n > 10000 {
		t.Errorf("the timeline draws %d ops, more than its bound", n)
	}
	p.screenshot("order-timeline")
	p.noConsoleErrors()
}
