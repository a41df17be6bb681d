package results_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/results"
	"github.com/redline-dev/redline/results/resultstest"
)

func readReport(t *testing.T, spec resultstest.Spec) string {
	t.Helper()
	r, err := resultstest.WriteRun(t.TempDir(), spec)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(r.Path("report.html"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The report of a run with anomalies says in words what was lost, when and
// in which fault, and shows the instances, the ops they name and the cycle.
func TestReportExplainsAnomalies(t *testing.T) {
	html := readReport(t, resultstest.Spec{Ops: 20000, Invalid: true, Seed: 7})
	for _, want := range []string{
		"INVALID: register/linearizable, set/set and txn/list-append found anomalies.",
		"3 acknowledged writes lost (no WAIT was sent): 3 during the partition of n2 at 15.0-25.0 s",
		"(no WAIT was sent)",
		"they were acknowledged by n2, primary of slots 5461-10922 (3)",
		"RPO 0.12 s (the lost writes of one window were acknowledged over that span)",
		"Longest recovery after a fault: 11.0 s (set/rto)",
		"During faults: p99 latency",
		// anomalies: the checker's own reason, the lost elements with the
		// node named, the porcupine page, the cycle in words
		"returned 3 although the write of 4 had completed",
		`<a href="linearizable/register_7.html">`,
		"G-single", "read skew", "read a state overwritten by T2",
		"<td>n2</td>", "Ops involved",
		// plots, RPO/RTO tables and the topology
		`data-plot="latency-raw"`, `data-plot="latency-quantiles"`, `data-plot="throughput"`, `data-plot="rpo"`, `data-plot="topology"`,
		`class="lost"`, "set/rto: per window", "5461-10922",
		// one row per fault window, in seconds, by node name
		`id="window-table"`, "<td>partition</td><td>isolate-primary</td><td>n2</td>", "RTO (s)",
		"n5 became primary of slots 5461-10922 (between 40.0 and 40.8 s, after failover n5 at 40.0 s",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// Every lost write is marked on the RPO timeline and every named op is
	// circled on the latency plot.
	if n := strings.Count(html, `class="lost"`); n != 3 {
		t.Errorf("%d lost writes marked, want 3", n)
	}
	if n := strings.Count(html, `class="marker"`); n < 4 {
		t.Errorf("%d anomalous ops circled, want at least 4 (3 lost adds, a stale read, the cycle)", n)
	}
	// One row per fault: the partition with its stop and duration, the
	// failover with the primaries it changed.
	if !regexp.MustCompile(`<td class="nw">partition</td><td class="num">15.00 s</td><td class="num">25.03 s</td><td class="num">10.03 s</td><td>n2</td><td>isolate-primary</td>`).MatchString(html) {
		t.Error("the partition is not one row with start, stop, duration, nodes and mode")
	}
	if !regexp.MustCompile(`<td class="impact">\d+ ops, \d+ failed, \d+ unknown; ok p99 [0-9.]+ ms</td>`).MatchString(html) {
		t.Error("the faults table does not say what clients saw during each fault")
	}
	if !strings.Contains(html, "primaries: n1 0-5460, n2 5461-10922, n3 10923-16383 → n1 0-5460, n3 10923-16383, n5 5461-10922") {
		t.Error("the failover row does not say which primaries changed")
	}
	if strings.Contains(html, "<script") || regexp.MustCompile(`(src|href)="https?:`).MatchString(html) {
		t.Error("the report must be self-contained: no script, no external asset")
	}
}

func TestReportOfValidRun(t *testing.T) {
	html := readReport(t, resultstest.Spec{Ops: 2000, Seed: 3})
	for _, want := range []string{"VALID: every checker found evidence and no anomaly.", "No checker found an anomaly.", `data-plot="latency-raw"`} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// BenchmarkWriteReport measures rendering report.html from a stored run of
// 200k ops (reading the history included).
func BenchmarkWriteReport(b *testing.B) {
	run, err := resultstest.WriteRun(b.TempDir(), resultstest.Spec{Ops: 200_000, Invalid: true, Seed: 9})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := results.WriteReport(run); err != nil {
			b.Fatal(err)
		}
	}
}

// Figures the report does not know still show: a checker's instances by
// class as tables, its sentences as they are, with the ops they name.
func TestReportRendersUnknownFiguresGenerically(t *testing.T) {
	root := t.TempDir()
	run, err := resultstest.WriteRun(root, resultstest.Spec{Ops: 2000, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	s := checker.Summary{Valid: checker.Unknown, Checkers: map[string]checker.Result{"kv/new": {Valid: checker.Unknown, Figures: checker.Map{
		"reason":          "no final read of 2 keys: nothing to judge them by",
		"first_instances": map[string]any{"missing-final-read": []any{map[string]any{"key": "kv:1", "index": 10.0}}},
		"mystery":         map[string]any{"a": 1.0},
	}}}}
	if err := run.WriteJSON("results.json", s); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteReport(run); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(run.Path("report.html"))
	html := string(b)
	for _, want := range []string{"UNKNOWN: kv/new could not decide.", "no final read of 2 keys: nothing to judge them by",
		"First instances: missing-final-read", "kv/new: undecided: no final read of 2 keys", "<td>kv:1</td>", "Ops involved", `&#34;mystery&#34;`} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// Issue 23: a requested fault kind without evidence stands beside VALID in
// the headline, with each kind's coverage line; measuring checkers read
// "measured" in the table.
func TestReportSaysCoverage(t *testing.T) {
	run, err := resultstest.WriteRun(t.TempDir(), resultstest.Spec{Ops: 2000, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	s := checker.Summary{Valid: checker.Valid, Checkers: map[string]checker.Result{
		"set/set": {Valid: checker.Valid, Figures: checker.Map{"lost": 0.0}},
		"set/rpo": {Valid: checker.Valid, Figures: checker.Map{"lost": 0.0, "measurement": true}},
		checker.CoverageName: {Valid: checker.Valid, Figures: &checker.CoverageFigures{Measurement: true, Requested: []string{"partition"}, NoEvidence: []string{"partition"},
			PerKind: map[string]checker.KindCoverage{"partition": {Windows: 1, Summary: "partition: 1 window, touched no primary holding keys that were served during or after it: no evidence"}}}},
	}}
	if err := run.WriteJSON("results.json", s); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteReport(run); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(run.Path("report.html"))
	html := string(b)
	for _, want := range []string{"VALID (partition: no evidence)", "Coverage: partition: 1 window, touched no primary holding keys",
		`<span class="badge v-measured">measured</span>`} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(html, "every checker found evidence") {
		t.Error("the report says every checker found evidence beside a kind without any")
	}
}
