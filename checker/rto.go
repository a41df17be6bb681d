package checker

import (
	"context"
	"fmt"
	"slices"
)

type rto struct{ o Scope }

// RTO measures, for each fault window, how long each shard it affected went
// without serving: a shard is the primary serving a set of slots at the
// fault's start (the node that served them last before it), and its rto_ms
// runs from the fault's start to the completion of the first served op on
// those slots invoked after their last failed or indeterminate op. Per key
// the same envelope is kept as detail (key_rto_ms, and key_rto_lower_ms up
// to the end of the key's last failure): a key the workload stopped using
// (keys rotate) would overstate the outage, so the headline is per shard.
// An outage is charged to the fault that caused it: failures on a slot
// before that slot recovered from an earlier fault do not count again for
// a later one. A shard of the window's view that served ops through it with
// no failure shows rto_ms 0 (unaffected); one with no op in it is
// unmeasured. Its verdict is valid (it measures), or not applicable when no
// fault struck or no op ran, or invalid when a shard was not recovered: it
// still failed after its fault had ended, with no fault in force, and was
// never served again (its RTO is unbounded: a result, not an outage to
// expect).
func RTO(opts ...Scope) Checker { return rto{firstScope(opts)} }

func (r rto) Name() string { return r.o.name("rto") }

func (r rto) Check(ctx context.Context, in *History) Result {
	calls, err := r.o.calls(in)
	if err != nil {
		return invalidHistory(err)
	}
	windows := in.windowsOf()
	if len(windows) == 0 {
		return r.noWindow()
	}
	if len(calls) == 0 {
		return r.noCall()
	}
	// The whole history is one partition of itself, its calls ranked by
	// their place in start order (the order the outages are read in).
	calls = sortedByStart(calls)
	byPlace := func(i int) int64 { return int64(i) }
	p := scanRTO(calls, byPlace, windows, in.runEndOf(), in.nodeAddrsOf())
	rec := p.recoveries()
	rec.scan(calls, byPlace, p)
	return r.judge(windows, p, rec)
}

func (rto) noWindow() Result {
	return NotApplicable("no fault window during the run: no nemesis struck")
}

func (rto) noCall() Result {
	return NotApplicable("no client op in the history: no outage to measure")
}

