package checker

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/redline-dev/redline/history"
)

type set struct{ o Scope }

// Set checks SADD sets as Jepsen's set-full checker does: lost, unexpected,
// recovered, stale reads, visibility latency, and the WAIT split of the
// lost elements. See the package documentation for the exact rules.
func Set(opts ...Scope) Checker { return set{firstScope(opts)} }

func (s set) Name() string { return s.o.name("set") }

// Element outcomes.
const (
	elemAcked = iota
	elemIndeterminate
	elemFailed
)

type setElem struct {
	v       int64
	add     call
	outcome int
	known   int64 // when it certainly existed: add ok, or first read seeing it ended; inf if never
	// Reads that saw it, by invocation time.
	firstSeenInv int64 // inf if never seen
	lastSeenInv  int64 // -1 if never seen
	staleAbsent  int   // reads after known, before last seen, without it
	lost         bool
	neverRead    bool // acked but no read began after it was known
	// aside: missing from the key's final read but held by a set-aside
	// copy of the key (where, in words); not lost.
	aside string
}

type setRead struct {
	c    call
	vals []int64
}

type setKey struct {
	key      string
	elems    map[int64]*setElem
	reads    []setRead // ok reads, by invocation time
	starts   []int64
	last     *setRead // latest-invoked read
	lastSet  map[int64]struct{}
	unexpect []int64
}

type setAnalysis struct {
	keys       []*setKey
	adds       [3]int // per outcome
	duplicates int    // elements added twice (the workload promises unique elements)
	reads      int
	malformed  int
	lost       []*setElem // acked and lost, by ack time
	lostSeen   []*setElem // indeterminate, seen, then lost
	// setAside and setAsideSeen are acked (indeterminate, seen) elements
	// missing from the key at the end and held by a set-aside copy of it.
	setAside     []*setElem
	setAsideSeen []*setElem
	unexpected   int
	recovered    int
	stale        int
	neverRead    int
	// neverReadKeys are the keys holding never-read elements.
	neverReadKeys []string
	latencies     []int64
	an            *anomalies // garbage replies
}

