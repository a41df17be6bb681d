package main

import (
	"io"
	"slices"
	"strings"
	"testing"
)

// B gets A's flags and seed, with the ones --versus names replaced
// (repeatable ones too), and quoted values kept whole.
func TestVersusArgs(t *testing.T) {
	c := newBenchCmd(io.Discard, io.Discard)
	if err := c.ParseFlags([]string{"--rate", "2000", "--nodes", "6", "--server-config", "maxmemory 1gb", "--slo", "p99<=2ms", "--versus", "--nodes 8 --server-config 'io-threads 2'"}); err != nil {
		t.Fatal(err)
	}
	args, err := versusArgs(c, "--nodes 8 --server-config 'io-threads 2'")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--rate=2000", "--slo=p99<=2ms", "--nodes", "8", "--server-config", "io-threads 2"} {
		if !slices.Contains(args, want) {
			t.Errorf("B's args %q lack %q", args, want)
		}
	}
	for _, not := range []string{"--nodes=6", "--server-config=maxmemory 1gb"} {
		if slices.Contains(args, not) {
			t.Errorf("B's args %q keep A's %q", args, not)
		}
	}
	seeds := 0
	for _, a := range args {
		if strings.HasPrefix(a, "--seed=") && a != "--seed=0" {
			seeds++
		}
		if strings.HasPrefix(a, "--versus") {
			t.Errorf("B's args %q contain --versus", args)
		}
	}
	if seeds != 1 {
		t.Errorf("B's args %q: want A's seed once", args)
	}
	for _, bad := range []string{"", "--no-such-flag 1", "--versus x", "'unterminated"} {
		if _, err := versusArgs(newBenchCmd(io.Discard, io.Discard), bad); err == nil {
			t.Errorf("versusArgs(%q) accepted", bad)
		}
	}
}
