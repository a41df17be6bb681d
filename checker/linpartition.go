package checker

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

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
// whose invocation keep keeps (nil: all), and every run-wide entry.
type PartitionLoader func(i int, keep *history.Filter) ([]history.Op, error)

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
	// undecided are the keys the first pass of a partition left
	// undecided, with their ops (detached from the partition's): the
	// second pass takes them with every partition's (CheckPartitions).
	undecided map[string][]regOp
	// searched is how long the search took, of the budget.
	searched time.Duration
	files    map[string][]byte
}

// detach copies a key's ops out of their partition, so that keeping them
// does not keep the partition's history: the calls, their entries and
// what those point to.
func detach(ops []regOp) []regOp {
	out := make([]regOp, len(ops))
	for i, op := range ops {
		c := *op.call
		c.inv = detachOp(c.inv)
		if c.comp != nil {
			c.comp = detachOp(c.comp)
		}
		out[i] = regOp{call: &c, in: op.in, out: op.out}
	}
	return out
}

func detachOp(op *history.Op) *history.Op {
	c := *op
	c.Key, c.Node, c.F = strings.Clone(c.Key), strings.Clone(c.Node), strings.Clone(c.F)
	c.Value = bytes.Clone(c.Value)
	return &c
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

// CheckPartitions runs the search partition by partition, in the two
// passes Check makes: the first on each partition as it is loaded, each
// key given its fair slice of the timeout, then the second on the keys
// still undecided, of every partition at once, sharing what is left. The
// time budget (Timeout) is the run's, counted in search time (loading a
// partition is not searching), so that a long run gets no timeout per
// partition and no verdict a whole check could not give.
func (l linearizable) CheckPartitions(ctx context.Context, n int, load PartitionLoader) (Result, error) {
	parts := make([]*regPartial, 0, n)
	left := l.o.Timeout
	var windows []Window
	for i := range n {
		// Its own keys' ops only: the search reads nothing else.
		ops, err := load(i, l.o.Scope.filter())
		if err != nil {
			return Result{}, err
		}
		in := NewHistory(ops)
		if i == 0 {
			windows = in.windowsOf() // run-wide: every partition has them
		}
		// The first pass's slice of each key is what it is in a whole
		// check: the timeout over all the run's keys, about n times this
		// partition's.
		p := l.partial(ctx, in, time.Now().Add(max(left, 0)), l.o.Timeout/time.Duration(n), true)
		left -= p.searched
		parts = append(parts, p)
		if left <= 0 || ctx.Err() != nil {
			// The budget is spent: the second pass will search nothing,
			// so every key left undecided is unknown now, and its ops
			// need not be kept until then (issue 42: at 150M entries,
			// 39,264 such keys held 0.5 GB).
			for _, p := range parts {
				p.undecidedUnknown()
			}
		}
	}
	m := mergeRegPartials(parts, l.o.MaxExamples, l.o.NoVisualization)
	if m.err == nil {
		l.retryUndecided(ctx, m, parts, left, windows)
	}
	return l.result(m), nil
}

// undecidedUnknown makes p's undecided keys unknown, as a second pass
// given no time makes them.
func (p *regPartial) undecidedUnknown() {
	if len(p.undecided) == 0 {
		return
	}
	for k := range p.undecided {
		p.unknown = append(p.unknown, k)
	}
	slices.Sort(p.unknown)
	p.undecided = nil
}

// retryUndecided is the second pass over the keys the partitions' first
// passes left undecided, in the order Check takes them (the biggest
// first): what it decides illegal is anomalous, what it does not decide
// unknown.
func (l linearizable) retryUndecided(ctx context.Context, m *regPartial, parts []*regPartial, left time.Duration, windows []Window) {
	byKey := map[string][]regOp{}
	for _, p := range parts {
		maps.Copy(byKey, p.undecided)
	}
	if len(byKey) == 0 {
		return
	}
	keys := slices.Collect(maps.Keys(byKey))
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(len(byKey[b]), len(byKey[a])); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	todo := make([]int, len(keys))
	for i := range todo {
		todo[i] = i
	}
	verdict := make([]porcupine.CheckResult, len(keys))
	searchPass(ctx, time.Now().Add(max(left, 0)), keys, byKey, todo, verdict, retryShare)
	var anomalous []string
	for i, k := range keys {
		switch verdict[i] {
		case porcupine.Illegal:
			anomalous = append(anomalous, k)
		case porcupine.Unknown:
			m.unknown = append(m.unknown, k)
		}
	}
	slices.Sort(anomalous)
	slices.Sort(m.unknown)
	if len(anomalous) == 0 {
		return
	}
	m.anomalous = append(m.anomalous, anomalous...)
	slices.Sort(m.anomalous)
	if !l.o.NoVisualization {
		retried := &regPartial{files: l.visualize(anomalous, byKey, windows)}
		m.files = picturesOf(append(parts, retried), m.anomalous, l.o.MaxExamples)
	}
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
