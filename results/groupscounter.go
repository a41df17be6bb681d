package results

import (
	"encoding/json"
	"math"
	"slices"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

// A counter's lost increments cannot be named: a read below the
// increments acknowledged before it says how many went missing, not
// which. The counter checker's attribution therefore names the key's
// last acknowledged increment before its final read (Ack), which is no
// lost write, and where the loss first showed (counter figures,
// revealed_index and whole_before_index: a read below its bound and the
// last read before it that held every increment). A group of counter
// losses is placed where the loss first showed, never at that last
// increment's node and window (make run grouped losses that first showed
// after an isolate-primary partition under a later, unrelated fault, as
// "the server lost it", 6 runs of 6 over three sessions).

// counterReveal is where the counter checker says a key's loss first
// showed: the invocation index of the read that showed it and of the
// last read before it that held every acknowledged increment (-1: none).
// ok is false when the checker's figures do not say (an older
// results.json, a key they do not list, figures that do not decode).
func (d *runData) counterReveal(checkerName, key string) (revealed, whole int64, ok bool) {
	r, found := d.sum.Checkers[checkerName]
	if !found || r.Figures == nil {
		return 0, 0, false
	}
	b, err := json.Marshal(r.Figures)
	if err != nil {
		return 0, 0, false
	}
	var f struct {
		LostKeys []struct {
			Key      string `json:"key"`
			Revealed *int64 `json:"revealed_index"`
			Whole    *int64 `json:"whole_before_index"`
		} `json:"lost_keys"`
	}
	if json.Unmarshal(b, &f) != nil {
		return 0, 0, false
	}
	for _, k := range f.LostKeys {
		if k.Key != key || k.Revealed == nil {
			continue
		}
		whole = -1
		if k.Whole != nil {
			whole = *k.Whole
		}
		return *k.Revealed, whole, true
	}
	return 0, 0, false
}

// revealedWords places a counter key's loss where it first showed: the
// faults the attribution names for that stretch (between the last read
// that held every increment and the read that showed the loss).
func revealedWords(a checker.Attribution) string {
	if len(a.Faults) == 0 {
		return "loss first shown with no fault before it"
	}
	s := "loss first shown after " + a.Faults[0]
	if len(a.Faults) > 1 {
		s += " and " + a.Faults[len(a.Faults)-1]
		if len(a.Faults) > 2 {
			s = "loss first shown after " + a.Faults[0] + ", …, " + a.Faults[len(a.Faults)-1]
		}
	}
	return s
}

// keyAdd is an acknowledged increment of one counter key, as documentedCounter
// reads the history.
type keyAdd struct {
	end   int64 // completion time
	delta int64
	node  string // the acknowledging node's address
	// waited: a WAIT was satisfied for it, or the run asked for WAIT and
	// the op has no record of one: not an increment asynchronous
	// replication alone would lose.
	waited bool
}

// documentedCounter tells whether a counter key's loss, as it first
// showed, is Redis Cluster's documented asynchronous-replication loss as
// far as the amounts show: the read that showed it (revealed) fell short
// of the increments acknowledged before it began by a deficit D; a
// partition in force between the last read that held every increment and
// that read cut off a node that was a primary at its start and was
// demoted after it; and that node, while cut off, acknowledged increments
// of the key with no WAIT satisfied that add up to at least D. The
// increments lost cannot be named, so this says only that the amounts
// are what the documented loss would give. Anything missing or
// contradicting (a read that is not the key's, a deficit that is not
// there, a negative delta, a node that did not answer the census or
// contradicts the views): false, and the loss stays unexplained.
func (d *runData) documentedCounter(a checker.Attribution, census *history.Census, windows []checker.Window, snaps []snapshot) (groupEvidence, bool) {
	ev := groupEvidence{window: -1}
	if a.Kind != "lost-increment" || a.Verdict != checker.ServerLost || a.Unserved != nil || census == nil {
		return ev, false
	}
	revealed, whole, ok := d.counterReveal(a.Checker, a.Key)
	if !ok {
		return ev, false
	}
	read := func(index int64) (inv, comp *history.Op, ok bool) {
		inv, found := d.op(index)
		if !found || inv.Type != history.Invoke || inv.NemesisOp() || inv.Key != a.Key || history.OpName(inv.F) != checker.OpRead {
			return nil, nil, false
		}
		comp, found = d.completion(index)
		if !found || comp == inv || comp.Type != history.OK || comp.Process != inv.Process {
			return nil, nil, false
		}
		return inv, comp, true
	}
	rInv, rComp, ok := read(revealed)
	if !ok {
		return ev, false
	}
	value, ok := history.ParseInt(rComp.Value)
	if !ok {
		return ev, false
	}
	from := int64(math.MinInt64) // the stretch the loss happened in: from the last whole read's end
	if whole >= 0 {
		_, wComp, ok := read(whole)
		if !ok || wComp.Time >= rInv.Time {
			return ev, false
		}
		from = wComp.Time
	}
	adds, ok := d.keyAdds(a.Key)
	if !ok {
		return ev, false
	}
	// The bound the revealing read fell short of: every increment
	// acknowledged before it began (the counter checker's lower bound).
	var lower int64
	for _, ad := range adds {
		if ad.end < rInv.Time {
			lower += ad.delta
		}
	}
	deficit := lower - value
	if deficit <= 0 {
		return ev, false // the figures say it showed a loss; the history does not
	}
	for i, w := range windows {
		if w.Fault != "partition" || w.Start >= rInv.Time || (!w.Open && w.End < from) {
			continue
		}
		until := rInv.Time
		if !w.Open {
			until = min(until, w.End)
		}
		// What each node acknowledged of the key while the partition was
		// in force, with no WAIT satisfied.
		sum := map[string]int64{}
		after := map[string]int64{}
		for _, ad := range adds {
			if ad.end < w.Start || ad.end >= until || ad.node == "" {
				continue
			}
			if ad.waited {
				continue
			}
			sum[ad.node] += ad.delta
			after[ad.node] = max(after[ad.node], ad.end-w.Start)
		}
		addrs := make([]string, 0, len(sum))
		for n := range sum {
			addrs = append(addrs, n)
		}
		slices.Sort(addrs)
		for _, addr := range addrs {
			if sum[addr] < deficit {
				continue
			}
			cn, ok := census.Node(addr)
			if !ok || cn.Name == "" || cn.Role != "replica" && cn.Role != "primary" {
				continue
			}
			if contradicts(a, cn, snaps, rInv.Time) {
				continue
			}
			isolated, cut := d.cutOff(w, cn.Name)
			if !cut || !primaryAt(snaps, cn, float64(w.Start)/1e9) || !demotedAfter(cn, snaps, w.Start) {
				continue
			}
			ev.window, ev.node, ev.isolated = i, cn.Name, isolated
			ev.after = float64(after[addr]) / 1e9
			ev.windowText = windowWords(w)
			return ev, true
		}
	}
	return ev, false
}

// contradicts says the evidence about node cn disagrees with itself: the
// attribution's census gives it another role than the history's, or the
// census says replica while the last view, after t (the ack), shows a
// primary.
func contradicts(a checker.Attribution, cn history.CensusNode, snaps []snapshot, t int64) bool {
	for _, c := range a.Copy {
		if c.Node == cn.Name && c.Role != cn.Role {
			return true
		}
	}
	n := len(snaps)
	return cn.Role == "replica" && n > 0 && snaps[n-1].t > float64(t)/1e9 && roleIn(snaps[n-1], cn) == "primary"
}

// demotedAfter says the node was demoted after t (a partition's start): a
// replica in the census at the end, or in a view after t (a node
// re-promoted later, when its new primary failed in turn, had been
// demoted: the writes it acknowledged cut off were gone with its data).
func demotedAfter(cn history.CensusNode, snaps []snapshot, t int64) bool {
	if cn.Role == "replica" {
		return true
	}
	for _, v := range snaps {
		if v.t > float64(t)/1e9 && roleIn(v, cn) == "replica" {
			return true
		}
	}
	return false
}

// keyAdds is every acknowledged increment of the counter key, in one pass
// over the history (each process's invocation paired with its next
// entry). ok is false when an increment's delta does not parse or is
// negative (the bound then needs the counter checker's full rules) or the
// history does not pair.
func (d *runData) keyAdds(key string) ([]keyAdd, bool) {
	if d.big != nil {
		ka := d.big.adds[key]
		if ka == nil {
			return nil, false
		}
		return ka.adds, ka.ok
	}
	open := map[history.Process]*history.Op{}
	var out []keyAdd
	for i := range d.ops {
		op := &d.ops[i]
		if op.NemesisOp() {
			continue
		}
		if op.Type == history.Invoke {
			if open[op.Process] != nil {
				return nil, false
			}
			if op.Key == key {
				open[op.Process] = op
			}
			continue
		}
		inv := open[op.Process]
		if inv == nil {
			continue // another key's, or unpaired (the checker said so)
		}
		delete(open, op.Process)
		add, ok, counts := addOf(inv, op, d)
		if !ok {
			return nil, false
		}
		if counts {
			out = append(out, add)
		}
	}
	return out, true
}

// addOf is the acknowledged increment of the call inv, comp (counts: it
// is one); ok is false when it is an increment whose delta does not parse
// or is negative.
func addOf(inv, comp *history.Op, d *runData) (add keyAdd, ok, counts bool) {
	name := history.OpName(inv.F)
	if name != checker.OpAdd && name != checker.OpIncr {
		return keyAdd{}, true, false
	}
	delta, ok := history.ParseInt(inv.Value)
	if !ok {
		if name != checker.OpIncr || inv.HasValue() {
			return keyAdd{}, false, false
		}
		delta = 1
	}
	if delta < 0 {
		return keyAdd{}, false, false
	}
	if comp.Type != history.OK {
		return keyAdd{}, true, false
	}
	return keyAdd{end: comp.Time, delta: delta, node: comp.Node, waited: d.waitCovered(inv, comp)}, true, true
}

// waitCovered says a write may have been covered by WAIT: its WAIT was
// satisfied, or the run asked for WAIT (--wait) and the op has no record
// of one (not known to be unwaited). Asynchronous replication alone loses
// only writes it does not cover.
func (d *runData) waitCovered(inv, comp *history.Op) bool {
	w := comp.WaitInfo()
	if w == nil {
		w = inv.WaitInfo()
	}
	if w == nil {
		s := d.str("wait")
		return s != "" && s != "0"
	}
	return w.Want > 0 && w.Acked >= w.Want
}
