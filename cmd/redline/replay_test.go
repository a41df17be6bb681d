package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/nemesis"
)

// storedRun writes a run directory with cfg and a history whose fault
// starts record the steps of sched.
func storedRun(t *testing.T, cfg harness.Config, sched []nemesis.ScheduledStep) string {
	t.Helper()
	dir := t.TempDir()
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i, st := range sched {
		op := history.Op{Index: int64(i), Time: int64(i) * 1e9, Process: history.Nemesis, Type: history.Invoke, F: "start-" + st.Fault}
		op.SetNodes(st.Nodes)
		st.Nodes = nil
		d, _ := json.Marshal(map[string]any{"mode": st.Mode, "step": st})
		op.SetDetail(d)
		line, _ := json.Marshal(op)
		f.Write(append(line, '\n'))
	}
	return dir
}

func replayFlags(t *testing.T, args ...string) *runOptions {
	t.Helper()
	o := &runOptions{stdout: io.Discard, stderr: io.Discard}
	c := &cobra.Command{}
	addRunFlags(c, o)
	c.Flags().StringVar(&o.replay, "replay", "", "")
	if err := c.Flags().Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := applyReplay(c.Flags(), o); err != nil {
		t.Fatal(err)
	}
	return o
}

// --replay takes every flag from the stored config (but the results path:
// TestReplayWithholds), those given on the command line win, and the fault schedule is the one the run followed
// (steps, slots and struck nodes as recorded), not a new plan.
func TestReplayAppliesStoredConfigAndSchedule(t *testing.T) {
	sched := nemesis.Schedule([]string{"kill", "failover"}, 42, 4)
	sched = slices.Delete(sched, 1, 2) // a run that skipped nothing still may record gaps: keep them
	for i := range sched {
		sched[i].Nodes = []string{"n" + string(rune('1'+i))}
	}
	cfg := harness.Config{Target: "redis", Nodes: 9, Replicas: 2, Workloads: []string{"register", "set"}, Nemesis: []string{"kill", "failover"},
		NemesisInterval: harness.Duration(7 * time.Second), TimeLimit: harness.Duration(45 * time.Second), Concurrency: 6, Keys: 3, Seed: 42,
		NodeTimeout: harness.Duration(time.Second), OpTimeout: harness.Duration(time.Second), CheckTimeout: harness.Duration(time.Minute),
		ServerConfig: []string{"appendonly yes"}, ResultsDir: "res"}
	dir := storedRun(t, cfg, sched)

	o := replayFlags(t, "--replay", dir, "--time-limit", "20s")
	c := o.cfg
	if c.Target != "redis" || c.Nodes != 9 || c.Replicas != 2 || o.workloads != "register,set" || o.nemesis != "kill,failover" ||
		c.NemesisInterval.D() != 7*time.Second || c.Concurrency != 6 || c.Keys != 3 || c.Seed != 42 || c.NodeTimeout.D() != time.Second ||
		!slices.Equal(c.ServerConfig, []string{"appendonly yes"}) || c.ResultsDir != defaultStore {
		t.Fatalf("stored flags not applied: %+v (workloads %q, nemesis %q)", c, o.workloads, o.nemesis)
	}
	if c.TimeLimit.D() != 20*time.Second {
		t.Fatalf("--time-limit given on the command line must win: %s", c.TimeLimit.D())
	}
	if c.ReplayOf != dir || len(c.Schedule) != len(sched) {
		t.Fatalf("replay_of %q, schedule %+v", c.ReplayOf, c.Schedule)
	}
	for i := range sched {
		if c.Schedule[i].Step != sched[i].Step || c.Schedule[i].K != sched[i].K || !slices.Equal(c.Schedule[i].Nodes, sched[i].Nodes) {
			t.Fatalf("step %d: %+v, recorded %+v", i, c.Schedule[i], sched[i])
		}
	}

	// Another seed plans its own schedule; another target does not
	// inherit the stored target's build settings.
	o = replayFlags(t, "--replay", dir, "--seed", "7", "--target", "reference")
	if o.cfg.Schedule != nil || o.cfg.Seed != 7 || o.cfg.Target != "reference" {
		t.Fatalf("--seed 7 --target reference: schedule %v seed %d target %s", o.cfg.Schedule, o.cfg.Seed, o.cfg.Target)
	}
}

// The flags of a config, given to `redline run`, give back that config.
func TestConfigFlagsRoundTrip(t *testing.T) {
	cfg := harness.Config{Target: "reference", Nodes: 6, Replicas: 1, Workloads: []string{"counter"}, Nemesis: []string{"partition:halves"},
		NemesisInterval: harness.Duration(5 * time.Second), TimeLimit: harness.Duration(30 * time.Second), Concurrency: 4, Rate: 250.5,
		Wait: 1, WaitTimeout: harness.Duration(50 * time.Millisecond), Seed: -3, NodeTimeout: harness.Duration(2 * time.Second),
		OpTimeout: harness.Duration(time.Second), CheckTimeout: harness.Duration(time.Minute), RestoreRoles: true, PartitionClients: true,
		Client: "redline", RequireCoverage: true, Runtime: "docker"}
	kube := cfg
	kube.Runtime, kube.Namespace, kube.Kubeconfig, kube.Announce = "kubernetes", "redline-test", "/etc/kube/config", "hostname"
	for _, cfg := range []harness.Config{cfg, kube} {
		o := &runOptions{}
		c := &cobra.Command{}
		addRunFlags(c, o)
		var args []string
		for _, f := range configFlags(cfg) {
			args = append(args, "--"+f.name, f.value)
		}
		if err := c.Flags().Parse(args); err != nil {
			t.Fatal(err)
		}
		got := o.cfg
		got.Workloads, got.Nemesis = splitList(o.workloads), splitList(o.nemesis)
		got.TestCount, got.ResultsDir = 0, ""
		b1, _ := json.Marshal(cfg)
		b2, _ := json.Marshal(got)
		if string(b1) != string(b2) {
			t.Fatalf("round trip:\n%s\n%s", b1, b2)
		}
	}
}

// shrink refuses, before rerunning anything, a run that is not invalid and
// a --checker that was not invalid in it.
func TestShrinkRefusesWhatItCannotShrink(t *testing.T) {
	cfg := harness.Config{Target: "reference", Nodes: 6, Replicas: 1, Workloads: []string{"register"}, Nemesis: []string{"kill"},
		NemesisInterval: harness.Duration(time.Second), TimeLimit: harness.Duration(time.Second), Concurrency: 1, Seed: 1}
	dir := storedRun(t, cfg, nemesis.Schedule([]string{"kill"}, 1, 1))
	write := func(v string) {
		if err := os.WriteFile(filepath.Join(dir, "results.json"), []byte(`{"valid":`+v+`,"checkers":{"register/linearizable":{"valid":`+v+`}}}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		valid string
		args  []string
		want  string
	}{
		{"true", nil, "not invalid"},
		{"false", []string{"--checker", "set/set"}, "not invalid in"},
		{"false", []string{"--max-runs", "0"}, "--max-runs"},
	} {
		write(c.valid)
		var out, errb bytes.Buffer
		if code := run(append([]string{"shrink", dir}, c.args...), &out, &errb); code != exitBadArgs || !strings.Contains(errb.String(), c.want) {
			t.Errorf("shrink %v on a run valid=%s: exit %d, stderr %q; want %d and %q", c.args, c.valid, code, errb.String(), exitBadArgs, c.want)
		}
	}
}
