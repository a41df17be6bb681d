//go:build plantedbugs

package planted

import (
	"slices"
	"testing"
)

func TestArgsSelect(t *testing.T) {
	defer func() { active = [NumBugs]bool{} }()
	if len(names) != int(NumBugs) {
		t.Fatalf("%d names for %d defects", len(names), NumBugs)
	}
	rest, err := Args([]string{"--port", "7000", "--planted-bug", "wait-early-ack", "--appendonly", "no"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rest, []string{"--port", "7000", "--appendonly", "no"}) {
		t.Fatalf("rest %q", rest)
	}
	if !On(WaitEarlyAck) || On(VoteTwice) {
		t.Fatalf("active %v", Active())
	}
	if _, err := Args([]string{"--planted-bug", "no-such-bug"}); err == nil {
		t.Fatal("an unknown name was accepted")
	}
	if _, err := Args([]string{"--planted-bug", "none"}); err != nil {
		t.Fatal(err)
	}
}
