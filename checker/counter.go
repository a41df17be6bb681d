package checker

import (
	"context"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/redline-dev/redline/history"
)

type counter struct{ o Scope }

// Counter checks INCRBY counters as Jepsen's counter checker does, plus the
// final-state figures lost / unexpected and their WAIT split. See the
// package documentation for the exact rules.
func Counter(opts ...Scope) Checker { return counter{firstScope(opts)} }

func (c counter) Name() string { return c.o.name("counter") }

// counterAdd is one add that may have taken effect.
// counterAdd is 32 bytes: a counter checker holds two of them (plus two
// prefix sums) per add of a history, millions on a long run.
type counterAdd struct {
	start, end int64 // end is inf unless ok
	delta      int64
	ok         bool
	wait       WaitClass
}

type counterRead struct {
	c     call
	value int64
	final bool
}

// counterKey is everything known about one counter key.
type counterKey struct {
	key   string
	adds  []counterAdd // not failed, in history order
	reads []counterRead
	// replicaReads were served by replicas: counted, judged as stale or
	// not, never held to the lower bound; a value the key never could
	// have held is an impossible-replica-read.
	replicaReads []counterRead
	// lastAddInvoke is when the traffic phase last invoked an add here.
	lastAddInvoke int64
	byInvoke      []counterAdd // adds sorted by invocation
	okByEnd       []counterAdd // ok adds sorted by completion
	negInv        []int64      // prefix sums over byInvoke of min(0, d); nil when no d < 0
	posInv        []int64      // ... of max(0, d)
	posOk         []int64      // prefix sums over okByEnd of max(0, d)
	negOk         []int64      // ... of min(0, d); nil when no d < 0
	acked         int64        // sum of positive ok deltas
	attempted     int64        // sum of positive ok/indeterminate deltas
	ackedClass    waitSplit    // acked positive deltas per WAIT class
	final         *counterRead
	lower         int64 // bounds at the final read
	upper         int64
	lost          int64 // lower bound of lost acknowledged increments
	lostMax       int64 // upper bound
	unexpected    int64
	// unexplained is the deficit beyond every acknowledged increment (a
	// final value below what even losing all of them explains).
	unexplained int64
	lostSplit   waitSplit
	hasNeg      bool // some add had a negative delta
	// rises are the reads that revealed the loss, each with the amount
	// it revealed and its share of lostSplit (see riseLoss): the one
	// attribution the counter and rpo checkers both report.
	rises []counterRise
	// revealedAt is what revealed said of the key before it was trimmed
	// (a partition's key, counterKey.trimmed), nil when it lost nothing.
	revealedAt *[2]int64
}

// counterRise is one rise of a key's deficit: the read that revealed it,
// how many increments it showed lost beyond the reads before it, and the
// WAIT classes of those increments, taken from the key's lostSplit in its
// order (no_wait, wait_unsatisfied, wait_satisfied), so that the rises of a
// key add up to exactly the counter checker's split.
type counterRise struct {
	read   call
	amount int64
	split  waitSplit
}

func prefix(adds []counterAdd, f func(int64) int64) []int64 {
	out := make([]int64, len(adds)+1)
	for i, a := range adds {
		out[i+1] = out[i] + f(a.delta)
	}
	return out
}

func neg(d int64) int64 { return min(0, d) }
func pos(d int64) int64 { return max(0, d) }

// bounds returns the smallest and largest value a read over [start, end]
// may return: adds acknowledged before the read began certainly count;
// adds invoked before it ended may count.
func (k *counterKey) bounds(start, end int64) (lo, hi int64) {
	nInv := sort.Search(len(k.byInvoke), func(i int) bool { return k.byInvoke[i].start > end })
	nOk := sort.Search(len(k.okByEnd), func(i int) bool { return k.okByEnd[i].end >= start })
	lo, hi = k.posOk[nOk], k.posInv[nInv]
	if k.hasNeg {
		lo += k.negInv[nInv]
		hi += k.negOk[nOk]
	}
	return lo, hi
}

// floor is the smallest value the key could have held at any time before
// end: every negative delta invoked by then applied, no positive one.
func (k *counterKey) floor(end int64) int64 {
	if !k.hasNeg {
		return 0
	}
	nInv := sort.Search(len(k.byInvoke), func(i int) bool { return k.byInvoke[i].start > end })
	return k.negInv[nInv]
}

