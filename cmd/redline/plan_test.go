package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/nemesis"
)

// --dry-run plans and starts nothing: exit 0, no results directory made,
// every run listed with its own flags and an estimate.
func TestDryRunPlansWithoutStarting(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	var out, errb bytes.Buffer
	if code := run([]string{"suite", "--preset", "release", "--dry-run", "--results", root}, &out, &errb); code != exitValid {
		t.Fatalf("suite --dry-run: exit %d: %s", code, errb.String())
	}
	txt := out.String()
	for _, want := range []string{"plan: suite release, 32 runs one after another, about 24m 00s",
		"every run: redline run --target reference --time-limit 30s",
		"32  workload=txn nemesis=member", "--workload txn --nemesis member", "nothing was started"} {
		if !strings.Contains(txt, want) {
			t.Errorf("suite plan lacks %q:\n%s", want, txt)
		}
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Errorf("a dry run made %s (%v)", root, err)
	}

	out.Reset()
	if code := run([]string{"run", "--dry-run", "--nemesis", "partition,kill", "--time-limit", "40s", "--seed", "7", "--results", root}, &out, &errb); code != exitValid {
		t.Fatalf("run --dry-run: exit %d: %s", code, errb.String())
	}
	want := []string{"plan: 1 test, about 55s", "--nemesis partition,kill", "at 5s", "at 35s"}
	for _, st := range nemesis.Plan([]string{"partition", "kill"}, 7, 4) {
		want = append(want, st.Fault+":"+st.Mode) // the schedule the run will follow
	}
	for _, want := range want {
		if !strings.Contains(out.String(), want) {
			t.Errorf("run plan lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	if code := run([]string{"rpo", "--dry-run", "--scenarios", "kill-primary", "--results", root}, &out, &errb); code != exitValid {
		t.Fatalf("rpo --dry-run: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "plan: suite rpo, 4 runs one after another, about 1m 56s") {
		t.Errorf("rpo plan:\n%s", out.String())
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Errorf("a dry run made %s (%v)", root, err)
	}
}

// --nemesis list names every fault and mode with what it does.
func TestNemesisList(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"run", "--nemesis", "list"}, &out, &errb); code != exitValid {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"kill:all", "every node at once", "pause:primary-long", "migrate:atomic-kill-src", "[study]", "member:remove",
		"power:shard-torn", "not fsynced", "disk:full", "ENOSPC",
		"partition:one-way-unheard", "partition:one-way-replicas-to-primary", "slow-link:primary", "slow:one", "CFS quota"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--nemesis list lacks %q", want)
		}
	}
}

// The not-applicable checkers fold into one line, grouped by reason.
func TestNotApplicableFoldsIntoOneLine(t *testing.T) {
	var out bytes.Buffer
	printNotApplicable(&out, checker.Summary{NotApplicable: map[string]string{
		"counter/handoff": "no slot moved", "set/handoff": "no slot moved", "set/write-pause": "no migration", "rto": "no fault",
	}})
	want := "not applicable, left out of the verdict: handoff of counter, set (no slot moved); rto (no fault); write-pause of set (no migration)\n"
	if out.String() != want {
		t.Errorf("got  %q\nwant %q", out.String(), want)
	}
}

// A --results that is a file, or under one, is bad input found before
// anything starts (254), for run, suite and rpo alike.
func TestResultsNamingAFileIsBadInput(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "--results", file},
		{"run", "--results", filepath.Join(file, "sub")},
		{"bench", "--results", file},
		{"suite", "--preset", "release", "--results", file},
		{"rpo", "--results", file},
	} {
		var out, errb bytes.Buffer
		code := run(args, &out, &errb)
		if code != exitBadArgs || !strings.Contains(errb.String(), "is a file") {
			t.Errorf("%v: exit %d, want 254 naming the file: %s", args, code, errb.String())
		}
	}
}

// An unreachable external cluster is an environment failure (253), not
// redline's (255).
func TestUnreachableClusterExits253(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"run", "--addrs", "127.0.0.1:1", "--time-limit", "1s", "--results", t.TempDir()}, &out, &errb)
	if code != exitEnvironment || !strings.Contains(errb.String(), "environment: cannot reach the cluster at 127.0.0.1:1") {
		t.Errorf("exit %d, want 253: %s", code, errb.String())
	}
}
