package nemesis

// Atomic slot migration (Redis 8.4 CLUSTER MIGRATION) as a way for the
// migrate fault to move slots: when every primary supports it, the seed
// picks it or the classic SETSLOT/MIGRATE way for each slot/storm step,
// so one run measures both. Support is detected, never assumed: a primary
// supports it when COMMAND INFO CLUSTER|MIGRATION describes the command
// (Redis 7 answers a null entry).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/redline-dev/redline/harness/clusteradmin"
)

// atomicMove is one slot the fault moves.
type atomicMove struct {
	slot     int
	src, dst member
}

// atomicCapable reports whether every primary in all supports CLUSTER
// MIGRATION.
func (n *slotMover) atomicCapable(ctx context.Context, all []member) bool {
	if len(all) == 0 {
		return false
	}
	for _, m := range all {
		v, err := n.admin.do(ctx, m.Node.Addr, 5*time.Second, "command", "info", "cluster|migration")
		if err != nil {
			return false
		}
		entries, ok := v.([]any)
		if !ok || len(entries) != 1 || entries[0] == nil {
			return false
		}
	}
	return true
}

// spans turns sorted slots into IMPORT's "start end" pairs.
func spans(slots []int) []any {
	slots = slices.Clone(slots)
	slices.Sort(slots)
	var out []any
	for i := 0; i < len(slots); {
		j := i
		for j+1 < len(slots) && slots[j+1] == slots[j]+1 {
			j++
		}
		out = append(out, slots[i], slots[j])
		i = j + 1
	}
	return out
}

// atomicTimeout bounds one task; a task still running then is canceled.
const atomicTimeout = 60 * time.Second

// atomicMoves moves the slots with one CLUSTER MIGRATION IMPORT per
// (source, destination) pair, journalled as a migrate step, and returns
// the classic result shape ("moved") plus each task's final STATUS.
func (n *slotMover) atomicMoves(ctx context.Context, moves []atomicMove) (map[string]any, error) {
	type pair struct{ src, dst string }
	var order []pair
	groups := map[pair][]atomicMove{}
	for _, m := range moves {
		p := pair{m.src.ID, m.dst.ID}
		if _, ok := groups[p]; !ok {
			order = append(order, p)
		}
		groups[p] = append(groups[p], m)
	}
	var moved []slotMove
	var tasks []map[string]any
	var places []slotPlacement
	var errs []error
	for _, p := range order {
		g := groups[p]
		src, dst := g[0].src, g[0].dst
		var slots []int
		for _, m := range g {
			slots = append(slots, m.slot)
		}
		before := n.beforeKeys(ctx, src, slots) // the keys each slot carries
		status, err := n.atomicTask(ctx, slots, src, dst)
		if status != nil {
			tasks = append(tasks, status)
			id, _ := status["id"].(string)
			if id != "" {
				status["source_state"] = n.awaitSourceEnd(ctx, src, id)
			}
			places = append(places, n.afterKeys(ctx, before, slots, src, dst, "atomic", fmt.Sprint(status["state"]), id)...)
		} else {
			places = append(places, n.afterKeys(ctx, before, slots, src, dst, "atomic", "not-started", "")...)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("atomic %s->%s: %w", src.Node.Name, dst.Node.Name, err))
			continue
		}
		for _, m := range g {
			moved = append(moved, slotMove{Slot: m.slot, From: src.Node.Name, To: dst.Node.Name, Keys: len(before[m.slot].Before)})
		}
	}
	return map[string]any{"method": "atomic", "moved": moved, "tasks": tasks, "placement": places}, errors.Join(errs...)
}

// atomicTask runs one IMPORT on dst and waits for its end; the returned
// status merges the destination's STATUS with the source's write pause.
func (n *slotMover) atomicTask(ctx context.Context, slots []int, src, dst member) (map[string]any, error) {
	seq, err := n.journal.Begin(clusteradmin.Step{Kind: "migrate", Slots: slots, From: src.ID, To: dst.ID, Note: "atomic"})
	if err != nil {
		return nil, err
	}
	status, err := n.runAtomicTask(ctx, slots, src, dst)
	n.journal.End(seq, err)
	if err == nil {
		// The end phase re-asserts redline's moves from this record: an
		// atomic move is one of them (or it would "repair" the slot back).
		n.mu.Lock()
		for _, sl := range slots {
			n.moved[sl] = openSlot{Slot: sl, Src: src.ID, Dst: dst.ID}
		}
		n.mu.Unlock()
	}
	return status, err
}

func (n *slotMover) runAtomicTask(ctx context.Context, slots []int, src, dst member) (map[string]any, error) {
	v, err := n.admin.do(ctx, dst.Node.Addr, 10*time.Second, append([]any{"cluster", "migration", "import"}, spans(slots)...)...)
	if err != nil {
		return nil, err
	}
	id, _ := v.(string)
	status := map[string]any{"id": id, "from": src.Node.Name, "to": dst.Node.Name}
	deadline := time.Now().Add(atomicTimeout)
	for {
		st, err := n.taskStatus(ctx, dst.Node.Addr, id)
		if err == nil {
			for k, v := range st {
				status[k] = v
			}
			switch st["state"] {
			case "done":
				if s, err := n.taskStatus(ctx, src.Node.Addr, id); err == nil {
					status["write_pause_ms"] = s["write_pause_ms"]
					status["source_state"] = s["state"]
				}
				return status, nil
			case "canceled":
				return status, fmt.Errorf("task %s canceled: %v", id, st["last_error"])
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			// Undo our own step: a task left running would move the slots
			// after redline stopped watching.
			_, cerr := n.admin.do(context.Background(), dst.Node.Addr, 5*time.Second, "cluster", "migration", "cancel", "id", id)
			return status, errors.Join(fmt.Errorf("task %s not done after %s (state %v)", id, atomicTimeout, status["state"]), cerr)
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// taskStatus reads STATUS ID id of one node as a field map.
func (n *slotMover) taskStatus(ctx context.Context, addr, id string) (map[string]any, error) {
	v, err := n.admin.do(ctx, addr, 5*time.Second, "cluster", "migration", "status", "id", id)
	if err != nil {
		return nil, err
	}
	list, _ := v.([]any)
	if len(list) != 1 {
		return nil, fmt.Errorf("no task %s on %s", id, addr)
	}
	out := map[string]any{}
	switch x := list[0].(type) {
	case map[any]any: // RESP3
		for k, v := range x {
			out[fmt.Sprint(k)] = v
		}
	case []any: // RESP2
		for i := 0; i+1 < len(x); i += 2 {
			out[fmt.Sprint(x[i])] = x[i+1]
		}
	default:
		return nil, fmt.Errorf("STATUS of %s on %s: unexpected %T", id, addr, list[0])
	}
	return out, nil
}
