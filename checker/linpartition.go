package checker

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/redline-dev/redline/history"
)

// PartitionChecker is a checker that can judge a history given as
// partitions by key slot (history.SlotPartition: every key of a slot in
// one partition, each partition holding its keys' client ops and every
// run-wide entry, in the history's order), loading one partition at a
// time, so that its memory is that of the largest partition and not of
// the run (issue 42). load(i, keep) is partition i, keeping the client
// ops whose invocation keep accepts (history.Partitions.LoadWhere). Its result is the one Check gives on the whole
// history: the same verdict and figures, provided the history pairs
// (history.Partitions.Paired) and its indexes increase
// (history.Partitions.IndexesIncrease), which keep the examples' order
// the same; on a history that does not, the caller checks it whole. An
// error is a partition that could not be loaded: no verdict.
type PartitionChecker interface {
	Checker
	CheckPartitions(ctx context.Context, n int, load PartitionLoader) (Result, error)
}

// PartitionLoader loads partition i of a history keeping the client ops
// whose invocation keep accepts, and every run-wide entry.
type PartitionLoader func(i int, keep func(inv *history.Op) bool) ([]history.Op, error)

// regPartial is what the linearizability search found on the register
// keys of a history or of one partition of it: what the result needs,
// without the ops, so that partials of partitions merge (mergeRegPartials).
type regPartial struct {
	err error // the history could not be paired

	keys, ops, indeterminate, pooledKeys int
	okReads, okWrites                    int
	replicaReads, skipped                int
	anomalous, unknown                   []string
	stale                                int
	// staleEx are the first stale reads in key order (staleReads).
	staleEx []map[string]any
	// The replica flags the writes contradict: how many, and the first
	// (the lowest index) in words.
	flagLies     int
	flagLieIndex int64
	flagLie      string
	// garbage holds the replies registerOps could not read, replica those
	// impossibleReplicaReads flags: Check adds them in that order.
	garbage, replica *anomalies
	// searched is how long the search took, of the budget.
	searched time.Duration
	files    map[string][]byte
}

// anomalies is the partial's anomalies as Check adds them: the unreadable
// replies, then the replica reads.
func (p *regPartial) anomalies() *anomalies {
	an := newAnomalies(p.garbage.max)
	for _, phase := range []*anomalies{p.garbage, p.replica} {
		for _, c := range phase.order {
			if an.count[c] == 0 {
				an.order = append(an.order, c)
			}
			an.count[c] += phase.count[c]
			an.examples[c] = capList(append(an.examples[c], phase.examples[c]...), an.max)
		}
	}
	return an
}

// CheckPartitions runs the search partition by partition. The time budget
// (Timeout) is the run's, shared: each partition gets its fair share of
// what the partitions before it left, counted in search time (loading a
// partition is not searching), so that a long run does not get a timeout
// per partition and a verdict a whole check could not give.
func (l linearizable) CheckPartitions(ctx context.Context, n int, load PartitionLoader) (Result, error) {
	parts := make([]*regPartial, 0, n)
	left := l.o.Timeout
	for i := range n {
		// Its own keys' ops only: the search reads nothing else.
		ops, err := load(i, l.o.Scope.keep)
		if err != nil {
			return Result{}, err
		}
		share := max(left/time.Duration(n-i), 0)
		// The ops go with the partition; what the result needs stays.
		p := l.partial(ctx, NewHistory(ops), time.Now().Add(share), share)
		left -= p.searched
		parts = append(parts, p)
	}
	return l.result(mergeRegPartials(parts, l.o.MaxExamples, l.o.NoVisualization)), nil
}

// mergeRegPartials is the partial of the whole history from those of its
// slot partitions: sums, lists merged in the whole's order, the first
// examples of each kept.
func mergeRegPartials(parts []*regPartial, maxExamples int, noPictures bool) *regPartial {
	if len(parts) == 1 {
		return parts[0]
	}
	m := &regPartial{}
	var garbage, replica []*anomalies
	for _, p := range parts {
		if p.err != nil {
			// A history that does not pair: the first partition's word
			// (the caller checks such a history whole).
			return &regPartial{err: p.err}
		}
		m.keys += p.keys
		m.ops += p.ops
		m.indeterminate += p.indeterminate
		m.pooledKeys += p.pooledKeys
		m.okReads += p.okReads
		m.okWrites += p.okWrites
		m.replicaReads += p.replicaReads
		m.skipped += p.skipped
		m.anomalous = append(m.anomalous, p.anomalous...)
		m.unknown = append(m.unknown, p.unknown...)
		m.stale += p.stale
		m.staleEx = append(m.staleEx, p.staleEx...)
		if p.flagLies > 0 && (m.flagLies == 0 || p.flagLieIndex < m.flagLieIndex) {
			m.flagLieIndex, m.flagLie = p.flagLieIndex, p.flagLie
		}
		m.flagLies += p.flagLies
		garbage = append(garbage, p.garbage)
		replica = append(replica, p.replica)
		m.searched += p.searched
	}
	slices.Sort(m.anomalous)
	slices.Sort(m.unknown)
	// The whole takes its stale examples key by key, in key order.
	slices.SortStableFunc(m.staleEx, func(a, b map[string]any) int { return cmp.Compare(a["key"].(string), b["key"].(string)) })
	m.staleEx = capList(m.staleEx, maxExamples)
	m.garbage = mergeAnomalies(garbage, maxExamples)
	m.replica = mergeAnomalies(replica, maxExamples)
	if !noPictures {
		m.files = picturesOf(parts, m.anomalous, maxExamples)
	}
	return m
}

// mergeAnomalies merges the anomalies of partitions as the whole history's
// scan in index order would have added them: counts summed, the first
// examples of each class by index, the classes in the order of their
// first example.
func mergeAnomalies(parts []*anomalies, maxExamples int) *anomalies {
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
	for c, ex := range m.examples {
		slices.SortStableFunc(ex, byIndex)
		m.examples[c] = capList(ex, maxExamples)
	}
	slices.SortStableFunc(m.order, func(a, b string) int {
		ea, eb := m.examples[a], m.examples[b]
		if len(ea) == 0 || len(eb) == 0 {
			return 0 // no examples kept (maxExamples 0): as found
		}
		return byIndex(ea[0], eb[0])
	})
	return m
}

// picturesOf keeps the pictures of the anomalous keys the whole history's
// check draws: the first of them in key order.
func picturesOf(parts []*regPartial, anomalous []string, maxExamples int) map[string][]byte {
	var files map[string][]byte
	for _, k := range capList(anomalous, min(maxExamples, maxPictures)) {
		name := pictureName(k)
		for _, p := range parts {
			if b, ok := p.files[name]; ok {
				if files == nil {
					files = map[string][]byte{}
				}
				files[name] = b
			}
		}
	}
	return files
}

// pictureName is the file of key k's picture in the run directory.
func pictureName(k string) string { return fmt.Sprintf("linearizable/%s.html", safeFileName(k)) }
