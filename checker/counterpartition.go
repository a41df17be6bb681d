package checker

import (
	"cmp"
	"context"
	"slices"
	"strings"
)

// CheckPartitions is Check on a history given as slot partitions
// (PartitionChecker): a counter key's ops are all in one partition, so each
// partition is analysed as Check analyses the whole, its keys trimmed to
// what the verdict reads of them, and the partials merged into the whole's
// analysis (mergeCounterAnalyses). What it holds at once is one partition's
// counter ops and their analysis, plus a few numbers a key.
func (c counter) CheckPartitions(ctx context.Context, n int, load PartitionLoader) (Result, error) {
	parts := make([]*counterAnalysis, 0, n)
	for i := range n {
		a, unpaired, err := counterPartition(ctx, i, c.o, load)
		if err != nil {
			return Result{}, err
		}
		if unpaired != nil {
			// The caller checks such a history whole; if not, the first
			// partition's word.
			return invalidHistory(unpaired), nil
		}
		parts = append(parts, a)
	}
	return c.judge(mergeCounterAnalyses(parts, c.o.MaxExamples)), nil
}

// counterPartition is the trimmed analysis of partition i: its own
// workload's ops only (o.keep), the run-wide entries (the final-reads
// marker) with them. unpaired is the partition's pairing error, err a
// partition that could not be loaded.
func counterPartition(ctx context.Context, i int, o Scope, load PartitionLoader) (a *counterAnalysis, unpaired, err error) {
	in, err := PartitionCalls(ctx, load, i, o)
	if err != nil {
		return nil, nil, err
	}
	calls, err := o.calls(in)
	if err != nil {
		return nil, err, nil
	}
	return analyzeCounter(calls, in.finalReadsStartOf(), o.MaxExamples).trimmed(), nil, nil
}

// trimmed is the analysis with its keys trimmed (counterKey.trimmed) and
// nothing pointing into the partition's ops, so that keeping it does not
// keep them.
func (a *counterAnalysis) trimmed() *counterAnalysis {
	t := *a
	t.keys = make([]*counterKey, len(a.keys))
	for i, ck := range a.keys {
		t.keys[i] = ck.trimmed()
	}
	return &t
}

// trimmed is what judge reads of a key: its sums and bounds, its final
// read (detached from the partition) and where its loss first showed
// (revealed); not its adds and reads.
func (ck *counterKey) trimmed() *counterKey {
	t := &counterKey{
		key: ck.key, acked: ck.acked, attempted: ck.attempted, ackedClass: ck.ackedClass,
		lower: ck.lower, upper: ck.upper, lost: ck.lost, lostMax: ck.lostMax,
		unexpected: ck.unexpected, unexplained: ck.unexplained, lostSplit: ck.lostSplit, hasNeg: ck.hasNeg,
	}
	if ck.final != nil {
		f := *ck.final
		f.c = detachCall(f.c)
		t.final = &f
	}
	if r, w, ok := ck.revealed(); ok {
		t.revealedAt = &[2]int64{r, w}
	}
	return t
}

// detachCall copies a call's entries out of their partition.
func detachCall(c call) call {
	c.inv = detachOp(c.inv)
	if c.comp != nil {
		c.comp = detachOp(c.comp)
	}
	return c
}

