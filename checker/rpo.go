package checker

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"
)

// RPOOptions tune the RPO checker.
type RPOOptions struct {
	Scope
	// Kind says which analysis to use: "set", "list-append" or "counter".
	// Empty means detect it from the ops (txn ops are list-append; a read
	// of a list is a set, of an integer a counter).
	Kind string
	// Slack attributes a lost write acknowledged up to this long before a
	// fault started to that fault's window [1s]: an asynchronous replica
	// may not have received it yet when the fault struck.
	Slack time.Duration
}

type rpo struct{ o RPOOptions }

// RPO attributes lost acknowledged writes to the fault window in which they
// were acknowledged (a window is widened by RPOOptions.Slack before its
// start); losses acknowledged outside every window are reported apart.
//
// For workloads whose writes are unique (set elements, list appends) each
// lost write is known, and the figures are exact: per window the lost
// writes, the ack time of the first and last of them relative to the
// fault's start, and rpo_ms, the span of time whose acknowledged writes
// were lost (from the invocation of the first lost write to the
// acknowledgement of the last; 0 only when nothing was lost).
//
// Counters only know amounts: each rise of a key's deficit (a read below
// the increments acknowledged before it) is charged to the latest window
// that began before the revealing read and touched the key's node, else
// reported unattributed (chargeCounter); rpo_bound_ms spans from the first
// increment that could be lost to the read, an upper bound, never an exact
// RPO, and never 0 beside a loss. The WAIT classes are the counter
// checker's own split, so the two never disagree.
//
// Each window also says how many of the workload's keys lived on the nodes
// it touched (see windowKeys). Its verdict is always valid: the set,
// list-append and counter checkers judge the loss.
func RPO(opts ...RPOOptions) Checker {
	o := optional(opts)
	o.Scope = o.Scope.withDefaults()
	if o.Slack <= 0 {
		o.Slack = time.Second
	}
	if partitionedKind(o.Kind) {
		return rpoParts{rpo{o}}
	}
	return rpo{o}
}

func (r rpo) Name() string { return r.o.name("rpo") }

// detectKind looks at the ops: list-append transactions, else the first ok
// read (a list means a set).
func detectKind(calls []call) string {
	for i := range calls {
		c := &calls[i]
		if c.inv.F == ListAppendTxn {
			return "list-append"
		}
		if c.inv.Name() == OpRead && c.ok() && c.comp.HasValue() {
			if bytes.HasPrefix(bytes.TrimSpace(c.comp.Value), []byte("[")) {
				return "set"
			}
			return "counter"
		}
	}
	return ""
}

// lostWrite is one acknowledged write known to be lost.
type lostWrite struct {
	c   call
	key string
}

// rpoBucket accumulates the losses of one window (or of no window).
type rpoBucket struct {
	lost  int64
	split waitSplit
	keys  map[string]bool
	// Exact kinds: the first invocation and the first and last ack of the
	// lost writes.
	firstInv, firstAck, lastAck int64
	// Counters: the span that bounds where the lost increments were
	// acknowledged, and what the WAIT classes could not hold.
	boundFrom, boundTo int64
	unattributed       int64
}

func newRPOBucket() *rpoBucket {
	return &rpoBucket{keys: map[string]bool{}, firstInv: inf, firstAck: inf, lastAck: -1, boundFrom: inf, boundTo: -1}
}

func (b *rpoBucket) write(lw lostWrite) {
	b.lost++
	b.split.add(ClassifyWait(lw.c.wait()), 1)
	b.keys[lw.key] = true
	b.firstInv = min(b.firstInv, lw.c.start)
	b.firstAck = min(b.firstAck, lw.c.end)
	b.lastAck = max(b.lastAck, lw.c.end)
}

// span is the exact RPO of the bucket in ns (kind with unique writes).
func (b *rpoBucket) span() int64 {
	if b.lastAck < 0 {
		return 0
	}
	return b.lastAck - b.firstInv
}

func (b *rpoBucket) bound() int64 {
	if b.boundTo < 0 {
		return 0
	}
	return b.boundTo - b.boundFrom
}

