package checker

import (
	"context"
	"slices"
	"strings"

	"github.com/redline-dev/redline/history"
)

// CheckPartitions is Check on a history given as slot partitions
// (PartitionChecker): a set key's ops are all in one partition, so each
// partition is analysed as Check analyses the whole (its set-aside copies
// from the census, a run-wide entry), trimmed to what the verdict reads,
// and the partials merged into the whole's analysis (mergeSetAnalyses).
// What it holds at once is one partition's set ops and their analysis,
// plus the elements the verdict names (every lost or set-aside one) and
// one visibility latency an element seen.
func (s set) CheckPartitions(ctx context.Context, n int, load PartitionLoader) (Result, error) {
	parts := make([]*setAnalysis, 0, n)
	for i := range n {
		ops, err := load(i, s.o.filter())
		if err != nil {
			return Result{}, err
		}
		in := NewHistory(ops)
		calls, err := s.o.calls(in)
		if err != nil {
			// The caller checks such a history whole; if not, the first
			// partition's word.
			return invalidHistory(err), nil
		}
		parts = append(parts, analyzeSet(calls, s.o.MaxExamples, asidesOf(in.censusOf())).trimmed(s.o.MaxExamples))
	}
	return s.judge(mergeSetAnalyses(parts)), nil
}

// trimmed is what judge reads of an analysis, nothing pointing into the
// partition's ops: the lost and set-aside elements detached, and of each
// key its name, the elements it names and its first unexpected elements
// (as many as judge lists) with, of its reads, the first that holds each.
func (a *setAnalysis) trimmed(maxExamples int) *setAnalysis {
	t := *a
	named := map[*setElem]*setElem{}
	detached := func(es []*setElem) []*setElem {
		out := make([]*setElem, len(es))
		for i, e := range es {
			d := *e
			d.add = detachCall(e.add)
			named[e], out[i] = &d, &d
		}
		return out
	}
	t.lost, t.lostSeen = detached(a.lost), detached(a.lostSeen)
	t.setAside, t.setAsideSeen = detached(a.setAside), detached(a.setAsideSeen)
	t.latencies = slices.Clip(a.latencies)
	t.keys = make([]*setKey, len(a.keys))
	for i, sk := range a.keys {
		tk := &setKey{key: sk.key, unexpect: slices.Clone(capList(sk.unexpect, maxExamples))}
		if len(named) > 0 {
			for v, e := range sk.elems {
				if d := named[e]; d != nil {
					if tk.elems == nil {
						tk.elems = map[int64]*setElem{}
					}
					tk.elems[v] = d
				}
			}
		}
		// firstReadOf of the unexpected elements kept: the same index.
		want := map[int64]bool{}
		for _, v := range tk.unexpect {
			want[v] = true
		}
		for _, r := range sk.reads {
			if len(want) == 0 {
				break
			}
			var vals []int64
			for _, v := range r.vals {
				if want[v] {
					vals = append(vals, v)
					delete(want, v)
				}
			}
			if len(vals) > 0 {
				tk.reads = append(tk.reads, setRead{c: call{inv: &history.Op{Index: r.c.index}, index: r.c.index}, vals: vals})
			}
		}
		t.keys[i] = tk
	}
	return &t
}

// mergeSetAnalyses is the analysis of the whole history from those of its
// slot partitions, as analyzeSet makes it: keys in name order, sums, the
// lost and set-aside elements by acknowledgement, the never-read keys
// sorted, the garbage replies in index order.
func mergeSetAnalyses(parts []*setAnalysis) *setAnalysis {
	if len(parts) == 1 {
		return parts[0]
	}
	m := &setAnalysis{}
	ans := make([]*anomalies, 0, len(parts))
	for _, p := range parts {
		m.keys = append(m.keys, p.keys...)
		for i := range m.adds {
			m.adds[i] += p.adds[i]
		}
		m.duplicates += p.duplicates
		m.reads += p.reads
		m.malformed += p.malformed
		m.lost = append(m.lost, p.lost...)
		m.lostSeen = append(m.lostSeen, p.lostSeen...)
		m.setAside = append(m.setAside, p.setAside...)
		m.setAsideSeen = append(m.setAsideSeen, p.setAsideSeen...)
		m.unexpected += p.unexpected
		m.recovered += p.recovered
		m.stale += p.stale
		m.neverRead += p.neverRead
		m.neverReadKeys = append(m.neverReadKeys, p.neverReadKeys...)
		m.latencies = append(m.latencies, p.latencies...)
		ans = append(ans, p.an)
	}
	slices.SortFunc(m.keys, func(x, y *setKey) int { return strings.Compare(x.key, y.key) })
	slices.Sort(m.neverReadKeys)
	byAck := func(x, y *setElem) int {
		if c := cmpInt(x.add.end, y.add.end); c != 0 {
			return c
		}
		return cmpInt(x.v, y.v)
	}
	slices.SortFunc(m.lost, byAck)
	slices.SortFunc(m.lostSeen, byAck)
	slices.SortFunc(m.setAside, byAck)
	slices.SortFunc(m.setAsideSeen, byAck)
	// Only garbage replies, found as the calls are scanned.
	m.an = mergeAnomalies(ans, parts[0].an.max)
	return m
}
