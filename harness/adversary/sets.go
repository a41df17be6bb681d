package adversary

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/redline-dev/redline/history"
)

// Set (set checker): adds of unique elements and reads of whole sets.

type setAdd struct {
	c       call
	element int64
}

// setAdds are the adds of the run by element.
func (r *Run) setAdds() map[int64]setAdd {
	out := map[int64]setAdd{}
	for _, c := range r.calls() {
		inv := r.invOf(c)
		if inv.F != "add" {
			continue
		}
		if v, ok := inv.Int(); ok {
			out[v] = setAdd{c, v}
		}
	}
	return out
}

// setReads are the ok primary reads whose value is a list of elements.
func (r *Run) setReads(final *bool) []call {
	var out []call
	for _, c := range r.okReads(final) {
		if _, ok := r.compOf(c).Ints(); ok {
			out = append(out, c)
		}
	}
	return out
}

// latestSetReads is, per key, the read of it invoked last.
func (r *Run) latestSetReads() []call {
	last := map[string]call{}
	for _, c := range r.setReads(nil) {
		k := r.invOf(c).Key
		if l, ok := last[k]; !ok || r.invOf(c).Time > r.invOf(l).Time {
			last[k] = c
		}
	}
	var out []call
	for _, k := range sortedKeys(last) {
		out = append(out, last[k])
	}
	return out
}

func (r *Run) isSetRun() bool {
	for _, c := range r.setReads(nil) {
		if vs, _ := r.compOf(c).Ints(); len(vs) > 0 {
			return true
		}
	}
	return false
}

var setMutations = []Mutation{
	{
		Name: "set-lost-ack", Kind: Anomaly, Checker: "set", Figure: lostFigure,
		Class: "the key's latest read lacks an element whose add was acknowledged before it began",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			adds := r.setAdds()
			type choice struct {
				read call
				el   int64
			}
			var xs []choice
			for _, rd := range r.latestSetReads() {
				vs, _ := r.compOf(rd).Ints()
				for _, v := range vs {
					if a, ok := adds[v]; ok && r.outcome(a.c) == history.OK && r.end(a.c) < r.invOf(rd).Time {
						xs = append(xs, choice{rd, v})
					}
				}
			}
			ch, ok := pick(rng, xs)
			if !ok {
				return "", ErrNotApplicable
			}
			was := r.describe(ch.read.comp)
			vs, _ := r.compOf(ch.read).Ints()
			r.setValue(ch.read.comp, slices.DeleteFunc(slices.Clone(vs), func(v int64) bool { return v == ch.el }))
			return fmt.Sprintf("%s now lacks %d, acknowledged by %s", was, ch.el, r.describe(adds[ch.el].c.comp)), nil
		},
	},
	{
		Name: "set-phantom-element", Kind: Anomaly, Checker: "set", Figure: unexpectedFigure,
		Class: "a read returns an element nobody added",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			if !r.isSetRun() {
				return "", ErrNotApplicable
			}
			rd, ok := pick(rng, r.setReads(nil))
			if !ok {
				return "", ErrNotApplicable
			}
			was := r.describe(rd.comp)
			vs, _ := r.compOf(rd).Ints()
			r.setValue(rd.comp, append(slices.Clone(vs), neverWritten))
			return fmt.Sprintf("%s now also returns %d", was, neverWritten), nil
		},
	},
	{
		Name: "set-failed-add-read", Kind: Anomaly, Checker: "set", Figure: unexpectedFigure,
		Class: "a read returns an element whose add certainly failed",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			if !r.isSetRun() {
				return "", ErrNotApplicable
			}
			var failed []setAdd
			adds := r.setAdds()
			for _, v := range sortedInts(adds) {
				if r.outcome(adds[v].c) == history.Fail {
					failed = append(failed, adds[v])
				}
			}
			a, ok := pick(rng, failed)
			if !ok {
				// No add failed in this run: make one fail, then read it.
				var acked []setAdd
				for _, v := range sortedInts(adds) {
					if r.outcome(adds[v].c) == history.OK {
						acked = append(acked, adds[v])
					}
				}
				if a, ok = pick(rng, acked); !ok {
					return "", ErrNotApplicable
				}
				r.Ops[a.c.comp].Type = history.Fail
				r.Ops[a.c.comp].SetError("CLUSTERDOWN The cluster is down")
			}
			var later []call
			for _, rd := range r.setReads(nil) {
				if r.invOf(rd).Key == r.invOf(a.c).Key && r.invOf(rd).Time > r.end(a.c) {
					later = append(later, rd)
				}
			}
			rd, ok := pick(rng, later)
			if !ok {
				return "", ErrNotApplicable
			}
			was := r.describe(rd.comp)
			vs, _ := r.compOf(rd).Ints()
			if !slices.Contains(vs, a.element) {
				vs = append(slices.Clone(vs), a.element)
			}
			r.setValue(rd.comp, vs)
			return fmt.Sprintf("%s now returns %d, whose add %s failed", was, a.element, r.describe(a.c.comp)), nil
		},
	},
}
