package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/history"
)

// `redline check` as a new user runs it on hand-made histories: no
// evidence is unknown (exit 2), garbage is invalid (exit 1), and the table
// says why in words with op indexes (issue 10).
func TestCheckVerdictsOnHandMadeHistories(t *testing.T) {
	cases := []struct {
		name, history string
		code          int
		why           string
	}{
		{"empty", "", exitUnknown, "no acknowledged increment"},
		{"only-nemesis", `{"index":0,"time":0,"process":"nemesis","type":"info","f":"start-kill","nodes":["n1"]}` + "\n", exitUnknown, "nothing to judge"},
		{"garbage", `{"index":0,"time":0,"process":0,"type":"invoke","f":"add","key":"p:counter:0","value":1}
{"index":1,"time":10,"process":0,"type":"ok","f":"add","key":"p:counter:0","value":1}
{"index":2,"time":20,"process":"nemesis","type":"info","f":"final-reads"}
{"index":3,"time":30,"process":0,"type":"invoke","f":"read","key":"p:counter:0"}
{"index":4,"time":40,"process":0,"type":"ok","f":"read","key":"p:counter:0","value":"abc"}
`, exitInvalid, "key p:counter:0 op 3"},
	}
	for _, tc := range cases {
		dir := counterRunDir(t, tc.history)
		var out, errb bytes.Buffer
		code := run([]string{"check", "--dry-run", dir}, &out, &errb)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", tc.name, code, tc.code, out.String(), errb.String())
		}
		if !strings.Contains(out.String(), "counter is ") || !strings.Contains(out.String(), tc.why) {
			t.Errorf("%s: the table does not say why (%q):\n%s", tc.name, tc.why, out.String())
		}
	}
}

// Issue 23: a run with faults gets the coverage checker, and
// --require-coverage makes a requested kind without evidence unknown.
func TestCheckersForCoverage(t *testing.T) {
	cfg := harness.Config{Workloads: []string{"counter"}, Nemesis: []string{"partition", "kill:primary"}, KeyPrefix: "p:", RequireCoverage: true}
	cs, err := harness.CheckersFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var cov checker.Checker
	for _, c := range cs {
		if c.Name() == checker.CoverageName {
			cov = c
		}
	}
	if cov == nil {
		t.Fatal("no coverage checker for a run with faults")
	}
	// A history whose only fault window touched nothing the run used.
	ops := []history.Op{
		{Index: 0, Time: 1, Process: history.Nemesis, Type: history.Info, F: "start-partition"},
		{Index: 1, Time: 2, Process: history.Nemesis, Type: history.Info, F: "stop-partition"},
	}
	s := checker.Run(context.Background(), ops, []checker.Checker{cov}, nil)
	if s.Valid != checker.Unknown || s.Valid.ExitCode() != exitUnknown {
		t.Fatalf("--require-coverage with no evidence: %v (exit %d), want unknown (exit 2)", s.Valid, s.Valid.ExitCode())
	}
	if got := verdictLine(checker.Summary{Valid: checker.Valid, Checkers: s.Checkers}); got != "VALID (kill: no evidence; partition: no evidence)" {
		t.Fatalf("verdict line %q", got)
	}
	cfg.Nemesis = []string{"none"}
	if cs, _ := harness.CheckersFor(cfg); slices.ContainsFunc(cs, func(c checker.Checker) bool { return c.Name() == checker.CoverageName }) {
		t.Fatal("coverage checker without a fault requested")
	}
}

// counterRunDir writes a stored run of the counter workload (a hand-made
// config.json, not a runner's) holding history, and returns its directory.
func counterRunDir(t *testing.T, history string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "t", "20260101T000000.000")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := `{"workloads":["counter"],"key_prefix":"p:","nemesis":["none"]}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "history.jsonl"), []byte(history), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// `redline check` replaces results.json and report.html whole: a reader
// that opened the old files goes on reading the old files (in place, they
// were truncated under it), and no temporary file is left behind.
func TestCheckRewritesResultsAtomically(t *testing.T) {
	dir := counterRunDir(t, "")
	var held []*os.File
	for _, name := range []string{"results.json", "report.html"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("old "+name), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		held = append(held, f)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"check", dir}, &out, &errb); code != exitUnknown {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for i, name := range []string{"results.json", "report.html"} {
		old := make([]byte, 64)
		n, _ := held[i].ReadAt(old, 0)
		if string(old[:n]) != "old "+name {
			t.Errorf("a reader of the old %s read %q: rewritten in place", name, old[:n])
		}
		now, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || strings.HasPrefix(string(now), "old") {
			t.Errorf("%s not rewritten (%v)", name, err)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}
