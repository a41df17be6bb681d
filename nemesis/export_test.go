package nemesis

import (
	"context"

	"github.com/redline-dev/redline/history"
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

// MemRecorder and DetailOf are the in-memory history and the op detail
// decoder of the white-box tests, for the black-box ones.
type MemRecorder = memRecorder

var DetailOf = detailOf

// Last is the latest op of function f and type typ (zero when none).
func (r *memRecorder) Last(f string, typ history.Type) history.Op {
	ops := r.all()
	for i := len(ops) - 1; i >= 0; i-- {
		if ops[i].F == f && ops[i].Type == typ {
			return ops[i]
		}
	}
	return history.Op{}
}
