package suite

import (
	"strings"
	"testing"
)

func TestFidelityGaps(t *testing.T) {
	cell := func(target string, lost, acked int64, windowEnd, rto float64) Entry {
		f := RunFigures{Acked: acked, Lost: lost, RTOMs: &Quant{P50: rto, Max: rto}}
		if lost > 0 {
			f.LossWindowMs = &Span{To: windowEnd}
		}
		return Entry{Target: target, Scenario: "isolate-primary", NodeTimeoutMs: 2000, PerRun: []RunFigures{f}}
	}
	// Issue 37's measurement: the reference stopped acknowledging 0.18 s
	// into the partition where Redis went on for 2.76 s.
	gaps := FidelityGaps([]Entry{cell("reference", 35, 10000, 183, 4100), cell("redis", 827, 10000, 2761, 3700)})
	if len(gaps) != 2 || !strings.Contains(gaps[0], "lost share") || !strings.Contains(gaps[1], "end of the loss window") {
		t.Errorf("gaps: %q", gaps)
	}
	if gaps := FidelityGaps([]Entry{cell("reference", 700, 10000, 2800, 4000), cell("redis", 827, 10000, 2761, 3700)}); len(gaps) != 0 {
		t.Errorf("a faithful cell has gaps: %q", gaps)
	}
	// Nothing lost on either side: near zero, faithful.
	if gaps := FidelityGaps([]Entry{cell("reference", 0, 10000, 0, 3200), cell("redis", 0, 10000, 0, 3500)}); len(gaps) != 0 {
		t.Errorf("lossless cells have gaps: %q", gaps)
	}
	// Six writes of a zombie primary against none: near zero, the loss
	// window's time is not judged (pause-primary, 1 of 3 reference runs).
	if gaps := FidelityGaps([]Entry{cell("reference", 6, 38000, 7057, 4300), cell("redis", 0, 70000, 0, 4300)}); len(gaps) != 0 {
		t.Errorf("a near-zero loss has gaps: %q", gaps)
	}
	// RTO 6.8 s against 3.7 s (primary-in-minority, issue 37).
	if gaps := FidelityGaps([]Entry{cell("reference", 270, 10000, 990, 6800), cell("redis", 810, 10000, 2400, 3700)}); len(gaps) != 3 {
		t.Errorf("gaps: %q", gaps)
	}
	// A side without a figure is a gap, never a pass.
	noRTO := cell("reference", 700, 10000, 2800, 0)
	noRTO.PerRun[0].RTOMs = nil
	if gaps := FidelityGaps([]Entry{noRTO, cell("redis", 827, 10000, 2761, 3700)}); len(gaps) != 1 || !strings.Contains(gaps[0], "no figure") {
		t.Errorf("gaps: %q", gaps)
	}
}

// A study of the reference says in its title and first words that it
// measures redline's model of Redis, and when the model was last checked.
func TestStudyOfTheModelSaysSo(t *testing.T) {
	r := &StudyReport{Entries: []Entry{{Target: "reference", Scenario: "isolate-primary"}}}
	r.Model = modelWords()
	md := string(r.Markdown())
	if !strings.HasPrefix(md, "# RPO study of redline's model of Redis") || !strings.Contains(md, LastFidelityCheck) {
		t.Errorf("markdown:\n%s", md)
	}
	h, err := r.HTML()
	if err != nil || !strings.Contains(string(h), "<h1>RPO study of redline&#39;s model of Redis") || !strings.Contains(string(h), "last measured against redis-server") {
		t.Errorf("html: %v\n%s", err, h)
	}
	r = &StudyReport{Entries: []Entry{{Target: "redis", Scenario: "isolate-primary"}}}
	if md := string(r.Markdown()); !strings.HasPrefix(md, "# RPO study (") || strings.Contains(md, "model") {
		t.Errorf("a study of redis-server alone:\n%s", md)
	}
}
