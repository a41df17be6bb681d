package checker

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/redline-dev/redline/history"
)

// CoverageName is the coverage checker's name in results.json.
const CoverageName = "coverage"

// CoverageOptions say what a run asked for: the fault kinds requested
// (--nemesis names, "fault:mode" counts as fault; "all" means every kind
// whose start the history records) and each workload's key prefix.
type CoverageOptions struct {
	Requested []string
	Workloads map[string]string // workload name -> key prefix
	// Require turns a requested kind without evidence into unknown
	// (--require-coverage): CI can refuse a VALID that tested nothing.
	Require bool
}

type coverage struct{ o CoverageOptions }

// Coverage says, per fault window and per requested fault kind, what the
// run exercised: which primaries holding which workloads' keys a fault
// touched, how many acknowledged writes and successful reads those keys
// had during the window and after it (until the next fault starts, or the
// final reads), and whether the fault took effect at all (a start that
// failed or was skipped opens no window). A window has evidence when it
// took effect, touched a primary holding keys and those keys were served
// during or after it: only then can the checkers have judged the fault.
//
// Each window also compares the ok rate of the shards it did not touch
// with the span just before it (untouched_ok_ratio): a dead shard that
// starves the others of workers shows here.
//
// It measures; its verdict is valid, or unknown under Require when a
// requested kind produced no evidence; not applicable when no fault was
// requested.
func Coverage(o CoverageOptions) Checker { return coverage{o} }

func (coverage) Name() string { return CoverageName }

// kindCoverage is the summary of one requested fault kind.
type kindCoverage struct {
	windows, evidence, notEffective int
	primaries                       map[string]bool
	workloads                       map[string]bool
	writes, reads                   int
}

