package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/results/resultstest"
)

func TestResultsServeRefusesNonLoopback(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"results", "serve", "--results", t.TempDir(), "--listen", "0.0.0.0:0"}, &out, &errb)
	if code != exitBadArgs || !strings.Contains(errb.String(), "loopback only") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}

func TestResultsListAndCompare(t *testing.T) {
	root := t.TempDir()
	start := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	a, err := resultstest.WriteRun(root, resultstest.Spec{Test: "a", Ops: 200, Started: start})
	if err != nil {
		t.Fatal(err)
	}
	b, err := resultstest.WriteRun(root, resultstest.Spec{Test: "b", Ops: 200, Invalid: true, Started: start.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"results", "list", "--results", root}, &out, &errb); code != 0 || !strings.Contains(out.String(), "KEY FIGURES") || strings.Count(out.String(), "reference") != 2 {
		t.Fatalf("list: exit %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	if code := run([]string{"results", "compare", a.Dir, b.Dir}, &out, &errb); code != 0 || !strings.Contains(out.String(), "set/set.lost") {
		t.Fatalf("compare: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if code := run([]string{"results", "compare", a.Dir, root + "/nope"}, &out, &errb); code != exitBadArgs {
		t.Fatalf("compare of a missing run: exit %d", code)
	}
}
