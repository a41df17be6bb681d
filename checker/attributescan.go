package checker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/redline-dev/redline/history"
)

// Scan feeds a history's entries, in order, to observe, once per call (a
// scan of the history file: history.Scan). op is only read during the
// call.
type Scan func(observe func(op *history.Op)) error

// AttributeScanned is AttributeWithTopology of a history too big for
// memory (issue 42), read by scan: runWide are its nemesis entries (with
// census.json's census when `redline check` gives it one) in its order,
// latest its latest time (history.Partitions' RunWide and Latest). The
// history must pair and its indexes increase (Partitions' Paired and
// IndexesIncrease), as any the recorder writes: an index then names one
// op, and the history's order is its indexes'.
//
// The anomalies' attributions read only the ops of the keys and indexes
// the figures name, kept in a first pass; the unserved windows read every
// call that failed, kept in that pass (they grow with the failures, not
// the run), the slots' primaries at each span's start, and, in a last
// pass, the first call a primary served after each span's candidate last
// failures (scannedOutages). A failure before the first fault takes one
// more pass, for the slots' primaries at its start.
func AttributeScanned(scan Scan, runWide []history.Op, latest int64, s Summary, logs []LogLine, topo []TopologySample) ([]Attribution, error) {
	sus := suspects(s)
	keys, idx := map[string]bool{}, map[int64]bool{}
	for _, x := range sus {
		keys[x.key] = true
		idx[x.index] = true
		if x.counter != nil {
			idx[x.counter.revealed], idx[x.counter.whole] = true, true
		}
	}
	delete(idx, -1)
	nem := NewHistory(history.NemesisEvents(runWide))
	windows := windowsUntil(nem.Ops, latest)
	starts := make([]int64, 0, len(windows))
	for _, w := range windows {
		starts = append(starts, w.Start)
	}
	slices.Sort(starts)
	starts = slices.Compact(starts)
	first := &firstPass{keys: keys, idx: idx, starts: starts, served: make([]map[int]servedAt, len(starts))}
	for j := range first.served {
		first.served[j] = map[int]servedAt{}
	}
	if err := streamOver(scan, runWide, latest, first); err != nil {
		return nil, err
	}
	// The ops the attributions name, with the nemesis entries, in the
	// history's order (its indexes').
	ops := append(slices.Clone(runWide), first.kept...)
	slices.SortStableFunc(ops, func(a, b history.Op) int { return cmpInt(a.Index, b.Index) })
	a := newAttributorUntil(ops, logs, latest)
	a.setTopology(topo)
	src := &scannedOutages{scan: scan, runWide: runWide, latest: latest, first: first}
	slices.SortStableFunc(first.failures, func(x, y seqFailure) int {
		if x.start != y.start {
			return cmpInt(x.start, y.start)
		}
		return x.seq - y.seq
	})
	out := a.attributeAll(sus, func() []Attribution {
		if first.calls == 0 {
			return nil
		}
		return a.unservedOf(src, latest)
	})
	return out, src.err
}

// passStream makes a Stream a StreamChecker, for one StreamPass of its
// own (streamOver). Its streams end valid: a panic makes it unknown.
type passStream struct{ s Stream }

func (passStream) Name() string                           { return "attribution" }
func (passStream) Check(context.Context, *History) Result { return Result{} }
func (p passStream) NewStream(*Tail) Stream               { return p.s }

// streamOver runs one pass of s over the history scan reads, pairing as
// StreamPass does; a history that does not pair is an error (the caller
// attributes it whole).
func streamOver(scan Scan, runWide []history.Op, latest int64, s Stream) error {
	p := NewStreamPass([]StreamChecker{passStream{s}}, runWide, latest)
	if err := scan(p.Observe); err != nil {
		return err
	}
	res := p.Results(context.Background())[0]
	if p.tail.PairErr != nil {
		return fmt.Errorf("attributing from the history file: %w", p.tail.PairErr)
	}
	if res.Valid != Valid {
		return fmt.Errorf("attributing from the history file: %v", res.Figures)
	}
	return nil
}

// seqFailure is a failure and its call's place among the invocations.
type seqFailure struct {
	failure
	seq int
}