// figures of the bucket; faultStart < 0 for the outside bucket.
func (b *rpoBucket) figures(counter bool, faultStart int64) RPOLosses {
	m := RPOLosses{Lost: b.lost, Keys: len(b.keys), WaitSplit: b.split.figures()}
	if counter {
		m.BoundMs = ptr(ms(b.bound()))
		if b.boundTo >= 0 {
			m.BoundFromS = ptr(sec(b.boundFrom))
			m.BoundToS = ptr(sec(b.boundTo))
		}
		// Only outside_windows has it: lost increments no window touching
		// their key explains.
		m.Unattributed = b.unattributed
		return m
	}
	m.RPOMs = ptr(ms(b.span()))
	if b.lastAck >= 0 {
		m.AckedFromS = ptr(sec(b.firstAck))
		m.AckedToS = ptr(sec(b.lastAck))
		if faultStart >= 0 {
			m.FirstLostAckMs = ptr(ms(b.firstAck - faultStart))
			m.LastLostAckMs = ptr(ms(b.lastAck - faultStart))
		}
	}
	return m
}

func (r rpo) Check(ctx context.Context, in *History) Result {
	calls, err := r.o.calls(in)
	if err != nil {
		return invalidHistory(err)
	}
	windows := in.windowsOf()
	kind := r.o.Kind
	if kind == "" {
		kind = detectKind(calls)
	}
	if kind == "list-append" {
		// Only the transactions' appends can be judged lost: a workload's
		// other keys (the txn workload's bank accounts) are no list, and
		// a window that touched only them is no evidence either way.
		all := len(calls)
		var appends int
		calls, appends = listAppendCalls(calls)
		if appends == 0 {
			return NotApplicable(fmt.Sprintf("no list append among the workload's %d ops (its other keys, such as bank accounts, are no lists): no list-append RPO to measure", all))
		}
	}
	p, res := r.partial(in, kind, calls, windows)
	if p == nil {
		return res
	}
	return r.result(kind, windows, p)
}

// rpoPartial is what the losses of some calls charge to each window (and
// outside them) and each window's keys: of the whole history (Check), or
// merged from its partitions' (CheckPartitions).
type rpoPartial struct {
	buckets []*rpoBucket
	outside *rpoBucket
	keys    []windowKeyCount
}

// partial charges the losses of calls, of kind, to windows; without a
// partial, the result says why.
func (r rpo) partial(in *History, kind string, calls []call, windows []Window) (*rpoPartial, Result) {
	buckets := make([]*rpoBucket, len(windows))
	for i := range buckets {
		buckets[i] = newRPOBucket()
	}
	outside := newRPOBucket()
	slack := int64(r.o.Slack)
	// windowOf: the latest-starting window whose span (slack included)
	// holds t.
	windowOf := func(t int64) (int, *rpoBucket) {
		best := -1
		for i, w := range windows {
			if w.Contains(t, r.o.Slack) && (best < 0 || w.Start > windows[best].Start) {
				best = i
			}
		}
		if best < 0 {
			return -1, outside
		}
		return best, buckets[best]
	}
	var lost []lostWrite
	switch kind {
	case "set":
		a := analyzeSet(calls, r.o.MaxExamples, asidesOf(in.censusOf()))
		keyOf := map[*setElem]string{}
		for _, sk := range a.keys {
			for _, e := range sk.elems {
				keyOf[e] = sk.key
			}
		}
		for _, e := range a.lost {
			lost = append(lost, lostWrite{c: e.add, key: keyOf[e]})
		}
	case "list-append":
		an := &anomalyLog{max: 1, count: map[string]int{}, examples: map[string][]any{}}
		txns, _ := parseListAppend(calls, an)
		_, _, lost = lostAppends(txns, an, func(int) map[string]any { return nil })
	case "counter":
		a := in.counterAnalysisOf(r.o.Scope, calls)
		r.chargeCounter(a, windows, shardViews(calls, windows, in.nodeAddrsOf()), buckets, outside, slack)
	case "":
		if len(calls) == 0 {
			return nil, NotApplicable("no op on the workload's keys: nothing to measure")
		}
		// Ops were sent but none read back: an RPO should have been
		// measured and cannot be.
		return nil, Result{Valid: Unknown, Figures: &Verdict{Error: fmt.Sprintf("no successful read among %d ops: whether any acknowledged write was lost cannot be said", len(calls))}}
	default:
		return nil, Result{Valid: Unknown, Figures: &Verdict{Error: fmt.Sprintf("rpo: unknown kind %q (want set, list-append or counter)", kind)}}
	}
	for _, lw := range lost {
		_, b := windowOf(lw.c.end)
		b.write(lw)
	}
	calls = sortedByStart(calls)
	views := shardViews(calls, windows, in.nodeAddrsOf())
	keys := make([]windowKeyCount, len(windows))
	for i, w := range windows {
		lo, hi := callsBetween(calls, w.Start, w.End)
		keys[i] = countWindowKeys(calls, lo, hi, &views[i])
	}
	return &rpoPartial{buckets: buckets, outside: outside, keys: keys}, Result{}
}

