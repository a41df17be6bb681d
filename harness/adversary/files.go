package adversary

import (
	"bytes"
	"fmt"
	"math/rand/v2"

	"github.com/redline-dev/redline/history"
)

// Lies of the run's files and of the history's shape.

// topologyLines are the non-empty lines of topology.jsonl.
func (r *Run) topologyLines() [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(r.Files[TopologyFile], []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out
}

func (r *Run) setTopologyLines(ls [][]byte) {
	r.Files[TopologyFile] = append(bytes.Join(ls, []byte("\n")), '\n')
}

// finalReadsOf are the calls of the final phase on keys that saw an
// acknowledged add or list-append transaction before it (the reads their
// checkers need to judge the key's end), by key.
func (r *Run) finalReadsOf() map[string][]call {
	fs := r.finalStart()
	if fs < 0 {
		return nil
	}
	written := map[string]bool{}
	out := map[string][]call{}
	for _, c := range r.calls() {
		inv := r.invOf(c)
		if inv.Time < fs {
			// The keys whose checkers need a final read (counter, set,
			// list-append; a register is judged op by op and a bank read
			// by read, so neither needs one).
			if (inv.F == "add" || inv.F == "txn") && r.outcome(c) == history.OK {
				written[inv.Key] = true
			}
			continue
		}
		out[inv.Key] = append(out[inv.Key], c)
	}
	for k := range out {
		if !written[k] {
			delete(out, k)
		}
	}
	return out
}

var fileMutations = []Mutation{
	{
		Name: "history-torn-last-line", Kind: Lie, Checker: "run-files",
		Class: "the history's last line is torn (the run crashed mid-write)",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			b := r.encodeOps()
			last := bytes.LastIndexByte(b[:len(b)-1], '\n') + 1
			n := len(b) - 1 - last
			if n < 2 {
				return "", ErrNotApplicable
			}
			cut := last + 1 + rng.IntN(n-1)
			r.Raw = b[:cut]
			return fmt.Sprintf("history cut at byte %d of %d, in its last line", cut, len(b)), nil
		},
	},
	{
		Name: "history-duplicate-index", Kind: Lie, Checker: "run-files",
		Class: "two entries share one op index",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			var client []int
			for i := range r.Ops {
				if r.Ops[i].Process != history.Nemesis && i > 0 {
					client = append(client, i)
				}
			}
			i, ok := pick(rng, client)
			if !ok {
				return "", ErrNotApplicable
			}
			j := rng.IntN(i)
			was := r.describe(i)
			r.Ops[i].Index = r.Ops[j].Index
			return fmt.Sprintf("%s now carries the index of %s", was, r.describe(j)), nil
		},
	},
	{
		Name: "history-cut-at-a-line", Kind: Lie, Checker: "run-files",
		Class: "the history ends cleanly before its final reads (a run that stopped writing)",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			fs := -1
			for i := range r.Ops {
				if r.Ops[i].Process == history.Nemesis && r.Ops[i].F == history.FinalReads {
					fs = i
				}
			}
			if fs < 0 {
				return "", ErrNotApplicable
			}
			r.Ops = r.Ops[:fs]
			return fmt.Sprintf("history ends before the final-reads marker (entry %d)", fs), nil
		},
	},
	{
		Name: "final-read-missing", Kind: Lie, Checker: "",
		Class: "a counter's, set's or list group's final read is missing (the checkers that need one)",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			fr := r.finalReadsOf()
			k, ok := pick(rng, sortedKeys(fr))
			if !ok {
				return "", ErrNotApplicable
			}
			var pos []int
			for _, c := range fr[k] {
				pos = append(pos, c.inv)
				if c.comp >= 0 {
					pos = append(pos, c.comp)
				}
			}
			r.remove(pos...)
			return fmt.Sprintf("the %d final-phase ops of %s removed", len(fr[k]), k), nil
		},
	},
	{
		Name: "topology-out-of-order", Kind: Lie, Checker: "run-files",
		Class: "two topology samples swapped (out of time order)",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			ls := r.topologyLines()
			if len(ls) < 2 {
				return "", ErrNotApplicable
			}
			i := rng.IntN(len(ls) - 1)
			ls[i], ls[i+1] = ls[i+1], ls[i]
			r.setTopologyLines(ls)
			return fmt.Sprintf("topology samples %d and %d swapped", i+1, i+2), nil
		},
	},
	{
		Name: "topology-samples-missing", Kind: Lie, Checker: "run-files",
		Class: "topology samples missing (the file lost its middle, or is gone)",
		Gap: "config-epoch reads the samples: a file emptied is unknown (the runner writes a first sample as it creates it), " +
			"but a file gone looks like a run of a runner before the sampler (not applicable), and a file that lost its middle " +
			"keeps its first and last samples, between which every change of owner is judged as one (a promotion still shows " +
			"its higher epoch); the file records changes only, so a lost change leaves no trace in it",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			ls := r.topologyLines()
			if len(ls) == 0 {
				return "", ErrNotApplicable
			}
			if len(ls) < 3 {
				delete(r.Files, TopologyFile)
				return "topology.jsonl removed", nil
			}
			r.setTopologyLines(append(ls[:1:1], ls[len(ls)-1]))
			return fmt.Sprintf("topology samples 2..%d of %d removed", len(ls)-1, len(ls)), nil
		},
	},
}
