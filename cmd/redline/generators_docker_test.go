package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDistributedBenchInDocker runs `redline bench --generators 3` on the
// docker runtime: three generator containers of the reference image on
// the cluster's network, their reports merged exactly, nothing left
// behind.
func TestDistributedBenchInDocker(t *testing.T) {
	requireDocker(t)
	res := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"bench", "--generators", "3", "--rate", "1500", "--concurrency", "2", "--time-limit", "4s",
		"--keys", "300", "--node-timeout", "1s", "--results", res, "--seed", "7"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	dir, err := filepath.EvalSymlinks(filepath.Join(res, "latest"))
	if err != nil {
		t.Fatal(err)
	}
	r := readBench(t, dir)
	if len(r.Generators) != 3 || r.GeneratorsFailed != 0 {
		t.Fatalf("generators %+v (%d failed)\n%s", r.Generators, r.GeneratorsFailed, out.String())
	}
	var ends []reportEnd
	for i, g := range r.Generators {
		if !strings.Contains(g.Name, "-gen"+strconv.Itoa(i+1)) {
			t.Errorf("generator %d ran as %q, not a generator container", i+1, g.Name)
		}
		e, ok := readEnd(t, filepath.Join(dir, "generators", "1", "generator-"+strconv.Itoa(i+1)+".out"))
		if !ok || e.Counts.TotalOK() == 0 {
			t.Fatalf("generator %d: no end line or no op measured", i+1)
		}
		ends = append(ends, e)
	}
	ok, failed, _, total := sumEnds(t, ends)
	if r.Counts.TotalOK() != ok || r.Counts.Failed() != failed {
		t.Errorf("merged ok %d failed %d, the generators' sum %d, %d", r.Counts.TotalOK(), r.Counts.Failed(), ok, failed)
	}
	if h := r.Hist("total", "corrected"); h == nil || !h.Equals(total) || r.Ops["total"].Corrected.P99 != float64(total.ValueAtQuantile(99))/1000 {
		t.Error("the merged latency is not the generators' histograms merged")
	}
	// This run's cluster only: other tests may run benches on the engine.
	var cfg struct {
		Versions map[string]string `json:"versions"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, "config.json"))
	if err := json.Unmarshal(b, &cfg); err != nil || cfg.Versions["cluster"] == "" {
		t.Fatalf("config.json names no cluster: %v", err)
	}
	if l := leftovers(t, cfg.Versions["cluster"]); l != "" {
		t.Errorf("left behind: %s", l)
	}
}
