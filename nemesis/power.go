package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
)

// powerFault cuts the power of its targets at one instant: what they had
// not fsynced is lost (or, torn, every unsynced write but a prefix of each
// file's last is kept) and they are SIGKILLed; stop powers them on again.
// A kill keeps what the process wrote, the page cache surviving it; a
// power cut does not. Like kill, it reads the targets' slot states before
// the cut and adopts what a restart opened (killFault's means, borrowed).
type powerFault struct {
	base
	*env
	pc  cluster.PowerCutter
	off nodeSet
}

func (*powerFault) name() string { return "power" }
func (*powerFault) modes() []string {
	return []string{"one", "shard", "all", "shard-torn"}
}
func (*powerFault) needs() cluster.Capability { return cluster.CanPowerCut }

func (f *powerFault) bind(e *env, _ *hook, _ bool) (err error) {
	f.env = e
	f.pc, err = capable(e.c, nil, func(hook) cluster.PowerCutter { return nil })
	if err != nil {
		return err
	}
	return f.pc.StorageFaults()
}

// powerTargets resolves the nodes a power step cuts: one node (a primary
// with slots when the step asks for evidence), a shard (a primary with
// slots and every replica of it), or every node.
func powerTargets(mode string, t *clusteradmin.Topology, rng *rand.Rand) ([]clusteradmin.NodeState, error) {
	switch mode {
	case "one", "primary", "all":
		return killTargets(mode, t, rng)
	case "shard", "shard-torn":
		prim := t.Primaries()
		if len(prim) == 0 {
			return nil, fmt.Errorf("no primary with slots is known")
		}
		p := pickOne(rng, prim)
		out := []clusteradmin.NodeState{p}
		for _, m := range t.Members {
			if !m.Primary && m.MasterID == p.ID {
				out = append(out, m)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown mode %q", mode)
}

func (f *powerFault) resolve(_ context.Context, st Step, t *clusteradmin.Topology, rng *rand.Rand) (*action, error) {
	targets, err := powerTargets(evidenceMode(st), t, rng)
	if err != nil {
		return nil, err
	}
	names := memberNames(targets)
	loss := cluster.PowerLoss{Torn: st.Mode == "shard-torn", Seed: rng.Uint64()}
	a := &action{nodes: names, detail: map[string]any{"roles": roles(targets), "torn": loss.Torn}}
	kf, _ := borrow[*killFault](f.env, "kill")
	a.start = func(ctx context.Context) (map[string]any, error) {
		if kf != nil {
			_ = each(names, func(n string) error { kf.noteStates(ctx, n); return nil })
		}
		for _, n := range names {
			f.off.mark(n, true)
		}
		lost, err := f.pc.PowerCut(ctx, names, loss)
		return map[string]any{"lost": lost}, err
	}
	a.stop = func(ctx context.Context) (map[string]any, error) {
		return nil, each(names, func(n string) error { return healHeld(ctx, &f.off, n, f.powerOn) })
	}
	return a, nil
}

// powerOn starts a node whose power was cut and adopts the slot states it
// opened itself (as kill's restart does).
func (f *powerFault) powerOn(ctx context.Context, node string) error {
	if err := f.pc.Restart(ctx, node); err != nil {
		return err
	}
	if kf, ok := borrow[*killFault](f.env, "kill"); ok {
		kf.adopt(ctx, node)
	}
	return nil
}

func (f *powerFault) heal(ctx context.Context, h *healing) {
	f.off.undo(ctx, h, "powered_on", "power on", f.powerOn)
}

// diskFault makes one primary's data directory answer ENOSPC (full) or
// EIO (eio) on writes, truncates, creates and fsyncs while held; stop
// gives it room again and starts the node if it exited meanwhile (Redis
// exits on an AOF write error with appendfsync always).
type diskFault struct {
	base
	*env
	df     cluster.DiskFaulter
	killer cluster.Killer
	faulty nodeSet
}

func (*diskFault) name() string              { return "disk" }
func (*diskFault) modes() []string           { return []string{"full", "eio"} }
func (*diskFault) needs() cluster.Capability { return cluster.CanDiskFault }

func (f *diskFault) bind(e *env, _ *hook, _ bool) (err error) {
	f.env = e
	f.df, err = capable(e.c, nil, func(hook) cluster.DiskFaulter { return nil })
	if err != nil {
		return err
	}
	f.killer, _ = e.c.(cluster.Killer)
	return f.df.StorageFaults()
}

func (f *diskFault) resolve(_ context.Context, st Step, t *clusteradmin.Topology, rng *rand.Rand) (*action, error) {
	targets, err := killTargets("primary", t, rng)
	if err != nil {
		return nil, err
	}
	e := cluster.DiskFull
	if st.Mode == "eio" {
		e = cluster.DiskFailing
	}
	a := &action{nodes: memberNames(targets), detail: map[string]any{"roles": roles(targets), "error": string(e)}}
	hold(a, shapeStrike{&f.faulty, func(ctx context.Context, name string) error { return f.df.SetDiskError(ctx, name, e) }, f.repair})
	return a, nil
}

// repair gives the node's disk room again and starts the node if it exited.
func (f *diskFault) repair(ctx context.Context, node string) error {
	if err := f.df.SetDiskError(ctx, node, ""); err != nil {
		return err
	}
	if f.killer != nil {
		return f.killer.Restart(ctx, node) // nothing when it is running
	}
	return nil
}

func (f *diskFault) heal(ctx context.Context, h *healing) {
	f.faulty.undo(ctx, h, "disks_repaired", "repair the disk of", f.repair)
}