// analyzeSet judges the adds and reads of calls; as are the census'
// set-aside copies of the keys (nil: none), where an element missing from
// its key at the end may be kept.
func analyzeSet(calls []call, maxExamples int, as asides) *setAnalysis {
	a := &setAnalysis{an: newAnomalies(maxExamples)}
	byKey := map[string]*setKey{}
	get := func(k string) *setKey {
		sk := byKey[k]
		if sk == nil {
			sk = &setKey{key: k, elems: map[int64]*setElem{}}
			byKey[k] = sk
		}
		return sk
	}
	for _, c := range calls {
		switch c.inv.Name() {
		case OpAdd:
			v, ok := history.ParseInt(c.inv.Value)
			if !ok {
				a.malformed++
				continue
			}
			sk := get(c.inv.Key)
			if sk.elems[v] != nil {
				a.duplicates++
				continue
			}
			e := &setElem{v: v, add: c, known: inf, firstSeenInv: inf, lastSeenInv: -1}
			switch {
			case c.ok():
				e.outcome, e.known = elemAcked, c.end
			case c.failed():
				e.outcome = elemFailed
			default:
				e.outcome = elemIndeterminate
			}
			a.adds[e.outcome]++
			sk.elems[v] = e
		case OpRead:
			if !c.ok() {
				continue
			}
			vals, ok := history.ParseInts(c.comp.Value)
			if !ok {
				a.an.garbage(&c, "not a list of integers within int64")
				continue
			}
			if dup, ok := firstDuplicate(vals); ok {
				a.an.garbage(&c, fmt.Sprintf("element %d listed twice", dup))
				continue
			}
			a.reads++
			sk := get(c.inv.Key)
			sk.reads = append(sk.reads, setRead{c: c, vals: vals})
		}
	}
	for _, sk := range byKey {
		a.keys = append(a.keys, sk)
		slices.SortStableFunc(sk.reads, func(x, y setRead) int { return cmpInt(x.c.start, y.c.start) })
		sk.starts = make([]int64, len(sk.reads))
		unexpected := map[int64]bool{}
		// Pass 1: sightings.
		for i := range sk.reads {
			r := &sk.reads[i]
			sk.starts[i] = r.c.start
			for _, v := range r.vals {
				e := sk.elems[v]
				if e == nil || e.outcome == elemFailed {
					unexpected[v] = true
					continue
				}
				if r.c.end < e.known {
					e.known = r.c.end
				}
				e.firstSeenInv = min(e.firstSeenInv, r.c.start)
				e.lastSeenInv = max(e.lastSeenInv, r.c.start)
			}
		}
		for v := range unexpected {
			sk.unexpect = append(sk.unexpect, v)
		}
		slices.Sort(sk.unexpect)
		a.unexpected += len(sk.unexpect)
		// The final state is the latest read a primary served: a replica
		// read may be stale (judged so below), never the key's end, so
		// one that misses an element is no loss and one that holds it no
		// evidence the element survived. The replica reads after it are
		// the tail, each held to the final read's elements.
		var tail []map[int64]bool
		for i := len(sk.reads) - 1; i >= 0; i-- {
			if r := &sk.reads[i]; !r.c.comp.FromReplica() {
				sk.last = r
				for _, t := range sk.reads[i+1:] {
					tail = append(tail, setOf(t.vals))
				}
				break
			}
		}
		if sk.last != nil {
			sk.lastSet = make(map[int64]struct{}, len(sk.last.vals))
			for _, v := range sk.last.vals {
				sk.lastSet[v] = struct{}{}
			}
		}
		// Pass 2: sightings strictly between known and last seen.
		present := map[int64]int{}
		for i := range sk.reads {
			r := &sk.reads[i]
			for _, v := range r.vals {
				if e := sk.elems[v]; e != nil && e.outcome != elemFailed && r.c.start > e.known && r.c.start < e.lastSeenInv {
					present[v]++
				}
			}
		}
		for _, e := range sk.elems {
			if e.outcome == elemFailed || e.known == inf {
				continue // never known to exist: nothing can be lost
			}
			if e.firstSeenInv != inf {
				a.latencies = append(a.latencies, max(0, e.firstSeenInv-e.add.start))
			}
			_, atEnd := sk.lastSet[e.v]
			switch {
			case sk.last == nil || (!atEnd && sk.last.c.start <= e.known):
				// No read began after it was known (and the latest did
				// not see it): nothing says whether it survived.
				if e.outcome == elemAcked {
					e.neverRead = true
					a.neverRead++
					if n := len(a.neverReadKeys); n == 0 || a.neverReadKeys[n-1] != sk.key {
						a.neverReadKeys = append(a.neverReadKeys, sk.key)
					}
				} else {
					a.recovered++ // seen, so it landed
				}
				continue
			case !atEnd && as.elemAt(sk.key, e.v) != "":
				// Missing from the key, kept in a set-aside copy of it.
				e.aside = as.elemAt(sk.key, e.v)
				if e.outcome == elemAcked {
					a.setAside = append(a.setAside, e)
				} else {
					a.setAsideSeen = append(a.setAsideSeen, e)
				}
				continue
			case !atEnd:
				// The latest read began after the element was known and
				// does not hold it: it was lost.
				e.lost = true
				if e.outcome == elemAcked {
					a.lost = append(a.lost, e)
				} else {
					a.lostSeen = append(a.lostSeen, e)
				}
				continue
			}
			if e.outcome == elemIndeterminate {
				a.recovered++ // landed, and still there at the end
			}
			// Reads that began after it was known and before its last
			// sighting, and did not see it: stale.
			lo := sort.Search(len(sk.starts), func(i int) bool { return sk.starts[i] > e.known })
			hi := sort.Search(len(sk.starts), func(i int) bool { return sk.starts[i] >= e.lastSeenInv })
			absent := (hi - lo) - present[e.v]
			for j, held := range tail {
				// A replica read after the final read, after the last
				// sighting, without the element: stale.
				if r := sk.reads[len(sk.reads)-len(tail)+j]; r.c.start > e.lastSeenInv && !held[e.v] {
					absent++
				}
			}
			if absent > 0 {
				e.staleAbsent = absent
				a.stale++
			}
		}
	}
	slices.SortFunc(a.keys, func(x, y *setKey) int {
		switch {
		case x.key < y.key:
			return -1
		case x.key > y.key:
			return 1
		}
		return 0
	})
	byAck := func(x, y *setElem) int {
		if c := cmpInt(x.add.end, y.add.end); c != 0 {
			return c
		}
		return cmpInt(x.v, y.v)
	}
	slices.Sort(a.neverReadKeys)
	a.neverReadKeys = slices.Compact(a.neverReadKeys)
	slices.SortFunc(a.lost, byAck)
	slices.SortFunc(a.lostSeen, byAck)
	slices.SortFunc(a.setAside, byAck)
	slices.SortFunc(a.setAsideSeen, byAck)
	return a
}

