package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
)

// killFault SIGKILLs its targets (killTargets) and restarts them when
// stopped; the end phase restarts any it still holds. A node may open
// slots itself when it starts again (Redis's start-up check of its keys
// against its slot map): the fault reads the node's slot states just
// before the kill and adopts what the restart opened into the slot mover
// (SlotMover.AdoptRestartImports), for the end phase to close as
// redline's doing.
type killFault struct {
	base
	*env
	killer cluster.Killer
	killed nodeSet
	mu     sync.Mutex
	// before is each killed node's own MIGRATING/IMPORTING states just
	// before its kill; absent when the node did not answer (its restart's
	// states are then not adopted: Unaccounted reports them).
	before map[string]map[int]cluster.OpenSlot
	// seen is the last resolved step's targets' states, from its topology.
	seen map[string]map[int]cluster.OpenSlot
}

// beforeKillWait bounds the read of a node's slot states before its kill,
// so that a node that does not answer (paused, cut off) delays the kill by
// no more than this; afterRestartWait bounds the read after its restart
// (it may still be loading its data).
const (
	beforeKillWait   = 300 * time.Millisecond
	afterRestartWait = 5 * time.Second
)

func (*killFault) name() string              { return "kill" }
func (*killFault) modes() []string           { return []string{"one", "primary", "majority-primaries", "all"} }
func (*killFault) needs() cluster.Capability { return cluster.CanKill }
func (*killFault) hookable() bool            { return true }

func (f *killFault) bind(e *env, h *hook, _ bool) (err error) {
	f.env = e
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
	// The targets' states as this step's topology saw them: what the kill
	// compares the restart with when a target does not answer just before
	// it (paused, cut off).
	f.mu.Lock()
	f.seen = map[string]map[int]cluster.OpenSlot{}
	for _, m := range targets {
		if m.Reachable {
			f.seen[m.Node.Name] = statesOf(m)
		}
	}
	f.mu.Unlock()
	hold(a, f)
	return a, nil
}

// statesOf is a member's MIGRATING/IMPORTING states as OpenStates gives them.
func statesOf(m clusteradmin.NodeState) map[int]cluster.OpenSlot {
	out := map[int]cluster.OpenSlot{}
	for s, to := range m.Migrating {
		out[s] = cluster.OpenSlot{Slot: s, Migrating: true, Peer: to}
	}
	for s, from := range m.Importing {
		out[s] = cluster.OpenSlot{Slot: s, Peer: from}
	}
	return out
}

func (f *killFault) strikeNode(ctx context.Context, node string) error {
	f.noteStates(ctx, node)
	return strikeHeld(ctx, &f.killed, node, f.killer.Kill)
}

func (f *killFault) healNode(ctx context.Context, node string) error {
	return healHeld(ctx, &f.killed, node, f.restart)
}

// restart restarts node and adopts the slot states it opened itself.
func (f *killFault) restart(ctx context.Context, node string) error {
	if err := f.killer.Restart(ctx, node); err != nil {
		return err
	}
	f.adopt(ctx, node)
	return nil
}

// noteStates keeps node's own slot states before its kill.
func (f *killFault) noteStates(ctx context.Context, node string) {
	f.mu.Lock()
	delete(f.before, node)
	f.mu.Unlock()
	n, ok := f.nodeNamed(node)
	if !ok || f.mover == nil {
		return
	}
	st, err := f.mover.OpenStates(ctx, n.Addr, beforeKillWait)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		var ok bool
		if st, ok = f.seen[node]; !ok {
			return
		}
	}
	if f.before == nil {
		f.before = map[string]map[int]cluster.OpenSlot{}
	}
	f.before[node] = st
}

// adopt hands the mover the IMPORTING states node opened at its restart
// (only when its states before the kill are known) and logs them.
func (f *killFault) adopt(ctx context.Context, node string) {
	f.mu.Lock()
	before, known := f.before[node]
	delete(f.before, node)
	f.mu.Unlock()
	n, ok := f.nodeNamed(node)
	if !known || !ok {
		return
	}
	got, err := f.mover.AdoptRestartImports(ctx, n, before, afterRestartWait)
	if err != nil {
		f.opts.Log("nemesis: %s restarted; its slot states were not checked: %v", node, err)
	}
	if len(got) > 0 {
		var slots []int
		for _, g := range got {
			slots = append(slots, g.Slot)
		}
		f.opts.Log("nemesis: %s opened %d slots itself when it started again (IMPORTING from their owner %s: it holds keys of slots its map gives away); the end phase closes them, the owner keeping them: %s",
			node, len(got), got[0].Owner, fewSlots(slots))
	}
}

// nodeNamed is the cluster's member called name.
func (f *killFault) nodeNamed(name string) (cluster.Node, bool) {
	if f.env == nil {
		return cluster.Node{}, false
	}
	for _, n := range f.c.Nodes() {
		if n.Name == name {
			return n, true
		}
	}
	return cluster.Node{}, false
}

func (f *killFault) holds(node string) bool { return f.killed.has(node) }

func (f *killFault) heal(ctx context.Context, h *healing) {
	f.killed.undo(ctx, h, "restarted", "restart", f.restart)
}

// fewSlots lists up to eight slots and says how many more there are.
func fewSlots(slots []int) string {
	var b strings.Builder
	for i, s := range slots {
		if i == 8 {
			fmt.Fprintf(&b, " and %d more", len(slots)-i)
			break
		}
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%d", s)
	}
	return b.String()
}
