package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/shlex"

	"github.com/redline-dev/redline/clusteradmin/localcluster"
	"github.com/redline-dev/redline/harness"
)

// 'redline --version' and 'redline version' print the commit, the Go
// version and the main dependencies' versions, and exit 0.
func TestVersion(t *testing.T) {
	defer func(c string) { buildCommit = c }(buildCommit)
	buildCommit = "0123456789ab"
	for _, args := range [][]string{{"--version"}, {"version"}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != exitValid {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		for _, want := range []string{"redline 0123456789ab\n", "go: " + runtime.Version(), "dependencies:", "github.com/redis/go-redis/v9 v9.", "github.com/spf13/cobra v1."} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%v lacks %q:\n%s", args, want, out.String())
			}
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"version", "--all"}, &out, &errb); code != exitValid || !strings.Contains(out.String(), "github.com/HdrHistogram/hdrhistogram-go") {
		t.Errorf("version --all: exit %d:\n%s%s", code, out.String(), errb.String())
	}
}

// A flag error names the command once: 'redline --help', 'redline run
// --help', never 'redline redline --help'.
func TestFlagErrorNamesTheCommandOnce(t *testing.T) {
	for args, want := range map[string]string{
		"--bogus":                "(see 'redline --help')",
		"run --bogus":            "(see 'redline run --help')",
		"results list --bogus 1": "(see 'redline results list --help')",
	} {
		var out, errb bytes.Buffer
		code := run(strings.Fields(args), &out, &errb)
		if code != exitBadArgs || !strings.Contains(errb.String(), want) || strings.Contains(errb.String(), "redline redline") {
			t.Errorf("%s: exit %d, want 254 and %q: %s", args, code, want, errb.String())
		}
	}
}

// 'redline serve' is 'redline results serve': same checks, same answers,
// and never a suggestion to start a database server.
func TestServeIsResultsServe(t *testing.T) {
	store := t.TempDir()
	for _, args := range [][]string{{"serve"}, {"results", "serve"}} {
		var out, errb bytes.Buffer
		code := run(append(args, "--results", store, "--listen", "0.0.0.0:0"), &out, &errb)
		if code != exitBadArgs || !strings.Contains(errb.String(), "loopback only") || strings.Contains(errb.String(), "server") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
}

// A missing results store is bad arguments (254) for every results
// command alike, with what to do.
func TestMissingStoreIsBadArgumentsEverywhere(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	for _, args := range [][]string{
		{"results", "list", "--results", missing},
		{"results", "serve", "--results", missing},
		{"serve", "--results", missing},
	} {
		var out, errb bytes.Buffer
		code := run(args, &out, &errb)
		if code != exitBadArgs || !strings.Contains(errb.String(), "no results store at "+missing+": give the store's directory with --results DIR") {
			t.Errorf("%v: exit %d, want 254: %s%s", args, code, out.String(), errb.String())
		}
	}
}

// A fault the chosen runtime can never cause is refused before anything
// starts (254), in a dry run too, naming the runtimes that can; a hook
// stands in for a hookable fault on an existing cluster.
func TestImpossibleFaultRefusedBeforeAnythingStarts(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	for _, c := range []struct {
		args []string
		want string
	}{
		// The docker runtime can delay packets where the kernel has
		// sch_netem; this kind of machine has none, and the host says so
		// before anything starts.
		{[]string{"run", "--nemesis", "delay"}, "fault delay: this host cannot delay the packets a node sends"},
		{[]string{"run", "--nemesis", "partition,delay", "--dry-run"}, "fault delay: this host cannot delay the packets a node sends"},
		{[]string{"run", "--nemesis", "kill", "--addrs", "127.0.0.1:1", "--dry-run"}, "an existing cluster (--addrs, --selector) cannot kill and restart nodes; the docker runtime (the default) and the kubernetes runtime (--runtime kubernetes, with Chaos Mesh installed) can; give --nemesis-hook kill='<command>'"},
		{[]string{"run", "--nemesis", "member", "--runtime", "kubernetes", "--namespace", "x", "--dry-run"}, "the kubernetes runtime cannot add and remove nodes"},
		{[]string{"bench", "--nemesis", "delay", "--dry-run"}, "fault delay: this host cannot"},
	} {
		var out, errb bytes.Buffer
		code := run(append(c.args, "--results", store), &out, &errb)
		if code != exitBadArgs || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, want 254 and %q:\n%s%s", c.args, code, c.want, out.String(), errb.String())
		}
	}
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Errorf("a refused run made %s (%v)", store, err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"run", "--nemesis", "kill,partition,all", "--nemesis-hook", "kill=true", "--nemesis-hook", "partition=true",
		"--addrs", "127.0.0.1:1", "--dry-run", "--results", store}, &out, &errb); code != exitValid {
		t.Errorf("hooks stand in for kill and partition: exit %d: %s", code, errb.String())
	}
}

