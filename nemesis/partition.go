package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
)

// partitionFault cuts node-to-node links as planPartition says; with
// Options.PartitionClients the minority side is cut from clients too.
type partitionFault struct {
	base
	*env
	parter cluster.Partitioner
	oneWay cluster.OneWayPartitioner // nil when the target cannot cut one way
	mu     sync.Mutex
	cut    bool // a cut is in force
}

func (*partitionFault) name() string { return "partition" }
func (*partitionFault) modes() []string {
	return []string{"isolate-one", "isolate-primary", "halves", "ring", "bridge", "primaries-replicas"}
}
func (*partitionFault) studyModes() []string {
	return append([]string{"primary-minority", oneWay}, oneWayVariants...)
}
func (*partitionFault) needs() cluster.Capability { return cluster.CanPartition }
func (*partitionFault) hookable() bool            { return true }

// probe: the one-way modes, when named, need filtering one way.
func (*partitionFault) probe(named []string) string {
	if slices.ContainsFunc(named, isOneWay) {
		return cluster.ProbeOneWay
	}
	return ""
}

func (f *partitionFault) bind(e *env, h *hook, _ bool) error {
	f.env = e
	var err error
	f.parter, err = capable(e.c, h, func(h hook) cluster.Partitioner { return hookPartitioner{h} })
	if err != nil {
		return err
	}
	if h == nil {
		f.oneWay, _ = e.c.(cluster.OneWayPartitioner)
	}
	if !slices.ContainsFunc(e.named[f.name()], isOneWay) {
		return nil
	}
	// One-way modes named: the target must filter in one direction, and
	// say before the run that it can.
	if f.oneWay == nil {
		return fmt.Errorf("its one-way modes need packets filtered in one direction only (cluster.OneWayPartitioner), which %s", map[bool]string{true: "a --nemesis-hook cannot do", false: "this target cannot do"}[h != nil])
	}
	if p, ok := e.c.(cluster.Prober); ok {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.Probe(ctx, f.probe(e.named[f.name()])); err != nil {
			return fmt.Errorf("one-way modes: %w", err)
		}
	}
	return nil
}

func (f *partitionFault) setCut(on bool) {
	f.mu.Lock()
	f.cut = on
	f.mu.Unlock()
}

func (f *partitionFault) resolve(_ context.Context, st Step, t *clusteradmin.Topology, rng *rand.Rand) (*action, error) {
	if isOneWay(st.Mode) {
		return f.resolveOneWay(st, t, rng)
	}
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

// resolveOneWay makes the action of a one-way step: each node of the plan
// drops what it sends to its peers of the plan; stop heals every cut.
func (f *partitionFault) resolveOneWay(st Step, t *clusteradmin.Topology, rng *rand.Rand) (*action, error) {
	if f.oneWay == nil {
		return nil, fmt.Errorf("target %s cannot cut traffic in one direction only", targetName(f.c))
	}
	plan, err := planOneWay(st.Mode, st.Evidence, t, rng)
	if err != nil {
		return nil, err
	}
	a := &action{nodes: plan.Struck, detail: map[string]any{
		"variant": plan.Variant, "drops": plan.Drops, "roles": rolesOf(t, plan.Struck), "clients": false,
	}}
	a.start = func(ctx context.Context) (map[string]any, error) {
		f.setCut(true)
		var errs []error
		for _, from := range sortedKeys(plan.Drops) {
			if err := f.oneWay.CutOneWay(ctx, from, plan.Drops[from]); err != nil {
				errs = append(errs, fmt.Errorf("drop what %s sends to %v: %w", from, plan.Drops[from], err))
			}
		}
		return nil, errors.Join(errs...)
	}
	a.stop = func(ctx context.Context) (map[string]any, error) {
		if err := f.parter.Heal(ctx); err != nil {
			return nil, fmt.Errorf("heal one-way partition: %w", err)
		}
		f.setCut(false)
		return nil, nil
	}
	return a, nil
}

// rolesOf gives the role of each named member of t.
func rolesOf(t *clusteradmin.Topology, names []string) map[string]string {
	out := map[string]string{}
	for _, m := range t.Members {
		if slices.Contains(names, m.Node.Name) {
			out[m.Node.Name] = role(m)
		}
	}
	return out
}

// cutPair cuts a and b from each other (pairCutter), node traffic only.
func (f *partitionFault) cutPair(ctx context.Context, a, b string) error {
	f.setCut(true)
	return errors.Join(f.parter.Cut(ctx, a, []string{b}, false), f.parter.Cut(ctx, b, []string{a}, false))
}

// cutOneWay drops what from sends to the nodes to (oneWayCutter); an
// error when the target cannot cut one way.
func (f *partitionFault) cutOneWay(ctx context.Context, from string, to []string) error {
	if f.oneWay == nil {
		return fmt.Errorf("target %s cannot cut traffic in one direction only", targetName(f.c))
	}
	f.setCut(true)
	return f.oneWay.CutOneWay(ctx, from, to)
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
