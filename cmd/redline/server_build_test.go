package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/docker"
	"github.com/redline-dev/redline/harness"
)

// copyDebianServer puts Debian's redis-server at another path, so the test
// goes through --server-binary and not the default image flow.
func copyDebianServer(t *testing.T) string {
	t.Helper()
	src, err := os.Open(docker.RedisServerPath)
	if err != nil {
		t.Fatalf("these tests need Debian's redis-server (scripts/install-deps): %v", err)
	}
	defer src.Close()
	path := filepath.Join(t.TempDir(), "my-redis-server")
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// A build of the user's runs as target redis; config.json and the test
// name say which build it was, and --server-config reaches every node.
func TestRunServerBinaryInDocker(t *testing.T) {
	requireDocker(t)
	bin := copyDebianServer(t)
	res := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"run", "--server-binary", bin, "--server-config", "min-replicas-to-write 1",
		"--workload", "register", "--time-limit", "3s", "--node-timeout", "1s", "--results", res, "--seed", "5"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(res, "redis-7.*-*-register-none", "*", "config.json"))
	if len(dirs) != 1 {
		t.Fatalf("want one run under a name with the build's version and digest, got %v", dirs)
	}
	b, err := os.ReadFile(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	var cfg harness.Config
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.ServerBinary != bin || !strings.HasPrefix(cfg.ServerVersion, "Redis server v=7.") || len(cfg.ServerSHA256) != 64 {
		t.Fatalf("config.json does not name the build: %+v", cfg)
	}
	if !strings.Contains(filepath.Base(filepath.Dir(filepath.Dir(dirs[0]))), cfg.ServerSHA256[:8]) {
		t.Fatalf("test name lacks the digest: %s", dirs[0])
	}
	if len(cfg.ServerConfig) != 1 || cfg.Versions["server_config"] != "min-replicas-to-write 1" {
		t.Fatalf("server config not recorded: %v %v", cfg.ServerConfig, cfg.Versions)
	}
	if !strings.Contains(out.String(), "verdict: VALID") {
		t.Fatalf("output:\n%s", out.String())
	}

	// cluster up with the same build: every node runs it with the setting.
	out.Reset()
	errb.Reset()
	code = run([]string{"cluster", "up", "--server-binary", bin, "--server-config", "maxmemory 100mb", "--node-timeout", "1s"}, &out, &errb)
	if code != 0 {
		t.Fatalf("cluster up: exit %d: %s", code, errb.String())
	}
	name := regexp.MustCompile(`cluster (cluster-redis-[0-9a-f]+) is up`).FindStringSubmatch(errb.String())
	if name == nil {
		t.Fatalf("no cluster name in: %s", errb.String())
	}
	t.Cleanup(func() { docker.CleanupCluster(context.Background(), name[1]) })
	addrs := strings.Split(strings.TrimSpace(out.String()), ",")
	if len(addrs) != 6 {
		t.Fatalf("addresses: %q", out.String())
	}
	for _, a := range addrs {
		cl := cluster.AdminClient(a)
		cfgs, err := cl.ConfigGet(context.Background(), "maxmemory").Result()
		info, ierr := cl.Info(context.Background(), "server").Result()
		cl.Close()
		if err != nil || cfgs["maxmemory"] != "104857600" {
			t.Fatalf("%s: maxmemory %v (%v)", a, cfgs, err)
		}
		if ierr != nil || !strings.Contains(info, "redis_version:7.") {
			t.Fatalf("%s: INFO server: %v", a, ierr)
		}
	}
}

// A setting the server rejects fails before traffic, with the server's own
// words, as a bad argument, and leaves nothing behind.
func TestRejectedServerConfigFailsBeforeTraffic(t *testing.T) {
	requireDocker(t)
	res := t.TempDir()
	var out, errb bytes.Buffer
	// An unusual workload pair keeps the test name (and so the leftover
	// check) apart from other runs on the same engine.
	code := run([]string{"run", "--target", "reference", "--server-config", "no-such-directive 1",
		"--workload", "register,counter", "--time-limit", "2s", "--results", res}, &out, &errb)
	if code != exitBadArgs || !strings.Contains(errb.String(), "Bad directive") || strings.Contains(errb.String(), "traffic:") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	requireEmpty(t, res)
	if l := leftovers(t, "reference-register+counter-none-"); l != "" {
		t.Fatalf("left behind: %s", l)
	}
}

// Wrong builds and impossible faults are refused before anything starts.
func TestServerBinaryRefusedBeforeStart(t *testing.T) {
	static := os.Getenv(docker.BinaryEnv) // a static redline binary: ELF, but not a Redis server
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--server-binary", "/bin/sh"}, "is not a Redis server"},
		{[]string{"--server-binary", "/nonexistent/redis-server"}, "no such file"},
		{[]string{"--server-binary", docker.RedisServerPath, "--target", "reference"}, "tested as target redis"},
		{[]string{"--server-binary", docker.RedisServerPath, "--image", "x"}, "exclude each other"},
		{[]string{"--target", "redis", "--image", "x", "--nemesis", "clock"}, "no clock shim"},
		{[]string{"--server-config", "port 7000"}, "redline sets port itself"},
		{[]string{"--server-config", "appendonly"}, "expected 'directive value'"},
	}
	if static != "" {
		cases = append(cases, struct {
			args []string
			want string
		}{[]string{"--server-binary", static}, "not a Redis server"})
	}
	for _, c := range cases {
		res := t.TempDir()
		var out, errb bytes.Buffer
		code := run(append([]string{"run", "--time-limit", "1s", "--results", res}, c.args...), &out, &errb)
		if code != exitBadArgs || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, want %d and %q: %s", c.args, code, exitBadArgs, c.want, errb.String())
		}
		requireEmpty(t, res)
	}
}
