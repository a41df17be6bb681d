package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin/localcluster"
	"github.com/redline-dev/redline/harness"
)

// TestRunWithACLUserKeepsTheSecret runs against a cluster that requires a
// password, as user alice whose password comes from $REDISCLI_AUTH: the
// run works end to end (with a migrate fault, so admin connections
// authenticate too), and the password appears in no file of the run.
func TestRunWithACLUserKeepsTheSecret(t *testing.T) {
	const adminPass, alicePass = "default-Pw-4711", "alice-Secret-0815"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	lc, err := localcluster.StartWith(ctx, t.TempDir(), 6, 1, time.Second, "", cluster.Credentials{Password: adminPass},
		func(int) []string { return []string{"--requirepass", adminPass, "--masterauth", adminPass} })
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Stop()
	for _, a := range lc.Addrs {
		c := redis.NewClient(&redis.Options{Addr: a, Password: adminPass})
		err := c.Do(ctx, "acl", "setuser", "alice", "on", ">"+alicePass, "~*", "&*", "+@all").Err()
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
	}

	// Without the password: a clear error, nothing stored.
	res := t.TempDir()
	var out, errb bytes.Buffer
	if code := run([]string{"run", "--addrs", lc.Addrs[0], "--user", "alice", "--time-limit", "1s", "--results", res}, &out, &errb); code != exitEnvironment {
		t.Fatalf("without a password: exit %d: %s", code, errb.String())
	}
	requireEmpty(t, res)

	t.Setenv(passwordEnv, alicePass)
	out.Reset()
	errb.Reset()
	code := run([]string{"run", "--addrs", lc.Addrs[0], "--user", "alice", "--yes", "--workload", "register",
		"--nemesis", "migrate", "--nemesis-interval", "1s", "--time-limit", "5s", "--concurrency", "3", "--results", res}, &out, &errb)
	if code != exitValid {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	latest, _ := filepath.EvalSymlinks(filepath.Join(res, "latest"))
	files := 0
	err = filepath.WalkDir(latest, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, secret := range []string{alicePass, adminPass} {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s contains a password", p)
			}
		}
		return nil
	})
	if err != nil || files < 5 {
		t.Fatalf("walked %d files: %v", files, err)
	}
	for _, s := range []string{out.String(), errb.String()} {
		if strings.Contains(s, alicePass) {
			t.Fatal("the password was printed")
		}
	}
	cfg, _ := os.ReadFile(filepath.Join(latest, "config.json"))
	if !bytes.Contains(cfg, []byte(`"password_from": "env REDISCLI_AUTH"`)) || !bytes.Contains(cfg, []byte(`"user": "alice"`)) {
		t.Fatalf("config.json does not say how redline authenticated:\n%s", cfg)
	}
}

func TestLoadCredentials(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("s3cret\n"), 0o600)
	t.Setenv(passwordEnv, "from-env")
	cfg := harness.Config{Target: "external", User: "bob", PasswordFrom: pw}
	c, err := loadCredentials(&cfg)
	if err != nil || c.User != "bob" || c.Password != "s3cret" || cfg.PasswordFrom != "file "+pw {
		t.Fatalf("file: %+v %v %q", c, err, cfg.PasswordFrom)
	}
	cfg = harness.Config{Target: "external"}
	if c, err := loadCredentials(&cfg); err != nil || c.Password != "from-env" || cfg.PasswordFrom != "env "+passwordEnv {
		t.Fatalf("env: %+v %v", c, err)
	}
	cfg = harness.Config{Target: "reference", User: "bob"}
	t.Setenv(passwordEnv, "")
	if c, err := loadCredentials(&cfg); err != nil || c.User != "bob" || len(c.Password) != 32 || cfg.PasswordFrom != "generated" {
		t.Fatalf("created cluster, no password: %+v %v %q", c, err, cfg.PasswordFrom)
	}
	for _, bad := range []harness.Config{
		{Target: "external", PasswordFrom: filepath.Join(dir, "missing")},
		{Target: "external", TLSCA: "ca.pem"},                                 // without --tls
		{Target: "external", TLS: true, TLSCert: "c.pem"},                     // cert without key
		{Target: "external", TLS: true, TLSCA: filepath.Join(dir, "missing")}, // unreadable CA
		{Target: "external", TLS: true, TLSCA: pw},                            // not PEM
		{Target: "reference", PasswordFrom: pw},                               // a password without --user
		{Target: "reference", TLS: true},                                      // TLS to a cluster redline creates
	} {
		if _, err := loadCredentials(&bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// A password in --server-config is refused before anything starts, with
// the way redline takes credentials, and never echoed; a replayed
// config.json holding one is refused the same way.
func TestServerConfigRefusesPasswords(t *testing.T) {
	for _, sc := range []string{"requirepass hunter2", "masterauth hunter2", "MASTERAUTH hunter2", "tls-key-file-pass hunter2",
		"user alice on >hunter2 ~* +@all", "user alice on #2ab96390c7dbe3439de74d0c9b0b1767 ~*"} {
		var out, errb bytes.Buffer
		code := run([]string{"run", "--dry-run", "--server-config", sc, "--results", t.TempDir()}, &out, &errb)
		if code != exitBadArgs || !strings.Contains(errb.String(), "--user and its password in a file (--password-file FILE)") ||
			strings.Contains(errb.String(), "hunter2") || strings.Contains(errb.String(), "2ab963") {
			t.Errorf("--server-config %q: exit %d: %s", sc, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"run", "--dry-run", "--server-config", "user alice on nopass ~* +@all", "--results", t.TempDir()}, &out, &errb); code != exitValid {
		t.Errorf("a user without a password: exit %d: %s", code, errb.String())
	}
}
