package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRewrite: CONFIG REWRITE keeps comments and unknown lines, writes the
// runtime values over the file's lines, appends changed directives, and a
// config parsed from the result has the runtime values.
func TestRewrite(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "redis.conf")
	if err := os.WriteFile(file, []byte("# mine\nport 7001\nmaxmemory-policy noeviction\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := ParseArgs([]string{file})
	if err != nil {
		t.Fatal(err)
	}
	if c.File != file {
		t.Fatalf("File = %q, want %q", c.File, file)
	}
	for name, v := range map[string]string{"maxmemory-policy": "allkeys-lru", "cluster-node-timeout": "3000", "appendfsync": "always"} {
		if err := c.Set(name, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Rewrite(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(file)
	text := string(b)
	if !strings.HasPrefix(text, "# mine\nport 7001\nmaxmemory-policy allkeys-lru\n") || !strings.Contains(text, "cluster-node-timeout 3000") {
		t.Fatalf("rewritten file:\n%s", text)
	}
	again, err := ParseArgs([]string{file})
	if err != nil {
		t.Fatalf("rewritten file does not parse: %v\n%s", err, text)
	}
	if again.Port != 7001 || again.Unsupported["maxmemory-policy"] != "allkeys-lru" || again.ClusterNodeTimeout != 3000 || again.AppendFsync != "always" {
		t.Fatalf("reparsed: port %d policy %q timeout %d fsync %q", again.Port, again.Unsupported["maxmemory-policy"], again.ClusterNodeTimeout, again.AppendFsync)
	}
	if err := Default().Rewrite(); err == nil || !strings.Contains(err.Error(), "without a config file") {
		t.Fatalf("Rewrite without a file: %v", err)
	}
}