// --nemesis list says what each fault needs in words and where it runs,
// never by a Go type's name.
func TestNemesisListSaysWhereEachFaultRuns(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"run", "--nemesis", "list"}, &out, &errb); code != exitValid {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	txt := out.String()
	for _, want := range []string{
		"needs to kill and restart nodes: the docker runtime (the default); the kubernetes runtime (--runtime kubernetes, with Chaos Mesh installed); an existing cluster with --nemesis-hook kill=COMMAND",
		"needs to pause and resume nodes: the docker runtime (the default); the kubernetes runtime (--runtime kubernetes);",
		"needs to delay the packets a node sends (netem: Chaos Mesh on kubernetes, the kernel's sch_netem on docker): the docker runtime (the default); the kubernetes runtime (--runtime kubernetes, with Chaos Mesh installed)\n",
		"needs to cut nodes' power, losing what they had not fsynced (the docker runtime's FUSE layer under their data): the docker runtime (the default)\n",
		"needs to add and remove nodes: the docker runtime (the default)\n",
	} {
		if !strings.Contains(txt, want) {
			t.Errorf("--nemesis list lacks %q:\n%s", want, txt)
		}
	}
	for _, bad := range []string{"cluster.", "Killer", "Shaper", "Partitioner"} {
		if strings.Contains(txt, bad) {
			t.Errorf("--nemesis list names a Go type (%q)", bad)
		}
	}
}

// planLine is the command line a dry run printed.
func planLine(t *testing.T, out string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "redline run ") || strings.HasPrefix(l, "redline bench ") {
			return l
		}
	}
	t.Fatalf("no command in the plan:\n%s", out)
	return ""
}

