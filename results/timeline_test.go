package results_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/redline-dev/redline/results/resultstest"
)

// A run too big for one page shows spans around each fault's start and
// stop and its first anomalies, at most timelineMaxOps boxes in all, and
// every span around a fault boundary draws the fault.
func TestTimelineShowsFaultWindows(t *testing.T) {
	run, err := resultstest.WriteRun(t.TempDir(), resultstest.Spec{Ops: 60000, Invalid: true, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(run.Path("timeline.html"))
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	if n := strings.Count(html, `<div class="op ok"`) + strings.Count(html, `<div class="op fail"`) + strings.Count(html, `<div class="op info"`); n > 10000 || n < 1000 {
		t.Errorf("%d op boxes, want 1000 to 10000", n)
	}
	segs := regexp.MustCompile(`<section class="segment" data-from="([0-9.]+)" data-to="([0-9.]+)">`).FindAllStringSubmatch(html, -1)
	covers := func(at float64) bool {
		for _, s := range segs {
			from, _ := strconv.ParseFloat(s[1], 64)
			to, _ := strconv.ParseFloat(s[2], 64)
			if from <= at && at <= to {
				return true
			}
		}
		return false
	}
	// The partition starts at 15 s and stops at 25.03 s, the failover at 40 s.
	for _, at := range []float64{15, 25.03, 40} {
		if !covers(at) {
			t.Errorf("no span around %.2f s: %q", at, segs)
		}
	}
	for _, s := range strings.Split(html, `<section class="segment"`)[1:] {
		if !strings.Contains(s, `class="op fault"`) {
			t.Errorf("a span draws no fault: %.200s", s)
		}
	}
	if !strings.Contains(html, "partition isolate-primary n2 starts at 15.00 s") {
		t.Error("the partition's start is not marked")
	}
}
