package adversary

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/redline-dev/redline/history"
)

// neverWritten is a register value, counter read or set element no
// workload writes (their values are small, or a worker's id shifted left
// by 32 plus a count well below 2^32).
const neverWritten = 1_000_003

// Register (linearizable checker): writes and cas of small integers.

// registerWrite is one op that may have written a value to a register.
type registerWrite struct {
	c     call
	value int64
}

// registerWrites are, per key, the writes and cas ops that may have
// written (every one not known to have failed), with the value each wrote.
func (r *Run) registerWrites() map[string][]registerWrite {
	out := map[string][]registerWrite{}
	for _, c := range r.calls() {
		inv := r.invOf(c)
		if r.outcome(c) == history.Fail {
			continue
		}
		switch inv.F {
		case "write":
			if v, ok := inv.Int(); ok {
				out[inv.Key] = append(out[inv.Key], registerWrite{c, v})
			}
		case "cas":
			if vs, ok := inv.Ints(); ok && len(vs) == 2 {
				out[inv.Key] = append(out[inv.Key], registerWrite{c, vs[1]})
			}
		}
	}
	return out
}

// staleChoice is a read and a value it can certainly not return: every
// write of the value completed before an acknowledged write of another
// value began, which completed before the read began.
type staleChoice struct {
	read  call
	value int64
	over  call // the write that certainly replaced it
}

// staleChoices lists them, for reads on the side of the final marker
// final says.
func (r *Run) staleChoices(final bool) []staleChoice {
	writes := r.registerWrites()
	reads := map[string][]call{}
	for _, c := range r.okReads(&final) {
		reads[r.invOf(c).Key] = append(reads[r.invOf(c).Key], c)
	}
	var out []staleChoice
	for _, key := range sortedKeys(reads) {
		byValue := map[int64][]registerWrite{}
		for _, w := range writes[key] {
			byValue[w.value] = append(byValue[w.value], w)
		}
		for v, ws := range byValue {
			last, certain := int64(0), true
			for _, w := range ws {
				if r.outcome(w.c) != history.OK {
					certain = false
					break
				}
				last = max(last, r.end(w.c))
			}
			if !certain {
				continue
			}
			// The acknowledged write of another value that began after
			// every write of v ended and ended first.
			var over *registerWrite
			for i, w := range writes[key] {
				if w.value != v && r.outcome(w.c) == history.OK && r.invOf(w.c).Time > last &&
					(over == nil || r.end(w.c) < r.end(over.c)) {
					over = &writes[key][i]
				}
			}
			if over == nil {
				continue
			}
			for _, rd := range reads[key] {
				if r.invOf(rd).Time > r.end(over.c) {
					out = append(out, staleChoice{rd, v, over.c})
				}
			}
		}
	}
	// Map order above: sort for a seed to pick the same choice each time.
	slices.SortFunc(out, func(a, b staleChoice) int {
		if a.read.inv != b.read.inv {
			return a.read.inv - b.read.inv
		}
		return int(a.value - b.value)
	})
	return out
}

func plantStale(final bool) func(*Run, *rand.Rand) (string, error) {
	return func(r *Run, rng *rand.Rand) (string, error) {
		ch, ok := pick(rng, r.staleChoices(final))
		if !ok {
			return "", ErrNotApplicable
		}
		was := r.describe(ch.read.comp)
		r.setValue(ch.read.comp, ch.value)
		return fmt.Sprintf("%s now returns %d, which %s had certainly replaced", was, ch.value, r.describe(ch.over.inv)), nil
	}
}

// futureChoices: a read and a value every write of which began after the
// read ended.
func (r *Run) futureChoices() []staleChoice {
	writes := r.registerWrites()
	var out []staleChoice
	for _, rd := range r.okReads(nil) {
		key := r.invOf(rd).Key
		first := map[int64]int64{}
		var firstW = map[int64]call{}
		for _, w := range writes[key] {
			if t, seen := first[w.value]; !seen || r.invOf(w.c).Time < t {
				first[w.value] = r.invOf(w.c).Time
				firstW[w.value] = w.c
			}
		}
		for _, v := range sortedInts(first) {
			if first[v] > r.end(rd) {
				out = append(out, staleChoice{rd, v, firstW[v]})
			}
		}
	}
	return out
}

func sortedInts[V any](m map[int64]V) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// registerReads: the ok reads of a register run (its writes have cas).
func (r *Run) registerReads() []call {
	if len(r.registerWrites()) == 0 {
		return nil
	}
	return r.okReads(nil)
}

