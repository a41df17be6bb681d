package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "redis.conf")
	conf := "# comment\nport 7001\nappendonly yes\nsave 900 1 300 10\nslaveof 127.0.0.1 6000\nlazyfree-lazy-eviction no\ncluster-enabled yes\ncluster-node-timeout 2000\n"
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := ParseArgs([]string{path, "--port", "7000", "--appendfsync", "always", "--save", "", "--bind", "127.0.0.1", "::1"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Port != 7000 || !c.AppendOnly || c.AppendFsync != "always" || c.Save != "" || c.ReplicaOf != "127.0.0.1 6000" ||
		!c.ClusterEnabled || c.ClusterNodeTimeout != 2000 || strings.Join(c.Bind, ",") != "127.0.0.1,::1" {
		t.Fatalf("config: %+v", c)
	}
	if len(c.Warnings) != 2 || !strings.Contains(c.Warnings[0], "'save'") || !strings.Contains(c.Warnings[1], "lazyfree-lazy-eviction") {
		t.Fatalf("warnings: %q", c.Warnings)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct{ text, want string }{
		{"port 1\nfoo bar", "at line 2\n>>> 'foo bar'\nBad directive or wrong number of arguments"},
		{"port 1 2", "wrong number of arguments"},
		{"port x", "argument couldn't be parsed into an integer"},
		{"appendonly maybe", "argument must be 'yes' or 'no'"},
		{"appendfsync sometimes", "argument(s) must be one of the following: everysec, always, no"},
		{"dir \"abc", "Unbalanced quotes in configuration line"},
	}
	for _, tt := range tests {
		err := Default().Load(tt.text)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want %q", tt.text, err, tt.want)
		}
	}
}

// TestStockRedisConf loads the redis.conf Debian ships, if present, and the
// full list of directives Redis 7.0 knows.
func TestStockRedisConf(t *testing.T) {
	var b strings.Builder
	for _, d := range redisDirectives {
		if d.multi {
			continue
		}
		if _, ok := Default().fields()[d.name]; ok {
			continue
		}
		b.WriteString(d.name + " somevalue\n")
	}
	c := Default()
	if err := c.Load(b.String()); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile("/etc/redis/redis.conf"); err == nil {
		c := Default()
		if err := c.Load(string(data)); err != nil {
			t.Fatalf("stock redis.conf: %v", err)
		}
	}
}

func TestConfigSetGet(t *testing.T) {
	c := Default()
	if err := c.Set("appendfsync", "always"); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("port", "1"); err == nil {
		t.Fatal("port is immutable")
	}
	got := c.Get("append*", func(p, n string) bool { return strings.HasPrefix(n, strings.TrimSuffix(p, "*")) })
	found := false
	for _, kv := range got {
		if kv[0] == "appendfsync" && kv[1] == "always" {
			found = true
		}
	}
	if !found {
		t.Fatalf("CONFIG GET append*: %v", got)
	}
}
