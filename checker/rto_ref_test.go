package checker

import (
	"fmt"
	"slices"
	"sort"

	"github.com/redline-dev/redline/history"
)

// The RTO checker as it was before it judged slot partitions (rto.go,
// rtopartition.go): the reference both its forms are compared with
// (TestRTOPartitioned*), kept verbatim.

// outage is what is known of one shard (or key) in a window.
type outage struct {
	lastBad int64 // invocation of the last failed/indeterminate op
	// lastTold, lastToldIdx: invocation time and index of the last
	// failure that completed (a client was told, rather than an op left
	// open when the run stopped): the evidence of an outage that outlived
	// its fault. -1 when none.
	lastTold, lastToldIdx int64
	lastBadEnd            int64 // its completion (its invocation if it never completed)
	recovered             int64 // completion of the first served op invoked at or after lastBad
}

func rtoReference(r rto, in *History) Result {
	calls, err := r.o.calls(in)
	if err != nil {
		return invalidHistory(err)
	}
	windows := in.windowsOf()
	if len(windows) == 0 {
		return NotApplicable("no fault window during the run: no nemesis struck")
	}
	if len(calls) == 0 {
		return NotApplicable("no client op in the history: no outage to measure")
	}
	runEnd := in.runEndOf()
	calls = sortedByStart(calls)
	starts := make([]int64, len(calls))
	for i := range calls {
		starts[i] = calls[i].start
	}
	views := shardViews(calls, windows, in.nodeAddrsOf())
	// servedAt[key]: the positions of the key's served calls, ascending. A
	// key's outage recovers at its first served call from a position on:
	// found by a search rather than a scan on to the end of the history
	// for a key that is never served again (each window did that scan).
	var servedAt map[string][]int32
	// busy[slot]: until when a slot was still out from an earlier fault.
	busy := map[int]int64{}
	var all, keyAll, keyLow []int64
	unrecovered, affectedShards, affectedKeys, noKeys := 0, 0, 0, 0
	// notRecovered: shards that failed once no fault was in force any
	// more (their fault ended) and never served again.
	notRecovered, first, firstIdx := 0, "", int64(0)
	perWindow := []RTOWindow{}
	for wi, w := range windows {
		// A window's failures are looked for until the next fault starts;
		// the first success may come later.
		until := runEnd + 1
		for _, x := range windows {
			if x.Start > w.Start && x.Start < until {
				until = x.Start
			}
		}
		lo := sort.Search(len(starts), func(i int) bool { return starts[i] >= w.Start })
		hi := sort.Search(len(starts), func(i int) bool { return starts[i] >= until })
		v := &views[wi]
		shardOf := func(c *call) string {
			if s := v.shardOf(c.inv.Key); s != "" {
				return s
			}
			return "unknown"
		}
		shards := map[string]*outage{}
		keys := map[string]*outage{}
		for i := lo; i < hi; i++ {
			c := &calls[i]
			if c.served() || c.start < busy[history.Keyslot(c.inv.Key)] {
				continue
			}
			end := c.end
			if end == inf {
				end = c.start
			}
			told := c.comp != nil
			failed(shards, shardOf(c), c.start, end, c.index, told)
			failed(keys, c.inv.Key, c.start, end, c.index, told)
		}
		// An outage recovers at the first served call of its shard (or
		// key) from lo on that was invoked at or after its last failure.
		waiting := len(shards)
		for i := lo; i < len(calls) && waiting > 0; i++ {
			c := &calls[i]
			if !c.servedByPrimary() {
				continue
			}
			if o := shards[shardOf(c)]; o != nil && o.recovered == inf && c.start >= o.lastBad {
				o.recovered = c.end
				waiting--
			}
		}
		if len(keys) > 0 && servedAt == nil {
			servedAt = map[string][]int32{}
			for i := range calls {
				if calls[i].servedByPrimary() {
					k := calls[i].inv.Key
					servedAt[k] = append(servedAt[k], int32(i))
				}
			}
		}
		for k, o := range keys {
			from := max(lo, sort.Search(len(starts), func(i int) bool { return starts[i] >= o.lastBad }))
			at := servedAt[k]
			if j := sort.Search(len(at), func(j int) bool { return int(at[j]) >= from }); j < len(at) {
				o.recovered = calls[at[j]].end
			}
		}
		var durs []int64
		var stuck []string
		shardFig := map[string]RTOShard{}
		for s, o := range shards {
			m := RTOShard{LastFailureEndMs: ptr(ms(max(0, o.lastBadEnd-w.Start)))}
			if o.recovered == inf {
				stuck = append(stuck, s)
				m.Recovered = ptr(false)
				if o.lastTold > w.End && !inForce(windows, o.lastTold) {
					// Not the fault's outage any more: the shard still
					// failed after the fault ended and never served again.
					m.NotRecovered = true
					m.RTOUnbounded = true
					notRecovered++
					if first == "" || o.lastToldIdx < firstIdx {
						firstIdx = o.lastToldIdx
						first = fmt.Sprintf("the shard of %s was not recovered after the %s fault (window %d, %ss-%ss) ended: op %d failed at %ss, no fault in force, and no op on its slots was served again: RTO unbounded",
							s, w.Fault, wi, trimS(sec(w.Start)), trimS(sec(w.End)), o.lastToldIdx, trimS(sec(o.lastTold)))
					}
				}
			} else {
				durs = append(durs, o.recovered-w.Start)
				m.RTOMs = ptr(ms(o.recovered - w.Start))
			}
			shardFig[s] = m
		}
		// The shards the fault did not stop: served through the window
		// with no failure, their RTO is 0, measured (traffic kept
		// flowing there); one with no op in the window is unmeasured.
		served := map[string]int{}
		for i := lo; i < hi; i++ {
			if c := &calls[i]; c.servedByPrimary() {
				served[shardOf(c)]++
			}
		}
		unaffected, unmeasured := 0, []string{}
		v.slotNode.each(func(_ int, node string) {
			if _, seen := shardFig[node]; seen || shards[node] != nil {
				return
			}
			if served[node] == 0 {
				shardFig[node] = RTOShard{Served: ptr(0), Unmeasured: true}
				unmeasured = append(unmeasured, node)
				return
			}
			shardFig[node] = RTOShard{RTOMs: ptr(0.0), Served: ptr(served[node]), Unaffected: true}
			unaffected++
		})
		slices.Sort(unmeasured)
		// Charge the outage to this fault: the slots of an affected
		// shard are busy until it recovered.
		v.slotNode.each(func(slot int, node string) {
			if o := shards[node]; o != nil {
				busy[slot] = max(busy[slot], o.recovered)
			}
		})
		for k, o := range keys {
			if v.shardOf(k) == "" {
				busy[history.Keyslot(k)] = max(busy[history.Keyslot(k)], o.recovered)
			}
		}
		var kdurs, klows []int64
		for _, o := range keys {
			klows = append(klows, max(0, o.lastBadEnd-w.Start))
			if o.recovered != inf {
				kdurs = append(kdurs, o.recovered-w.Start)
			}
		}
		slices.Sort(stuck)
		all = append(all, durs...)
		keyAll = append(keyAll, kdurs...)
		keyLow = append(keyLow, klows...)
		unrecovered += len(stuck)
		affectedShards += len(shards)
		affectedKeys += len(keys)
		m := RTOWindow{
			Window: wi, Fault: w.Fault, StartS: sec(w.Start), EndS: sec(w.End),
			Nodes: nonNil(w.Nodes), AffectedShards: len(shards), AffectedKeys: len(keys),
			Shards:            shardFig,
			UnaffectedShards:  unaffected,
			UnmeasuredShards:  unmeasured,
			UnrecoveredShards: nonNil(stuck),
			RTOMs:             quantilesMs(durs),
			KeyRTOMs:          quantilesMs(kdurs),
			KeyRTOLowerMs:     quantilesMs(klows),
		}
		if windowKeys(calls, lo, hi, v, &m.WindowKeys) == 0 {
			noKeys++
		}
		if len(perWindow) < max(r.o.MaxExamples, 200) {
			perWindow = append(perWindow, m)
		}
	}
	fig := &RTOFigures{
		Measurement:        true,
		Windows:            len(windows),
		Affected:           affectedShards,
		AffectedKeys:       affectedKeys,
		Unrecovered:        unrecovered,
		RTOMs:              quantilesMs(all),
		KeyRTOMs:           quantilesMs(keyAll),
		KeyRTOLowerMs:      quantilesMs(keyLow),
		WindowsWithoutKeys: noKeys,
		PerWindow:          perWindow,
		NotRecovered:       notRecovered,
		Definition:         "per fault window and shard (the primary serving a set of slots at the fault's start; a shard is affected when an op on its slots failed or was indeterminate between the fault's start and the next fault's start, and its slots had recovered from any earlier fault): rto_ms runs from the fault's start to the completion of the first op a primary served on the shard's slots (a read a replica served does not end it) invoked after their last failure. key_rto_ms is the same per key (an envelope: a key used rarely, or no more, recovers late), key_rto_lower_ms only to the end of the key's last failure. A shard that still failed once its fault had ended and no fault was in force, and was never served again, is not_recovered: its RTO is unbounded and the verdict invalid",
	}
	if notRecovered > 0 {
		fig.RTOUnbounded = true
		fig.First = first
		return Result{Valid: Invalid, Figures: fig}
	}
	return Result{Valid: Valid, Figures: fig}
}

// failed notes a failure at [start, end] of shard or key k, invoked as
// op idx; told says it completed.
func failed(m map[string]*outage, k string, start, end, idx int64, told bool) {
	o := m[k]
	if o == nil {
		o = &outage{recovered: inf, lastTold: -1}
		m[k] = o
	}
	o.lastBad, o.lastBadEnd = start, end
	if told {
		o.lastTold, o.lastToldIdx = start, idx
	}
}
