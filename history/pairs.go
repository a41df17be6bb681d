package history

import "fmt"

// Pair is an invocation and its completion. Completion is nil when the
// history ended before the operation completed: treat it like an info.
type Pair struct {
	Invoke     *Op
	Completion *Op
}

// Outcome is the completion type, or Info when the op never completed.
func (p Pair) Outcome() Type {
	if p.Completion == nil {
		return Info
	}
	return p.Completion.Type
}

// Pairs matches each client invocation with the next completion of the same
// process, in invocation order. Nemesis entries are skipped. It fails when a
// process completes an op it never invoked or invokes twice without
// completing: the history is then not one the recorder can produce.
func Pairs(ops []Op) ([]Pair, error) {
	n := 0
	for i := range ops {
		if ops[i].Process != Nemesis && ops[i].Type == Invoke {
			n++
		}
	}
	pairs := make([]Pair, 0, n)
	open := make(map[Process]int) // process -> index into pairs
	for i := range ops {
		op := &ops[i]
		if op.Process == Nemesis {
			continue
		}
		if op.Type == Invoke {
			if j, busy := open[op.Process]; busy {
				return nil, fmt.Errorf("entry %d: process %d invokes while its op at entry %d is still open", op.Index, op.Process, pairs[j].Invoke.Index)
			}
			open[op.Process] = len(pairs)
			pairs = append(pairs, Pair{Invoke: op})
			continue
		}
		j, busy := open[op.Process]
		if !busy {
			return nil, fmt.Errorf("entry %d: process %d completes an op it never invoked", op.Index, op.Process)
		}
		pairs[j].Completion = op
		delete(open, op.Process)
	}
	return pairs, nil
}

// NemesisEvents returns the fault entries in order.
func NemesisEvents(ops []Op) []Op {
	var ev []Op
	for _, op := range ops {
		if op.Process == Nemesis {
			ev = append(ev, op)
		}
	}
	return ev
}
