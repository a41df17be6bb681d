package adversary

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/redline-dev/redline/history"
)

// Transactions (txn workload): bank read-alls and Elle-style list-append
// transactions; the script workload's SCRIPT LOAD.

// mop is one micro-op of a list-append transaction: ["r", key, list] or
// ["append", key, element].
type mop struct {
	f    string
	key  string
	list []int64
	el   int64
}

func decodeMops(raw json.RawMessage) ([]mop, bool) {
	var xs [][]json.RawMessage
	if json.Unmarshal(raw, &xs) != nil {
		return nil, false
	}
	out := make([]mop, 0, len(xs))
	for _, x := range xs {
		if len(x) != 3 {
			return nil, false
		}
		var m mop
		if json.Unmarshal(x[0], &m.f) != nil || json.Unmarshal(x[1], &m.key) != nil {
			return nil, false
		}
		switch m.f {
		case "r":
			_ = json.Unmarshal(x[2], &m.list)
		case "append":
			if json.Unmarshal(x[2], &m.el) != nil {
				return nil, false
			}
		default:
			return nil, false
		}
		out = append(out, m)
	}
	return out, true
}

func encodeMops(ms []mop, withLists bool) json.RawMessage {
	xs := make([][]any, 0, len(ms))
	for _, m := range ms {
		switch {
		case m.f == "append":
			xs = append(xs, []any{"append", m.key, m.el})
		case withLists:
			l := m.list
			if l == nil {
				l = []int64{}
			}
			xs = append(xs, []any{"r", m.key, l})
		default:
			xs = append(xs, []any{"r", m.key, nil})
		}
	}
	b, _ := json.Marshal(xs)
	return b
}

// txnCalls are the ok list-append transactions with their micro-ops.
func (r *Run) txnCalls() (calls []call, mops [][]mop) {
	for _, c := range r.calls() {
		if r.invOf(c).F != "txn" || r.outcome(c) != history.OK {
			continue
		}
		if ms, ok := decodeMops(r.compOf(c).Value); ok {
			calls = append(calls, c)
			mops = append(mops, ms)
		}
	}
	return calls, mops
}

// longestReads is, per list, the longest list any ok transaction read.
func longestReads(mops [][]mop) map[string][]int64 {
	out := map[string][]int64{}
	for _, ms := range mops {
		for _, m := range ms {
			if m.f == "r" && len(m.list) > len(out[m.key]) {
				out[m.key] = m.list
			}
		}
	}
	return out
}

// readAlls are the ok bank reads with their balances.
func (r *Run) readAlls() []call {
	var out []call
	for _, c := range r.calls() {
		if r.invOf(c).F == "read-all" && r.outcome(c) == history.OK {
			var m map[string]int64
			if json.Unmarshal(r.compOf(c).Value, &m) == nil && len(m) > 1 {
				out = append(out, c)
			}
		}
	}
	return out
}

func plantBank(edit func(m map[string]int64, accts []string, rng *rand.Rand) string) func(*Run, *rand.Rand) (string, error) {
	return func(r *Run, rng *rand.Rand) (string, error) {
		c, ok := pick(rng, r.readAlls())
		if !ok {
			return "", ErrNotApplicable
		}
		var m map[string]int64
		_ = json.Unmarshal(r.compOf(c).Value, &m)
		was := r.describe(c.comp)
		what := edit(m, sortedKeys(m), rng)
		r.setValue(c.comp, m)
		return was + ": " + what, nil
	}
}

