package checker

import (
	"context"
	"slices"
	"sort"

	"github.com/redline-dev/redline/harness/history"
)

type rto struct{ o Options }

// RTO measures, for each fault window and each key the fault affected, how
// long the key went without a successful operation: from the fault's start
// to the completion of the first ok op invoked after the key's last failed
// or indeterminate op (rto_ms), and as a lower bound to the completion of
// that last failure (rto_lower_ms): a key that is exercised rarely recovered
// somewhere in between. Its verdict is always valid: it measures.
func RTO(opts ...Options) Checker { return rto{firstOpts(opts)} }

func (r rto) Name() string { return r.o.name("rto") }

func (r rto) Check(ctx context.Context, ops []history.Op) Result {
	calls, err := r.o.calls(ops)
	if err != nil {
		return invalidHistory(err)
	}
	windows := Windows(ops)
	var runEnd int64
	for i := range ops {
		runEnd = max(runEnd, ops[i].Time)
	}
	slices.SortStableFunc(calls, func(a, b call) int { return cmpInt(a.start, b.start) })
	starts := make([]int64, len(calls))
	for i := range calls {
		starts[i] = calls[i].start
	}
	var all, allLow []int64
	unrecovered := 0
	affectedTotal := 0
	perWindow := []map[string]any{}
	for wi, w := range windows {
		// A window's effects are looked for until the next fault starts.
		until := runEnd + 1
		for _, x := range windows {
			if x.Start > w.Start && x.Start < until {
				until = x.Start
			}
		}
		lo := sort.Search(len(starts), func(i int) bool { return starts[i] >= w.Start })
		hi := sort.Search(len(starts), func(i int) bool { return starts[i] >= until })
		type keyState struct {
			lastBad    int64 // invocation of the last failed/indeterminate op
			lastBadEnd int64 // its completion (its invocation if it never completed)
			recovered  int64 // completion of the first ok op invoked at or after lastBad
		}
		keys := map[string]*keyState{}
		for i := lo; i < hi; i++ {
			c := &calls[i]
			if !c.served() {
				ks := keys[c.inv.Key]
				if ks == nil {
					ks = &keyState{}
					keys[c.inv.Key] = ks
				}
				ks.lastBad, ks.lastBadEnd = c.start, c.end
				if c.end == inf {
					ks.lastBadEnd = c.start
				}
			}
		}
		for _, ks := range keys {
			ks.recovered = inf
		}
		for i := lo; i < hi; i++ {
			c := &calls[i]
			if ks := keys[c.inv.Key]; ks != nil && c.served() && c.start >= ks.lastBad && c.end < ks.recovered {
				ks.recovered = c.end
			}
		}
		// The first success may come after the next fault started.
		waiting := 0
		for _, ks := range keys {
			if ks.recovered == inf {
				waiting++
			}
		}
		for i := hi; i < len(calls) && waiting > 0; i++ {
			c := &calls[i]
			if ks := keys[c.inv.Key]; ks != nil && c.served() && ks.recovered == inf {
				ks.recovered = c.end
				waiting--
			}
		}
		var durs, lows []int64
		var stuck []string
		var unavailable int64
		for k, ks := range keys {
			low := max(0, ks.lastBadEnd-w.Start)
			lows = append(lows, low)
			unavailable = max(unavailable, low)
			if ks.recovered == inf {
				stuck = append(stuck, k)
				continue
			}
			durs = append(durs, ks.recovered-w.Start)
		}
		allLow = append(allLow, lows...)
		slices.Sort(stuck)
		all = append(all, durs...)
		unrecovered += len(stuck)
		affectedTotal += len(keys)
		if len(perWindow) < max(r.o.MaxExamples, 200) {
			perWindow = append(perWindow, map[string]any{
				"window": wi, "fault": w.Fault, "start_s": sec(w.Start), "end_s": sec(w.End),
				"nodes": nonNil(w.Nodes), "affected_keys": len(keys),
				"unrecovered_keys": capList(nonNil(stuck), r.o.MaxExamples),
				"rto_ms":           quantilesMs(durs),
				"rto_lower_ms":     quantilesMs(lows),
				"unavailable_ms":   ms(unavailable),
			})
		}
	}
	return Result{Valid: Valid, Figures: map[string]any{
		"windows":      len(windows),
		"affected":     affectedTotal,
		"unrecovered":  unrecovered,
		"rto_ms":       quantilesMs(all),
		"rto_lower_ms": quantilesMs(allLow),
		"per_window":   perWindow,
		"definition":   "per fault window and affected key (one with a failed or indeterminate op between the fault's start and the next fault's start): rto_ms runs from the fault's start to the completion of the first ok op invoked after the key's last failed or indeterminate op; rto_lower_ms only to the completion of that last failure (the key was still failing then). A key exercised rarely recovered somewhere between the two; unavailable_ms is the largest lower bound in a window",
	}}
}