var registerMutations = []Mutation{
	{
		Name: "register-phantom-read", Kind: Anomaly, Checker: "linearizable", Figure: anomalousKeysFigure,
		Class: "a read returns a value no write wrote",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			c, ok := pick(rng, r.registerReads())
			if !ok {
				return "", ErrNotApplicable
			}
			was := r.describe(c.comp)
			r.setValue(c.comp, neverWritten)
			return fmt.Sprintf("%s now returns %d", was, neverWritten), nil
		},
	},
	{
		Name: "register-stale-read", Kind: Anomaly, Checker: "linearizable", Figure: staleReadsFigure,
		Class: "a read returns a value a completed write had replaced before it began",
		Apply: plantStale(false),
	},
	{
		Name: "register-lost-write", Kind: Anomaly, Checker: "linearizable", Figure: staleReadsFigure,
		Class: "a final read misses an acknowledged write (returns the value it replaced)",
		Apply: plantStale(true),
	},
	{
		Name: "register-future-read", Kind: Anomaly, Checker: "linearizable", Figure: anomalousKeysFigure,
		Class: "a read returns a value first written after it ended",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			ch, ok := pick(rng, r.futureChoices())
			if !ok {
				return "", ErrNotApplicable
			}
			was := r.describe(ch.read.comp)
			r.setValue(ch.read.comp, ch.value)
			return fmt.Sprintf("%s now returns %d, first written by %s after it ended", was, ch.value, r.describe(ch.over.inv)), nil
		},
	},
	{
		Name: "register-replica-phantom", Kind: Anomaly, Checker: "linearizable", Figure: class("impossible-replica-read"),
		Class: "a replica's read returns a value no write wrote",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			c, ok := pick(rng, r.registerReads())
			if !ok {
				return "", ErrNotApplicable
			}
			rep := r.replicaOf(r.Ops[c.comp].Node)
			if rep == "" {
				return "", ErrNotApplicable
			}
			was := r.describe(c.comp)
			r.setValue(c.comp, neverWritten)
			r.Ops[c.comp].Node = rep
			r.Ops[c.comp].SetReplica(true)
			return fmt.Sprintf("%s now returns %d, served by replica %s", was, neverWritten, rep), nil
		},
	},
	{
		Name: "register-replica-stale", Kind: Allowed, Checker: "linearizable",
		Class: "a replica's read returns a replaced value (stale by design: allowed)",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			ch, ok := pick(rng, r.staleChoices(false))
			if !ok {
				return "", ErrNotApplicable
			}
			// From a replica's address: the primary's, flagged, is the
			// lie register-primary-posing-as-replica.
			rep := r.replicaOf(r.Ops[ch.read.comp].Node)
			if rep == "" {
				return "", ErrNotApplicable
			}
			was := r.describe(ch.read.comp)
			r.setValue(ch.read.comp, ch.value)
			r.Ops[ch.read.comp].Node = rep
			r.Ops[ch.read.comp].SetReplica(true)
			return fmt.Sprintf("%s now returns %d from replica %s", was, ch.value, rep), nil
		},
	},
	{
		Name: "register-primary-posing-as-replica", Kind: Lie, Checker: "linearizable",
		Class: "a stale read the shard's primary served claims a replica served it",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			ch, ok := pick(rng, r.staleChoices(false))
			if !ok {
				return "", ErrNotApplicable
			}
			was := r.describe(ch.read.comp)
			r.setValue(ch.read.comp, ch.value)
			r.Ops[ch.read.comp].SetReplica(true)
			return fmt.Sprintf("%s now returns %d and says a replica served it, though %s is the primary", was, ch.value, r.Ops[ch.read.comp].Node), nil
		},
	},
	{
		Name: "register-replica-posing-as-primary", Kind: Lie, Checker: "linearizable",
		Class: "a stale read a replica served says nothing of it (no replica flag)",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			ch, ok := pick(rng, r.staleChoices(false))
			if !ok {
				return "", ErrNotApplicable
			}
			rep := r.replicaOf(r.Ops[ch.read.comp].Node)
			if rep == "" {
				return "", ErrNotApplicable
			}
			was := r.describe(ch.read.comp)
			r.setValue(ch.read.comp, ch.value)
			r.Ops[ch.read.comp].Node = rep
			return fmt.Sprintf("%s now returns %d from replica %s, unflagged", was, ch.value, rep), nil
		},
	},
}

// replicaOf is the address of a replica of the primary at addr, from the
// census ("" when unknown).
func (r *Run) replicaOf(addr string) string {
	c := history.CensusOf(r.Ops)
	if c == nil {
		return ""
	}
	var id string
	for _, n := range c.Nodes {
		if n.Addr == addr {
			id = n.ID
		}
	}
	for _, n := range c.Nodes {
		if n.Role == "replica" && n.Primary == id && id != "" {
			return n.Addr
		}
	}
	return ""
}