func (c coverage) requested(ops []history.Op) []string {
	var out []string
	all := false
	for _, r := range c.o.Requested {
		f, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(r)), ":")
		switch f {
		case "", "none":
		case "all":
			all = true
		default:
			out = append(out, f)
		}
	}
	if all {
		for i := range ops {
			if fault, ok := history.StartedFault(ops[i].F); ok && ops[i].Process == history.Nemesis {
				out = append(out, fault)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// notEffective counts, per fault kind, the starts that failed or were
// skipped: faults that were scheduled and did not take effect.
func notEffective(ops []history.Op) map[string]int {
	out := map[string]int{}
	for i := range ops {
		op := &ops[i]
		fault, isStart := history.StartedFault(op.F)
		if op.Process != history.Nemesis || !isStart || op.Type == history.Invoke {
			continue
		}
		if op.Type == history.Fail || skippedDetail(op.DetailRaw()) {
			out[fault]++
		}
	}
	return out
}

func (c coverage) Check(ctx context.Context, in *History) Result {
	if len(c.requested(in.Ops)) == 0 {
		return NotApplicable("no fault was requested: nothing to cover")
	}
	calls, err := Scope{}.calls(in)
	if err != nil {
		return invalidHistory(err)
	}
	s := c.newStream(in)
	for i := range calls {
		s.Call(&calls[i], i)
	}
	return s.result()
}

// NewStream: the coverage checker streams (StreamChecker).
func (c coverage) NewStream(t *Tail) Stream {
	s := c.newStream(t.History)
	s.t = t
	return s
}

// coverageStream is what the coverage checker needs of the client ops,
// the fault windows being known before the pass (the nemesis entries):
// the run's keys with their workload; per window, per slot, the ok ops
// it counts; and, per span between two window starts, per slot, the last
// op a primary served there (the slot's primary at the start of every
// later window: shardViews). It grows with the keys, the windows and
// the slots, not with the run.
type coverageStream struct {
	c       coverage
	t       *Tail
	in      *History
	windows []Window
	// next is, per window, the start of the next one (or the final
	// reads, or the run's end): the span its evidence is counted in.
	next        []int64
	keyWorkload map[string]string
	// kept holds the node names the served ops are noted with.
	kept keptStrings
	// starts are the windows' starts, sorted; served[j] the last op
	// served by a primary per slot among those that completed before
	// starts[j] and not before starts[j-1].
	starts []int64
	served []map[int]servedAt
	// cover finds the windows whose spans an op's invocation is in.
	cover  coverIndex
	counts []map[int]*slotCounts // per window, per slot
}

// servedAt is a served op: the last of a slot's (by completion, then
// invocation, then its place in the history) names its primary.
type servedAt struct {
	end, start int64
	seq        int
	node       string
}

func (a servedAt) after(b servedAt) bool {
	if a.end != b.end {
		return a.end > b.end
	}
	if a.start != b.start {
		return a.start > b.start
	}
	return a.seq > b.seq
}

// slotCounts are the ok ops of one slot a window counts: acked writes
// and ok reads during it and after it (until the next fault), and ok ops
// before and during it (untouchedRatio).
type slotCounts struct {
	writesDuring, readsDuring, writesAfter, readsAfter int
	okBefore, okDuring                                 int
}

// The spans of a window an op is counted in, by its invocation.
const (
	spanEvidence = iota // [start - 1 min, max(next, end)): evidence during and after
	spanRatio           // [the span before it, end]: untouchedRatio
)

// coverIndex finds the (window, span) pairs whose spans hold a time: the
// spans' bounds cut time into segments, each with its list.
type coverIndex struct {
	bounds []int64
	lists  [][][2]int // segment [bounds[i], bounds[i+1]) -> (window, span)
}

func newCoverIndex(spans [][2]int64, of [][2]int) coverIndex {
	var ix coverIndex
	for _, sp := range spans {
		if sp[0] < sp[1] {
			ix.bounds = append(ix.bounds, sp[0], sp[1])
		}
	}
	slices.Sort(ix.bounds)
	ix.bounds = slices.Compact(ix.bounds)
	ix.lists = make([][][2]int, max(0, len(ix.bounds)-1))
	for i := range ix.lists {
		for k, sp := range spans {
			if sp[0] <= ix.bounds[i] && ix.bounds[i+1] <= sp[1] {
				ix.lists[i] = append(ix.lists[i], of[k])
			}
		}
	}
	return ix
}

func (ix *coverIndex) at(t int64) [][2]int {
	i := sort.Search(len(ix.bounds), func(i int) bool { return ix.bounds[i] > t }) - 1
	if i < 0 || i >= len(ix.lists) {
		return nil
	}
	return ix.lists[i]
}

func (c coverage) newStream(in *History) *coverageStream {
	s := &coverageStream{c: c, in: in, windows: in.windowsOf(), keyWorkload: map[string]string{}, kept: keptStrings{}}
	final := in.finalReadsStartOf()
	end := in.runEndOf() + 1
	if final >= 0 {
		end = final
	}
	var spans [][2]int64
	var of [][2]int
	for wi, w := range s.windows {
		next := end
		for _, x := range s.windows {
			if x.Start > w.Start && x.Start < next {
				next = x.Start
			}
		}
		s.next = append(s.next, next)
		spans = append(spans, [2]int64{w.Start - 60e9, max(next, w.End)})
		of = append(of, [2]int{wi, spanEvidence})
		if dur := w.End - w.Start; dur > 0 {
			spans = append(spans, [2]int64{ratioFrom(s.windows, wi), w.End + 1})
			of = append(of, [2]int{wi, spanRatio})
		}
		s.starts = append(s.starts, w.Start)
		s.counts = append(s.counts, map[int]*slotCounts{})
	}
	s.cover = newCoverIndex(spans, of)
	slices.Sort(s.starts)
	s.starts = slices.Compact(s.starts)
	s.served = make([]map[int]servedAt, len(s.starts))
	for j := range s.served {
		s.served[j] = map[int]servedAt{}
	}
	return s
}

func (s *coverageStream) workloadOf(key string) string {
	best := ""
	for name, p := range s.c.o.Workloads {
		if strings.HasPrefix(key, p) && len(p) > len(s.c.o.Workloads[best]) {
			best = name
		}
	}
	if best == "" {
		return "other"
	}
	return best
}

func (s *coverageStream) Call(cl *call, seq int) {
	k := cl.inv.Key
	if _, ok := s.keyWorkload[k]; !ok && k != "" {
		s.keyWorkload[strings.Clone(k)] = s.workloadOf(k)
	}
	if len(s.windows) == 0 {
		return
	}
	slot := history.Keyslot(k)
	if cl.servedByPrimary() && cl.comp.Node != "" {
		// The windows that start after it completed see it.
		if j := sort.Search(len(s.starts), func(j int) bool { return s.starts[j] > cl.end }); j < len(s.starts) {
			a := servedAt{end: cl.end, start: cl.start, seq: seq, node: cl.comp.Node}
			if b, seen := s.served[j][slot]; !seen || a.after(b) {
				a.node = s.kept.of(a.node)
				s.served[j][slot] = a
			}
		}
	}
	if !cl.ok() {
		return
	}
	for _, ws := range s.cover.at(cl.start) {
		w := &s.windows[ws[0]]
		sc := s.counts[ws[0]][slot]
		if sc == nil {
			sc = &slotCounts{}
			s.counts[ws[0]][slot] = sc
		}
		switch ws[1] {
		case spanEvidence:
			if k == "" || cl.end < w.Start {
				continue
			}
			read := cl.inv.Name() == OpRead
			switch {
			case cl.end <= w.End && read:
				sc.readsDuring++
			case cl.end <= w.End:
				sc.writesDuring++
			case cl.end < max(s.next[ws[0]], w.End) && read:
				sc.readsAfter++
			case cl.end < max(s.next[ws[0]], w.End):
				sc.writesAfter++
			}
		case spanRatio:
			switch {
			case cl.end < w.Start:
				sc.okBefore++
			case cl.end <= w.End:
				sc.okDuring++
			}
		}
	}
}

func (s *coverageStream) End(context.Context) Result {
	if len(s.c.requested(s.in.Ops)) == 0 {
		return NotApplicable("no fault was requested: nothing to cover")
	}
	if r, bad := s.t.pairErr(); bad {
		return r
	}
	return s.result()
}

// views are shardViews of the calls seen: each window's slot -> primary
// at its start, and the nodes it touched.
func (s *coverageStream) views() []shardView {
	views := shardViews(nil, s.windows, s.in.nodeAddrsOf())
	cur := map[int]servedAt{}
	at := map[int64]*slotMap{}
	for j, start := range s.starts {
		for slot, a := range s.served[j] {
			if b, seen := cur[slot]; !seen || a.after(b) {
				cur[slot] = a
			}
		}
		m := newSlotMap()
		for slot, a := range cur {
			m.set(slot, a.node)
		}
		at[start] = m
	}
	for wi := range views {
		views[wi].slotNode = at[s.windows[wi].Start]
	}
	return views
}

func (s *coverageStream) result() Result {
	c, in := s.c, s.in
	ops := in.Ops
	kinds := c.requested(ops)
	windows := s.windows
	addrs := in.nodeAddrsOf()
	views := s.views()
	// Primaries are named as the fault events name nodes, where known.
	nameOf := map[string]string{}
	for n, a := range addrs {
		nameOf[a] = n
	}
	named := func(addr string) string {
		if n, ok := nameOf[addr]; ok {
			return n
		}
		return addr
	}
	// The distinct keys of the run, counted per slot and workload: what
	// each window reads of them (a window reading every key cost some
	// 200 s at 150M entries, 1,125 windows and 40k keys).
	type slotKeys struct {
		slot      int
		workloads map[string]int
	}
	bySlot := map[int]*slotKeys{}
	for k, wl := range s.keyWorkload {
		slot := history.Keyslot(k)
		sk := bySlot[slot]
		if sk == nil {
			sk = &slotKeys{slot: slot, workloads: map[string]int{}}
			bySlot[slot] = sk
		}
		sk.workloads[wl]++
	}
	slotsWithKeys := slices.SortedFunc(maps.Values(bySlot), func(a, b *slotKeys) int { return a.slot - b.slot })

	per := map[string]*kindCoverage{}
	for _, k := range kinds {
		per[k] = &kindCoverage{primaries: map[string]bool{}, workloads: map[string]bool{}}
	}
	for k, n := range notEffective(ops) {
		if kc := per[k]; kc != nil {
			kc.notEffective = n
		}
	}
	perWindow := []CoverageWindow{}
	for wi, w := range windows {
		v := &views[wi]
		// The primaries the fault touched that held keys at its start,
		// and which workloads' keys.
		held := map[string]map[string]int{} // primary address -> workload -> keys
		for _, sk := range slotsWithKeys {
			sh := v.slotNode.node(sk.slot)
			if sh == "" || !v.touched[sh] {
				continue
			}
			h := held[named(sh)]
			if h == nil {
				h = map[string]int{}
				held[named(sh)] = h
			}
			for wl, n := range sk.workloads {
				h[wl] += n
			}
		}
		var during, after [2]int // acked writes, ok reads
		// Ops that began up to a minute before the start and completed
		// in the window count too (no op timeout is that long), on the
		// slots of the keys it struck.
		for slot, sc := range s.counts[wi] {
			if n := v.slotNode.node(slot); n == "" || !v.touched[n] {
				continue
			}
			during[0] += sc.writesDuring
			during[1] += sc.readsDuring
			after[0] += sc.writesAfter
			after[1] += sc.readsAfter
		}
		evidence := len(held) > 0 && during[0]+during[1]+after[0]+after[1] > 0
		prims := keysSorted(held)
		workloads := map[string]bool{}
		for _, m := range held {
			for wl := range m {
				workloads[wl] = true
			}
		}
		m := CoverageWindow{
			Window: wi, Fault: w.Fault, StartS: sec(w.Start), EndS: sec(w.End), Nodes: nonNil(w.Nodes),
			TookEffect:        true,
			PrimariesWithKeys: held,
			AckedWritesDuring: during[0], OKReadsDuring: during[1],
			AckedWritesAfter: after[0], OKReadsAfter: after[1],
			Evidence: evidence,
		}
		if !v.mapped {
			m.Note = "the touched nodes' addresses are not in the history (no \"nodes\" event): which keys they held is unknown"
		}
		if r, detail := untouchedRatio(windows, wi, v, s.counts[wi]); detail != nil {
			m.UntouchedShards = detail
			if r >= 0 {
				m.UntouchedOKRatio = ptr(r)
			}
		}
		if len(perWindow) < 200 {
			perWindow = append(perWindow, m)
		}
		kc := per[w.Fault]
		if kc == nil {
			continue // a fault not requested (a composition's strike): listed, not summarised
		}
		kc.windows++
		if evidence {
			kc.evidence++
			kc.writes += during[0] + after[0]
			kc.reads += during[1] + after[1]
			for _, p := range prims {
				kc.primaries[p] = true
			}
			for wl := range workloads {
				kc.workloads[wl] = true
			}
		}
	}
	kindFig := map[string]KindCoverage{}
	var none, lines, short []string
	for _, k := range kinds {
		kc := per[k]
		short = append(short, fmt.Sprintf("%s:%d/%d", k, kc.evidence, kc.windows))
		f := KindCoverage{Windows: kc.windows, WindowsWithEvidence: kc.evidence,
			NotEffective: kc.notEffective, AckedWrites: kc.writes, OKReads: kc.reads,
			Primaries: keysSorted(kc.primaries), Workloads: keysSorted(kc.workloads)}
		if kc.evidence == 0 {
			none = append(none, k)
		}
		f.Summary = kc.describe(k)
		lines = append(lines, kc.describe(k))
		kindFig[k] = f
	}
	fig := &CoverageFigures{
		Measurement: true,
		Requested:   kinds,
		PerKind:     kindFig,
		NoEvidence:  nonNil(none),
		Evidence:    strings.Join(short, " "),
		PerWindow:   perWindow,
		Summary:     strings.Join(lines, "; "),
		Definition:  "a window has evidence when its fault took effect, touched a primary holding keys of the run at its start, and those keys had acknowledged writes or successful reads during it or after it (until the next fault or the final reads); untouched_ok_ratio is the lowest ok rate of a shard the fault did not touch, during the window, over its rate in the span of the same length before it",
	}
	res := Result{Valid: Valid, Figures: fig}
	if c.o.Require && len(none) > 0 {
		res.Valid = Unknown
		fig.Reason = "--require-coverage: " + strings.Join(noEvidenceWords(none), ", ")
		fig.Error = fig.Reason
	}
	return res
}

// CoverageFigures are the coverage checker's figures: what each requested
// fault kind exercised, and each fault window's evidence.
type CoverageFigures struct {
	Measurement bool     `json:"measurement"`
	Requested   []string `json:"requested"`
	// PerKind is each requested kind's coverage, NoEvidence the kinds
	// that produced none; Evidence is the table's short form
	// (kind:windows with evidence/windows), Summary the same in words.
	PerKind    map[string]KindCoverage `json:"per_kind"`
	NoEvidence []string                `json:"no_evidence"`
	Evidence   string                  `json:"evidence"`
	Summary    string                  `json:"summary"`
	PerWindow  []CoverageWindow        `json:"per_window"`
	Definition string                  `json:"definition"`
	// Reason and Error say why the verdict is unknown (--require-coverage
	// and a kind without evidence).
	Reason string `json:"why,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Why says why the verdict is unknown.
func (f *CoverageFigures) Why() string { return f.Reason }

// Err says why the coverage checker could not say its verdict.
func (f *CoverageFigures) Err() string { return f.Error }

// Measures: the coverage checker measures.
func (f *CoverageFigures) Measures() bool { return true }

// KindCoverage is what one requested fault kind exercised.
type KindCoverage struct {
	Kind string `json:"-"`
	// Summary says it in words.
	Summary             string   `json:"summary"`
	Windows             int      `json:"windows"`
	WindowsWithEvidence int      `json:"windows_with_evidence"`
	NotEffective        int      `json:"not_effective"`
	AckedWrites         int      `json:"acked_writes"`
	OKReads             int      `json:"ok_reads"`
	Primaries           []string `json:"primaries"`
	Workloads           []string `json:"workloads"`
}

// CoverageWindow is one fault window's evidence: the primaries it touched
// that held keys (by workload), and the traffic on those keys during and
// after it.
type CoverageWindow struct {
	Window            int                       `json:"window"`
	Fault             string                    `json:"fault"`
	StartS            float64                   `json:"start_s"`
	EndS              float64                   `json:"end_s"`
	Nodes             []string                  `json:"nodes"`
	TookEffect        bool                      `json:"took_effect"`
	PrimariesWithKeys map[string]map[string]int `json:"primaries_with_keys"`
	AckedWritesDuring int                       `json:"acked_writes_during"`
	OKReadsDuring     int                       `json:"ok_reads_during"`
	AckedWritesAfter  int                       `json:"acked_writes_after"`
	OKReadsAfter      int                       `json:"ok_reads_after"`
	Evidence          bool                      `json:"evidence"`
	Note              string                    `json:"note,omitempty"`
	// UntouchedShards compares the ok rate of each shard the fault did not
	// touch, during it, to the span before; UntouchedOKRatio is the lowest.
	UntouchedShards  map[string]UntouchedShard `json:"untouched_shards,omitempty"`
	UntouchedOKRatio *float64                  `json:"untouched_ok_ratio,omitempty"`
}

// UntouchedShard is a shard a fault window did not touch: its ok ops
// before and during the window, and their rates where known.
type UntouchedShard struct {
	OKBefore     int      `json:"ok_before"`
	OKDuring     int      `json:"ok_during"`
	OKPerSBefore *float64 `json:"ok_per_s_before,omitempty"`
	OKPerSDuring *float64 `json:"ok_per_s_during,omitempty"`
	Ratio        *float64 `json:"ratio,omitempty"`
}

func (kc *kindCoverage) describe(kind string) string {
	w := fmt.Sprintf("%d windows", kc.windows)
	if kc.windows == 1 {
		w = "1 window"
	}
	switch {
	case kc.windows == 0 && kc.notEffective > 0:
		return fmt.Sprintf("%s: %d scheduled, none took effect: no evidence", kind, kc.notEffective)
	case kc.windows == 0:
		return fmt.Sprintf("%s: no window: no evidence", kind)
	case kc.evidence == 0:
		return fmt.Sprintf("%s: %s, touched no primary holding keys that were served during or after it: no evidence", kind, w)
	}
	return fmt.Sprintf("%s: %s, %d with evidence (primaries %s holding %s keys; %d acked writes, %d ok reads on them during and after)",
		kind, w, kc.evidence, strings.Join(keysSorted(kc.primaries), ", "), strings.Join(keysSorted(kc.workloads), ", "), kc.writes, kc.reads)
}

func noEvidenceWords(kinds []string) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k + ": no evidence"
	}
	return out
}

// untouchedRatio compares each shard the window did not touch (a primary
// serving keys at its start) by its ok ops per second during the window
// and in the span of the same length just before it (cut at the end of
// the previous window). It returns the lowest ratio (-1 when no shard had
// ops before) and the per-shard detail (nil when there is no such shard).
func untouchedRatio(windows []Window, wi int, v *shardView, counts map[int]*slotCounts) (float64, map[string]UntouchedShard) {
	w := windows[wi]
	dur := w.End - w.Start
	if dur <= 0 {
		return -1, nil
	}
	from := ratioFrom(windows, wi)
	before := w.Start - from
	type counts2 struct{ before, during int }
	shards := map[string]*counts2{}
	v.slotNode.each(func(_ int, node string) {
		if !v.touched[node] && shards[node] == nil {
			shards[node] = &counts2{}
		}
	})
	if len(shards) == 0 {
		return -1, nil
	}
	// The ok ops invoked from the span before it to its end, per slot.
	for slot, c := range counts {
		sc := shards[v.slotNode.node(slot)]
		if sc == nil {
			continue
		}
		sc.before += c.okBefore
		sc.during += c.okDuring
	}
	worst := -1.0
	detail := map[string]UntouchedShard{}
	for s, sc := range shards {
		m := UntouchedShard{OKBefore: sc.before, OKDuring: sc.during}
		if before > 0 && sc.before > 0 {
			rb := float64(sc.before) / float64(before)
			rd := float64(sc.during) / float64(dur)
			r := float64(int(rd/rb*1000+0.5)) / 1000
			m.OKPerSBefore = ptr(float64(int(rb*1e9*10+0.5)) / 10)
			m.OKPerSDuring = ptr(float64(int(rd*1e9*10+0.5)) / 10)
			m.Ratio = ptr(r)
			if worst < 0 || r < worst {
				worst = r
			}
		}
		detail[s] = m
	}
	return worst, detail
}

// ratioFrom is where the span before window wi that untouchedRatio
// compares it with starts: as long before it as it lasts, cut at the end
// of an earlier window.
func ratioFrom(windows []Window, wi int) int64 {
	w := windows[wi]
	from := w.Start - (w.End - w.Start)
	for i, x := range windows {
		if i != wi && x.End <= w.Start && x.End > from {
			from = x.End
		}
	}
	return from
}

// Caveats are the words a verdict carries beside VALID: each requested
// fault kind that produced no evidence ("partition: no evidence"), read
// from the coverage checker's figures (also those of a stored
// results.json), after what the run-files checker says of the run's
// files ("history torn at line 3: ...").
func (s Summary) Caveats() []string {
	files := runFilesCaveats(s)
	r, ok := s.Checkers[CoverageName]
	if !ok {
		return files
	}
	f, ok := FiguresAs[*CoverageFigures](r)
	if !ok {
		return files
	}
	return append(files, noEvidenceWords(f.NoEvidence)...)
}

// VerdictWord is how a checker's verdict reads in a table: "measured" for
// a checker that measures (figure "measurement": true) and judged nothing
// wrong, so that a figure such as lost=6 of rpo never reads as a pass.
func VerdictWord(r Result) string {
	if r.Valid == Valid {
		if m, ok := r.Figures.(Measurer); ok && m.Measures() {
			return "measured"
		}
	}
	return r.Valid.String()
}

func keysSorted[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
