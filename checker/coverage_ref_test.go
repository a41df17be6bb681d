package checker

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The coverage checker as it was before it streamed (coverage.go): the
// reference its streaming form is compared with (TestCoverageStream),
// kept verbatim.

func coverageReference(c coverage, in *History) Result {
	ops := in.Ops
	kinds := c.requested(ops)
	if len(kinds) == 0 {
		return NotApplicable("no fault was requested: nothing to cover")
	}
	calls, err := Scope{}.calls(in)
	if err != nil {
		return invalidHistory(err)
	}
	calls = sortedByStart(calls)
	windows := in.windowsOf()
	addrs := in.nodeAddrsOf()
	views := shardViews(calls, windows, addrs)
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
	final := in.finalReadsStartOf()
	end := in.runEndOf() + 1
	if final >= 0 {
		end = final
	}
	workloadOf := func(key string) string {
		best := ""
		for name, p := range c.o.Workloads {
			if strings.HasPrefix(key, p) && len(p) > len(c.o.Workloads[best]) {
				best = name
			}
		}
		if best == "" {
			return "other"
		}
		return best
	}
	// The distinct keys of the run, with their workload.
	keyWorkload := map[string]string{}
	for i := range calls {
		k := calls[i].inv.Key
		if _, ok := keyWorkload[k]; !ok && k != "" {
			keyWorkload[k] = workloadOf(k)
		}
	}
	keys := make([]string, 0, len(keyWorkload))
	for k := range keyWorkload {
		keys = append(keys, k)
	}
	slices.Sort(keys)

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
		struck := map[string]bool{}         // keys on a touched primary
		for _, k := range keys {
			s := v.shardOf(k)
			if s == "" || !v.touched[s] {
				continue
			}
			if held[named(s)] == nil {
				held[named(s)] = map[string]int{}
			}
			held[named(s)][keyWorkload[k]]++
			struck[k] = true
		}
		next := end
		for _, x := range windows {
			if x.Start > w.Start && x.Start < next {
				next = x.Start
			}
		}
		var during, after [2]int // acked writes, ok reads
		// Ops that began up to a minute before the start and completed
		// in the window count too (no op timeout is that long).
		lo := sort.Search(len(calls), func(i int) bool { return calls[i].start >= w.Start-60e9 })
		for i := lo; i < len(calls) && calls[i].start < max(next, w.End); i++ {
			cl := &calls[i]
			if !struck[cl.inv.Key] || !cl.ok() || cl.end < w.Start {
				continue
			}
			var into *[2]int
			switch {
			case cl.end <= w.End:
				into = &during
			case cl.end < max(next, w.End):
				into = &after
			default:
				continue
			}
			if cl.inv.Name() == OpRead {
				into[1]++
			} else {
				into[0]++
			}
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
		if r, detail := untouchedRatioReference(calls, windows, wi, v); detail != nil {
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

// untouchedRatioReference compares each shard the window did not touch (a primary
// serving keys at its start) by its ok ops per second during the window
// and in the span of the same length just before it (cut at the end of
// the previous window). It returns the lowest ratio (-1 when no shard had
// ops before) and the per-shard detail (nil when there is no such shard).
func untouchedRatioReference(calls []call, windows []Window, wi int, v *shardView) (float64, map[string]UntouchedShard) {
	w := windows[wi]
	dur := w.End - w.Start
	if dur <= 0 {
		return -1, nil
	}
	from := w.Start - dur
	for i, x := range windows {
		if i != wi && x.End <= w.Start && x.End > from {
			from = x.End
		}
	}
	before := w.Start - from
	type counts struct{ before, during int }
	shards := map[string]*counts{}
	v.slotNode.each(func(_ int, node string) {
		if !v.touched[node] && shards[node] == nil {
			shards[node] = &counts{}
		}
	})
	if len(shards) == 0 {
		return -1, nil
	}
	lo := sort.Search(len(calls), func(i int) bool { return calls[i].start >= from })
	for i := lo; i < len(calls) && calls[i].start <= w.End; i++ {
		c := &calls[i]
		if !c.ok() {
			continue
		}
		sc := shards[v.shardOf(c.inv.Key)]
		if sc == nil {
			continue
		}
		switch {
		case c.end < w.Start:
			sc.before++
		case c.end <= w.End:
			sc.during++
		}
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
