package server

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redline-dev/redline/server/config"
)

// TestConfigRewriteKeepsUsers: CONFIG REWRITE writes the users as "user"
// lines (no aclfile), and a server started from the rewritten file has
// them, as Redis's rewriteConfigUserOption and ACLLoadConfiguredUsers.
func TestConfigRewriteKeepsUsers(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "redis.conf")
	os.WriteFile(file, []byte("bind 127.0.0.1\nuser old on nopass +ping\n"), 0o644)
	start := func() *rawClient {
		cfg, err := config.ParseArgs([]string{file, "--port", "0", "--dir", dir})
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(cfg, Options{Log: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return dialRaw(t, s.Addr().String())
	}
	c := start()
	for _, cmd := range [][]string{{"ACL", "DELUSER", "old"}, {"ACL", "SETUSER", "bob", "on", ">pw", "~b:*", "+get"}, {"CONFIG", "REWRITE"}} {
		if r := string(c.do(t, rawCmd(cmd...))); strings.HasPrefix(r, "-") {
			t.Fatalf("%v: %s", cmd, r)
		}
	}
	b, _ := os.ReadFile(file)
	if strings.Contains(string(b), "user old") || !strings.Contains(string(b), "user bob on #") {
		t.Fatalf("rewritten file:\n%s", b)
	}
	c = start()
	if r := string(c.do(t, rawCmd("AUTH", "bob", "pw"))); r != "+OK\r\n" {
		t.Fatalf("AUTH bob after the restart: %q", r)
	}
	if r := string(c.do(t, rawCmd("SET", "b:1", "v"))); !strings.HasPrefix(r, "-NOPERM") {
		t.Fatalf("bob's rules after the restart: SET answered %q", r)
	}
}
