package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/redline-dev/redline/checker"
)

// The terminal prints one line per cause, with its count and at most
// three examples, however many anomalies share it; unserved shards of one
// window and cause are one line too.
func TestPrintAttributionGroups(t *testing.T) {
	var s checker.Summary
	for i := 0; i < 40; i++ {
		s.Attribution = append(s.Attribution, checker.Attribution{Checker: "set", Kind: "lost-write", Key: "s:k" + strconv.Itoa(i%3), Slot: 42, Verdict: checker.ServerLost, Why: "gone",
			Ack:    &checker.AttrOp{Index: int64(100 + i), F: "add", TimeS: 3 + float64(i)/10, Node: "n2 (10.0.0.3:6379)", Value: strings.Repeat("9", 200)},
			Faults: []string{"partition 2-6s on n2"}})
	}
	for i := 0; i < 7; i++ {
		v := checker.FaultOutage
		if i == 6 {
			v = checker.AttrUnknown
		}
		s.Attribution = append(s.Attribution, checker.Attribution{Checker: "rto", Kind: "unserved", Verdict: v, Why: "unserved " + strconv.Itoa(i),
			Unserved: &checker.Unserved{Shard: "n1 (10.0.0.1:6379)", Window: 0}})
	}
	var b bytes.Buffer
	printAttribution(&b, s, "")
	out := b.String()
	if lines := strings.Count(out, "\n  "); lines != 3 {
		t.Errorf("%d group lines, want 3 (the losses, the expected outages, the unknown one):\n%s", lines, out)
	}
	for _, want := range []string{"set lost-write ×40, acknowledged by n2, after the ack: partition 2-6s on n2: the server lost it; e.g. s:k0 (op 100 at 3s",
		"and 37 more", "rto unserved ×6, fault window 0: the fault did it; e.g. shard of n1 (10.0.0.1:6379)", "rto unserved ×1"} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, strings.Repeat("9", 30)) {
		t.Errorf("a whole value printed:\n%s", out)
	}
	if strings.Contains(out, "documented") {
		t.Errorf("a loss called documented without the history's evidence:\n%s", out)
	}
}
