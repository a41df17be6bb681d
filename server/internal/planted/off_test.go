//go:build !plantedbugs

package planted

import (
	"bytes"
	"os"
	"testing"
)

// TestShippedBuildPlantsNothing: without -tags plantedbugs no defect can be
// on, and the shipped binary (REDLINE_BINARY, which make test builds) holds
// none of the tagged build's names.
func TestShippedBuildPlantsNothing(t *testing.T) {
	if Enabled {
		t.Fatal("the default build says it can plant defects")
	}
	for b := Bug(0); b < NumBugs; b++ {
		if On(b) {
			t.Fatalf("defect %d is on in the default build", b)
		}
	}
	bin := os.Getenv("REDLINE_BINARY")
	if bin == "" {
		t.Skip("REDLINE_BINARY not set: the binary itself is not checked (make test sets it)")
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatalf("reading REDLINE_BINARY: %v", err)
	}
	for _, s := range []string{"REDLINE_PLANTED_BUG", "unknown planted bug", "repl-skip-incrby", "wait-early-ack", "exec-ignores-watch"} {
		if bytes.Contains(data, []byte(s)) {
			t.Errorf("%s contains %q: the planted-bug registry is in the shipped binary", bin, s)
		}
	}
}
