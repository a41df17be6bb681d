package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redline-dev/redline/harness/suite"
)

// TestReferenceRPOMatchesRedis is the default target's fidelity check, run
// on every change: the RPO study's four scenarios on the reference server
// and on redis-server side by side (WAIT 0, node-timeout 2 s; 12 runs of
// 14 s of traffic, about 7 minutes here), and the
// reference's lost share, end of the loss window and RTO must stand within
// suite.FidelityFactors of Redis's. Nothing noticed when a replication
// change made an isolated reference primary stop acknowledging writes
// 0.18 s into a partition where Redis goes on for 2.8 s (issue 37): this
// test fails on that code (isolate-primary: lost share and loss window).
func TestReferenceRPOMatchesRedis(t *testing.T) {
	requireDocker(t)
	res := t.TempDir()
	var entries []suite.Entry
	// The scenarios that lose writes get two seeds a side, whose medians
	// are judged: one run's lost share moves with the run's throughput
	// (4.1% and 6.0% for the reference's primary-in-minority, 8.8% and
	// 11.2% for Redis's, on a loaded machine). Those that lose nothing
	// are judged on their RTO, one seed a side.
	for _, study := range []struct {
		scenarios []string
		seeds     string
	}{
		{[]string{"isolate-primary", "primary-in-minority"}, "2"},
		{[]string{"kill-primary", "pause-primary"}, "1"},
	} {
		dir := filepath.Join(res, study.seeds)
		var out, errb bytes.Buffer
		code := run([]string{"rpo", "--target", "reference,redis", "--scenarios", strings.Join(study.scenarios, ","),
			"--wait", "0", "--seeds", study.seeds, "--node-timeout", "2s", "--results", dir}, &out, &errb)
		if code != 0 {
			t.Fatalf("rpo exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
		}
		matches, _ := filepath.Glob(filepath.Join(dir, "rpo", "*", "rpo.json"))
		if len(matches) != 1 {
			t.Fatalf("rpo.json: %v", matches)
		}
		b, err := os.ReadFile(matches[0])
		if err != nil {
			t.Fatal(err)
		}
		var rep suite.StudyReport
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Compared != len(study.scenarios) {
			t.Fatalf("%d cells compared, want %d:\n%s", rep.Compared, len(study.scenarios), out.String())
		}
		entries = append(entries, rep.Entries...)
	}
	for _, e := range entries {
		var window, rto float64
		if e.LossWindowMs != nil {
			window = e.LossWindowMs.To
		}
		if e.RTOMs != nil {
			rto = e.RTOMs.P50
		}
		t.Logf("%-9s %-19s runs %d lost %5d of %7d (%.3g%%, per seed %s), loss window end %5.0f ms, RTO p50 %5.0f ms",
			e.Target, e.Scenario, e.Runs, e.Lost, e.Acked, e.LostPct, e.LostPerSeed(), window, rto)
	}
	if gaps := suite.FidelityGaps(entries); len(gaps) > 0 {
		t.Errorf("the reference server is not faithful to redis-server:\n%s", strings.Join(gaps, "\n"))
	}
}
