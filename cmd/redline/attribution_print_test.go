package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/redline-dev/redline/checker"
)

// The terminal names the first unserved shard-windows in full, counts the
// rest by verdict, and still prints every anomaly's line.
func TestPrintAttributionUnserved(t *testing.T) {
	var s checker.Summary
	s.Attribution = append(s.Attribution, checker.Attribution{Checker: "set", Kind: "lost-write", Key: "s:k1", Slot: 42, Verdict: checker.ServerLost, Why: "gone"})
	for i := 0; i < 7; i++ {
		v := checker.FaultOutage
		if i == 6 {
			v = checker.AttrUnknown
		}
		s.Attribution = append(s.Attribution, checker.Attribution{Checker: "rto", Kind: "unserved", Verdict: v, Why: "unserved " + strconv.Itoa(i),
			Unserved: &checker.Unserved{Shard: "n1 (10.0.0.1:6379)"}})
	}
	var b bytes.Buffer
	printAttribution(&b, s)
	out := b.String()
	for _, want := range []string{"set lost-write key s:k1 (slot 42): the server lost it: gone",
		"unserved shard n1 (10.0.0.1:6379): the fault did it: unserved 0", "unserved 4",
		"... 2 more unserved shard-windows: 1 the fault did it, 1 unknown"} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "unserved 5") {
		t.Errorf("more than 5 unserved lines in full:\n%s", out)
	}
}
