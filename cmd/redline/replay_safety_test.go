package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/clusteradmin/localcluster"
	"github.com/redline-dev/redline/harness"
)

// craftedRun is a stored run as someone else may have written it: an
// exec: client that would create marker, an existing cluster's
// addresses, a server binary, an image, a kubeconfig and a results path.
func craftedRun(t *testing.T, marker string, mutate func(*harness.Config)) string {
	t.Helper()
	cfg := harness.Config{Target: "external", Addrs: []string{"10.255.255.1:7000"}, Nodes: 6, Replicas: 1,
		Workloads: []string{"register"}, Nemesis: []string{"none"}, NemesisInterval: harness.Duration(10 * time.Second),
		TimeLimit: harness.Duration(2 * time.Second), Concurrency: 2, Seed: 9, NodeTimeout: harness.Duration(2 * time.Second),
		OpTimeout: harness.Duration(time.Second), CheckTimeout: harness.Duration(time.Minute),
		Client: "exec:touch " + marker, ResultsDir: "/tmp/someone-elses-store"}
	if mutate != nil {
		mutate(&cfg)
	}
	return storedRun(t, cfg, nil)
}

// A replay's dry run shows what it left out of config.json, on stderr,
// and a command without it; nothing runs.
func TestReplayWithholdsWhatItWouldRunOrActOn(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "marker")
	dir := craftedRun(t, marker, func(c *harness.Config) {
		c.Target, c.Addrs = "redis", nil
		c.ServerBinary, c.Image = "/tmp/evil-server", "evil:latest"
		c.Runtime, c.Namespace, c.Kubeconfig = "kubernetes", "prod", "/tmp/evil-kubeconfig"
	})
	var out, errb bytes.Buffer
	if code := run([]string{"run", "--replay", dir, "--dry-run"}, &out, &errb); code != exitValid {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	line := planLine(t, out.String())
	for _, bad := range []string{"exec:", "evil", "prod", "kubernetes", "someone-elses-store", "10.255.255.1"} {
		if strings.Contains(line, bad) {
			t.Errorf("the replay took %q from config.json: %s", bad, line)
		}
	}
	for _, want := range []string{"--target redis", "--client redline", "--results " + defaultStore, "--replay " + dir} {
		if !strings.Contains(line, want) {
			t.Errorf("the command lacks %q: %s", want, line)
		}
	}
	for _, want := range []string{"replay of " + dir + ": left out of its config.json (give them again to use them):",
		"--client 'exec:touch " + marker + "': a command redline would run; the replay uses redline's own client",
		"--runtime kubernetes: a Kubernetes cluster redline would create objects in (namespace prod); the replay runs on docker",
		"--server-binary /tmp/evil-server: a binary redline would run",
		"--image evil:latest: an image redline would run",
		"--results /tmp/someone-elses-store: where redline would write; the replay writes to " + defaultStore} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}

	// Given again on the command line, a setting is used, and not
	// reported as left out.
	out.Reset()
	errb.Reset()
	store := t.TempDir()
	if code := run([]string{"run", "--replay", dir, "--dry-run", "--results", store, "--client", "go-redis"}, &out, &errb); code != exitValid {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if line := planLine(t, out.String()); !strings.Contains(line, "--results "+store) || !strings.Contains(line, "--client go-redis") {
		t.Errorf("given again, not used: %s", line)
	}
	if strings.Contains(errb.String(), "--results /tmp") || strings.Contains(errb.String(), "--client") {
		t.Errorf("given again, still said to be left out:\n%s", errb.String())
	}

	// The addresses of an existing cluster are left out too: the replay
	// starts a reference cluster.
	out.Reset()
	errb.Reset()
	if code := run([]string{"run", "--replay", craftedRun(t, marker, nil), "--dry-run"}, &out, &errb); code != exitValid {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if line := planLine(t, out.String()); strings.Contains(line, "10.255.255.1") || !strings.Contains(line, "--target reference") {
		t.Errorf("addresses taken from config.json: %s", line)
	}
	if !strings.Contains(errb.String(), "--addrs 10.255.255.1:7000: an existing cluster redline would act on") {
		t.Errorf("stderr:\n%s", errb.String())
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("a dry run ran the stored exec: client (%v)", err)
	}
}

// A crafted config.json's exec: client is not run by a replay: the run
// goes ahead on a cluster named on the command line with redline's own
// client, and the marker the command would create never appears. The
// same command, given on the command line, does run (the marker is the
// proof the test can see it).
func TestReplayDoesNotRunAStoredExecClient(t *testing.T) {
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
	marker := filepath.Join(t.TempDir(), "marker")
	dir := craftedRun(t, marker, nil)
	addrs := strings.Join(lc.Addrs, ",")
	var out, errb bytes.Buffer
	code := run([]string{"run", "--replay", dir, "--addrs", addrs, "--results", t.TempDir()}, &out, &errb)
	if code != exitValid {
		t.Fatalf("exit %d:\n%s\n%s", code, out.String(), errb.String())
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the replay ran the stored exec: client (%v)", err)
	}
	res := filepath.Join(strings.TrimSpace(strings.TrimPrefix(lastLine(out.String(), "results: "), "results: ")), "config.json")
	b, err := os.ReadFile(res)
	if err != nil {
		t.Fatal(err)
	}
	var stored harness.Config
	if err := json.Unmarshal(b, &stored); err != nil || stored.Client != "" {
		t.Fatalf("the replay's client %q (%v)", stored.Client, err)
	}

	// shrink leaves it out as well.
	if err := os.WriteFile(filepath.Join(dir, "results.json"), []byte(`{"valid":false,"checkers":{"register/linearizable":{"valid":false}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	if code := run([]string{"shrink", dir, "--addrs", addrs, "--max-runs", "1", "--results", t.TempDir()}, &out, &errb); code != exitValid {
		t.Fatalf("shrink: exit %d:\n%s\n%s", code, out.String(), errb.String())
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("shrink ran the stored exec: client (%v)", err)
	}
	if !strings.Contains(errb.String(), "shrink of "+dir+": left out of its config.json") || !strings.Contains(errb.String(), "--client 'exec:touch") ||
		strings.Contains(errb.String(), "--results") {
		t.Errorf("shrink's stderr:\n%s\nstdout:\n%s", errb.String(), out.String())
	}

	out.Reset()
	errb.Reset()
	run([]string{"run", "--replay", dir, "--addrs", addrs, "--client", "exec:touch " + marker, "--results", t.TempDir(), "--time-limit", "1s"}, &out, &errb)
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("given on the command line, the exec: client did not run (%v):\n%s", err, errb.String())
	}
}

func lastLine(s, prefix string) string {
	out := ""
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = l
		}
	}
	return out
}
