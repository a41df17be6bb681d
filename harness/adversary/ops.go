package adversary

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/redline-dev/redline/history"
)

// call is one client op of a run: positions of its invocation and
// completion in Run.Ops (comp -1: it never completed).
type call struct {
	inv, comp int
}

// calls pairs r's client invocations with their completions, in
// invocation order.
func (r *Run) calls() []call {
	var out []call
	open := map[history.Process]int{}
	for i := range r.Ops {
		op := &r.Ops[i]
		if op.Process == history.Nemesis {
			continue
		}
		if op.Type == history.Invoke {
			open[op.Process] = len(out)
			out = append(out, call{inv: i, comp: -1})
			continue
		}
		if j, ok := open[op.Process]; ok {
			out[j].comp = i
			delete(open, op.Process)
		}
	}
	return out
}

func (r *Run) invOf(c call) *history.Op { return &r.Ops[c.inv] }

// compOf is c's completion, nil when it never completed.
func (r *Run) compOf(c call) *history.Op {
	if c.comp < 0 {
		return nil
	}
	return &r.Ops[c.comp]
}

// outcome is c's completion type (Info when it never completed).
func (r *Run) outcome(c call) history.Type {
	if c.comp < 0 {
		return history.Info
	}
	return r.Ops[c.comp].Type
}

// end is c's completion time; an op that never completed ends never.
func (r *Run) end(c call) int64 {
	if c.comp < 0 || r.Ops[c.comp].Type == history.Info {
		return 1<<63 - 1
	}
	return r.Ops[c.comp].Time
}

// finalStart is the time of the final-reads marker (-1: none).
func (r *Run) finalStart() int64 {
	for i := range r.Ops {
		if r.Ops[i].Process == history.Nemesis && r.Ops[i].F == history.FinalReads {
			return r.Ops[i].Time
		}
	}
	return -1
}

// okReads are the ok reads of r (f "read") on keys keep accepts, final
// says which side of the final-reads marker (nil: both).
func (r *Run) okReads(final *bool) []call {
	fs := r.finalStart()
	var out []call
	for _, c := range r.calls() {
		inv := r.invOf(c)
		if inv.F != "read" || r.outcome(c) != history.OK || r.compOf(c).FromReplica() {
			continue
		}
		if final != nil && (fs >= 0 && inv.Time >= fs) != *final {
			continue
		}
		out = append(out, c)
	}
	return out
}

// pick is one element of xs, at random; ok false when xs is empty.
func pick[T any](rng *rand.Rand, xs []T) (x T, ok bool) {
	if len(xs) == 0 {
		return x, false
	}
	return xs[rng.IntN(len(xs))], true
}

// setValue replaces the value of the op at position i.
func (r *Run) setValue(i int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	r.Ops[i].Value = b
}

// setRaw replaces the value of the op at position i by raw JSON.
func (r *Run) setRaw(i int, raw string) { r.Ops[i].Value = json.RawMessage(raw) }

// remove drops the ops at the given positions.
func (r *Run) remove(pos ...int) {
	drop := map[int]bool{}
	for _, p := range pos {
		drop[p] = true
	}
	out := r.Ops[:0:0]
	for i := range r.Ops {
		if !drop[i] {
			out = append(out, r.Ops[i])
		}
	}
	r.Ops = out
}

// describe names the op at position i for a failure message.
func (r *Run) describe(i int) string {
	op := r.Ops[i]
	return fmt.Sprintf("op %d (%s %s %s %s)", op.Index, op.Type, op.F, op.Key, op.Value)
}

// nemesisEntry is the position of the last nemesis entry with f and type
// t (-1: none).
func (r *Run) nemesisEntry(f string, t history.Type) int {
	for i := len(r.Ops) - 1; i >= 0; i-- {
		if op := r.Ops[i]; op.Process == history.Nemesis && op.F == f && op.Type == t {
			return i
		}
	}
	return -1
}

// sortedKeys are m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
