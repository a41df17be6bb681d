package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/redline-dev/redline/harness/cluster"
	"github.com/redline-dev/redline/harness/clusteradmin"
)

// partitionFault cuts node-to-node links as planPartition says; with
// Options.PartitionClients the minority side is cut from clients too.
type partitionFault struct {
	base
	*env
	parter cluster.Partitioner
	mu     sync.Mutex
	cut    bool // a cut is in force
}

func (*partitionFault) name() string { return "partition" }
func (*partitionFault) modes() []string {
	return []string{"isolate-one", "isolate-primary", "halves", "ring", "bridge", "primaries-replicas"}
}
func (*partitionFault) studyModes() []string      { return []string{"primary-minority"} }
func (*partitionFault) needs() cluster.Capability { return cluster.CanPartition }
func (*partitionFault) hookable() bool            { return true }

func (f *partitionFault) bind(e *env, h *hook, _ bool) error {
	f.env = e
	var err error
	f.parter, err = capable(e.c, h, func(h hook) cluster.Partitioner { return hookPartitioner{h} })
	return err
}

func (f *partitionFault) setCut(on bool) {
	f.mu.Lock()
	f.cut = on
	f.mu.Unlock()
}

func (f *partitionFault) resolve(_ context.Context, st Step, t *clusteradmin.Topology, rng *rand.Rand) (*action, error) {
	plan, err := planPartition(evidenceMode(st), t, rng)
	if err != nil {
		return nil, err
	}
	nodes := sortedKeys(plan.Cuts)
	clients := f.opts.PartitionClients && len(plan.Minority) > 0
	// The entry names the side that is cut off: the minority, or the first
	// group of an even split (primaries in primaries-replicas); for ring
	// and bridge every node that drops something.
	touched := nodes
	switch {
	case len(plan.Minority) > 0:
		touched = plan.Minority
	case st.Mode != "ring" && st.Mode != "bridge" && len(plan.Groups) == 2:
		touched = plan.Groups[0]
	}
	a := &action{nodes: touched, detail: map[string]any{
		"groups": plan.Groups, "cuts": plan.Cuts, "minority": plan.Minority, "clients": clients,
	}}
	a.start = func(ctx context.Context) (map[string]any, error) {
		f.setCut(true)
		var errs []error
		for _, node := range nodes {
			withClients := clients && slices.Contains(plan.Minority, node)
			if err := f.parter.Cut(ctx, node, plan.Cuts[node], withClients); err != nil {
				errs = append(errs, fmt.Errorf("cut %s from %v: %w", node, plan.Cuts[node], err))
			}
		}
		return nil, errors.Join(errs...)
	}
	a.stop = func(ctx context.Context) (map[string]any, error) {
		if err := f.parter.Heal(ctx); err != nil {
			return nil, fmt.Errorf("heal partition: %w", err)
		}
		f.setCut(false)
		return nil, nil
	}
	return a, nil
}

// cutPair cuts a and b from each other (pairCutter), node traffic only.
func (f *partitionFault) cutPair(ctx context.Context, a, b string) error {
	f.setCut(true)
	return errors.Join(f.parter.Cut(ctx, a, []string{b}, false), f.parter.Cut(ctx, b, []string{a}, false))
}

// healCuts removes every cut (pairCutter).
func (f *partitionFault) healCuts(ctx context.Context) error {
	if err := f.parter.Heal(ctx); err != nil {
		return err
	}
	f.setCut(false)
	return nil
}

// heal removes every filter rule when a cut may be in force or the
// schedule has partitions.
func (f *partitionFault) heal(ctx context.Context, h *healing) {
	f.mu.Lock()
	cut := f.cut
	f.mu.Unlock()
	if f.parter == nil || !cut && !h.scheduled[f.name()] {
		return
	}
	if err := f.parter.Heal(ctx); err != nil {
		h.fail(fmt.Errorf("heal partitions: %w", err))
	}
	f.setCut(false)
	h.res["healed_partitions"] = true
}
