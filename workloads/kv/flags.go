package kv

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// Flags are kv's command-line flags (`redline bench`) before parsing: kv
// owns them, their words and their checks, so the command only registers
// them and asks for the config.
type Flags struct {
	ratio, valueSize, pattern, preset string
	pipeline, hashTags                int
	populate                          bool
}

// defaultKeys is kv's key space when --keys is not given.
const defaultKeys = 10000

// Register adds kv's flags to fs.
func (f *Flags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.ratio, "ratio", "1:10", "kv: SET:GET ratio, as memtier's (1:10 = one SET per ten GETs)")
	fs.StringVar(&f.valueSize, "value-size", "100", "kv: value bytes of a SET, fixed (100) or a range (32-1024)")
	fs.StringVar(&f.pattern, "key-pattern", "uniform", "kv: "+strings.Join(Patterns, ", "))
	fs.IntVar(&f.pipeline, "pipeline", 1, "kv: ops a worker sends before reading their replies")
	fs.IntVar(&f.hashTags, "hash-tags", 0, "kv: put the keys in N hash tags ({0}..{N-1}), i.e. N slots (0 = no tags)")
	fs.BoolVar(&f.populate, "populate", true, "kv: SET every key once before traffic so GETs hit")
	fs.StringVar(&f.preset, "preset", "", "kv: YCSB core workload ycsb-a (50/50), ycsb-b (95/5 reads), ycsb-c (reads); zipfian; overrides --ratio and --key-pattern")
}

// Config reads the flags into a validated config over keys keys (0: kv's
// default); an error names the flag at fault.
func (f *Flags) Config(keys int) (*Config, error) {
	c := &Config{Keys: keys, Pattern: f.pattern, Pipeline: f.pipeline, HashTags: f.hashTags, Populate: f.populate}
	var err error
	if c.SetRatio, c.GetRatio, err = ParseRatio(f.ratio); err != nil {
		return nil, fmt.Errorf("--ratio: %v", err)
	}
	if c.ValueMin, c.ValueMax, err = ParseValueSize(f.valueSize); err != nil {
		return nil, fmt.Errorf("--value-size: %v", err)
	}
	if f.preset != "" {
		p, ok := Presets[f.preset]
		if !ok {
			return nil, fmt.Errorf("--preset %q: choose ycsb-a, ycsb-b or ycsb-c", f.preset)
		}
		p(c)
	}
	if c.Keys == 0 {
		c.Keys = defaultKeys
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}
