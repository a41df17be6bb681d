package clusteradmin

// Atomic slot migration (Redis 8.4 CLUSTER MIGRATION): the mover's other
// way to move slots, beside the classic SETSLOT/MIGRATE one. Support is
// detected, never assumed: a primary supports it when COMMAND INFO
// CLUSTER|MIGRATION describes the command (Redis 7 answers a null entry).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// AtomicMove is one slot to move atomically.
type AtomicMove struct {
	Slot     int
	Src, Dst NodeState
}

// AtomicResult is what AtomicMoves did: the slots whose task ended done,
// each task's final STATUS (the destination's fields, with the source's
// state and write pause) and the placement of every slot's keys.
type AtomicResult struct {
	Moved     []SlotMove
	Tasks     []map[string]any
	Placement []Placement
}

// AtomicCapable reports whether every primary in all supports CLUSTER
// MIGRATION.
func (n *SlotMover) AtomicCapable(ctx context.Context, all []NodeState) bool {
	if len(all) == 0 {
		return false
	}
	for _, m := range all {
		v, err := n.admin.Do(ctx, m.Node.Addr, 5*time.Second, "command", "info", "cluster|migration")
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

// AtomicTimeout bounds one task; a task still running then is canceled.
const AtomicTimeout = 60 * time.Second

// AtomicMoves moves the slots with one CLUSTER MIGRATION IMPORT per
// (source, destination) pair, each journalled as a migrate step.
func (n *SlotMover) AtomicMoves(ctx context.Context, moves []AtomicMove) (AtomicResult, error) {
	type pair struct{ src, dst string }
	var order []pair
	groups := map[pair][]AtomicMove{}
	for _, m := range moves {
		p := pair{m.Src.ID, m.Dst.ID}
		if _, ok := groups[p]; !ok {
			order = append(order, p)
		}
		groups[p] = append(groups[p], m)
	}
	var moved []SlotMove
	var tasks []map[string]any
	var places []Placement
	var errs []error
	for _, p := range order {
		g := groups[p]
		src, dst := g[0].Src, g[0].Dst
		var slots []int
		for _, m := range g {
			slots = append(slots, m.Slot)
		}
		before := n.BeforeKeys(ctx, src, slots) // the keys each slot carries
		status, err := n.atomicTask(ctx, slots, src, dst)
		if status != nil {
			tasks = append(tasks, status)
			id, _ := status["id"].(string)
			if id != "" {
				status["source_state"] = n.AwaitSourceEnd(ctx, src, id)
			}
			places = append(places, n.AfterKeys(ctx, before, slots, src, dst, "atomic", fmt.Sprint(status["state"]), id)...)
		} else {
			places = append(places, n.AfterKeys(ctx, before, slots, src, dst, "atomic", "not-started", "")...)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("atomic %s->%s: %w", src.Node.Name, dst.Node.Name, err))
			continue
		}
		for _, m := range g {
			moved = append(moved, SlotMove{Slot: m.Slot, From: src.Node.Name, To: dst.Node.Name, Keys: len(before[m.Slot].Before)})
		}
	}
	return AtomicResult{Moved: moved, Tasks: tasks, Placement: places}, errors.Join(errs...)
}

// atomicTask runs one IMPORT on dst and waits for its end; the returned
// status merges the destination's STATUS with the source's write pause.
func (n *SlotMover) atomicTask(ctx context.Context, slots []int, src, dst NodeState) (map[string]any, error) {
	seq, err := n.journal.Begin(Step{Kind: "migrate", Slots: slots, From: src.ID, To: dst.ID, Note: "atomic"})
	if err != nil {
		return nil, err
	}
	status, err := n.runAtomicTask(ctx, slots, src, dst)
	n.journal.End(seq, err)
	if err == nil {
		// The end phase re-asserts redline's moves from this record: an
		// atomic move is one of them (or it would "repair" the slot back).
		n.NoteMoved(slots, src, dst)
	}
	return status, err
}

func (n *SlotMover) runAtomicTask(ctx context.Context, slots []int, src, dst NodeState) (map[string]any, error) {
	id, err := n.StartImport(ctx, slots, dst)
	if err != nil {
		return nil, err
	}
	status := map[string]any{"id": id, "from": src.Node.Name, "to": dst.Node.Name}
	deadline := time.Now().Add(AtomicTimeout)
	for {
		st, err := n.TaskStatus(ctx, dst.Node.Addr, id)
		if err == nil {
			for k, v := range st {
				status[k] = v
			}
			switch st["state"] {
			case "done":
				if s, err := n.TaskStatus(ctx, src.Node.Addr, id); err == nil {
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
			_, cerr := n.CancelTask(context.Background(), dst, id)
			return status, errors.Join(fmt.Errorf("task %s not done after %s (state %v)", id, AtomicTimeout, status["state"]), cerr)
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TaskStatus reads CLUSTER MIGRATION STATUS ID id of one node as a field map.
func (n *SlotMover) TaskStatus(ctx context.Context, addr, id string) (map[string]any, error) {
	v, err := n.admin.Do(ctx, addr, 5*time.Second, "cluster", "migration", "status", "id", id)
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

// StartImport sends CLUSTER MIGRATION IMPORT of slots to dst (timeout
// 10 s) and returns the task id.
func (n *SlotMover) StartImport(ctx context.Context, slots []int, dst NodeState) (string, error) {
	v, err := n.admin.Do(ctx, dst.Node.Addr, 10*time.Second, append([]any{"cluster", "migration", "import"}, spans(slots)...)...)
	if err != nil {
		return "", err
	}
	id, _ := v.(string)
	return id, nil
}

// CancelTask sends CLUSTER MIGRATION CANCEL ID id to on (timeout 5 s) and
// returns its reply (the number of tasks canceled).
func (n *SlotMover) CancelTask(ctx context.Context, on NodeState, id string) (any, error) {
	return n.admin.Do(ctx, on.Node.Addr, 5*time.Second, "cluster", "migration", "cancel", "id", id)
}

// NoteMoved records slots as moved from src to dst by the caller (an
// atomic task it ran itself): ReassertMoves then treats them as the
// mover's own moves (or it would "repair" them back).
func (n *SlotMover) NoteMoved(slots []int, src, dst NodeState) {
	n.mu.Lock()
	for _, sl := range slots {
		n.moved[sl] = openSlot{Slot: sl, Src: src.ID, Dst: dst.ID}
	}
	n.mu.Unlock()
}
