// Package kv is the kv load workload of `redline bench`: its flags, its config
// (memtier's knobs, YCSB presets) and its generator of GETs and SETs. It is
// registered in the one workload registry (workloads, kind Load) and driven
// by the load driver (harness/bench); a leaf package, so that the load
// driver needs nothing of the history workloads or their checkers.
package kv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Config is the load workload of `redline bench`: plain GETs and SETs
// with memtier's knobs (ratio, value size, key space, key pattern,
// pipeline depth) and YCSB-style presets. It is not a correctness
// workload: nothing is checked, every op is measured.
type Config struct {
	// Prefix starts every key (the run's prefix); keys are Prefix + "kv:" +
	// an optional hash tag + the key's number.
	Prefix string `json:"prefix"`
	// Keys is the size of the key space.
	Keys int `json:"keys"`
	// SetRatio:GetRatio, as memtier's --ratio (1:10 = one SET per ten GETs).
	SetRatio int `json:"set_ratio"`
	GetRatio int `json:"get_ratio"`
	// ValueMin..ValueMax bytes (equal for a fixed size).
	ValueMin int `json:"value_min"`
	ValueMax int `json:"value_max"`
	// Pattern is uniform, zipfian, sequential or hotspot.
	Pattern string `json:"pattern"`
	// HashTags > 0 puts key i in tag {i mod HashTags}, so the key space
	// lands in that many slots (few tags: hot slots, hot shards).
	HashTags int `json:"hash_tags,omitempty"`
	// Pipeline is how many ops a worker sends before it reads replies.
	Pipeline int `json:"pipeline"`
	// Populate writes every key once before traffic, so GETs hit.
	Populate bool `json:"populate"`
}

// Patterns are the key patterns Config.Pattern accepts.
var Patterns = []string{"uniform", "zipfian", "sequential", "hotspot"}

// Presets are YCSB's core workloads that a GET/SET store can express:
// A update heavy, B read mostly, C read only; all zipfian as in YCSB.
var Presets = map[string]func(*Config){
	"ycsb-a": func(c *Config) { c.SetRatio, c.GetRatio, c.Pattern = 1, 1, "zipfian" },
	"ycsb-b": func(c *Config) { c.SetRatio, c.GetRatio, c.Pattern = 1, 19, "zipfian" },
	"ycsb-c": func(c *Config) { c.SetRatio, c.GetRatio, c.Pattern = 0, 1, "zipfian" },
}

// ParseRatio reads memtier's SET:GET ratio, e.g. "1:10".
func ParseRatio(s string) (set, get int, err error) {
	a, b, ok := strings.Cut(s, ":")
	if ok {
		set, err = strconv.Atoi(strings.TrimSpace(a))
		if err == nil {
			get, err = strconv.Atoi(strings.TrimSpace(b))
		}
	}
	if !ok || err != nil || set < 0 || get < 0 || set+get == 0 {
		return 0, 0, fmt.Errorf("ratio %q: expected SET:GET with non-negative integers, not both 0 (e.g. 1:10)", s)
	}
	return set, get, nil
}

// ParseValueSize reads a fixed size ("100") or a range ("32-1024").
func ParseValueSize(s string) (lo, hi int, err error) {
	a, b, isRange := strings.Cut(s, "-")
	lo, err = strconv.Atoi(strings.TrimSpace(a))
	hi = lo
	if err == nil && isRange {
		hi, err = strconv.Atoi(strings.TrimSpace(b))
	}
	if err != nil || lo < 1 || hi < lo || hi > 64<<20 {
		return 0, 0, fmt.Errorf("value size %q: expected N or MIN-MAX bytes, 1 <= MIN <= MAX <= 64 MiB", s)
	}
	return lo, hi, nil
}

// Validate checks a config and fills defaults.
func (c *Config) Validate() error {
	if c.Keys <= 0 {
		return fmt.Errorf("kv: --keys must be at least 1")
	}
	if c.SetRatio < 0 || c.GetRatio < 0 || c.SetRatio+c.GetRatio == 0 {
		return fmt.Errorf("kv: the ratio needs at least one SET or GET")
	}
	if c.ValueMin < 1 || c.ValueMax < c.ValueMin {
		return fmt.Errorf("kv: value size %d-%d is not a range of at least 1 byte", c.ValueMin, c.ValueMax)
	}
	if c.Pipeline < 1 {
		return fmt.Errorf("kv: --pipeline must be at least 1")
	}
	if c.HashTags < 0 {
		return fmt.Errorf("kv: --hash-tags must not be negative")
	}
	for _, p := range Patterns {
		if c.Pattern == p {
			return nil
		}
	}
	return fmt.Errorf("kv: unknown key pattern %q: choose %s", c.Pattern, strings.Join(Patterns, ", "))
}

