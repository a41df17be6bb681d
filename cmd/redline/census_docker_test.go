package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/nemesis"
)

// A real run on the reference cluster ends with a key census: census.json
// in the run directory and the same in the history, every node asked
// (primaries and replicas), the run's keys found on primaries and on
// their replicas, each node's view of who serves the slots recorded.
func TestRunWritesKeyCensus(t *testing.T) {
	requireDocker(t)
	res := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"run", "--workload", "register,set", "--time-limit", "4s", "--concurrency", "4",
		"--node-timeout", "1s", "--results", res, "--seed", "11"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	dir, err := filepath.EvalSymlinks(filepath.Join(res, "latest"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, history.CensusFile))
	if err != nil {
		t.Fatalf("no census in the run directory: %v", err)
	}
	var c history.Census
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes) != 6 || c.WallStart.IsZero() || c.Prefix == "" {
		t.Fatalf("census of %d nodes, wall start %v, prefix %q: want 6 nodes, both set", len(c.Nodes), c.WallStart, c.Prefix)
	}
	roles := map[string]int{}
	keysOn := map[string]int{}
	for _, n := range c.Nodes {
		if n.Error != "" || n.ID == "" || len(n.View) != 6 {
			t.Fatalf("node %s: error %q, id %q, view of %d nodes", n.Name, n.Error, n.ID, len(n.View))
		}
		roles[n.Role]++
		keysOn[n.Role] += len(n.Keys)
		for k, v := range n.Keys {
			if !strings.HasPrefix(k, c.Prefix) || v.Error != "" || (v.Type != "string" && v.Type != "set") {
				t.Fatalf("node %s key %s: %+v", n.Name, k, v)
			}
		}
	}
	if roles["primary"] != 3 || roles["replica"] != 3 || keysOn["primary"] == 0 || keysOn["replica"] == 0 {
		t.Fatalf("roles %v, keys by role %v: want 3+3 nodes and keys on both", roles, keysOn)
	}
	h, err := history.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if hc := history.CensusOf(h.Ops); hc == nil || len(hc.Nodes) != 6 {
		t.Fatal("the history carries no census entry for `redline check` to re-attribute from")
	}
}

// A stored run with faults, replayed with --replay, follows the same
// schedule: the same steps at the same slots, and where a step strikes
// other nodes than the recorded run did, its start says so.
func TestReplayFollowsTheStoredSchedule(t *testing.T) {
	requireDocker(t)
	res := t.TempDir()
	var out, errb bytes.Buffer
	args := []string{"run", "--workload", "register", "--nemesis", "kill", "--nemesis-interval", "3s", "--time-limit", "10s",
		"--concurrency", "4", "--node-timeout", "1s", "--results", res, "--seed", "21"}
	if code := run(args, &out, &errb); code != 0 && code != exitInvalid {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	first, err := filepath.EvalSymlinks(filepath.Join(res, "latest"))
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	// The results path is given again: a replay never adopts it from the
	// stored config.json (a shared results directory may be crafted).
	if code := run([]string{"run", "--replay", first, "--results", res}, &out, &errb); code != 0 && code != exitInvalid {
		t.Fatalf("replay: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	second, err := filepath.EvalSymlinks(filepath.Join(res, "latest"))
	if err != nil || second == first {
		t.Fatalf("the replay did not store a run of its own in %s (%v)", res, err)
	}
	schedule := func(dir string) ([]nemesis.ScheduledStep, []history.Op) {
		h, err := history.ReadRun(dir)
		if err != nil {
			t.Fatal(err)
		}
		return nemesis.ScheduleOf(h.Ops), h.Ops
	}
	want, _ := schedule(first)
	got, ops := schedule(second)
	if len(want) < 1 || len(got) != len(want) {
		t.Fatalf("recorded %d steps, replayed %d: %+v vs %+v", len(want), len(got), want, got)
	}
	differ := 0
	for _, op := range ops {
		if strings.HasPrefix(op.F, "start-") && strings.Contains(string(op.DetailRaw()), "replay_nodes_differ") {
			differ++
		}
	}
	mismatched := 0
	for i := range want {
		if got[i].Step != want[i].Step || got[i].K != want[i].K {
			t.Fatalf("step %d replayed as %+v, recorded %+v", i, got[i], want[i])
		}
		// A step skipped in either run (no target answered in time) names
		// no nodes and is not compared.
		if len(got[i].Nodes) > 0 && len(want[i].Nodes) > 0 && !slices.Equal(got[i].Nodes, want[i].Nodes) {
			mismatched++
		}
	}
	if mismatched != differ {
		t.Fatalf("%d steps struck other nodes, %d starts say so", mismatched, differ)
	}
	var cfg harness.Config
	b, _ := os.ReadFile(filepath.Join(second, "config.json"))
	if err := json.Unmarshal(b, &cfg); err != nil || cfg.ReplayOf != first || len(cfg.Schedule) != len(want) || cfg.Seed != 21 {
		t.Fatalf("the replay's config.json: replay_of %q, %d steps, seed %d (%v)", cfg.ReplayOf, len(cfg.Schedule), cfg.Seed, err)
	}
	t.Logf("replayed %d steps, %d struck other nodes than recorded", len(want), mismatched)
}
