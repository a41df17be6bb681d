package clusteradmin

// Placement records for the handoff checker (checker.Handoff): for every
// slot a move moved (atomic task or classic move, done or not),
// the keys its source held before the move and the keys of source and
// destination after it, read with CLUSTER GETKEYSINSLOT. A key on both or
// on neither side after the move ends is what the checker flags.

import (
	"context"
	"fmt"
	"time"

	"github.com/redline-dev/redline/history"
)

// Placement is one moved slot's record, a detail type of the history.
type Placement = history.Placement

// placementMax bounds one side's key list; a slot with more is recorded as
// truncated (and not judged).
const placementMax = 5000

// SlotKeys lists the keys of slot on the node at addr, at most
// placementMax (truncated true when there were more).
func (n *SlotMover) SlotKeys(ctx context.Context, addr string, slot int) ([]string, bool, error) {
	v, err := n.admin.Do(ctx, addr, 5*time.Second, "cluster", "getkeysinslot", slot, placementMax+1)
	if err != nil {
		return nil, false, err
	}
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		out = append(out, fmt.Sprint(x))
	}
	if len(out) > placementMax {
		return out[:placementMax], true, nil
	}
	return out, false, nil
}

// BeforeKeys reads the source's keys of each slot before a move.
func (n *SlotMover) BeforeKeys(ctx context.Context, src NodeState, slots []int) map[int]*Placement {
	out := map[int]*Placement{}
	for _, sl := range slots {
		p := &Placement{Slot: sl, Before: []string{}}
		keys, trunc, err := n.SlotKeys(ctx, src.Node.Addr, sl)
		if err != nil {
			p.Error = "before: " + err.Error()
		}
		p.Before, p.Truncated = keys, trunc
		out[sl] = p
	}
	return out
}

// AfterKeys completes the records once the move has ended on both sides.
func (n *SlotMover) AfterKeys(ctx context.Context, recs map[int]*Placement, slots []int, src, dst NodeState,
	method, state, task string) []Placement {
	var out []Placement
	for _, sl := range slots {
		p := recs[sl]
		if p == nil {
			p = &Placement{Slot: sl, Error: "before: not read"}
		}
		p.From, p.To, p.Method, p.State, p.Task = src.Node.Name, dst.Node.Name, method, state, task
		s, t1, err1 := n.SlotKeys(ctx, src.Node.Addr, sl)
		d, t2, err2 := n.SlotKeys(ctx, dst.Node.Addr, sl)
		p.Src, p.Dst = s, d
		p.Truncated = p.Truncated || t1 || t2
		for _, err := range []error{err1, err2} {
			if err != nil && p.Error == "" {
				p.Error = "after: " + err.Error()
			}
		}
		out = append(out, *p)
	}
	return out
}

// AwaitSourceEnd waits (bounded) until the source has ended task id too
// (the destination reports done before the source has trimmed) and
// returns its final state.
func (n *SlotMover) AwaitSourceEnd(ctx context.Context, src NodeState, id string) string {
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := n.TaskStatus(ctx, src.Node.Addr, id)
		state := ""
		if err == nil {
			state = fmt.Sprint(st["state"])
			switch state {
			case "done", "failed", "canceled":
				return state
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			if err != nil {
				return "unknown: " + err.Error()
			}
			return state
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}
