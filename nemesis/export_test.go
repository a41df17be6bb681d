package nemesis

import (
	"context"

	"github.com/redline-dev/redline/harness/history"
)

// FireForTest fires one step now, as Run would, and returns the function
// that stops it (nil when the fault has nothing to stop). For black-box tests.
func (n *Nemesis) FireForTest(ctx context.Context, rec history.Recorder, st Step) func(context.Context) error {
	a := n.fire(ctx, rec, st)
	if a == nil {
		return nil
	}
	return func(ctx context.Context) error { return n.finish(ctx, rec, a) }
}

// Eventually is eventually, for the black-box (docker) tests.
var Eventually = eventually
