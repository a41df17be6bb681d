package clusteradmin

import "context"

// DifferingCopies exposes differingCopies to the package's external tests.
func DifferingCopies(n *SlotMover, ctx context.Context, src, dst NodeState, ks []any) ([]string, error) {
	return n.differingCopies(ctx, src, dst, ks)
}
