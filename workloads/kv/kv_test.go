package kv

import (
	"strings"
	"testing"

	"github.com/redline-dev/redline/history"
)

func kvConfig(pattern string) *Config {
	c := &Config{Prefix: "p:", Keys: 1000, SetRatio: 1, GetRatio: 3, ValueMin: 10, ValueMax: 20, Pattern: pattern, Pipeline: 1}
	if err := c.Validate(); err != nil {
		panic(err)
	}
	return c
}

func TestKVRatioAndSizes(t *testing.T) {
	g := kvConfig("uniform").NewGen(0, 1, 1)
	sets := 0
	for i := 0; i < 40000; i++ {
		op := g.Next()
		if op.Key < 0 || op.Key >= 1000 {
			t.Fatalf("key %d outside the key space", op.Key)
		}
		if op.Set {
			sets++
			if op.Size < 10 || op.Size > 20 {
				t.Fatalf("SET size %d outside 10-20", op.Size)
			}
		}
	}
	if sets < 9000 || sets > 11000 {
		t.Errorf("%d SETs of 40000 at 1:3, want about 10000", sets)
	}
}

// Each pattern has its signature: zipfian and hotspot concentrate, uniform
// spreads, sequential walks the key space once per lap across workers.
func TestKVKeyPatterns(t *testing.T) {
	top := func(pattern string) float64 {
		g := kvConfig(pattern).NewGen(0, 1, 7)
		counts := make([]int, 1000)
		for i := 0; i < 100000; i++ {
			counts[g.Next().Key]++
		}
		// share of the busiest 10% of keys
		best := 0
		for k := 0; k < 100; k++ {
			m := 0
			for i, c := range counts {
				if c > counts[m] {
					m = i
				}
			}
			best += counts[m]
			counts[m] = -1
		}
		return float64(best) / 100000
	}
	if u := top("uniform"); u > 0.15 {
		t.Errorf("uniform: top 10%% of keys take %.2f of ops", u)
	}
	if z := top("zipfian"); z < 0.5 {
		t.Errorf("zipfian: top 10%% of keys take only %.2f of ops", z)
	}
	if h := top("hotspot"); h < 0.35 {
		t.Errorf("hotspot: top 10%% of keys take only %.2f of ops (80%% of ops on 20%% of keys)", h)
	}
	c := kvConfig("sequential")
	seen := map[int]bool{}
	gens := []*Gen{c.NewGen(0, 2, 1), c.NewGen(1, 2, 1)}
	for i := 0; i < 500; i++ {
		for _, g := range gens {
			seen[g.Next().Key] = true
		}
	}
	if len(seen) != 1000 {
		t.Errorf("sequential: two workers covered %d keys in one lap, want 1000", len(seen))
	}
}

func TestKVKeysAndTags(t *testing.T) {
	c := kvConfig("uniform")
	if k := string(c.AppendKey(nil, 42)); k != "p:kv:42" {
		t.Errorf("key %q", k)
	}
	c.HashTags = 4
	slots := map[int]bool{}
	for i := 0; i < 100; i++ {
		k := string(c.AppendKey(nil, i))
		if !strings.HasPrefix(k, "p:kv:{") {
			t.Fatalf("tagged key %q", k)
		}
		slots[history.Keyslot(k)] = true
	}
	if len(slots) != 4 {
		t.Errorf("4 hash tags gave %d slots", len(slots))
	}
}

func TestKVParse(t *testing.T) {
	if s, g, err := ParseRatio("1:10"); err != nil || s != 1 || g != 10 {
		t.Errorf("1:10 -> %d %d %v", s, g, err)
	}
	for _, bad := range []string{"", "1", "a:b", "0:0", "-1:2"} {
		if _, _, err := ParseRatio(bad); err == nil {
			t.Errorf("ratio %q accepted", bad)
		}
	}
	if lo, hi, err := ParseValueSize("32-1024"); err != nil || lo != 32 || hi != 1024 {
		t.Errorf("32-1024 -> %d %d %v", lo, hi, err)
	}
	for _, bad := range []string{"0", "5-4", "x", "1-x"} {
		if _, _, err := ParseValueSize(bad); err == nil {
			t.Errorf("value size %q accepted", bad)
		}
	}
	c := kvConfig("uniform")
	Presets["ycsb-c"](c)
	if c.SetRatio != 0 || c.Pattern != "zipfian" {
		t.Errorf("ycsb-c: %+v", c)
	}
}

func BenchmarkKVGenNext(b *testing.B) {
	for _, p := range Patterns {
		b.Run(p, func(b *testing.B) {
			c := kvConfig(p)
			g := c.NewGen(0, 1, 1)
			var key []byte
			b.ReportAllocs()
			for b.Loop() {
				op := g.Next()
				key = c.AppendKey(key[:0], op.Key)
			}
		})
	}
}