var txnMutations = []Mutation{
	{
		Name: "bank-partial-transfer-seen", Kind: Anomaly, Checker: "bank", Figure: wrongTotalFigure,
		Class: "a read of every balance sees half a transfer (the total changed)",
		Apply: plantBank(func(m map[string]int64, accts []string, rng *rand.Rand) string {
			a := accts[rng.IntN(len(accts))]
			m[a] += 3
			return fmt.Sprintf("%s now reads 3 more", a)
		}),
	},
	{
		Name: "bank-negative-balance", Kind: Anomaly, Checker: "bank", Figure: negativeBalancesFigure,
		Class: "a balance below zero (the total kept)",
		Apply: plantBank(func(m map[string]int64, accts []string, rng *rand.Rand) string {
			i := rng.IntN(len(accts))
			a, b := accts[i], accts[(i+1)%len(accts)]
			d := m[a] + 5
			m[a] -= d
			m[b] += d
			return fmt.Sprintf("%d moved from %s (now -5) to %s", d, a, b)
		}),
	},
	{
		Name: "list-lost-append", Kind: Anomaly, Checker: "list-append", Figure: class("lost-append"),
		Class: "a list's latest read lacks an append acknowledged before it began",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			calls, mops := r.txnCalls()
			type at struct{ call, mop int }
			latest := map[string]at{}
			acked := map[int64]call{}
			for i, ms := range mops {
				for j, m := range ms {
					switch m.f {
					case "r":
						if l, ok := latest[m.key]; !ok || r.invOf(calls[i]).Time > r.invOf(calls[l.call]).Time {
							latest[m.key] = at{i, j}
						}
					case "append":
						acked[m.el] = calls[i]
					}
				}
			}
			type choice struct {
				at at
				el int64
			}
			var xs []choice
			for _, k := range sortedKeys(latest) {
				l := latest[k]
				rd := calls[l.call]
				for _, el := range mops[l.call][l.mop].list {
					if a, ok := acked[el]; ok && a != rd && r.end(a) < r.invOf(rd).Time {
						xs = append(xs, choice{l, el})
					}
				}
			}
			ch, ok := pick(rng, xs)
			if !ok {
				return "", ErrNotApplicable
			}
			c := calls[ch.at.call]
			ms := slices.Clone(mops[ch.at.call])
			m := &ms[ch.at.mop]
			was := r.describe(c.comp)
			m.list = slices.DeleteFunc(slices.Clone(m.list), func(e int64) bool { return e == ch.el })
			r.Ops[c.comp].Value = encodeMops(ms, true)
			return fmt.Sprintf("%s: its read of %s now lacks %d, acknowledged by %s", was, m.key, ch.el, r.describe(acked[ch.el].comp)), nil
		},
	},
	{
		Name: "list-g-single", Kind: Anomaly, Checker: "list-append", Figure: class("G-single"),
		Class: "a transaction sees one of another's appends but not the other, which the version order puts after its read (G-single: one anti-dependency cycle)",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			calls, mops := r.txnCalls()
			longest := longestReads(mops)
			// U appended u to x and w to z, both seen by later reads.
			type choice struct {
				u       int
				x, z    string
				px, pz  []int64
				elU, eW int64
			}
			var xs []choice
			for i, ms := range mops {
				for _, a := range ms {
					for _, b := range ms {
						if a.f != "append" || b.f != "append" || a.key == b.key {
							continue
						}
						ix, iz := slices.Index(longest[a.key], a.el), slices.Index(longest[b.key], b.el)
						if ix < 0 || iz < 0 {
							continue
						}
						xs = append(xs, choice{i, a.key, b.key, longest[a.key][:ix], longest[b.key][:iz+1], a.el, b.el})
					}
				}
			}
			ch, ok := pick(rng, xs)
			if !ok {
				return "", ErrNotApplicable
			}
			// T reads x before U's append and z with U's append in it,
			// running alongside U (no real-time order between them): T
			// rw-> U (U's append to x follows what T read), U wr-> T.
			u := calls[ch.u]
			inv := r.Ops[u.inv]
			var proc history.Process
			var idx int64
			for i := range r.Ops {
				proc = max(proc, r.Ops[i].Process)
				idx = max(idx, r.Ops[i].Index)
			}
			ms := []mop{{f: "r", key: ch.x, list: ch.px}, {f: "r", key: ch.z, list: ch.pz}}
			tInv := history.Op{Index: idx + 1, Time: inv.Time - 1, Process: proc + 1, Type: history.Invoke, F: "txn", Key: inv.Key,
				Value: encodeMops(ms, false)}
			tOk := history.Op{Index: idx + 2, Time: r.Ops[u.comp].Time + 1, Process: proc + 1, Type: history.OK, F: "txn", Key: inv.Key,
				Value: encodeMops(ms, true), Node: r.Ops[u.comp].Node}
			out := make([]history.Op, 0, len(r.Ops)+2)
			out = append(out, r.Ops[:u.inv]...)
			out = append(out, tInv)
			out = append(out, r.Ops[u.inv:u.comp+1]...)
			out = append(out, tOk)
			out = append(out, r.Ops[u.comp+1:]...)
			r.Ops = out
			return fmt.Sprintf("a transaction beside %s reads %s without %d and %s with %d", r.describe(u.inv), ch.x, ch.elU, ch.z, ch.eW), nil
		},
	},
}

var scriptMutations = []Mutation{
	{
		Name: "script-wrong-sha", Kind: Anomaly, Checker: "script", Figure: badLoadSHAFigure,
		Class: "SCRIPT LOAD answers a SHA that is not the script's",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			var loads []call
			for _, c := range r.calls() {
				if r.invOf(c).F == "load" && r.outcome(c) == history.OK {
					loads = append(loads, c)
				}
			}
			c, ok := pick(rng, loads)
			if !ok {
				return "", ErrNotApplicable
			}
			was := r.describe(c.comp)
			r.setValue(c.comp, "0000000000000000000000000000000000000000")
			return was + " now answers a SHA of zeros", nil
		},
	},
}
