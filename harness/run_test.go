package harness

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/nemesis"
)

// describedCluster is a started cluster that is never reached: Run only
// asks it for its nodes and versions before the faults are built.
type describedCluster struct{ closed bool }

func (c *describedCluster) Nodes() []cluster.Node {
	return []cluster.Node{{Name: "n1", Addr: "127.0.0.1:1"}}
}
func (c *describedCluster) Close(context.Context) error { c.closed = true; return nil }
func (c *describedCluster) Describe() map[string]string {
	return map[string]string{"runtime": "test"}
}

// TestRunWritesConfigOnceComplete stops a run at its first step after the
// run's directory exists (building the faults) and reads what it left:
// config.json is there, complete (the key prefix, the start time, the
// versions and the client under test, which Run learns before it writes
// the file once), and its keys are the ones config.json has always had.
// A crashed run still says what it was.
func TestRunWritesConfigOnceComplete(t *testing.T) {
	dir := t.TempDir()
	c := &describedCluster{}
	stop := errors.New("stopped after the directory exists")
	var runDir string
	_, err := Run(context.Background(), Plan{
		Config: Config{TestName: "pin", Target: "external", Workloads: []string{"register"},
			Nemesis: []string{"none"}, Seed: 3, Concurrency: 2, ResultsDir: dir, TestCount: 1,
			Command: []string{"redline", "run"}},
		Start: func(context.Context, Config, *Log) (cluster.Cluster, error) { return c, nil },
		Faults: func(Config, cluster.Cluster, *clusteradmin.Journal, *Log) (Nemesis, error) {
			return nil, stop
		},
		Stdout: io.Discard, Stderr: io.Discard,
		RunDir:  func(d string) { runDir = d },
		Version: "v-test",
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Run: %v, want the faults' error", err)
	}
	if !c.closed {
		t.Error("the cluster was not torn down")
	}
	b, err := os.ReadFile(filepath.Join(runDir, "config.json"))
	if err != nil {
		t.Fatalf("a run stopped after its directory exists left no config.json: %v", err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	// The keys of a history run's config.json with these settings, as
	// every runner since the client under test was recorded wrote them.
	want := []string{"check_timeout", "client_library", "command", "concurrency", "key_prefix", "keys",
		"nemesis", "nemesis_interval", "node_timeout", "nodes", "op_timeout", "rate", "replicas",
		"results_dir", "seed", "started", "target", "test_count", "test_name", "time_limit", "versions",
		"wait", "wait_timeout", "workloads"}
	if !slices.Equal(keys, want) {
		t.Errorf("config.json keys:\n got %v\nwant %v", keys, want)
	}
	if p, _ := cfg["key_prefix"].(string); !strings.HasPrefix(p, "redline:") {
		t.Errorf("key_prefix %q", p)
	}
	if v, _ := cfg["versions"].(map[string]any); v["redline"] != "v-test" || v["runtime"] != "test" {
		t.Errorf("versions %v", cfg["versions"])
	}
	if lib, _ := cfg["client_library"].(map[string]any); lib["name"] == nil {
		t.Errorf("client_library %v: the client under test is not named", cfg["client_library"])
	}
}

// The end phase leaves the convergence to the nemesis's Heal when it
// converges (healConverger): the nemesis must keep saying so.
var _ healConverger = (*nemesis.Nemesis)(nil)