type counterAnalysis struct {
	keys      []*counterKey // sorted by name
	okAdds    int
	infoAdds  int
	failAdds  int
	reads     int
	malformed int
	badReads  []map[string]any
	nbad      int
	// resent: adds the client library sent again after an attempt of
	// unknown outcome (history "resent"): each may have applied twice.
	resent        int
	resentSamples []int64
	// replicaReads are reads a replica served (history "replica"): not
	// held to the lower bound, but counted, and stale when below it;
	// outside every value the key could have held they are anomalies.
	replicaReads int
	staleReads   int
	staleSamples []map[string]any
	// gap is the longest time one key went without an acknowledged add
	// during the traffic phase.
	gap gapFigure
	// an holds the garbage replies, backwards reads and unexplained
	// deficits.
	an *anomalies
}

func analyzeCounter(calls []call, finalStart int64, maxExamples int) *counterAnalysis {
	a := &counterAnalysis{an: newAnomalies(maxExamples)}
	// Each key's adds are made once at (about) their size.
	nadds := map[string]int{}
	for i := range calls {
		switch calls[i].inv.Name() {
		case OpAdd, OpIncr:
			nadds[calls[i].inv.Key]++
		}
	}
	byKey := map[string]*counterKey{}
	get := func(k string) *counterKey {
		ck := byKey[k]
		if ck == nil {
			ck = &counterKey{key: k, adds: make([]counterAdd, 0, nadds[k])}
			byKey[k] = ck
		}
		return ck
	}
	for _, c := range calls {
		switch c.inv.Name() {
		case OpAdd, OpIncr:
			d, ok := history.ParseInt(c.inv.Value)
			if !ok {
				if c.inv.Name() != OpIncr || c.inv.HasValue() {
					a.malformed++
					continue
				}
				d = 1
			}
			if finalStart < 0 || c.start < finalStart {
				if ck := get(c.inv.Key); c.start > ck.lastAddInvoke {
					ck.lastAddInvoke = c.start // failed or not: a write was wanted then
				}
			}
			switch {
			case c.failed():
				a.failAdds++
				continue
			case c.ok():
				a.okAdds++
			default:
				a.infoAdds++
			}
			if c.comp != nil && c.comp.ResentCount() > 0 {
				a.resent++
				if len(a.resentSamples) < maxExamples {
					a.resentSamples = append(a.resentSamples, c.index)
				}
			}
			ck := get(c.inv.Key)
			ad := counterAdd{start: c.start, end: inf, delta: d, ok: c.ok()}
			if c.ok() {
				ad.end = c.end
				ad.wait = ClassifyWait(c.wait())
				ck.acked += pos(d)
				ck.ackedClass.add(ad.wait, pos(d))
			}
			ck.attempted += pos(d)
			ck.hasNeg = ck.hasNeg || d < 0
			ck.adds = append(ck.adds, ad)
		case OpRead:
			if !c.ok() {
				continue
			}
			v, ok := history.ParseInt(c.comp.Value)
			if !ok && c.comp.HasValue() {
				a.an.garbage(&c, "not an integer within int64")
				continue
			}
			ck := get(c.inv.Key)
			if c.comp.FromReplica() {
				// A replica read may be stale by design: judged as such
				// once the bounds are known, never as a lost increment.
				a.replicaReads++
				ck.replicaReads = append(ck.replicaReads, counterRead{c: c, value: v})
				continue
			}
			a.reads++
			ck.reads = append(ck.reads, counterRead{c: c, value: v, final: finalStart >= 0 && c.start >= finalStart})
		}
	}
	for _, ck := range byKey {
		a.keys = append(a.keys, ck)
	}
	// Keys in name order, so that the examples named (the first bad reads,
	// the first anomalies) are the same on every run of the same history.
	slices.SortFunc(a.keys, func(x, y *counterKey) int { return strings.Compare(x.key, y.key) })
	for _, ck := range a.keys {
		// The adds come in invocation order, usually sorted by start
		// already: then they are byInvoke as they are (adds is not used
		// apart from it), without a copy of millions of them.
		byStart := func(x, y counterAdd) int { return cmpInt(x.start, y.start) }
		if slices.IsSortedFunc(ck.adds, byStart) {
			ck.byInvoke = ck.adds
		} else {
			ck.byInvoke = slices.Clone(ck.adds)
			slices.SortStableFunc(ck.byInvoke, byStart)
		}
		nok := 0
		for _, ad := range ck.adds {
			if ad.ok {
				nok++
			}
		}
		ck.okByEnd = make([]counterAdd, 0, nok)
		for _, ad := range ck.adds {
			if ad.ok {
				ck.okByEnd = append(ck.okByEnd, ad)
			}
		}
		slices.SortStableFunc(ck.okByEnd, func(x, y counterAdd) int { return cmpInt(x.end, y.end) })
		ck.posInv, ck.posOk = prefix(ck.byInvoke, pos), prefix(ck.okByEnd, pos)
		if ck.hasNeg {
			// Without a negative delta these sums are all 0: not kept.
			ck.negInv, ck.negOk = prefix(ck.byInvoke, neg), prefix(ck.okByEnd, neg)
		}
		for i := range ck.reads {
			r := &ck.reads[i]
			lo, hi := ck.bounds(r.c.start, r.c.end)
			if r.value < lo || r.value > hi {
				a.nbad++
				if len(a.badReads) < maxExamples {
					a.badReads = append(a.badReads, map[string]any{
						"key": ck.key, "index": r.c.index, "time_s": sec(r.c.start),
						"value": r.value, "lower": lo, "upper": hi, "final": r.final,
					})
				}
			}
			// The final value: the last read of the final phase, or the
			// last read of all when the history has no final phase.
			if (finalStart < 0 || r.final) && (ck.final == nil || r.c.end > ck.final.c.end) {
				ck.final = r
			}
		}
		a.backwards(ck)
		for _, r := range ck.replicaReads {
			// A replica may lag, never invent: its value must be one the
			// key could have held before the read ended, between the sum
			// of every negative delta invoked by then (0 without one) and
			// the upper bound. Outside that it is garbage, not staleness.
			lo, hi := ck.bounds(r.c.start, r.c.end)
			if floor := ck.floor(r.c.end); r.value < floor || r.value > hi {
				a.an.add("impossible-replica-read", map[string]any{
					"key": ck.key, "index": r.c.index, "value": r.value, "lowest_possible": floor,
					"highest_possible": hi, "node": r.c.comp.Node,
				})
				continue
			}
			if r.value < lo {
				a.staleReads++
				if len(a.staleSamples) < maxExamples {
					a.staleSamples = append(a.staleSamples, map[string]any{
						"key": ck.key, "index": r.c.index, "value": r.value, "lower": lo, "node": r.c.comp.Node,
					})
				}
			}
		}
		a.gap.of(ck, finalStart)
		if ck.final != nil {
			ck.lower, ck.upper = ck.bounds(ck.final.c.start, ck.final.c.end)
			// Lost is at most what was acknowledged: a deficit beyond
			// that is no loss of ours but an anomaly of its own.
			deficit := max(0, ck.lower-ck.final.value)
			ck.lost = min(deficit, ck.acked)
			ck.unexplained = deficit - ck.lost
			ck.lostMax = max(0, min(ck.acked, ck.upper-ck.final.value))
			ck.unexpected = max(0, ck.final.value-ck.upper)
			if ck.unexplained > 0 {
				a.an.add("unexplained-deficit", map[string]any{
					"key": ck.key, "index": ck.final.c.index, "final": ck.final.value,
					"lower": ck.lower, "acked": ck.acked, "deficit": deficit,
				})
			}
			// WAIT split: a counter cannot say which increments were lost.
			// Attribute the loss to unconfirmed increments first (no WAIT,
			// then WAIT short of its target); what remains must have been
			// confirmed by WAIT, so wait_satisfied is a lower bound. No
			// class gets more than its own acknowledged increments.
			ck.lostSplit = splitLoss(ck.lost, ck.ackedClass)
			ck.riseLoss()
		}
	}
	return a
}