// lostReport lists the first lost elements with their keys.
func (a *setAnalysis) lostReport(maxN int) []map[string]any {
	return a.elemReport(a.lost, maxN)
}

// elemReport lists the first of es (lost or set aside) with their keys,
// and for a set-aside element where it is kept.
func (a *setAnalysis) elemReport(es []*setElem, maxN int) []map[string]any {
	es = capList(es, maxN)
	keyOf := make(map[*setElem]string, len(es))
	for _, sk := range a.keys {
		for _, e := range es {
			if sk.elems[e.v] == e {
				keyOf[e] = sk.key
			}
		}
	}
	var out []map[string]any
	for _, e := range es {
		m := map[string]any{
			"key": keyOf[e], "index": e.add.index, "element": e.v, "ack_s": sec(e.add.end),
			"wait": ClassifyWait(e.add.wait()).String(), "node": nodeOf(e.add),
		}
		if w := e.add.wait(); w != nil {
			m["wait_acked"] = w.Acked
			m["wait_want"] = w.Want
		}
		if e.lastSeenInv >= 0 {
			m["last_seen_s"] = sec(e.lastSeenInv)
		}
		if e.aside != "" {
			m["kept_in"] = e.aside
		}
		out = append(out, m)
	}
	return out
}

func (s set) Check(ctx context.Context, in *History) Result {
	calls, err := s.o.calls(in)
	if err != nil {
		return invalidHistory(err)
	}
	return s.judge(analyzeSet(calls, s.o.MaxExamples, asidesOf(in.censusOf())))
}

// judge is the verdict and figures of an analysis: of the whole history
// (Check), or merged from its partitions' (CheckPartitions).
func (s set) judge(a *setAnalysis) Result {
	var split waitSplit
	for _, e := range a.lost {
		split.add(ClassifyWait(e.add.wait()), 1)
	}
	var unexpected []map[string]any
	for _, sk := range a.keys {
		for _, v := range sk.unexpect {
			if len(unexpected) < s.o.MaxExamples {
				m := map[string]any{"key": sk.key, "element": v}
				if i, ok := sk.firstReadOf(v); ok {
					m["index"] = i
				}
				unexpected = append(unexpected, m)
			}
		}
	}
	fig := &SetFigures{
		Keys:                len(a.keys),
		AddsOK:              a.adds[elemAcked],
		AddsInfo:            a.adds[elemIndeterminate],
		AddsFail:            a.adds[elemFailed],
		Reads:               a.reads,
		Lost:                len(a.lost),
		LostUnacked:         len(a.lostSeen),
		Unexpected:          a.unexpected,
		Recovered:           a.recovered,
		StaleReads:          a.stale,
		NeverRead:           a.neverRead,
		LostElements:        nonNil(a.lostReport(s.o.MaxExamples)),
		SetAside:            len(a.setAside),
		SetAsideUnacked:     len(a.setAsideSeen),
		UnexpectedElements:  nonNil(unexpected),
		VisibilityLatencyMs: quantilesMs(a.latencies),
		WaitSplit:           split.figures(),
		Anomalies:           a.an.classes(),
	}
	if len(a.setAside)+len(a.setAsideSeen) > 0 {
		fig.SetAsideElements = ptr(a.elemReport(append(slices.Clone(a.setAside), a.setAsideSeen...), s.o.MaxExamples))
	}
	if a.duplicates > 0 {
		fig.DuplicateAdds = a.duplicates
	}
	if a.malformed > 0 {
		fig.SkippedMalformed = a.malformed
	}
	if len(a.neverReadKeys) > 0 {
		fig.NeverReadKeys = ptr(capList(a.neverReadKeys, s.o.MaxExamples))
	}
	res := Result{Valid: Valid, Figures: fig}
	switch {
	case len(a.lost) > 0 || len(a.lostSeen) > 0 || len(a.setAside) > 0 || len(a.setAsideSeen) > 0 || a.unexpected > 0 || a.an.total() > 0:
		res.Valid = Invalid
		if len(a.lost) > 0 {
			fig.because("%d acknowledged adds lost (%s)", len(a.lost), describeExamples(fig.LostElements))
		}
		if len(a.lostSeen) > 0 {
			fig.because("%d indeterminate adds seen and then lost", len(a.lostSeen))
		}
		if n := len(a.setAside) + len(a.setAsideSeen); n > 0 {
			// Not lost, but not in the key either: a client reading the
			// key does not see them until someone merges the copies.
			fig.because("%d adds (%d acknowledged) are missing from their key at the end but kept in set-aside copies of it, not lost (%s)",
				n, len(a.setAside), describeAsides(*fig.SetAsideElements))
		}
		if a.unexpected > 0 {
			fig.because("%d elements read that no add wrote (%s)", a.unexpected, describeExamples(unexpected))
		}
		if a.an.total() > 0 {
			fig.because("%s", a.an.describe())
		}
	case a.adds[elemAcked] == 0:
		res.Valid = Unknown
		fig.because("no acknowledged add: nothing to judge")
	case a.reads == 0:
		res.Valid = Unknown
		fig.because("no successful read: nothing to check the adds against")
	case a.neverRead > 0:
		res.Valid = Unknown
		fig.because("%d acknowledged adds on %d keys were never read after they were acknowledged (no final read), so whether they survived is unknown: %s",
			a.neverRead, len(a.neverReadKeys), firstKeys(a.neverReadKeys))
	}
	if res.Valid == Unknown {
		fig.Error = fig.Reason
	}
	malformedUnknown(&res, a.malformed)
	return res
}

