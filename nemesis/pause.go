package nemesis

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
)

// pauseFault freezes its targets (killTargets) and resumes them when
// stopped. primary-long holds the pause for at least three node timeouts
// plus a second, so that a replica is promoted and the old primary comes
// back as a zombie.
type pauseFault struct {
	base
	*env
	pauser cluster.Pauser
	paused nodeSet
}

func (*pauseFault) name() string              { return "pause" }
func (*pauseFault) modes() []string           { return []string{"one", "primary", "primary-long"} }
func (*pauseFault) needs() cluster.Capability { return cluster.CanPause }
func (*pauseFault) hookable() bool            { return true }

func (f *pauseFault) bind(e *env, h *hook, _ bool) error {
	f.env = e
	var err error
	f.pauser, err = capable(e.c, h, func(h hook) cluster.Pauser { return hookPauser{h} })
	return err
}

func (f *pauseFault) resolve(_ context.Context, st Step, t *clusteradmin.Topology, rng *rand.Rand) (*action, error) {
	targets, err := killTargets(evidenceMode(st), t, rng)
	if err != nil {
		return nil, err
	}
	names := memberNames(targets)
	a := &action{nodes: names, detail: map[string]any{"roles": roles(targets)}}
	if st.Mode == "primary-long" {
		a.minHold = 3*f.opts.NodeTimeout + time.Second
		a.detail["min_hold_ms"] = a.minHold.Milliseconds()
	}
	hold(a, f)
	return a, nil
}

func (f *pauseFault) strikeNode(ctx context.Context, node string) error {
	return strikeHeld(ctx, &f.paused, node, f.pauser.Pause)
}

func (f *pauseFault) healNode(ctx context.Context, node string) error {
	return healHeld(ctx, &f.paused, node, f.pauser.Resume)
}

func (f *pauseFault) holds(node string) bool { return f.paused.has(node) }

func (f *pauseFault) heal(ctx context.Context, h *healing) {
	f.paused.undo(ctx, h, "resumed", "resume", f.pauser.Resume)
}