// result is the figures of a partial.
func (r rpo) result(kind string, windows []Window, p *rpoPartial) Result {
	buckets, outside := p.buckets, p.outside
	var total int64
	counter := kind == "counter"
	per := []RPOWindow{}
	var worst int64
	noKeys := 0
	for i, w := range windows {
		b := buckets[i]
		total += b.lost
		m := RPOWindow{RPOLosses: b.figures(counter, w.Start), Window: i, Fault: w.Fault,
			StartS: sec(w.Start), EndS: sec(w.End), Nodes: nonNil(w.Nodes)}
		if p.keys[i].into(&m.WindowKeys) == 0 {
			noKeys++
		}
		if counter {
			worst = max(worst, b.bound())
		} else {
			worst = max(worst, b.span())
		}
		if len(per) < max(r.o.MaxExamples, 200) {
			per = append(per, m)
		}
	}
	total += outside.lost
	if counter {
		worst = max(worst, outside.bound())
	} else {
		worst = max(worst, outside.span())
	}
	if total == 0 && noKeys == len(windows) {
		// Nothing lost and no fault window touched a node holding the
		// workload's keys: an RPO of 0 here would be a figure about nothing.
		if len(windows) == 0 {
			return NotApplicable("no fault window and no acknowledged write lost: no RPO to measure")
		}
		return NotApplicable(fmt.Sprintf("no acknowledged write lost and none of the %d fault windows touched a node holding the workload's keys", len(windows)))
	}
	fig := &RPOFigures{
		Measurement:        true,
		Kind:               kind,
		Lost:               total,
		Windows:            len(windows),
		WindowsWithoutKeys: noKeys,
		PerWindow:          per,
		Outside:            outside.figures(counter, -1),
		SlackS:             time.Duration(r.o.Slack).Seconds(),
	}
	if counter {
		fig.BoundMs = ptr(ms(worst))
		fig.Note = "a counter cannot say which increments were lost: each rise of a key's deficit is charged to the latest fault window that began (less the slack) before the read revealing it and touched the node holding the key, else to outside_windows as unattributed; rpo_bound_ms spans from the first increment that could be lost (from that window's start on) to the read, an upper bound of the span of lost writes, not an exact RPO; the WAIT classes are the counter checker's split (wait_satisfied a lower bound), shared out over the reads that revealed the loss"
	} else {
		fig.RPOMs = ptr(ms(worst))
		fig.Definition = "rpo_ms: the span of time whose acknowledged writes were lost, from the invocation of the first lost write to the acknowledgement of the last (per window by the ack time, slack included; outside_windows for the rest); the headline is the largest"
	}
	return Result{Valid: Valid, Figures: fig}
}

// listAppendCalls keeps the list-append transactions of calls (a new
// slice: calls is shared) and counts the appends they were sent with.
func listAppendCalls(calls []call) (out []call, appends int) {
	for _, c := range calls {
		if c.inv.F != ListAppendTxn {
			continue
		}
		out = append(out, c)
		if mops, err := parseTxn(c.inv.Value); err == nil {
			for _, m := range mops {
				if m.append {
					appends++
				}
			}
		}
	}
	return out, appends
}

// callsBetween gives the index range of calls (sorted by start) invoked in
// [from, to].
func callsBetween(calls []call, from, to int64) (lo, hi int) {
	lo, _ = slices.BinarySearchFunc(calls, from, func(c call, t int64) int { return cmpInt(c.start, t) })
	hi = lo
	for hi < len(calls) && calls[hi].start <= to {
		hi++
	}
	return lo, hi
}

