package results_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/results"
)

// The report shows each attributed anomaly with its verdict in words and
// the evidence: the ack, the census, the journalled steps, the log lines.
func TestReportShowsAttribution(t *testing.T) {
	r, err := (&results.Store{Root: t.TempDir()}).NewRun("t", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s := checker.Summary{Valid: checker.Invalid, Checkers: map[string]checker.Result{"set": {Valid: checker.Invalid, Figures: checker.Map{"lost": 1}}},
		Attribution: []checker.Attribution{{
			Checker: "set", Kind: "lost-write", Key: "s:k1", Slot: 42, Verdict: checker.AdminStranded,
			Why:   "the key is still on n2 (primary), which does not serve slot 42",
			Ack:   &checker.AttrOp{Index: 7, F: "add", TimeS: 1.5, Node: "n1 (10.0.0.1:6379)", Value: "7"},
			Copy:  []checker.KeyCopy{{Node: "n2", Role: "primary", Holds: "yes", Value: "set of 1"}},
			Steps: []checker.AttrStep{{Seq: 3, Kind: "migrate", State: "failed", Slots: "42", Touches: true}},
			Logs:  []string{"n2 1.700s: Failover election won"},
		}},
		Census: &checker.CensusSummary{Nodes: 6, Copies: 40, Stranded: 1, Examples: []string{"s:k1 (slot 42) on n2, served by n1"}}}
	if err := r.WriteJSON("results.json", s); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteReport(r); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(r.Path("report.html"))
	html := string(b)
	for _, want := range []string{`id="attribution"`, "an admin step stranded it", "still on n2", "op 7 add at 1.5s value 7 on n1",
		"n2 (primary, not the slot&#39;s shard) set of 1, holds the write: yes", "#3 migrate failed slots 42", "Failover election won",
		"Key census at the end: 40 copies of the run&#39;s keys on 6 nodes", "1 copies are on nodes whose shard does not serve their slot"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// An unserved shard-window shows its shard, span, errors, topology and
// the overlapping fault, with the verdict in words.
func TestReportShowsUnservedAttribution(t *testing.T) {
	r, err := (&results.Store{Root: t.TempDir()}).NewRun("t", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s := checker.Summary{Valid: checker.Valid, Checkers: map[string]checker.Result{"rto": {Valid: checker.Valid}},
		Attribution: []checker.Attribution{{
			Checker: "rto", Kind: "unserved", Key: "r:k3", Slot: 42, Verdict: checker.FaultOutage,
			Why:    "2.21s unserved: expected outage: the fault kill struck the shard's primary n1",
			Faults: []string{"kill 0.2-3s on n1"},
			Logs:   []string{"n4 2.400s: Failover election won"},
			Unserved: &checker.Unserved{Shard: "n1 (10.0.0.1:6379)", Window: 0, FromS: 0.3, ToS: 2.51, Recovered: true,
				Errors: map[string]int{"CLUSTERDOWN": 3, "timeout": 1}, Topology: []string{"the shard's slots were served again by n4 (10.0.0.4:6379)"}},
		}}}
	if err := r.WriteJSON("results.json", s); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteReport(r); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(r.Path("report.html"))
	html := string(b)
	for _, want := range []string{"unserved: shard of n1 (10.0.0.1:6379) in fault window 0", "the fault did it", "0.3s (first failed call) to 2.51s (first served call)",
		"CLUSTERDOWN x3, timeout x1", "served again by n4", "kill 0.2-3s on n1", "Failover election won"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(html, "none found in the history") {
		t.Error("an unserved window shows the ack/miss facts of an anomaly")
	}
}
