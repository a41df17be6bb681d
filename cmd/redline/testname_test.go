package main

import (
	"strings"
	"testing"

	"github.com/redline-dev/redline/harness"
)

// A long list of fault modes gives a name that still fits a directory
// name, stays distinct per list, and keeps its readable head.
func TestTestNameBounded(t *testing.T) {
	var modes []string
	for _, m := range []string{"atomic", "atomic-kill-src", "atomic-kill-dst", "atomic-pause-src", "atomic-pause-dst",
		"atomic-partition", "atomic-failover-dst", "atomic-cancel", "atomic-cancel-src", "atomic-concurrent-classic"} {
		modes = append(modes, "migrate:"+m)
	}
	cfg := &harness.Config{Target: "reference", Workloads: []string{"counter"}, Nemesis: modes}
	a := testName(cfg)
	cfg.Nemesis = modes[:9]
	b := testName(cfg)
	if len(a) > maxTestName || len(b) > maxTestName || a == b || !strings.HasPrefix(a, "reference-counter-migrate-atomic+") {
		t.Fatalf("names %q (%d) and %q (%d)", a, len(a), b, len(b))
	}
	cfg.Nemesis = []string{"partition"}
	if got := testName(cfg); got != "reference-counter-partition" {
		t.Fatalf("short name changed: %q", got)
	}
}