// riseLoss finds the reads that revealed the key's loss: reads in order of
// completion, each showing a deficit (the increments acknowledged before it
// began, less its value) above every earlier one; the rises add up to lost.
// Each rise takes its WAIT classes from what is left of lostSplit, in the
// split's own order: figures per rise (per fault window) then sum to the
// key's split and never contradict it.
func (ck *counterKey) riseLoss() {
	if ck.lost == 0 {
		return
	}
	reads := slices.Clone(ck.reads)
	slices.SortStableFunc(reads, func(x, y counterRead) int { return cmpInt(x.c.end, y.c.end) })
	left := ck.lostSplit
	var seen, charged int64
	for _, rd := range reads {
		lo, _ := ck.bounds(rd.c.start, rd.c.end)
		d := lo - rd.value
		if d <= seen || charged >= ck.lost {
			continue
		}
		rise := counterRise{read: rd.c, amount: min(d-seen, ck.lost-charged)}
		seen, charged = d, charged+rise.amount
		n := rise.amount
		for _, cl := range []WaitClass{NoWait, WaitUnsatisfied, WaitSatisfied} {
			take := min(n, left[cl])
			rise.split[cl] += take
			left[cl] -= take
			n -= take
		}
		ck.rises = append(ck.rises, rise)
	}
}

