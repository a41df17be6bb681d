package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/results"
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

// prune lists before it removes: without --yes nothing goes; --keep keeps
// the newest runs of each test, --older-than the recent ones, both keep
// what either keeps; latest's run, suites/ and other tests stay.
func TestResultsPrune(t *testing.T) {
	root := t.TempDir()
	now := time.Now().UTC()
	var a []*results.Run
	for _, age := range []time.Duration{96 * time.Hour, 72 * time.Hour, 48 * time.Hour, time.Hour} {
		r, err := resultstest.WriteRun(root, resultstest.Spec{Test: "a", Ops: 50, Started: now.Add(-age)})
		if err != nil {
			t.Fatal(err)
		}
		a = append(a, r)
	}
	b, err := resultstest.WriteRun(root, resultstest.Spec{Test: "b", Ops: 50, Started: now.Add(-100 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	suite := filepath.Join(root, "suites", "s", "20260101T000000.000")
	if err := os.MkdirAll(suite, 0o755); err != nil {
		t.Fatal(err)
	}
	exists := func(dir string) bool { _, err := os.Stat(dir); return err == nil }

	var out, errb bytes.Buffer
	if code := run([]string{"results", "prune", "--keep", "2", "--results", root}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "would remove 2 runs") || !strings.Contains(out.String(), "nothing was removed: add --yes") ||
		!strings.Contains(out.String(), a[0].Dir) || !strings.Contains(out.String(), a[1].Dir) || strings.Contains(out.String(), a[2].Dir) {
		t.Errorf("dry run:\n%s", out.String())
	}
	for _, r := range append(a, b) {
		if !exists(r.Dir) {
			t.Fatalf("a dry run removed %s", r.Dir)
		}
	}

	// Both rules: a run goes only if neither keeps it (--keep 1 alone
	// would take a[2] too; --older-than 60h keeps it).
	out.Reset()
	if code := run([]string{"results", "prune", "--keep", "1", "--older-than", "60h", "--yes", "--results", root}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if exists(a[0].Dir) || exists(a[1].Dir) || !exists(a[2].Dir) || !exists(a[3].Dir) || !exists(b.Dir) || !exists(suite) {
		t.Errorf("after --keep 1 --older-than 60h --yes:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "removed 2 runs") {
		t.Errorf("output:\n%s", out.String())
	}

	// latest's run (b, written last) is kept even when a rule selects it.
	out.Reset()
	if code := run([]string{"results", "prune", "--older-than", "2d", "--yes", "--results", root}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if exists(a[2].Dir) || !exists(a[3].Dir) || !exists(b.Dir) {
		t.Errorf("after --older-than 2d --yes:\n%s", out.String())
	}

	for _, args := range [][]string{{}, {"--keep", "0"}, {"--older-than", "soon"}, {"--older-than", "-3d"}} {
		errb.Reset()
		if code := run(append([]string{"results", "prune", "--results", root}, args...), &out, &errb); code != exitBadArgs {
			t.Errorf("prune %v: exit %d, want 254: %s", args, code, errb.String())
		}
	}
	if code := run([]string{"results", "prune", "--keep", "1", "--results", filepath.Join(root, "nope")}, &out, &errb); code != exitBadArgs {
		t.Errorf("prune of a missing store: exit %d", code)
	}
}