// mergeCounterAnalyses is the analysis of the whole history from those of
// its slot partitions, as analyzeCounter makes it: keys in name order,
// sums, the examples the whole keeps in its order (reads key by key, the
// resent adds by index) and caps, the longest gap of the first key that
// has it, the anomalies as mergeKeyedAnomalies merges them.
func mergeCounterAnalyses(parts []*counterAnalysis, maxExamples int) *counterAnalysis {
	if len(parts) == 1 {
		return parts[0]
	}
	m := &counterAnalysis{}
	ans := make([]*anomalies, 0, len(parts))
	for _, p := range parts {
		m.keys = append(m.keys, p.keys...)
		m.okAdds += p.okAdds
		m.infoAdds += p.infoAdds
		m.failAdds += p.failAdds
		m.reads += p.reads
		m.malformed += p.malformed
		m.badReads = append(m.badReads, p.badReads...)
		m.nbad += p.nbad
		m.resent += p.resent
		m.resentSamples = append(m.resentSamples, p.resentSamples...)
		m.replicaReads += p.replicaReads
		m.staleReads += p.staleReads
		m.staleSamples = append(m.staleSamples, p.staleSamples...)
		// The whole keeps the first key (by name) of the longest gap.
		if p.gap.ms > m.gap.ms || p.gap.ms == m.gap.ms && p.gap.ms > 0 && p.gap.key < m.gap.key {
			m.gap = p.gap
		}
		ans = append(ans, p.an)
	}
	slices.SortFunc(m.keys, func(x, y *counterKey) int { return strings.Compare(x.key, y.key) })
	m.badReads = capList(sortedByKey(m.badReads), maxExamples)
	slices.Sort(m.resentSamples) // the calls' order: their indexes increase
	m.resentSamples = capList(m.resentSamples, maxExamples)
	m.staleSamples = capList(sortedByKey(m.staleSamples), maxExamples)
	m.an = mergeKeyedAnomalies(ans, maxExamples, counterKeyClasses)
	return m
}

// counterKeyClasses are the anomalies analyzeCounter finds key by key (the
// others, garbage, in its scan of the calls), in the order it looks for
// them in a key.
var counterKeyClasses = []string{"backwards-read", "impossible-replica-read", "unexplained-deficit"}

// sortedByKey sorts examples by their "key", stably: the order of a check
// that takes its keys in name order, from the first examples of partitions
// that each did.
func sortedByKey(ex []map[string]any) []map[string]any {
	slices.SortStableFunc(ex, exampleKeyOrder)
	return ex
}

func exampleKeyOrder(a, b map[string]any) int {
	return cmp.Compare(a["key"].(string), b["key"].(string))
}

// mergeKeyedAnomalies merges the anomalies of partitions as a check of the
// whole history adds them when it first scans the calls in index order
// (every class not in keyClasses) and then judges its keys in name order
// (keyClasses, in the order it looks for them in one key): counts summed,
// the first examples of each class in that order, the classes in the order
// of their first example.
func mergeKeyedAnomalies(parts []*anomalies, maxExamples int, keyClasses []string) *anomalies {
	m := newAnomalies(maxExamples)
	for _, a := range parts {
		for _, c := range a.order {
			if m.count[c] == 0 {
				m.order = append(m.order, c)
			}
			m.count[c] += a.count[c]
			m.examples[c] = append(m.examples[c], a.examples[c]...)
		}
	}
	byIndex := func(a, b map[string]any) int { return cmp.Compare(a["index"].(int64), b["index"].(int64)) }
	rank := func(c string) int { return slices.Index(keyClasses, c) } // -1: the scan's
	for c, ex := range m.examples {
		if rank(c) < 0 {
			slices.SortStableFunc(ex, byIndex)
		} else {
			slices.SortStableFunc(ex, exampleKeyOrder)
		}
		m.examples[c] = capList(ex, maxExamples)
	}
	slices.SortStableFunc(m.order, func(a, b string) int {
		ra, rb := rank(a), rank(b)
		if (ra < 0) != (rb < 0) {
			return cmp.Compare(ra, rb) // the scan's classes first
		}
		ea, eb := m.examples[a], m.examples[b]
		if len(ea) == 0 || len(eb) == 0 {
			return 0 // no examples kept: as found
		}
		if ra < 0 {
			return byIndex(ea[0], eb[0])
		}
		if c := exampleKeyOrder(ea[0], eb[0]); c != 0 {
			return c
		}
		return cmp.Compare(ra, rb)
	})
	return m
}