// chargeCounter charges each rise of a key's deficit (counterKey.rises) to
// the latest window that began (less the slack) before the read revealing
// it and that touched the key: the key lived, at the window's start, on a
// node the fault touched (or where it lived is unknown: no "nodes" event,
// no op served on its slot yet). A loss no such window explains is charged
// to outside_windows, unattributed. The increments lost were acknowledged
// before the read began, from the window's start (less the slack) on when
// some were acknowledged then, else from the key's first acknowledgement:
// the bound spans from there to the read, and is never 0 beside a loss.
// The WAIT classes are the rise's share of the counter checker's split,
// so both checkers report the same classes.
func (r rpo) chargeCounter(a *counterAnalysis, windows []Window, views []shardView, buckets []*rpoBucket, outside *rpoBucket, slack int64) {
	touches := func(i int, key string) bool {
		v := &views[i]
		if !v.mapped {
			return true
		}
		s := v.shardOf(key)
		return s == "" || v.touched[s]
	}
	latest := func(t int64, key string) int {
		best := -1
		for i, w := range windows {
			if w.Start-slack <= t && (best < 0 || w.Start > windows[best].Start) && touches(i, key) {
				best = i
			}
		}
		return best
	}
	for _, ck := range a.keys {
		var charged int64
		for _, rise := range ck.rises {
			rd := rise.read
			charged += rise.amount
			b, from := outside, int64(-1<<62)
			if i := latest(rd.start, ck.key); i >= 0 {
				b, from = buckets[i], windows[i].Start-slack
			} else {
				outside.unattributed += rise.amount
			}
			b.lost += rise.amount
			b.keys[ck.key] = true
			first := ck.firstAckIn(from, rd.start)
			if first == inf {
				// Every increment that could be lost was acknowledged
				// before the window: the span reaches back to them.
				first = ck.firstAckIn(-1<<62, rd.start)
			}
			if first != inf {
				b.boundFrom = min(b.boundFrom, first)
				b.boundTo = max(b.boundTo, max(rd.start, first+1))
			}
			for i := range rise.split {
				b.split[i] += rise.split[i]
			}
		}
		if charged < ck.lost { // cannot happen: the final read shows it
			outside.lost += ck.lost - charged
			outside.unattributed += ck.lost - charged
			outside.keys[ck.key] = true
		}
	}
}

// RPOFigures are an RPO checker's figures: the acknowledged writes lost,
// by the fault window they were acknowledged in.
type RPOFigures struct {
	Measurement bool `json:"measurement"`
	// Kind is the analysis: "set", "list-append" or "counter".
	Kind string `json:"kind"`
	// Lost is every lost acknowledged write, windows and outside.
	Lost int64 `json:"lost"`
	// Windows counts the fault windows; PerWindow lists the first of them
	// (200, or MaxExamples if more), each with its losses.
	Windows            int         `json:"windows"`
	WindowsWithoutKeys int         `json:"windows_without_keys"`
	PerWindow          []RPOWindow `json:"per_window"`
	// Outside are the losses acknowledged outside every window.
	Outside RPOLosses `json:"outside_windows"`
	SlackS  float64   `json:"slack_s"`
	// RPOMs is the exact RPO (unique writes: sets, list appends), nil for
	// a counter.
	RPOMs *float64 `json:"rpo_ms,omitempty"`
	// BoundMs is a counter's RPO bound: counters tell amounts, not which
	// writes; nil for an exact RPO.
	BoundMs *float64 `json:"rpo_bound_ms,omitempty"`
	// Definition (exact) or Note (a bound) says what the RPO figure is.
	Definition string `json:"definition,omitempty"`
	Note       string `json:"note,omitempty"`
}

// Why: an RPO checker measures; it has no verdict to explain.
func (f *RPOFigures) Why() string { return "" }

// Measures: an RPO checker measures.
func (f *RPOFigures) Measures() bool { return true }

// RPOWindow is one fault window's losses.
type RPOWindow struct {
	Window int      `json:"window"`
	Fault  string   `json:"fault"`
	StartS float64  `json:"start_s"`
	EndS   float64  `json:"end_s"`
	Nodes  []string `json:"nodes"`
	RPOLosses
	WindowKeys
}

// RPOLosses are the losses of a fault window (or of outside every window).
type RPOLosses struct {
	Lost int64 `json:"lost"`
	Keys int   `json:"keys"`
	WaitSplit
	// RPOMs is the exact span of the lost writes (not a counter's);
	// AckedFromS and AckedToS span their acknowledgements, FirstLostAckMs
	// and LastLostAckMs from the fault's start (nil: none lost).
	RPOMs          *float64 `json:"rpo_ms,omitempty"`
	AckedFromS     *float64 `json:"acked_from_s,omitempty"`
	AckedToS       *float64 `json:"acked_to_s,omitempty"`
	FirstLostAckMs *float64 `json:"first_lost_ack_ms,omitempty"`
	LastLostAckMs  *float64 `json:"last_lost_ack_ms,omitempty"`
	// BoundMs is a counter's bound of the span, from BoundFromS to
	// BoundToS; Unattributed counts the lost increments no window touching
	// their key explains (outside_windows only).
	BoundMs      *float64 `json:"rpo_bound_ms,omitempty"`
	BoundFromS   *float64 `json:"bound_from_s,omitempty"`
	BoundToS     *float64 `json:"bound_to_s,omitempty"`
	Unattributed int64    `json:"unattributed,omitempty"`
}