// firstPass keeps, of every call: the ops of the keys and indexes the
// attributions name, the calls not served, and per span between two
// window starts and slot the last call a primary served (as
// coverageStream: the slot's primary at every later start).
type firstPass struct {
	keys     map[string]bool
	idx      map[int64]bool
	kept     []history.Op
	calls    int
	failures []seqFailure
	starts   []int64
	served   []map[int]servedAt
}

func (f *firstPass) Call(c *call, seq int) {
	f.calls++
	if f.keys[c.inv.Key] || f.idx[c.inv.Index] {
		f.kept = append(f.kept, *detachOp(c.inv))
		if c.comp != nil {
			f.kept = append(f.kept, *detachOp(c.comp))
		}
	}
	if !c.served() {
		fl := failureOf(c)
		fl.key, fl.class = strings.Clone(fl.key), strings.Clone(fl.class)
		f.failures = append(f.failures, seqFailure{fl, seq})
	}
	if c.servedByPrimary() && c.comp.Node != "" {
		if j := sort.Search(len(f.starts), func(j int) bool { return f.starts[j] > c.end }); j < len(f.starts) {
			noteServed(f.served[j], c, seq)
		}
	}
}

func (f *firstPass) End(context.Context) Result { return Result{Valid: Valid} }

// noteServed keeps c in m when it is the slot's last served call.
func noteServed(m map[int]servedAt, c *call, seq int) {
	slot := history.Keyslot(c.inv.Key)
	a := servedAt{end: c.end, start: c.start, seq: seq, node: c.comp.Node}
	if b, seen := m[slot]; !seen || a.after(b) {
		a.node = strings.Clone(a.node)
		m[slot] = a
	}
}

// beforePass finds each slot's last call a primary served that completed
// before one time (the start of the failures before the first fault).
type beforePass struct {
	at     int64
	served map[int]servedAt
}

func (b *beforePass) Call(c *call, seq int) {
	if c.servedByPrimary() && c.comp.Node != "" && c.end < b.at {
		noteServed(b.served, c, seq)
	}
}

func (b *beforePass) End(context.Context) Result { return Result{Valid: Valid} }

// scannedOutages is the outageSource of a history file: the failures and
// the views of the first pass, and the recoveries of a last pass
// (recoverPass) over the candidates prepare finds.
type scannedOutages struct {
	scan    Scan
	runWide []history.Op
	latest  int64
	first   *firstPass
	spans   [][2]int64
	queries []map[string]*recoveryQuery // per span, per shard
	err     error
}

func (s *scannedOutages) preFault(firstFault, limit int64) (int64, bool) {
	for _, f := range s.first.failures {
		if f.start >= firstFault {
			break
		}
		if f.start >= 0 && f.start < limit {
			return f.start, true
		}
	}
	return 0, false
}

func (s *scannedOutages) views(windows []Window, addrs map[string]string) []shardView {
	views := shardViews(nil, windows, addrs)
	at := map[int64]map[int]string{}
	cur := map[int]servedAt{}
	for j, start := range s.first.starts {
		for slot, a := range s.first.served[j] {
			if b, seen := cur[slot]; !seen || a.after(b) {
				cur[slot] = a
			}
		}
		at[start] = nodesOf(cur)
	}
	for wi, w := range windows {
		m, ok := at[w.Start]
		if !ok {
			// The failures before the first fault start a span of their
			// own, at no window's start: one more pass.
			b := &beforePass{at: w.Start, served: map[int]servedAt{}}
			if err := streamOver(s.scan, s.runWide, s.latest, b); err != nil {
				s.err = errors.Join(s.err, err)
			}
			m = nodesOf(b.served)
			at[w.Start] = m
		}
		views[wi].slotNode = m
	}
	return views
}

func nodesOf(served map[int]servedAt) map[int]string {
	m := make(map[int]string, len(served))
	for slot, a := range served {
		m[slot] = a.node
	}
	return m
}

// recoveryQuery is, for one span and shard, the first call a primary
// served on the shard's slots at or after each candidate last failure:
// the candidates are each failing slot's last failure in the span (the
// busy slots of earlier spans drop some failures, never a slot's last
// one without all of its earlier ones), and first[j] the first such call
// invoked in [at[j], at[j+1]).
type recoveryQuery struct {
	at    []int64
	first []*servedAt
}

