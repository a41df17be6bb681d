package kv

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// kv reads its own flags: the defaults make a valid config over kv's own
// key space, a preset overrides ratio and pattern, and each bad value is
// refused naming the flag at fault (the command prints it as given).
func TestFlagsConfig(t *testing.T) {
	parse := func(args ...string) (*Config, error) {
		var f Flags
		fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
		f.Register(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return f.Config(0)
	}
	c, err := parse()
	if err != nil || c.Keys != defaultKeys || c.SetRatio != 1 || c.GetRatio != 10 || c.ValueMin != 100 || c.Pattern != "uniform" || !c.Populate {
		t.Fatalf("defaults = %+v, %v", c, err)
	}
	if c, err = parse("--preset", "ycsb-a", "--ratio", "3:1"); err != nil || c.SetRatio != 1 || c.GetRatio != 1 || c.Pattern != "zipfian" {
		t.Fatalf("ycsb-a = %+v, %v", c, err)
	}
	for args, want := range map[string]string{
		"--ratio x":           `--ratio: ratio "x": expected SET:GET`,
		"--value-size 10-5":   `--value-size: value size "10-5"`,
		"--preset ycsb-z":     `--preset "ycsb-z": choose ycsb-a, ycsb-b or ycsb-c`,
		"--key-pattern gauss": `kv: unknown key pattern "gauss"`,
		"--pipeline 0":        "kv: --pipeline must be at least 1",
		"--hash-tags -1":      "kv: --hash-tags must not be negative",
	} {
		if _, err := parse(strings.Fields(args)...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
}