// The dry run prints the exact command it stands for: every flag given,
// the effective defaults (--client and --results included), the seed it
// picked; that command, run again, plans the same run.
func TestDryRunPrintsTheExactCommand(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "my store")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--nemesis", "partition,kill", "--workload", "counter,set", "--partition-clients", "--server-config", "maxmemory 1gb",
			"--user", "bob", "--password-file", pw, "--test-count", "2", "--op-timeout", "3s"},
			[]string{"--client redline", "--results '" + store + "'", "--partition-clients --", "--server-config 'maxmemory 1gb'", "--user bob",
				"--password-file " + pw, "--test-count 2", "--op-timeout 3s", "--seed "}},
		{[]string{"run", "--client", "go-redis", "--addrs", "127.0.0.1:1,127.0.0.1:2", "--nemesis", "kill", "--nemesis-hook", "kill=echo 'x y'", "--yes"},
			[]string{"--client go-redis", "--addrs 127.0.0.1:1,127.0.0.1:2", `--nemesis-hook 'kill=echo '\''x y'\'''`, "--yes"}},
		{[]string{"bench", "--ratio", "1:3", "--value-size", "32-64", "--rate", "500"},
			[]string{"redline bench ", "--ratio 1:3", "--value-size 32-64", "--rate 500", "--keys 10000", "--workload kv"}},
	} {
		var out, errb bytes.Buffer
		args := append(c.args, "--dry-run", "--results", store)
		if code := run(args, &out, &errb); code != exitValid {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		line := planLine(t, out.String())
		for _, w := range c.want {
			if !strings.Contains(line, w) {
				t.Errorf("%v: the command lacks %q:\n%s", c.args, w, line)
			}
		}
		words, err := shlex.Split(line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		out.Reset()
		if code := run(append(words[1:], "--dry-run"), &out, &errb); code != exitValid {
			t.Fatalf("the printed command %s: exit %d: %s", line, code, errb.String())
		}
		if again := planLine(t, out.String()); again != line {
			t.Errorf("the printed command plans another run:\n%s\n%s", line, again)
		}
	}
}

// The first interrupt ends the command's context; only the second closes
// the abort that stops the teardown's wait.
func TestSecondInterruptAbortsTheTeardown(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	var errb syncBuffer
	ctx, cancel := onInterrupts(context.Background(), sigs, &errb)
	defer cancel()
	sigs <- os.Interrupt
	<-ctx.Done()
	tctx, stop := harness.AfterCancel(ctx, time.Minute)
	defer stop()
	select {
	case <-tctx.Done():
		t.Fatal("one Ctrl-C ended the teardown's wait")
	case <-time.After(50 * time.Millisecond):
	}
	sigs <- os.Interrupt
	select {
	case <-tctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a second Ctrl-C did not end the teardown's wait")
	}
	if !strings.Contains(errb.String(), "Ctrl-C again to stop waiting") || !strings.Contains(errb.String(), "no longer waiting for the teardown") {
		t.Errorf("stderr: %q", errb.String())
	}
}

// Ctrl-C during a run exits 130 (interrupted by the user), not 255 (a
// failure of redline's): a run on a local cluster of redis-server
// processes, cancelled once traffic flows.
func TestInterruptedRunExits130(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server processes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lc, err := localcluster.Start(ctx, t.TempDir(), 3, 0, time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Stop()
	rctx, interrupt := context.WithCancel(ctx)
	defer interrupt()
	var out, errb syncBuffer
	done := make(chan int)
	go func() {
		done <- runContext(rctx, []string{"run", "--addrs", strings.Join(lc.Addrs, ","), "--workload", "register",
			"--time-limit", "1m", "--concurrency", "2", "--results", t.TempDir()}, &out, &errb)
	}()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(errb.String()+out.String(), "traffic") {
		if time.Now().After(deadline) {
			t.Fatalf("traffic never started: %s", errb.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	interrupt()
	if code := <-done; code != exitInterrupted || !strings.Contains(errb.String(), "interrupted; the history so far") {
		t.Fatalf("exit %d, want 130:\n%s", code, errb.String())
	}
}

// Runs go to ./redline-results by default, not ./results (the source
// tree's results package): every command that stores or reads runs.
func TestDefaultStoreIsRedlineResults(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"run", "--dry-run"}, &out, &errb); code != exitValid {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if line := planLine(t, out.String()); !strings.Contains(line, "--results redline-results") {
		t.Errorf("the plan's store: %s", line)
	}
	root := newRootCmd(&out, &errb)
	for _, path := range [][]string{{"run"}, {"bench"}, {"suite"}, {"rpo"}, {"serve"}, {"results", "list"}, {"results", "serve"}, {"results", "prune"}, {"shrink"}} {
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		f := c.Flags().Lookup("results")
		if f == nil {
			f = c.InheritedFlags().Lookup("results")
		}
		if path[0] == "shrink" {
			if f == nil || f.DefValue != "" || !strings.Contains(f.Usage, "[redline-results]") {
				t.Errorf("shrink --results: %+v", f)
			}
			continue
		}
		if f == nil || f.DefValue != "redline-results" {
			t.Errorf("%v --results defaults to %+v", path, f)
		}
	}
}
