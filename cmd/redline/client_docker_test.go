package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/history"
)

// Client libraries the traffic cannot go through are refused before
// anything starts.
func TestClientBadArgs(t *testing.T) {
	for _, args := range [][]string{
		{"--client", "no-such-client"},
		{"--client", "go-redis", "--workload", "txn"},
		{"--client", "go-redis", "--workload", "queue"},
		{"--client", "redis-py", "--wait", "1"},
		{"--client", "exec:"},
	} {
		var out, errb bytes.Buffer
		res := t.TempDir()
		code := run(append([]string{"run", "--time-limit", "1s", "--results", res}, args...), &out, &errb)
		if code != exitBadArgs || !strings.Contains(errb.String(), "--client") {
			t.Errorf("%v: exit %d (%s), want %d naming --client", args, code, errb.String(), exitBadArgs)
		}
		requireEmpty(t, res)
	}
	// The refusal says why, and which workloads a library runs.
	var qout, qerr bytes.Buffer
	run([]string{"run", "--client", "go-redis", "--workload", "queue", "--time-limit", "1s", "--results", t.TempDir()}, &qout, &qerr)
	if !strings.Contains(qerr.String(), "its ack names the message") || !strings.Contains(qerr.String(), "ttl") {
		t.Errorf("--client go-redis --workload queue: %s", qerr.String())
	}
	// bench's kv driver is redline's own; a library benches the history workloads.
	var out, errb bytes.Buffer
	if code := run([]string{"bench", "--client", "go-redis", "--time-limit", "1s", "--results", t.TempDir()}, &out, &errb); code != exitBadArgs ||
		!strings.Contains(errb.String(), "--workload register, counter or set") {
		t.Errorf("bench --client go-redis: exit %d (%s)", code, errb.String())
	}
}

// --client list names every client with what it is.
func TestClientList(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"run", "--client", "list"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, name := range []string{"redline ", "go-redis-noretry ", "rueidis:cache ", "redis-py ", "node-redis ", "exec:CMD "} {
		if !strings.Contains(out.String(), name) {
			t.Errorf("--client list does not name %q:\n%s", name, out.String())
		}
	}
}

// The bundled adapters and go-redis drive a counter test under kill on
// the reference cluster: the client and its version are recorded, and the
// history is checked (whatever the verdict: an invalid one is the
// library's finding, not this test's failure).
func TestRunClientsInDocker(t *testing.T) {
	requireDocker(t)
	for _, client := range []string{"go-redis", "redis-py", "node-redis"} {
		t.Run(client, func(t *testing.T) {
			res := t.TempDir()
			var out, errb bytes.Buffer
			code := run([]string{"run", "--client", client, "--workload", "counter", "--nemesis", "kill", "--time-limit", "8s",
				"--nemesis-interval", "3s", "--node-timeout", "1s", "--results", res, "--seed", "25"}, &out, &errb)
			if code != exitValid && code != exitInvalid {
				t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), "counter") || !strings.Contains(out.String(), "verdict:") {
				t.Fatalf("output:\n%s", out.String())
			}
			dirs, _ := filepath.Glob(filepath.Join(res, "reference-counter-kill-"+client, "2*"))
			if len(dirs) != 1 {
				t.Fatalf("run directories %v", dirs)
			}
			b, err := os.ReadFile(filepath.Join(dirs[0], "config.json"))
			if err != nil {
				t.Fatal(err)
			}
			var cfg harness.Config
			if err := json.Unmarshal(b, &cfg); err != nil {
				t.Fatal(err)
			}
			if cfg.Client != client || cfg.ClientInfo == nil || cfg.ClientInfo.Version == "" || cfg.ClientInfo.Retries == "" {
				t.Fatalf("config.json client %q %+v", cfg.Client, cfg.ClientInfo)
			}
			h, err := history.ReadRun(dirs[0])
			if err != nil {
				t.Fatal(err)
			}
			adds := 0
			for _, op := range h.Ops {
				if op.F == "add" && op.Type == history.OK {
					adds++
				}
			}
			if adds == 0 {
				t.Fatalf("no acknowledged add in the history of %s", client)
			}
			t.Logf("%s: exit %d, %d acknowledged adds", client, code, adds)
		})
	}
}
