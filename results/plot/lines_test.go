package plot

import (
	"strings"
	"testing"
)

// A log axis has no place for zeros: a chart of nothing but zeros says
// there is no data instead of drawing an empty frame; on a linear axis
// zeros are data.
func TestEmptyLinesSayNoData(t *testing.T) {
	zeros := []Series{{Name: "s", X: []float64{1, 2}, Y: []float64{0, 0}}}
	got := string(Lines{ID: "x", Title: "t", Y: Axis{Log: true}, Series: zeros}.SVG())
	if strings.Contains(got, "<svg") || !strings.Contains(got, "no data") || !strings.Contains(got, `data-plot-empty="x"`) {
		t.Errorf("a chart with nothing to draw: %s", got)
	}
	got = string(Lines{ID: "x", Title: "t", Series: zeros}.SVG())
	if !strings.Contains(got, "<svg") || !strings.Contains(got, `data-points="2"`) {
		t.Errorf("zeros on a linear axis are data: %s", got)
	}
}

// Every chart carries what the reports' browser tests read: ticks on
// both axes, the axes' names, a .series per line with its points, the
// bands and the reference line.
func TestLinesHaveAxesBandsAndLines(t *testing.T) {
	l := Lines{ID: "c", Title: "latency", X: Axis{Name: "seconds"}, Y: Axis{Name: "ms", Log: true},
		Series: []Series{{Name: "p99", X: []float64{1, 2, 3}, Y: []float64{1, 0, 30}}, {Name: "p50", X: []float64{1, 2, 3}, Y: []float64{0.5, 0.6, 0.7}, Dash: true, Dots: true}},
		Bands:  []Band{{From: 1.5, To: 2.5, Label: "failover"}}, HLines: []HLine{{Y: 2, Label: "p99<=2ms"}}}
	got := string(l.SVG())
	for _, want := range []string{`data-plot="c"`, `class="xtick"`, `class="ytick"`, `class="xunit"`, `>seconds<`, `class="yunit"`, `>ms<`,
		`data-series="p99" data-points="2"`, `data-series="p50" data-points="3"`, `stroke-dasharray="4 3"`, `class="dots"`,
		`<rect class="fault"`, `>failover<`, `class="hline"`, `>p99&lt;=2ms<`} {
		if !strings.Contains(got, want) {
			t.Errorf("chart lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "NaN") || strings.Contains(got, "Inf") {
		t.Errorf("a coordinate is not a number:\n%s", got)
	}
}

// Round ticks read as people write them: no 0.30000000000000004.
func TestTickLabelsAreShort(t *testing.T) {
	for _, tk := range (Axis{Min: 0, Max: 1}).ticks(10) {
		if len(tk.Label) > 3 {
			t.Errorf("tick %v labelled %q", tk.V, tk.Label)
		}
	}
}
