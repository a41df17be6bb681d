package checker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

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
// It is an AttributionPass of its own scan, then its Attribute: a check
// that makes a pass over the history anyway rides the first pass along
// it (NewAttributionPass) instead.
func AttributeScanned(scan Scan, runWide []history.Op, latest int64, s Summary, logs []LogLine, topo []TopologySample) ([]Attribution, error) {
	a, err := NewAttributionPass(runWide, latest)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	if err := streamOver(scan, runWide, latest, a.first); err != nil {
		return nil, err
	}
	a.ended = true
	return a.Attribute(scan, runWide, s, logs, topo)
}

// AttributionPass is the first pass of AttributeScanned, made as a
// stream of another pass over the history (`redline check`'s one pass of
// the stream checkers), so that attributing a big history scans it again
// only for the anomalies' own ops, when there are anomalies (issue 42: at
// 150M entries the attribution's two or three scans after the verdict
// took 5 min 42 s on one core). It keeps every call that failed, per span
// between two fault windows' starts and slot the last call a primary
// served, and every call a primary served in a log on disk (servedLog)
// that the later steps read instead of the history: the slots' primaries
// before a span that starts at no window, and the first call a primary
// served after each span's last failures.
type AttributionPass struct {
	latest int64
	first  *firstPass
	tail   *Tail
	ended  bool // the pass gave it every call and ended
}

// NewAttributionPass starts the first pass of the attribution of a
// history whose nemesis entries (and census) are runWide and whose
// latest time is latest; Close removes its log.
func NewAttributionPass(runWide []history.Op, latest int64) (*AttributionPass, error) {
	log, err := newServedLog()
	if err != nil {
		return nil, err
	}
	starts := faultStarts(runWide, latest)
	first := &firstPass{starts: starts, served: make([]map[int]servedAt, len(starts)), log: log, kept: keptStrings{}}
	for j := range first.served {
		first.served[j] = map[int]servedAt{}
	}
	return &AttributionPass{latest: latest, first: first}, nil
}

// faultStarts are the distinct starts of the fault windows of a history
// whose nemesis entries are in runWide and whose latest time is latest,
// in order.
func faultStarts(runWide []history.Op, latest int64) []int64 {
	nem := NewHistory(history.NemesisEvents(runWide))
	starts := []int64{}
	for _, w := range windowsUntil(nem.Ops, latest) {
		starts = append(starts, w.Start)
	}
	slices.Sort(starts)
	return slices.Compact(starts)
}

// Close removes the pass's log of served calls; a nil pass has none.
func (a *AttributionPass) Close() {
	if a != nil {
		a.first.log.close()
	}
}

// StreamChecker is the pass as a stream of a StreamPass: its result is
// valid; Ready says whether the pass can be used.
func (a *AttributionPass) StreamChecker() StreamChecker { return attributionStream{a} }

type attributionStream struct{ a *AttributionPass }

func (attributionStream) Name() string                           { return "attribution" }
func (attributionStream) Check(context.Context, *History) Result { return Result{} }
func (s attributionStream) NewStream(t *Tail) Stream {
	s.a.tail = t
	return passEnd{s.a}
}

// passEnd is the AttributionPass's stream: its first pass, and the mark
// that the pass ended.
type passEnd struct{ a *AttributionPass }

func (p passEnd) Call(c *call, seq int) { p.a.first.Call(c, seq) }
func (p passEnd) End(ctx context.Context) Result {
	p.a.ended = true
	return p.a.first.End(ctx)
}

// Ready says whether the pass saw the whole of a history that pairs, and
// was started with what Attribute is given (the same fault windows): a
// pass that panicked, or was stopped, or of a history that does not
// pair, is not used (the caller attributes with AttributeScanned).
func (a *AttributionPass) Ready(runWide []history.Op) bool {
	if !a.ended || a.tail != nil && a.tail.PairErr != nil || a.first.log.err != nil {
		return false
	}
	return slices.Equal(faultStarts(runWide, a.latest), a.first.starts)
}

