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
	// save has an effect since RDB persistence (server/persist.go).
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "lazyfree-lazy-eviction") {
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
		// Each at its Redis default: values are validated as Redis does
		// (TestConfigValidation).
		b.WriteString(d.name + " " + quote(redisDefaults[d.name]) + "\n")
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

// TestConfigValidation: values are checked and printed back as Redis 7.0
// does, and CONFIG SET of several directives is all or nothing.
func TestConfigValidation(t *testing.T) {
	c := Default()
	get := func(name string) string {
		kv := c.Get(name, func(p, n string) bool { return p == n })
		return kv[0][1]
	}
	for _, tt := range []struct{ name, value, err, got string }{
		{"maxmemory", "1gb", "", "1073741824"},
		{"maxmemory", "10K", "", "10000"},
		{"maxmemory", "-1", "argument must be a memory value", ""},
		{"maxmemory-clients", "10%", "", "10%"},
		{"maxmemory-clients", "101%", "percentage argument must be less or equal to 100", ""},
		{"activedefrag", "YES", "", "yes"},
		{"activedefrag", "maybe", "argument must be 'yes' or 'no'", ""},
		{"maxmemory-policy", "ALLKEYS-LFU", "", "allkeys-lfu"},
		{"maxmemory-policy", "lfu", "argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction", ""},
		{"hash-max-listpack-entries", "-1", "argument must be between 0 and 9223372036854775807 inclusive", ""},
		{"hash-max-ziplist-entries", "7", "", "7"},
		{"active-defrag-cycle-min", "100", "argument must be between 1 and 99 inclusive", ""},
		{"slowlog-log-slower-than", "x", "argument couldn't be parsed into an integer", ""},
		{"rdbchecksum", "no", "can't set immutable config", ""},
		{"dbfilename", "x.rdb", "can't set protected config", ""},
	} {
		_, err := c.SetMany([][2]string{{tt.name, tt.value}}, false)
		if tt.err == "" {
			if err != nil || get(tt.name) != tt.got {
				t.Errorf("%s %s: %v, CONFIG GET %q", tt.name, tt.value, err, get(tt.name))
			}
		} else if err == nil || !strings.HasSuffix(err.Error(), tt.err) {
			t.Errorf("%s %s: %v, want %q", tt.name, tt.value, err, tt.err)
		}
	}
	// All or nothing: the second fails, the first is restored.
	_, err := c.SetMany([][2]string{{"maxmemory", "5mb"}, {"activedefrag", "x"}}, false)
	if err == nil || get("maxmemory") != "10000" {
		t.Errorf("partial CONFIG SET: %v, maxmemory %s", err, get("maxmemory"))
	}
	if _, err := c.SetMany([][2]string{{"maxmemory", "1"}, {"maxmemory", "2"}}, false); err == nil || !strings.HasSuffix(err.Error(), "duplicate parameter") {
		t.Errorf("duplicate: %v", err)
	}
	if _, err := c.SetMany([][2]string{{"rdbchecksum", "no"}, {"nosuch", "1"}}, false); err == nil || !strings.HasSuffix(err.Error(), "can't set immutable config") {
		t.Errorf("the first error wins: %v", err)
	}
}