// revealed names the reads that bracket the key's loss: the first read that
// showed a deficit (its invocation index) and the last read that completed
// before that one began with no deficit (-1 when there was none). ok is
// false when the key lost nothing.
func (ck *counterKey) revealed() (reveal, whole int64, ok bool) {
	if ck.revealedAt != nil {
		return ck.revealedAt[0], ck.revealedAt[1], true // a trimmed key's (counterKey.trimmed)
	}
	if len(ck.rises) == 0 {
		return 0, -1, false
	}
	first := ck.rises[0].read
	whole = -1
	var wholeEnd int64 = -1
	for _, rd := range ck.reads {
		if rd.c.end >= first.start || rd.c.end <= wholeEnd {
			continue
		}
		if lo, _ := ck.bounds(rd.c.start, rd.c.end); rd.value >= lo {
			whole, wholeEnd = rd.c.index, rd.c.end
		}
	}
	return first.index, whole, true
}

// firstAckIn is the completion of the key's first acknowledged increment
// in [from, to), or inf.
func (ck *counterKey) firstAckIn(from, to int64) int64 {
	i := sort.Search(len(ck.okByEnd), func(i int) bool { return ck.okByEnd[i].end >= from })
	for ; i < len(ck.okByEnd) && ck.okByEnd[i].end < to; i++ {
		if ck.okByEnd[i].delta > 0 {
			return ck.okByEnd[i].end
		}
	}
	return inf
}

func (c counter) Check(ctx context.Context, in *History) Result {
	calls, err := c.o.calls(in)
	if err != nil {
		return invalidHistory(err)
	}
	return c.judge(in.counterAnalysisOf(c.o, calls))
}