// firstFrom is the first call at or after at[j], of every gap from j on.
func (q *recoveryQuery) firstFrom(t int64) (*servedAt, bool) {
	j, found := slices.BinarySearch(q.at, t)
	if !found {
		return nil, false
	}
	for ; j < len(q.first); j++ {
		if q.first[j] != nil {
			return q.first[j], true
		}
	}
	return nil, true
}

func (s *scannedOutages) prepare(spans [][2]int64, views []shardView) {
	s.spans = spans
	s.queries = make([]map[string]*recoveryQuery, len(spans))
	any := false
	for si, sp := range spans {
		last := map[int]seqFailure{}
		s.failed(sp[0], sp[1], func(f *failure) {
			last[history.Keyslot(f.key)] = seqFailure{failure: *f}
		})
		qs := map[string]*recoveryQuery{}
		for _, f := range last {
			sh := views[si].shardOf(f.key)
			if sh == "" {
				sh = "unknown"
			}
			q := qs[sh]
			if q == nil {
				q = &recoveryQuery{}
				qs[sh] = q
			}
			q.at = append(q.at, f.start)
		}
		for _, q := range qs {
			slices.Sort(q.at)
			q.at = slices.Compact(q.at)
			q.first = make([]*servedAt, len(q.at))
			any = true
		}
		s.queries[si] = qs
	}
	if !any {
		return
	}
	r := &recoverPass{s: s, views: views, reach: make([]int64, len(spans))}
	for si := range spans {
		r.setReach(si)
	}
	if err := streamOver(s.scan, s.runWide, s.latest, r); err != nil {
		s.err = errors.Join(s.err, err)
	}
}

// recoverPass fills the recovery queries: every call a primary served is
// offered to the spans that began before it and may still take it.
type recoverPass struct {
	s     *scannedOutages
	views []shardView
	// reach[si] is the latest invocation a call of span si's queries may
	// have to be taken (inf while a shard's last candidate has none).
	reach []int64
}

func (r *recoverPass) setReach(si int) {
	reach := int64(-1)
	for _, q := range r.s.queries[si] {
		top := q.first[len(q.first)-1]
		if top == nil {
			reach = inf
			break
		}
		reach = max(reach, q.at[len(q.at)-1], top.start)
	}
	r.reach[si] = reach
}

func (r *recoverPass) Call(c *call, seq int) {
	if !c.servedByPrimary() {
		return
	}
	for si, sp := range r.s.spans {
		if sp[0] > c.start {
			break // the spans are in order of their starts
		}
		if c.start > r.reach[si] {
			continue
		}
		sh := r.views[si].shardOf(c.inv.Key)
		if sh == "" {
			sh = "unknown"
		}
		q := r.s.queries[si][sh]
		if q == nil || c.start < q.at[0] {
			continue
		}
		j := sort.Search(len(q.at), func(j int) bool { return q.at[j] > c.start }) - 1
		a := servedAt{end: c.end, start: c.start, seq: seq}
		if b := q.first[j]; b != nil && (b.start < a.start || b.start == a.start && b.seq < a.seq) {
			continue
		}
		a.node = strings.Clone(c.comp.Node)
		q.first[j] = &a
		if j == len(q.at)-1 {
			r.setReach(si)
		}
	}
}

func (r *recoverPass) End(context.Context) Result { return Result{Valid: Valid} }

func (s *scannedOutages) failed(from, to int64, each func(c *failure)) {
	fs := s.first.failures
	for i := sort.Search(len(fs), func(i int) bool { return fs[i].start >= from }); i < len(fs) && fs[i].start < to; i++ {
		each(&fs[i].failure)
	}
}

func (s *scannedOutages) recover(si int, _ int64, outs map[string]*shardOutage, _ func(string) string) {
	for sh, o := range outs {
		q := s.queries[si][sh]
		if q == nil {
			s.err = errors.Join(s.err, fmt.Errorf("attributing from the history file: no recovery query for shard %s of span %d", sh, si))
			continue
		}
		first, ok := q.firstFrom(o.lastBad)
		if !ok {
			s.err = errors.Join(s.err, fmt.Errorf("attributing from the history file: %d is no candidate last failure of shard %s in span %d", o.lastBad, sh, si))
			continue
		}
		if first != nil {
			o.recovered, o.recoveredBy = first.end, first.node
		}
	}
}
