package harness

import (
	"context"
	"testing"
	"time"
)

// The work after a run's ctx ended outlives that ctx, and ends at the
// second interrupt (or its bound).
func TestAfterCancelEndsAtTheAbort(t *testing.T) {
	abort := make(chan struct{})
	ctx, cancel := context.WithCancel(WithAbort(context.Background(), abort))
	cancel() // the first Ctrl-C
	tctx, stop := AfterCancel(ctx, time.Minute)
	defer stop()
	select {
	case <-tctx.Done():
		t.Fatal("the teardown's context ended with the run's")
	case <-time.After(50 * time.Millisecond):
	}
	close(abort) // the second
	select {
	case <-tctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the second interrupt did not end the teardown's context")
	}
	bounded, stop2 := AfterCancel(context.Background(), 10*time.Millisecond)
	defer stop2()
	<-bounded.Done()
}