// SetFigures are the set checker's figures: the adds acknowledged, lost,
// kept in set-aside copies or read without being written, and the reads.
type SetFigures struct {
	Keys                int              `json:"keys"`
	AddsOK              int              `json:"adds_ok"`
	AddsInfo            int              `json:"adds_info"`
	AddsFail            int              `json:"adds_fail"`
	Reads               int              `json:"reads"`
	Lost                int              `json:"lost"`
	LostUnacked         int              `json:"lost_unacked"`
	Unexpected          int              `json:"unexpected"`
	Recovered           int              `json:"recovered"`
	StaleReads          int              `json:"stale_reads"`
	NeverRead           int              `json:"never_read"`
	LostElements        []map[string]any `json:"lost_elements"`
	SetAside            int              `json:"set_aside"`
	SetAsideUnacked     int              `json:"set_aside_unacked"`
	UnexpectedElements  []map[string]any `json:"unexpected_elements"`
	VisibilityLatencyMs Quantiles        `json:"visibility_latency_ms"`
	WaitSplit
	SetAsideElements *[]map[string]any `json:"set_aside_elements,omitempty"`
	DuplicateAdds    int               `json:"duplicate_adds,omitempty"`
	SkippedMalformed int               `json:"skipped_malformed,omitempty"`
	Anomalies        Anomalies         `json:"anomalies,omitempty"`
	NeverReadKeys    *[]string         `json:"never_read_keys,omitempty"`
	Verdict
}

func setOf(vals []int64) map[int64]bool {
	m := make(map[int64]bool, len(vals))
	for _, v := range vals {
		m[v] = true
	}
	return m
}

// firstReadOf is the index of the first read (by invocation) that holds v.
func (sk *setKey) firstReadOf(v int64) (int64, bool) {
	for _, r := range sk.reads {
		if slices.Contains(r.vals, v) {
			return r.c.index, true
		}
	}
	return 0, false
}

// firstDuplicate returns an element listed twice in a read.
func firstDuplicate(vals []int64) (int64, bool) {
	seen := make(map[int64]struct{}, len(vals))
	for _, v := range vals {
		if _, dup := seen[v]; dup {
			return v, true
		}
		seen[v] = struct{}{}
	}
	return 0, false
}

// The figures this checker explains (describe.go).
var _ = ExplainFigures(map[string]string{
	"lost_elements":       "each row is an acknowledged add that no final read contains",
	"set_aside":           "acknowledged writes missing from their key's final read but kept in a set-aside copy of the key (`{key}:redline-conflict-from-<node>`, same slot): on a cluster redline created, both sides of a move held different copies of the key, the destination's was kept under the key's name and the source's restored beside it; not lost, but not in the key until someone merges the copies",
	"set_aside_elements":  "each row is an add missing from its key at the end and the set-aside copy that holds it (kept_in: the copy's name and node)",
	"unexpected_elements": "each row is an element read that no add ever wrote",
})
