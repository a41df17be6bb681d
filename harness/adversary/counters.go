package adversary

import (
	"fmt"
	"math/rand/v2"

	"github.com/redline-dev/redline/history"
)

// Counter (counter checker; the script workload's counter too): adds of
// small positive deltas and reads.

// counterRead is an ok read of a counter key with the bounds its value had
// to lie within.
type counterRead struct {
	c            call
	lower, upper int64
	lastAck      int64 // delta of an add acknowledged before the read began (0: none)
	final        bool  // the key's last read of the final phase
}

// counterReads are the ok primary reads of the keys that have adds, with
// their bounds as the counter checker defines them.
func (r *Run) counterReads() []counterRead {
	type add struct {
		c     call
		delta int64
	}
	adds := map[string][]add{}
	calls := r.calls()
	for _, c := range calls {
		inv := r.invOf(c)
		if inv.F != "add" && inv.F != "incr" || r.outcome(c) == history.Fail {
			continue
		}
		if d, ok := inv.Int(); ok && d > 0 {
			adds[inv.Key] = append(adds[inv.Key], add{c, d})
		}
	}
	fs := r.finalStart()
	var out []counterRead
	last := map[string]int{}
	for _, c := range r.okReads(nil) {
		inv := r.invOf(c)
		if len(adds[inv.Key]) == 0 {
			continue
		}
		if _, ok := r.compOf(c).Int(); !ok {
			continue
		}
		cr := counterRead{c: c}
		for _, a := range adds[inv.Key] {
			if r.outcome(a.c) == history.OK && r.end(a.c) < inv.Time {
				cr.lower += a.delta
				cr.lastAck = a.delta
			}
			if r.invOf(a.c).Time < r.end(c) || r.end(c) == 1<<63-1 {
				cr.upper += a.delta
			}
		}
		if fs >= 0 && inv.Time >= fs {
			if j, seen := last[inv.Key]; !seen || r.end(out[j].c) < r.end(c) {
				last[inv.Key] = len(out)
			}
		}
		out = append(out, cr)
	}
	for _, j := range last {
		out[j].final = true
	}
	return out
}

func counterPick(r *Run, rng *rand.Rand, keep func(counterRead) bool) (counterRead, bool) {
	var xs []counterRead
	for _, cr := range r.counterReads() {
		if keep(cr) {
			xs = append(xs, cr)
		}
	}
	return pick(rng, xs)
}

func plantCounter(keep func(counterRead) bool, value func(counterRead) int64, replica bool, what string) func(*Run, *rand.Rand) (string, error) {
	return func(r *Run, rng *rand.Rand) (string, error) {
		cr, ok := counterPick(r, rng, keep)
		if !ok {
			return "", ErrNotApplicable
		}
		was := r.describe(cr.c.comp)
		v := value(cr)
		r.setValue(cr.c.comp, v)
		if replica {
			r.Ops[cr.c.comp].SetReplica(true)
		}
		return fmt.Sprintf("%s now returns %d (bounds %d..%d): %s", was, v, cr.lower, cr.upper, what), nil
	}
}

var counterMutations = []Mutation{
	{
		Name: "counter-lost-ack", Kind: Anomaly, Checker: "counter", Figure: lostFigure,
		Class: "the final read lacks an acknowledged increment",
		Apply: plantCounter(func(cr counterRead) bool { return cr.final && cr.lastAck > 0 },
			func(cr counterRead) int64 { return cr.lower - cr.lastAck }, false, "one acknowledged add lost"),
	},
	{
		Name: "counter-double-apply", Kind: Anomaly, Checker: "counter", Figure: unexpectedFigure,
		Class: "the final read counts an increment twice (above every add sent)",
		Apply: plantCounter(func(cr counterRead) bool { return cr.final && cr.lastAck > 0 },
			func(cr counterRead) int64 { return cr.upper + cr.lastAck }, false, "one add applied twice"),
	},
	{
		Name: "counter-stale-read", Kind: Anomaly, Checker: "counter", Figure: badReadsFigure,
		Class: "a read below the increments acknowledged before it began",
		Apply: plantCounter(func(cr counterRead) bool { return !cr.final && cr.lower > 0 },
			func(cr counterRead) int64 { return cr.lower - 1 }, false, "below its lower bound"),
	},
	{
		Name: "counter-future-read", Kind: Anomaly, Checker: "counter", Figure: badReadsFigure,
		Class: "a read above every increment sent before it ended",
		Apply: plantCounter(func(cr counterRead) bool { return !cr.final },
			func(cr counterRead) int64 { return cr.upper + 1 }, false, "above its upper bound"),
	},
	{
		Name: "counter-replica-future-read", Kind: Anomaly, Checker: "counter", Figure: class("impossible-replica-read"),
		Class: "a replica's read above every increment sent before it ended",
		Apply: plantCounter(func(cr counterRead) bool { return !cr.final },
			func(cr counterRead) int64 { return cr.upper + 1 }, true, "above its upper bound, from a replica"),
	},
	{
		Name: "counter-garbage-read", Kind: Anomaly, Checker: "counter", Figure: class("garbage"),
		Class: "a read's reply is no integer",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			cr, ok := counterPick(r, rng, func(counterRead) bool { return true })
			if !ok {
				return "", ErrNotApplicable
			}
			was := r.describe(cr.c.comp)
			r.setRaw(cr.c.comp, `"12x"`)
			return was + ` now returns "12x"`, nil
		},
	},
}
