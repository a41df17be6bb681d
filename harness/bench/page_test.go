package bench

import (
	"net"
	"strings"
	"testing"
	"time"
)

// A closed loop's report calls its latency what it is (from the send, no
// correction) and draws no empty frame for what a closed loop does not
// have (send lag, queue waits): it says why there is no data.
func TestClosedLoopPageIsHonest(t *testing.T) {
	r, _, _ := closedLoop(t, 4, 1200*time.Millisecond, func(c net.Conn) { serveFake(c) })
	if r.Rate != 0 || r.Ops["total"].Corrected.Count == 0 {
		t.Fatalf("rate %v, %d ops: want a closed loop that measured ops", r.Rate, r.Ops["total"].Corrected.Count)
	}
	page := Page("closed", []Named{{Name: "a", R: r}})
	for _, want := range []string{
		"latency per second, closed loop (from the actual send: no schedule, so no coordinated-omission correction)",
		`data-plot-empty="generator"`, "no data, a closed loop has no schedule, so no op is sent late",
		"closed loop, from the send",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, not := range []string{"corrected latency per second", `data-plot="generator"`, ">corrected<"} {
		if strings.Contains(page, not) {
			t.Errorf("closed-loop page has %q", not)
		}
	}

	// An open loop keeps its corrected title; a plot with points is drawn.
	r.Rate = 100
	page = Page("open", []Named{{Name: "a", R: r}})
	if !strings.Contains(page, "corrected latency per second (from the intended send time)") || !strings.Contains(page, `data-plot="latency"`) {
		t.Errorf("open-loop page lacks its corrected latency plot")
	}
}