// judge is the verdict and figures of an analysis: of the whole history
// (Check), or merged from its partitions' (CheckPartitions).
func (c counter) judge(a *counterAnalysis) Result {
	var lost, lostMax, unexpected, acked, attempted, unexplained int64
	var split waitSplit
	var satMax int64
	var noFinal, lostNames []string
	var lostKeys []map[string]any
	for _, ck := range a.keys {
		acked += ck.acked
		attempted += ck.attempted
		if ck.final == nil {
			if ck.acked > 0 {
				noFinal = append(noFinal, ck.key)
			}
			continue
		}
		lost += ck.lost
		lostMax += ck.lostMax
		unexpected += ck.unexpected
		unexplained += ck.unexplained
		for i := range split {
			split[i] += ck.lostSplit[i]
		}
		satMax += min(ck.lostMax, ck.ackedClass[WaitSatisfied])
		if ck.lost > 0 || ck.unexpected > 0 {
			lostNames = append(lostNames, ck.key)
			if len(lostKeys) < c.o.MaxExamples {
				e := map[string]any{
					"key": ck.key, "acked": ck.acked, "attempted": ck.attempted, "final": ck.final.value,
					"final_index": ck.final.c.index,
					// The bounds the final read had to be within: lower
					// is what the acknowledged increments before it add
					// up to, upper every increment invoked by its end.
					"lower": ck.lower, "upper": ck.upper,
					"lost": ck.lost, "lost_max": ck.lostMax, "unexpected": ck.unexpected,
				}
				// Where the loss first showed: the first read below its
				// lower bound, and the last read before it that held
				// every increment acknowledged before it began. The loss
				// happened between the two; the final read (often much
				// later, after more increments) says only that it did.
				if r, c, ok := ck.revealed(); ok {
					e["revealed_index"] = r
					if c >= 0 {
						e["whole_before_index"] = c
					}
				}
				lostKeys = append(lostKeys, e)
			}
		}
	}
	fig := &CounterFigures{
		Keys:             len(a.keys),
		AddsOK:           a.okAdds,
		AddsInfo:         a.infoAdds,
		AddsFail:         a.failAdds,
		Reads:            a.reads,
		Acked:            acked,
		Attempted:        attempted,
		Lost:             lost,
		LostMax:          lostMax,
		Unexpected:       unexpected,
		Unexplained:      unexplained,
		BadReads:         a.nbad,
		BadReadSamples:   nonNil(a.badReads),
		LostKeys:         nonNil(lostKeys),
		WaitSplitNote:    "a counter cannot tell which increments were lost: the loss is charged to no_wait, then wait_unsatisfied increments, each at most its own acknowledged increments; wait_satisfied is what remains (a lower bound, at most wait_satisfied_max)",
		WaitSatisfiedMax: satMax,
		WaitSplit:        split.figures(),
		Anomalies:        a.an.classes(),
	}
	if a.resent > 0 {
		fig.ResentAdds = a.resent
		fig.ResentAddIndexes = ptr(a.resentSamples)
	}
	if a.replicaReads > 0 {
		fig.ReplicaReads = a.replicaReads
		fig.StaleReads = ptr(a.staleReads)
		fig.StaleReadSamples = ptr(nonNil(a.staleSamples))
	}
	if a.gap.ms > 0 {
		fig.LongestWriteGapMs = a.gap.ms
		fig.LongestWriteGap = &WriteGap{Key: a.gap.key, FromS: sec(a.gap.from), ToS: sec(a.gap.to)}
	}
	if len(noFinal) > 0 {
		fig.KeysWithoutFinalRead = ptr(capList(noFinal, c.o.MaxExamples))
	}
	if a.malformed > 0 {
		fig.SkippedMalformed = a.malformed
	}
	res := Result{Valid: Valid, Figures: fig}
	switch {
	case a.nbad > 0 || lost > 0 || unexpected > 0 || a.an.total() > 0:
		res.Valid = Invalid
		if lost > 0 {
			fig.because("%d acknowledged increments lost on %d keys (%s)", lost, len(lostNames), firstKeys(lostNames))
		}
		if unexpected > 0 {
			fig.because("final values exceed every increment attempted by %d", unexpected)
			if a.resent > 0 {
				fig.because("the client library sent %d increments again after an attempt of unknown outcome (ops %s): "+
					"each may have applied twice (its retries are named in config.json, client_library.retries)",
					a.resent, indexList(a.resentSamples))
			}
		}
		if a.nbad > 0 {
			fig.because("%d reads outside the possible bounds (%s)", a.nbad, describeExamples(a.badReads))
		}
		if a.an.total() > 0 {
			fig.because("%s", a.an.describe())
		}
	case a.okAdds == 0:
		res.Valid = Unknown
		fig.because("no acknowledged increment: nothing to judge")
	case a.reads == 0:
		res.Valid = Unknown
		fig.because("no successful read: nothing to check the increments against")
	case len(noFinal) > 0:
		res.Valid = Unknown
		fig.because("%d keys with acknowledged increments have no final read, so their losses are unknowable: %s", len(noFinal), firstKeys(noFinal))
	}
	if res.Valid == Unknown {
		fig.Error = fig.Reason
	}
	malformedUnknown(&res, a.malformed)
	return res
}

// CounterFigures are the counter checker's figures: the increments
// acknowledged and attempted, what the final reads lost or gained beyond
// them (lost, unexpected) and the reads out of bounds.
type CounterFigures struct {
	Keys             int              `json:"keys"`
	AddsOK           int              `json:"adds_ok"`
	AddsInfo         int              `json:"adds_info"`
	AddsFail         int              `json:"adds_fail"`
	Reads            int              `json:"reads"`
	Acked            int64            `json:"acked"`
	Attempted        int64            `json:"attempted"`
	Lost             int64            `json:"lost"`
	LostMax          int64            `json:"lost_max"`
	Unexpected       int64            `json:"unexpected"`
	Unexplained      int64            `json:"unexplained"`
	BadReads         int              `json:"bad_reads"`
	BadReadSamples   []map[string]any `json:"bad_read_samples"`
	LostKeys         []map[string]any `json:"lost_keys"`
	WaitSplitNote    string           `json:"wait_split_note"`
	WaitSatisfiedMax int64            `json:"wait_satisfied_max"`
	WaitSplit
	Anomalies Anomalies `json:"anomalies,omitempty"`
	// ResentAdds counts the increments the client library sent again
	// after an attempt of unknown outcome.
	ResentAdds       int      `json:"resent_adds,omitempty"`
	ResentAddIndexes *[]int64 `json:"resent_add_indexes,omitempty"`
	// The reads replicas served (nil: none).
	ReplicaReads         int               `json:"replica_reads,omitempty"`
	StaleReads           *int              `json:"stale_reads,omitempty"`
	StaleReadSamples     *[]map[string]any `json:"stale_read_samples,omitempty"`
	LongestWriteGapMs    float64           `json:"longest_write_gap_ms,omitempty"`
	LongestWriteGap      *WriteGap         `json:"longest_write_gap,omitempty"`
	KeysWithoutFinalRead *[]string         `json:"keys_without_final_read,omitempty"`
	SkippedMalformed     int               `json:"skipped_malformed,omitempty"`
	Verdict
}

