package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunAsACLUserOnReference runs a short register test on a reference
// cluster redline creates, as ACL user "runner" with the default user off
// (--server-config 'user default off'): every node has the run's user from
// its start, clients, admin connections and replicas (masteruser) all
// authenticate as it, and its password is in no file of the run.
func TestRunAsACLUserOnReference(t *testing.T) {
	requireDocker(t)
	if os.Getenv("REDLINE_BINARY") == "" {
		t.Fatal("REDLINE_BINARY is not set: run `make build` and set it to bin/redline (make test does)")
	}
	const secret = "runner-Secret-4242"
	t.Setenv(passwordEnv, secret)
	res := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"run", "--workload", "register", "--user", "runner", "--server-config", "user default off",
		"--time-limit", "6s", "--node-timeout", "1s", "--concurrency", "4", "--seed", "5", "--results", res}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "verdict: VALID") {
		t.Fatalf("output:\n%s", out.String())
	}
	latest, _ := filepath.EvalSymlinks(filepath.Join(res, "latest"))
	files, synced := 0, 0
	err := filepath.WalkDir(latest, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s contains the password", p)
		}
		// Replicas got their primaries' data though the default user is off.
		if bytes.Contains(b, []byte("MASTER <-> REPLICA sync: Finished with success")) {
			synced++
		}
		if bytes.Contains(b, []byte("Unable to AUTH to MASTER")) {
			t.Errorf("%s: a replica failed to authenticate", p)
		}
		return err
	})
	if synced < 3 {
		t.Errorf("%d replicas logged a finished sync, want 3", synced)
	}
	if err != nil || files < 5 {
		t.Fatalf("walked %d files: %v", files, err)
	}
	cfg, _ := os.ReadFile(filepath.Join(latest, "config.json"))
	if !bytes.Contains(cfg, []byte(`"user": "runner"`)) {
		t.Fatalf("config.json does not name the run's user:\n%s", cfg)
	}
}
