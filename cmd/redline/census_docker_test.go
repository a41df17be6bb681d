package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redline-dev/redline/harness/history"
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
	h, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if hc := history.CensusOf(h.Ops); hc == nil || len(hc.Nodes) != 6 {
		t.Fatal("the history carries no census entry for `redline check` to re-attribute from")
	}
}