// Attribute is AttributeScanned's attribution after its first pass (a):
// the anomalies' attributions read only the ops of the keys and indexes
// the figures name, kept in one more pass of scan when there are any;
// the unserved windows read the failures the first pass kept (they grow
// with the failures, not the run), the slots' primaries at each span's
// start, and the first call a primary served after each span's candidate
// last failures, from the log of served calls (scannedOutages).
func (a *AttributionPass) Attribute(scan Scan, runWide []history.Op, s Summary, logs []LogLine, topo []TopologySample) ([]Attribution, error) {
	if !a.Ready(runWide) {
		return nil, errors.New("attributing from the history file: the first pass did not see the whole history")
	}
	sus := suspects(s)
	keep := &keepPass{keys: map[string]bool{}, idx: map[int64]bool{}}
	for _, x := range sus {
		keep.keys[x.key] = true
		keep.idx[x.index] = true
		if x.counter != nil {
			keep.idx[x.counter.revealed], keep.idx[x.counter.whole] = true, true
		}
	}
	delete(keep.idx, -1)
	if len(keep.keys) > 0 || len(keep.idx) > 0 {
		if err := streamOver(scan, runWide, a.latest, keep); err != nil {
			return nil, err
		}
	}
	// The ops the attributions name, with the nemesis entries, in the
	// history's order (its indexes').
	ops := append(slices.Clone(runWide), keep.kept...)
	slices.SortStableFunc(ops, func(a, b history.Op) int { return cmpInt(a.Index, b.Index) })
	at := newAttributorUntil(ops, logs, a.latest)
	at.setTopology(topo)
	first := a.first
	src := &scannedOutages{first: first}
	slices.SortStableFunc(first.failures, func(x, y seqFailure) int {
		if x.start != y.start {
			return cmpInt(x.start, y.start)
		}
		return x.seq - y.seq
	})
	out := at.attributeAll(sus, func() []Attribution {
		if first.calls == 0 {
			return nil
		}
		return at.unservedOf(src, a.latest)
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

// firstPass keeps, of every call: the calls not served, per span between
// two window starts and slot the last call a primary served (as
// coverageStream: the slot's primary at every later start), and in its
// log every call a primary served.
type firstPass struct {
	calls    int
	failures []seqFailure
	starts   []int64
	served   []map[int]servedAt
	log      *servedLog
	// kept holds the failures' keys and classes kept out of the scan.
	kept keptStrings
}

func (f *firstPass) Call(c *call, seq int) {
	f.calls++
	if !c.served() {
		fl := failureOf(c)
		fl.key, fl.class = f.kept.of(fl.key), f.kept.of(fl.class)
		f.failures = append(f.failures, seqFailure{fl, seq})
	}
	if !c.servedByPrimary() {
		return
	}
	s := servedCallOf(c, seq)
	s.node = f.log.add(s) // the log's copy of the node's name
	if s.node != "" {
		if j := sort.Search(len(f.starts), func(j int) bool { return f.starts[j] > s.end }); j < len(f.starts) {
			noteServed(f.served[j], &s)
		}
	}
}

func (f *firstPass) End(context.Context) Result { return Result{Valid: Valid} }

// keepPass keeps the ops of the keys and indexes the attributions name.
type keepPass struct {
	keys map[string]bool
	idx  map[int64]bool
	kept []history.Op
}

func (k *keepPass) Call(c *call, _ int) {
	if k.keys[c.inv.Key] || k.idx[c.index] {
		k.kept = append(k.kept, *detachOp(c.inv))
		if c.comp != nil {
			k.kept = append(k.kept, *detachOp(c.comp))
		}
	}
}

func (k *keepPass) End(context.Context) Result { return Result{Valid: Valid} }

// noteServed keeps s in m when it is the slot's last served call (its
// node a string that outlives the scan).
func noteServed(m map[int]servedAt, s *servedCall) {
	a := s.at()
	if b, seen := m[s.slot]; !seen || a.after(b) {
		m[s.slot] = a
	}
}

// scannedOutages is the outageSource of a history file: the failures and
// the views of the first pass, and the recoveries of a pass of its log of
// served calls (recoverPass) over the candidates prepare finds.
type scannedOutages struct {
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
	at := map[int64]*slotMap{}
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
			// own, at no window's start: each slot's last call a primary
			// served that completed before it, from the log.
			served := map[int]servedAt{}
			err := s.first.log.replay(func(c *servedCall) {
				if c.node != "" && c.end < w.Start {
					noteServed(served, c)
				}
			})
			if err != nil {
				s.err = errors.Join(s.err, err)
			}
			m = nodesOf(served)
			at[w.Start] = m
		}
		views[wi].slotNode = m
	}
	return views
}

func nodesOf(served map[int]servedAt) *slotMap {
	m := newSlotMap()
	for slot, a := range served {
		m.set(slot, a.node)
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
	r.live = newMaxTree(r.reach)
	if err := s.first.log.replay(r.call); err != nil {
		s.err = errors.Join(s.err, err)
	}
}

// recoverPass fills the recovery queries: every call a primary served (of
// the log) is offered to the spans that began before it and may still
// take it.
type recoverPass struct {
	s     *scannedOutages
	views []shardView
	// reach[si] is the latest invocation a call of span si's queries may
	// have to be taken (inf while a shard's last candidate has none); live
	// holds the same numbers, to find the spans a call may still serve
	// without looking at the others.
	reach []int64
	live  *maxTree
	at    []int // the spans a call is offered to (reused)
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
	if r.live != nil {
		r.live.set(si, reach)
	}
}

func (r *recoverPass) call(c *servedCall) {
	// The spans that began by the call's start (they are in order of
	// their starts) and may still take a call that early.
	began := sort.Search(len(r.s.spans), func(i int) bool { return r.s.spans[i][0] > c.start })
	r.at = r.live.atLeast(began, c.start, r.at[:0])
	for _, si := range r.at {
		sh := r.views[si].slotNode.node(c.slot)
		if sh == "" {
			sh = "unknown"
		}
		q := r.s.queries[si][sh]
		if q == nil || c.start < q.at[0] {
			continue
		}
		j := sort.Search(len(q.at), func(j int) bool { return q.at[j] > c.start }) - 1
		a := c.at() // its node is the log's
		if b := q.first[j]; b != nil && (b.start < a.start || b.start == a.start && b.seq < a.seq) {
			continue
		}
		q.first[j] = &a
		if j == len(q.at)-1 {
			r.setReach(si)
		}
	}
}

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
