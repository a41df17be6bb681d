package harness

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redline-dev/redline/history"
)

// scripted is a nemesis following a stored schedule that finishes when
// the test says so.
type scripted struct{ done chan struct{} }

func (s scripted) Run(ctx context.Context, _ history.Recorder) error { <-ctx.Done(); return nil }
func (s scripted) Heal(context.Context, history.Recorder) error      { return nil }
func (s scripted) Current() string                                   { return "" }
func (s scripted) ScriptDone() <-chan struct{}                       { return s.done }

// A replay whose stored schedule has steps left at the time limit keeps
// its traffic going until they have run (CI saw a replay end before its
// third recorded step: the second, kill:all, took longer to undo), and
// says so; one that never finishes is cut at twice the time limit.
func TestTrafficOutlastsTheTimeLimitUntilTheStoredScheduleHasRun(t *testing.T) {
	cfg := Config{TimeLimit: Duration(time.Second)}
	var logb syncBuffer
	log := NewLog(&logb, nil)

	nem := scripted{done: make(chan struct{})}
	ctx, cancel := trafficContext(context.Background(), cfg, nem, log)
	defer cancel()
	// Wait for the time limit to pass (the extension is logged), then
	// check traffic is still on: the cut is a whole time limit later.
	for !strings.Contains(logb.String(), "steps left at the time limit") {
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case <-ctx.Done():
		t.Fatal("traffic ended at the time limit with stored steps left")
	default:
	}
	close(nem.done)
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("traffic did not end once the stored schedule had run")
	}
	if !strings.Contains(logb.String(), "steps left at the time limit") || !strings.Contains(logb.String(), "last stored step has run") {
		t.Fatalf("the extension is not logged:\n%s", logb.String())
	}

	never := scripted{done: make(chan struct{})}
	ctx2, cancel2 := trafficContext(context.Background(), cfg, never, log)
	defer cancel2()
	select {
	case <-ctx2.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a schedule that never finishes held traffic past twice the time limit")
	}
	if !strings.Contains(logb.String(), "they are not replayed") {
		t.Fatalf("the cut is not logged:\n%s", logb.String())
	}

	// Without a script, the time limit is the end.
	ctx3, cancel3 := trafficContext(context.Background(), cfg, nil, log)
	defer cancel3()
	select {
	case <-ctx3.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("traffic without a script outlived its time limit")
	}
}

// syncBuffer is a bytes.Buffer the log's goroutine and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