// AppendKey appends the name of key i to dst (no allocation).
func (c *Config) AppendKey(dst []byte, i int) []byte {
	dst = append(dst, c.Prefix...)
	dst = append(dst, "kv:"...)
	if c.HashTags > 0 {
		dst = append(dst, '{')
		dst = strconv.AppendInt(dst, int64(i%c.HashTags), 10)
		dst = append(dst, '}', ':')
	}
	return strconv.AppendInt(dst, int64(i), 10)
}

// Op is one generated op: a GET or a SET of Size bytes on key Key.
type Op struct {
	Set  bool
	Key  int
	Size int
}

// Gen yields the ops of one worker. It allocates nothing per op.
type Gen struct {
	c       *Config
	rng     *rand.Rand
	zipf    *rand.Zipf
	next    int // sequential: the worker's next key
	stride  int
	ratioSu int    // SetRatio + GetRatio
	mult    uint64 // zipfian: scatters ranks over the key space
}

// hotspot: as YCSB's hotspot distribution, hotOpFraction of the ops go to
// the first hotKeyFraction of the key space.
const (
	hotKeyFraction = 0.2
	hotOpFraction  = 0.8
)

// zipfS is the Zipf exponent; math/rand's Zipf needs s > 1, and 1.01 is
// close to YCSB's 0.99 constant: a few keys take most of the traffic.
const zipfS = 1.01

// NewGen returns worker's op stream; the same seed and worker give the
// same stream. Sequential patterns interleave workers so that together
// they walk the key space once per lap.
func (c *Config) NewGen(worker, workers int, seed int64) *Gen {
	g := &Gen{c: c, rng: seeded(seed, worker), next: worker % max(1, c.Keys), stride: max(1, workers), ratioSu: c.SetRatio + c.GetRatio}
	if c.Pattern == "zipfian" && c.Keys > 1 {
		g.zipf = rand.NewZipf(g.rng, zipfS, 1, uint64(c.Keys-1))
		g.mult = coprimeMultiplier(c.Keys)
	}
	return g
}

// Next returns the next op.
func (g *Gen) Next() Op {
	c := g.c
	op := Op{Set: g.rng.IntN(g.ratioSu) < c.SetRatio, Key: g.key()}
	if op.Set {
		op.Size = c.ValueMin
		if c.ValueMax > c.ValueMin {
			op.Size += g.rng.IntN(c.ValueMax - c.ValueMin + 1)
		}
	}
	return op
}

func (g *Gen) key() int {
	c := g.c
	switch c.Pattern {
	case "zipfian":
		if g.zipf == nil {
			return 0
		}
		// Scatter ranks over the key space so the hot keys do not all
		// share a shard because their numbers are close.
		return int(g.zipf.Uint64() * g.mult % uint64(c.Keys))
	case "sequential":
		k := g.next
		g.next = (g.next + g.stride) % c.Keys
		return k
	case "hotspot":
		hot := max(1, int(math.Ceil(float64(c.Keys)*hotKeyFraction)))
		if g.rng.Float64() < hotOpFraction || hot == c.Keys {
			return g.rng.IntN(hot)
		}
		return hot + g.rng.IntN(c.Keys-hot)
	}
	return g.rng.IntN(c.Keys)
}

// coprimeMultiplier returns a multiplier coprime with n: r -> r*m mod n
// then permutes [0, n), spreading neighbouring ranks far apart.
func coprimeMultiplier(n int) uint64 {
	m := uint64(2654435761 % n)
	for m == 0 || gcd(m, uint64(n)) != 1 {
		m++
	}
	return m
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// seeded gives a worker's random source, seeded as the history workloads'
// generators are: same seed and worker, same stream.
func seeded(seed int64, worker int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), uint64(worker)*0x9E3779B97F4A7C15+1))
}
