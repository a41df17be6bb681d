package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
)

// migrateFault moves slots between primaries as redis-cli does (slot: one,
// storm: 8..64), through the slot mover, or leaves one open half-way for
// the stop phase to close (abort-stable undoes it when the target got no
// keys, abort-half finishes it). Any target can. Its study modes are the
// handoff compositions (handoff.go): one slot moved with another fault
// striking during the move.
type migrateFault struct {
	base
	*env
	mover *clusteradmin.SlotMover
}

func (*migrateFault) name() string { return "migrate" }
func (*migrateFault) modes() []string {
	return []string{"slot", "storm", "abort-stable", "abort-half"}
}
func (*migrateFault) studyModes() []string {
	return append(handoffModes(), cliAbortMode, classicReplicaFullSyncMode)
}

func (f *migrateFault) bind(e *env, _ *hook, _ bool) error {
	f.env = e
	f.mover = e.mover
	return nil
}

func (f *migrateFault) resolve(ctx context.Context, st Step, t *clusteradmin.Topology, rng *rand.Rand) (*action, error) {
	n := f.mover
	prim := t.Primaries()
	var reach []clusteradmin.NodeState
	for _, m := range prim {
		if m.Reachable {
			reach = append(reach, m)
		}
	}
	if len(reach) < 2 {
		return nil, fmt.Errorf("migrate needs two reachable primaries with slots, have %d", len(reach))
	}
	var all []clusteradmin.NodeState
	for _, m := range t.Members {
		if m.Primary && m.Reachable {
			all = append(all, m)
		}
	}
	count := 1
	if st.Mode == "storm" {
		count = 8 + rng.IntN(57)
	}
	type move struct {
		slot     int
		src, dst clusteradmin.NodeState
	}
	var moves []move
	// A slot someone has open (the user's own resharding, or one left
	// from before the run) is theirs to finish: never picked.
	used := map[int]bool{}
	for _, m := range t.Members {
		for s := range m.Migrating {
			used[s] = true
		}
		for s := range m.Importing {
			used[s] = true
		}
	}
	withKeys := map[string][]int{}
	for range count {
		src := pickOne(rng, reach)
		var others []clusteradmin.NodeState
		for _, m := range all {
			if m.ID != src.ID {
				others = append(others, m)
			}
		}
		dst := pickOne(rng, others)
		cands, ok := withKeys[src.ID]
		if !ok {
			cands = f.slotsWithKeys(ctx, src)
			withKeys[src.ID] = cands
		}
		if len(cands) == 0 {
			cands = src.Slots
		}
		slot := -1
		for range 8 {
			s := cands[rng.IntN(len(cands))]
			if !used[s] {
				slot = s
				break
			}
		}
		if slot < 0 {
			continue
		}
		used[slot] = true
		moves = append(moves, move{slot, src, dst})
	}
	var nodes []string
	var planned []clusteradmin.SlotMove
	for _, m := range moves {
		nodes = append(nodes, m.src.Node.Name, m.dst.Node.Name)
		planned = append(planned, clusteradmin.SlotMove{Slot: m.slot, From: m.src.Node.Name, To: m.dst.Node.Name})
	}
	slices.SortFunc(nodes, cluster.CompareNames)
	nodes = slices.Compact(nodes)
	a := &action{nodes: nodes, detail: map[string]any{"moves": planned}}
	switch st.Mode {
	case "slot", "storm":
		atomic := rng.IntN(2) == 0 // used only where every primary supports it (SlotMover.AtomicCapable)
		a.start = func(ctx context.Context) (map[string]any, error) {
			if atomic && n.AtomicCapable(ctx, all) {
				var ms []clusteradmin.AtomicMove
				for _, m := range moves {
					ms = append(ms, clusteradmin.AtomicMove{Slot: m.slot, Src: m.src, Dst: m.dst})
				}
				r, err := n.AtomicMoves(ctx, ms)
				return map[string]any{"method": "atomic", "moved": r.Moved, "tasks": r.Tasks, "placement": r.Placement}, err
			}
			var done []clusteradmin.SlotMove
			var places []clusteradmin.Placement
			var errs []error
			for _, m := range moves {
				if ctx.Err() != nil {
					break
				}
				before := n.BeforeKeys(ctx, m.src, []int{m.slot})
				keys, err := n.MoveSlot(ctx, m.slot, m.src, m.dst, all)
				state := "moved"
				if err != nil {
					state = "failed"
				}
				places = append(places, n.AfterKeys(ctx, before, []int{m.slot}, m.src, m.dst, "classic", state, "")...)
				if err != nil {
					errs = append(errs, fmt.Errorf("slot %d %s->%s: %w", m.slot, m.src.Node.Name, m.dst.Node.Name, err))
					continue
				}
				done = append(done, clusteradmin.SlotMove{Slot: m.slot, From: m.src.Node.Name, To: m.dst.Node.Name, Keys: keys})
			}
			return map[string]any{"method": "classic", "moved": done, "placement": places}, errors.Join(errs...)
		}
	case "abort-stable", "abort-half":
		m := moves[0]
		a.opensSlot = true
		a.start = func(ctx context.Context) (map[string]any, error) {
			if err := n.OpenMigration(ctx, m.slot, m.src, m.dst, st.Mode == "abort-stable"); err != nil {
				return nil, err
			}
			if st.Mode == "abort-stable" {
				return map[string]any{"keys": 0}, nil
			}
			keys, _, err := n.MoveKeys(ctx, m.slot, m.src, m.dst, 1)
			return map[string]any{"keys": keys}, err
		}
		a.stop = func(ctx context.Context) (map[string]any, error) {
			how, err := n.RepairSlot(ctx, m.slot)
			return map[string]any{"slot": m.slot, "repair": how}, err
		}
	case cliAbortMode:
		if len(moves) == 0 {
			return nil, fmt.Errorf("%s: no slot to move", st.Mode)
		}
		m := moves[0]
		if err := f.cliAbortAction(a, st, m.slot, m.src, m.dst, t); err != nil {
			return nil, err
		}
	case classicReplicaFullSyncMode:
		if len(moves) == 0 {
			return nil, fmt.Errorf("%s: no slot to move", st.Mode)
		}
		m := moves[0]
		if err := f.classicReplicaFullSyncAction(a, st, m.slot, m.src, m.dst, t); err != nil {
			return nil, err
		}
	default:
		if _, _, ok := splitHandoffMode(st.Mode); !ok || len(moves) == 0 {
			return nil, fmt.Errorf("unknown mode %q", st.Mode)
		}
		m := moves[0]
		if err := f.handoffAction(ctx, st, a, m.slot, m.src, m.dst, all, t); err != nil {
			return nil, err
		}
	}
	return a, nil
}
