package suite

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// On a terminal the suite draws one bar with the run count, verdicts so
// far and the run in progress; elsewhere it prints a plain line per run.
func TestProgressBarAndPlainLines(t *testing.T) {
	s := suiteOf(t, "set", "bad")
	for _, tty := range []bool{true, false} {
		dir := t.TempDir()
		var out bytes.Buffer
		var calls []string
		if _, err := Execute(context.Background(), s, Options{Dir: dir, Out: &out, TTY: tty, Run: fakeRun(dir, &calls)}); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		if tty && (!strings.Contains(got, "suite t run 2/2") || !strings.Contains(got, "valid 1 invalid 1")) {
			t.Fatalf("bar:\n%s", got)
		}
		if !tty && !strings.Contains(got, "suite t: run 2/2 workload=bad: invalid in ") {
			t.Fatalf("plain lines:\n%s", got)
		}
	}
}
