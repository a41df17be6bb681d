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
	"github.com/redline-dev/redline/history"
)

// TestRunExternalRegister runs `redline run --addrs` against six
// redis-server processes on loopback, as a user with their own cluster would.
func TestRunExternalRegister(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lc, err := localcluster.Start(ctx, t.TempDir(), 6, 1, time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Stop()

	res := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"run", "--addrs", strings.Join(lc.Addrs, ","), "--workload", "register",
		"--time-limit", "4s", "--concurrency", "6", "--results", res, "--seed", "7"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "verdict: VALID") {
		t.Fatalf("no verdict line in output:\n%s", out.String())
	}
	latest := filepath.Join(res, "latest")
	for _, f := range []string{"config.json", history.FileName, "results.json", "report.html", "run.log"} {
		if _, err := os.Stat(filepath.Join(latest, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	h, err := history.ReadRun(latest)
	if err != nil {
		t.Fatal(err)
	}
	var oks, finals int
	final := false
	for _, op := range h.Ops {
		if op.Process == history.Nemesis && op.F == "final-reads" {
			final = true
		}
		if op.Type == history.OK {
			oks++
			if final {
				finals++
			}
			if !strings.HasPrefix(op.Key, "redline:") {
				t.Fatalf("key %q lacks the run prefix", op.Key)
			}
			if op.Node == "" {
				t.Fatalf("op %d has no node", op.Index)
			}
		}
	}
	if oks < 100 || finals == 0 {
		t.Fatalf("%d ok ops, %d final reads", oks, finals)
	}
	var cfg map[string]any
	b, _ := os.ReadFile(filepath.Join(latest, "config.json"))
	if err := json.Unmarshal(b, &cfg); err != nil || cfg["target"] != "external" || cfg["seed"] != float64(7) {
		t.Fatalf("config.json: %v %v", cfg, err)
	}

	// redline check reproduces the verdict from the stored history.
	out.Reset()
	if code := run([]string{"check", latest}, &out, &errb); code != 0 {
		t.Fatalf("check exit %d: %s %s", code, out.String(), errb.String())
	}
}

func TestRunBadArguments(t *testing.T) {
	cases := [][]string{
		{"run", "--workload", "nosuch"},
		{"run", "--nemesis", "earthquake"},
		{"run", "--addrs", "localhost"},
		{"run", "--addrs", "127.0.0.1:7000", "--target", "redis"},
		{"run", "--time-limit", "-1s"},
		{"run", "--concurrency", "x"},
		{"run", "--nodes", "2"},
		{"run", "extra-arg"},
		{"check"},
		{"nosuchcommand"},
	}
	for _, args := range cases {
		var out, errb bytes.Buffer
		code := run(append(args, "--results", t.TempDir()), &out, &errb)
		if code != exitBadArgs {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, code, exitBadArgs, errb.String())
		}
		if msg := errb.String(); strings.Count(strings.TrimSpace(msg), "\n") > 0 || !strings.HasPrefix(msg, "redline: ") {
			t.Errorf("%v: error should be one line starting with 'redline: ', got %q", args, msg)
		}
	}
}

func TestRunUnreachableCluster(t *testing.T) {
	var out, errb bytes.Buffer
	res := t.TempDir()
	// Port 1 on loopback: nothing listens there.
	code := run([]string{"run", "--addrs", "127.0.0.1:1", "--time-limit", "1s", "--results", res}, &out, &errb)
	if code != exitEnvironment {
		t.Fatalf("exit %d, want %d: %s", code, exitEnvironment, errb.String())
	}
	requireEmpty(t, res)
	if !strings.Contains(errb.String(), "cannot reach the cluster") {
		t.Fatalf("unhelpful error: %q", errb.String())
	}
}