// judge makes the result of what the calls said of each window (p, the
// whole history's or its partitions' merged) and when each shard served
// again after each of its slots' last failure (rec): window by window, in
// the windows' order, it decides which failures count (a slot's failures
// before it recovered from an earlier fault do not: busy) and so each
// shard's and key's outage.
func (r rto) judge(windows []Window, p *rtoPartial, rec *rtoRecoveries) Result {
	// busy[slot]: until when a slot was still out from an earlier fault.
	busy := map[int]int64{}
	var all, keyAll, keyLow []int64
	unrecovered, affectedShards, affectedKeys, noKeys := 0, 0, 0, 0
	// notRecovered: shards that failed once no fault was in force any
	// more (their fault ended) and never served again.
	notRecovered, first, firstIdx := 0, "", int64(0)
	perWindow := []RTOWindow{}
	for wi, w := range windows {
		pw := &p.windows[wi]
		v := &pw.view
		// A slot's failures all count or none does: the last of them is
		// invoked last (start order), so it counts when any does, and
		// then it is its slot's last failure; the same of the last told.
		shards := map[string]*rtoOutage{}
		for slot, f := range pw.fails {
			b := busy[slot]
			if f.last.start < b {
				continue
			}
			s := v.shardName(slot)
			o := shards[s]
			if o == nil {
				o = &rtoOutage{last: f.last, told: rtoAt{start: -1}}
				shards[s] = o
			} else if f.last.after(o.last) {
				o.last = f.last
			}
			if f.hasTold && f.told.start >= b && (!o.hasTold || f.told.after(o.told)) {
				o.told, o.hasTold = f.told, true
			}
		}
		for s, o := range shards {
			o.recovered = rec.recovered(wi, s, o.last.start)
		}
		var keys []*rtoKeyFail
		for i := range pw.keys {
			if k := &pw.keys[i]; k.last.start >= busy[k.slot] {
				keys = append(keys, k)
			}
		}
		var durs []int64
		var stuck []string
		shardFig := map[string]RTOShard{}
		for s, o := range shards {
			m := RTOShard{LastFailureEndMs: ptr(ms(max(0, o.last.end-w.Start)))}
			if o.recovered == inf {
				stuck = append(stuck, s)
				m.Recovered = ptr(false)
				if o.told.start > w.End && !inForce(windows, o.told.start) {
					// Not the fault's outage any more: the shard still
					// failed after the fault ended and never served again.
					m.NotRecovered = true
					m.RTOUnbounded = true
					notRecovered++
					if first == "" || o.told.idx < firstIdx {
						firstIdx = o.told.idx
						first = fmt.Sprintf("the shard of %s was not recovered after the %s fault (window %d, %ss-%ss) ended: op %d failed at %ss, no fault in force, and no op on its slots was served again: RTO unbounded",
							s, w.Fault, wi, trimS(sec(w.Start)), trimS(sec(w.End)), o.told.idx, trimS(sec(o.told.start)))
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
		unaffected, unmeasured := 0, []string{}
		v.slotNode.each(func(_ int, node string) {
			if _, seen := shardFig[node]; seen || shards[node] != nil {
				return
			}
			if pw.served[node] == 0 {
				shardFig[node] = RTOShard{Served: ptr(0), Unmeasured: true}
				unmeasured = append(unmeasured, node)
				return
			}
			shardFig[node] = RTOShard{RTOMs: ptr(0.0), Served: ptr(pw.served[node]), Unaffected: true}
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
		for _, k := range keys {
			if _, placed := v.slotNode.get(k.slot); !placed {
				busy[k.slot] = max(busy[k.slot], k.recovered)
			}
		}
		var kdurs, klows []int64
		for _, k := range keys {
			klows = append(klows, max(0, k.last.end-w.Start))
			if k.recovered != inf {
				kdurs = append(kdurs, k.recovered-w.Start)
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
		if pw.keyCount.into(&m.WindowKeys) == 0 {
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

// RTOFigures are the RTO checker's figures: how long the shards (and
// keys) each fault window struck went without serving.
type RTOFigures struct {
	Measurement bool `json:"measurement"`
	// Windows is the fault windows of the run; PerWindow lists the first
	// of them (200, or MaxExamples if more).
	Windows   int         `json:"windows"`
	PerWindow []RTOWindow `json:"per_window"`
	// Affected counts the shards that stopped serving, over the windows;
	// Unrecovered those that had not served again by the end of the run,
	// NotRecovered those of them that still failed once no fault was in
	// force (their RTO is unbounded: the verdict is invalid).
	Affected     int `json:"affected"`
	AffectedKeys int `json:"affected_keys"`
	Unrecovered  int `json:"unrecovered"`
	NotRecovered int `json:"not_recovered"`
	// RTOMs is the shards' recovery times; KeyRTOMs per key (an envelope),
	// KeyRTOLowerMs per key to the end of its last failure.
	RTOMs              Quantiles `json:"rto_ms"`
	KeyRTOMs           Quantiles `json:"key_rto_ms"`
	KeyRTOLowerMs      Quantiles `json:"key_rto_lower_ms"`
	WindowsWithoutKeys int       `json:"windows_without_keys"`
	Definition         string    `json:"definition"`
	RTOUnbounded       bool      `json:"rto_unbounded,omitempty"`
	// First names the first shard not recovered, in words.
	First string `json:"first,omitempty"`
}

// Why is the first shard not recovered, when there is one.
func (f *RTOFigures) Why() string { return f.First }

// Measures: the RTO checker measures.
func (f *RTOFigures) Measures() bool { return true }

// RTOWindow is one fault window's outages.
type RTOWindow struct {
	Window int      `json:"window"`
	Fault  string   `json:"fault"`
	StartS float64  `json:"start_s"`
	EndS   float64  `json:"end_s"`
	Nodes  []string `json:"nodes"`
	// Shards is every shard of the window's view by its primary's
	// address: those it stopped and how they recovered, and those it did
	// not stop (unaffected, or unmeasured: no op there).
	Shards            map[string]RTOShard `json:"shards"`
	AffectedShards    int                 `json:"affected_shards"`
	AffectedKeys      int                 `json:"affected_keys"`
	UnaffectedShards  int                 `json:"unaffected_shards"`
	UnmeasuredShards  []string            `json:"unmeasured_shards"`
	UnrecoveredShards []string            `json:"unrecovered_shards"`
	RTOMs             Quantiles           `json:"rto_ms"`
	KeyRTOMs          Quantiles           `json:"key_rto_ms"`
	KeyRTOLowerMs     Quantiles           `json:"key_rto_lower_ms"`
	WindowKeys
}

// RTOShard is one shard in one window: how long it went without serving
// (RTOMs; nil when it never served again), or that the fault did not stop
// it.
type RTOShard struct {
	RTOMs *float64 `json:"rto_ms,omitempty"`
	// LastFailureEndMs is when its last failure ended, from the fault's
	// start; Recovered is false (else absent) when it never served again.
	LastFailureEndMs *float64 `json:"last_failure_end_ms,omitempty"`
	Recovered        *bool    `json:"recovered,omitempty"`
	NotRecovered     bool     `json:"not_recovered,omitempty"`
	RTOUnbounded     bool     `json:"rto_unbounded,omitempty"`
	// Served counts the ops a primary served on a shard the fault did not
	// stop (Unaffected); 0 for one that is Unmeasured.
	Served     *int `json:"served,omitempty"`
	Unaffected bool `json:"unaffected,omitempty"`
	Unmeasured bool `json:"unmeasured,omitempty"`
}

// inForce reports whether some fault window holds t.
func inForce(windows []Window, t int64) bool {
	return slices.ContainsFunc(windows, func(w Window) bool { return w.Start <= t && t <= w.End })
}

// The figures this checker explains (describe.go).
var _ = ExplainFigures(map[string]string{
	"unrecovered":   "keys that never served a successful op again after the fault",
	"not_recovered": "shards that still failed once their fault had ended and no fault was in force, and never served again: the cluster did not recover, the RTO is unbounded (an outage no fault excuses)",
})