// LongestWriteGapMs is the counter checker's longest stretch of a key
// without an acknowledged increment, in milliseconds; 0 for none or a
// result of another checker.
func (r Result) LongestWriteGapMs() float64 {
	if f, ok := FiguresAs[*CounterFigures](r); ok {
		return f.LongestWriteGapMs
	}
	if m, ok := r.Figures.(Map); ok { // stored without the figures the type needs
		g, _ := m["longest_write_gap_ms"].(float64)
		return g
	}
	return 0
}

// WriteGap is the longest stretch of a key without an acknowledged write.
type WriteGap struct {
	Key   string  `json:"key"`
	FromS float64 `json:"from_s"`
	ToS   float64 `json:"to_s"`
}

// gapFigure is the longest stretch of a key without an acknowledged add,
// from one acknowledgement to the next (or to the last add invoked in the
// traffic phase, when none followed).
type gapFigure struct {
	ms       float64
	key      string
	from, to int64
}

func (g *gapFigure) of(ck *counterKey, finalStart int64) {
	// The acks come in completion order (okByEnd): walked as they are,
	// not copied (a hot key's copy was 20 MB at 10M entries).
	prev, seen := int64(0), false
	step := func(t int64) {
		if d := float64(t-prev) / 1e6; seen && d > g.ms {
			g.ms, g.key, g.from, g.to = d, ck.key, prev, t
		}
		prev, seen = t, true
	}
	for _, ad := range ck.okByEnd {
		if finalStart < 0 || ad.end < finalStart {
			step(ad.end)
		}
	}
	if seen && ck.lastAddInvoke > prev {
		step(ck.lastAddInvoke)
	}
}

// indexList names op indexes for a why.
func indexList(ix []int64) string {
	parts := make([]string, len(ix))
	for i, n := range ix {
		parts[i] = "#" + strconv.FormatInt(n, 10)
	}
	return strings.Join(parts, ", ")
}

// splitLoss charges a counter's loss to WAIT classes: no_wait first, then
// wait_unsatisfied, then wait_satisfied, each at most its own acknowledged
// amount. lost never exceeds the sum of acked, so nothing is left over.
func splitLoss(lost int64, acked waitSplit) waitSplit {
	var out waitSplit
	left := lost
	for _, cl := range []WaitClass{NoWait, WaitUnsatisfied, WaitSatisfied} {
		n := min(left, acked[cl])
		out.add(cl, n)
		left -= n
	}
	return out
}

// backwards flags reads that return less than a read of the same key that
// completed before they began: increments are positive, so the counter went
// back, an increment once seen was lost. Keys with negative deltas are not
// judged this way.
func (a *counterAnalysis) backwards(ck *counterKey) {
	if ck.hasNeg || len(ck.reads) < 2 {
		return
	}
	byEnd := slices.Clone(ck.reads)
	slices.SortFunc(byEnd, func(x, y counterRead) int { return cmpInt(x.c.end, y.c.end) })
	// best[i]: the read with the largest value among byEnd[:i+1].
	best := make([]int, len(byEnd))
	for i := range byEnd {
		best[i] = i
		if i > 0 && byEnd[best[i-1]].value >= byEnd[i].value {
			best[i] = best[i-1]
		}
	}
	for _, r := range ck.reads {
		n := sort.Search(len(byEnd), func(i int) bool { return byEnd[i].c.end >= r.c.start })
		if n == 0 {
			continue
		}
		if prev := byEnd[best[n-1]]; prev.value > r.value {
			a.an.add("backwards-read", map[string]any{
				"key": ck.key, "index": r.c.index, "value": r.value,
				"earlier_index": prev.c.index, "earlier_value": prev.value,
			})
		}
	}
}

// The figures this checker explains (describe.go).
var _ = ExplainFigures(map[string]string{
	"lost_keys":        "keys whose final value is below what the acknowledged increments add up to",
	"bad_reads":        "counter reads outside what the increments acknowledged before and attempted until the read allow",
	"bad_read_samples": "each row is a read of a counter below its lower bound (acknowledged increments lost) or above its upper bound (increments never sent)",
})
