package browsertest

import (
	"os"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestShotsOfAReport saves screenshots of the sections of the report named
// by $REDLINE_SHOT_REPORT (a real run's report.html), for reviewing a
// change on real data; skipped without it.
func TestShotsOfAReport(t *testing.T) {
	path := os.Getenv("REDLINE_SHOT_REPORT")
	if path == "" {
		t.Skip("set REDLINE_SHOT_REPORT to a report.html")
	}
	p := newPage(t)
	p.do(chromedp.EmulateViewport(1400, 900))
	p.open("file://" + path)
	for _, sec := range []string{"headline", "latency", "throughput", "rpo", "rto", "topology", "faults"} {
		p.elementShot("real-"+sec, "#"+sec)
	}
	p.noConsoleErrors()
}
