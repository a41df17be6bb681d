package harness

import (
	"context"
	"time"
)

type abortKey struct{}

// WithAbort marks ctx with the user's second interrupt. A run whose ctx
// ends (the first Ctrl-C) still heals what it must and tears its cluster
// down on a fresh context of its own, bounded (AfterCancel); once abort
// closes, that context ends too: the user asked to stop waiting.
func WithAbort(ctx context.Context, abort <-chan struct{}) context.Context {
	return context.WithValue(ctx, abortKey{}, abort)
}

// AfterCancel is the context of work a run does after ctx may have ended
// (healing a guest cluster, the teardown): not cancelled with ctx, ended
// after d, or as soon as the abort of WithAbort closes.
func AfterCancel(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d)
	if abort, ok := ctx.Value(abortKey{}).(<-chan struct{}); ok && abort != nil {
		go func() {
			select {
			case <-abort:
				cancel()
			case <-tctx.Done():
			}
		}()
	}
	return tctx, cancel
}
