package nemesis

import (
	"context"
	"math/rand/v2"

	"github.com/redline-dev/redline/harness/cluster"
	"github.com/redline-dev/redline/harness/clusteradmin"
)

// killFault SIGKILLs its targets (killTargets) and restarts them when
// stopped; the end phase restarts any it still holds.
type killFault struct {
	base
	killer cluster.Killer
	killed nodeSet
}

func (*killFault) name() string    { return "kill" }
func (*killFault) modes() []string { return []string{"one", "primary", "majority-primaries", "all"} }
func (*killFault) needs() string   { return "kill and restart nodes (cluster.Killer)" }
func (*killFault) hookable() bool  { return true }

func (f *killFault) bind(e *env, h *hook, _ bool) (err error) {
	f.killer, err = capable(e.c, h, func(h hook) cluster.Killer { return hookKiller{h} })
	return err
}

func (f *killFault) resolve(_ context.Context, st Step, t *clusteradmin.Topology, rng *rand.Rand) (*action, error) {
	targets, err := killTargets(evidenceMode(st), t, rng)
	if err != nil {
		return nil, err
	}
	names := memberNames(targets)
	a := &action{nodes: names, detail: map[string]any{"roles": roles(targets)}}
	hold(a, f)
	return a, nil
}

func (f *killFault) strikeNode(ctx context.Context, node string) error {
	return strikeHeld(ctx, &f.killed, node, f.killer.Kill)
}

func (f *killFault) healNode(ctx context.Context, node string) error {
	return healHeld(ctx, &f.killed, node, f.killer.Restart)
}

func (f *killFault) holds(node string) bool { return f.killed.has(node) }

func (f *killFault) heal(ctx context.Context, h *healing) {
	f.killed.undo(ctx, h, "restarted", "restart", f.killer.Restart)
}
