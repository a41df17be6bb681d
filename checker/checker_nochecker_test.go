package checker

import (
	"context"
	"testing"
)

// A run whose configuration names no workload has nothing that judged its
// history: unknown, never valid.
func TestRunWithoutCheckersIsUnknown(t *testing.T) {
	s := Run(context.Background(), nil, nil, nil)
	if s.Valid != Unknown {
		t.Fatalf("no checker ran but the verdict is %v", s.Valid)
	}
	if _, ok := s.Checkers[NoCheckerName]; !ok {
		t.Fatalf("the summary does not say why: %+v", s.Checkers)
	}
}
