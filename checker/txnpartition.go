package checker

import (
	"cmp"
	"context"
	"hash/maphash"
	"maps"
	"slices"

	"github.com/redline-dev/redline/history"
)

// The txn workload's checkers on a history given as slot partitions
// (PartitionChecker). The workload names each transaction by one key, the
// op's (a bank group, a list-append group, the first key of a cross-slot
// MSET), and the spill places it by that key's slot; every key a bank or
// list-append transaction touches shares the group's hash tag, so its
// slot. Bank and cross-slot judge each op alone or with the ops of its
// own op key: their partials merge exactly whatever the keys. List-append
// judges by the keys the micro-ops name, which a history may give in
// another slot than the op's: txnUnits analyses the partitions whose
// transactions share a key together.

// CheckPartitions is Check on a history given as slot partitions: each
// partition's transactions are analysed as Check analyses the whole
// (analyze: every anomaly but the cycles, and the data edges), and kept
// as vertices with their edges; the cycles are then searched in the graph
// of every partition's vertices, with the real-time edges, which link
// transactions of any partitions (judge). What it holds is one partition's
// list-append ops at a time, and of the run's transactions a vertex each
// (64 bytes) and their data edges (24 bytes an edge; a transaction has
// about one ww edge an append and up to two edges a read), plus the
// real-time edges (4 bytes each, about the concurrency a transaction).
func (l listAppend) CheckPartitions(ctx context.Context, n int, load PartitionLoader) (Result, error) {
	// Its own transactions only: analyze reads nothing else.
	keep := l.o.filterFs(ListAppendTxn)
	units, unpaired, err := txnUnits(n, load, keep, func(ops []history.Op) (*laPartial, []uint64, error) {
		calls, err := l.o.calls(NewHistory(ops))
		if err != nil {
			return nil, nil, err
		}
		p := l.analyze(calls, true)
		keys := p.keyHashes
		p.keyHashes = nil
		return p, keys, nil
	})
	if err != nil {
		return Result{}, err
	}
	if unpaired != nil {
		// The caller checks such a history whole; if not, the first
		// partition's word.
		return invalidHistory(unpaired), nil
	}
	return l.judge(units), nil
}

// mergeLAPartials is the partial of the transactions of all the partials
// (whose keys are apart), as analyze makes it of the whole: sums; each
// class's first examples in the order of their transactions; the vertices
// in the order of their invocations (their indexes increase), their edges
// renumbered so, and their keys.
func mergeLAPartials(parts []*laPartial, maxExamples int) *laPartial {
	if len(parts) == 1 {
		return parts[0]
	}
	m := &laPartial{an: &anomalyLog{max: maxExamples, count: map[string]int{}, examples: map[string][]any{}, at: map[string][]int64{}}}
	type placed struct {
		at int64
		ex any
	}
	byClass := map[string][]placed{}
	total := 0
	for _, p := range parts {
		m.malformed += p.malformed
		m.keys += p.keys
		m.reads += p.reads
		m.neverRead = append(m.neverRead, p.neverRead...)
		for c, k := range p.an.count {
			m.an.count[c] += k
		}
		for _, c := range slices.Sorted(maps.Keys(p.an.examples)) {
			for i, ex := range p.an.examples[c] {
				byClass[c] = append(byClass[c], placed{p.an.at[c][i], ex})
			}
		}
		total += len(p.txns)
	}
	slices.Sort(m.neverRead)
	for c, ex := range byClass {
		slices.SortStableFunc(ex, func(a, b placed) int { return cmp.Compare(a.at, b.at) })
		for _, e := range capList(ex, maxExamples) {
			m.an.examples[c] = append(m.an.examples[c], e.ex)
			m.an.at[c] = append(m.an.at[c], e.at)
		}
	}
	// Each transaction's place in the whole: by its index.
	type vref struct {
		index int64
		p, t  int32
	}
	order := make([]vref, 0, total)
	gid := make([][]int32, len(parts))
	firstKey := make([]int32, len(parts)) // the number of each partial's first key in the whole's
	for pi, p := range parts {
		firstKey[pi] = int32(len(m.edgeKeys))
		m.edgeKeys = append(m.edgeKeys, p.edgeKeys...)
		gid[pi] = make([]int32, len(p.txns))
		for t := range p.txns {
			order = append(order, vref{p.txns[t].index, int32(pi), int32(t)})
		}
	}
	slices.SortStableFunc(order, func(a, b vref) int { return cmp.Compare(a.index, b.index) })
	for g, r := range order {
		gid[r.p][r.t] = int32(g)
	}
	m.txns = make([]laVertex, total)
	for g, r := range order {
		v := parts[r.p].txns[r.t]
		for i := range v.adj {
			v.adj[i].to = gid[r.p][v.adj[i].to]
			v.adj[i].k += firstKey[r.p]
		}
		m.txns[g] = v
	}
	return m
}

// keySeed hashes the keys transactions name (txnKeyHashes): two keys of
// one hash say their partitions share a key, which at worst analyses two
// partitions together that needed not be.
var keySeed = maphash.MakeSeed()

// txnKeyHashes are the hashes of every key the transactions name, once.
func txnKeyHashes(txns []*laTxn) []uint64 {
	seen := map[uint64]struct{}{}
	for _, t := range txns {
		for _, m := range t.mops {
			seen[maphash.String(keySeed, m.k)] = struct{}{}
		}
	}
	return slices.Collect(maps.Keys(seen))
}

// txnUnits analyses each partition's ops (those keep accepts, and the
// run-wide entries) in turn, and again, together, those of the partitions
// whose transactions name a key in common, so that each key's
// transactions are all in one analysis, as in a whole check. The workload
// never gives a transaction keys of two slots (its keys share the group's
// hash tag, and the spill places an op by its key's slot); a history that
// does costs the memory of the partitions it links. analyse gives its
// analysis of ops, the hashes of the keys they name (txnKeyHashes) and
// the pairing error of a history that does not pair. txnUnits returns the
// analyses in the order of their first partitions; unpaired is the first
// pairing error, err a partition that could not be loaded.
func txnUnits[T any](n int, load PartitionLoader, keep *history.Filter, analyse func(ops []history.Op) (T, []uint64, error)) (units []T, unpaired, err error) {
	all := make([]T, n)
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(i int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	owner := map[uint64]int32{} // a key's first partition
	for i := range n {
		ops, err := load(i, keep)
		if err != nil {
			return nil, nil, err
		}
		u, keys, bad := analyse(ops)
		if bad != nil {
			return nil, bad, nil
		}
		all[i] = u
		for _, h := range keys {
			o, ok := owner[h]
			if !ok {
				owner[h] = int32(i)
				continue
			}
			if a, b := find(int(o)), find(i); a != b {
				parent[max(a, b)] = min(a, b)
			}
		}
	}
	groups := make([][]int, n)
	for i := range n {
		r := find(i)
		groups[r] = append(groups[r], i)
	}
	for i := range n {
		g := groups[i]
		switch {
		case len(g) == 1:
			units = append(units, all[i])
		case len(g) > 1:
			lists := make([][]history.Op, 0, len(g))
			for _, j := range g {
				ops, err := load(j, keep)
				if err != nil {
					return nil, nil, err
				}
				lists = append(lists, ops)
			}
			u, _, bad := analyse(unionOps(lists))
			if bad != nil {
				return nil, bad, nil
			}
			units = append(units, u)
		}
	}
	return units, nil, nil
}

// unionOps is the history's subsequence of the entries of several of its
// partitions: their client ops and, once, the run-wide entries every
// partition holds (the nemesis's, in a history that pairs). Their indexes
// increase (a partitioned check's premise), so a nemesis entry whose index
// the one before it has is another partition's copy. A client op is never
// dropped: `redline check` appends census.json's census to each partition
// after its last entry, at an index another partition's op may have.
func unionOps(lists [][]history.Op) []history.Op {
	var out []history.Op
	for _, l := range lists {
		out = append(out, l...)
	}
	slices.SortStableFunc(out, func(a, b history.Op) int { return cmp.Compare(a.Index, b.Index) })
	return slices.CompactFunc(out, func(a, b history.Op) bool {
		return a.Index == b.Index && a.Process == history.Nemesis && b.Process == history.Nemesis
	})
}

// CheckPartitions is Check on a history given as slot partitions: a
// group's init ops and reads are all on its key, so in one partition, and
// the partials add up (judge). It holds one partition's bank ops at a
// time, and the first examples.
func (b bank) CheckPartitions(ctx context.Context, n int, load PartitionLoader) (Result, error) {
	keep := b.o.filterFs(BankInit, BankTransfer, BankReadAll)
	parts := make([]*bankPartial, 0, n)
	for i := range n {
		ops, err := load(i, keep)
		if err != nil {
			return Result{}, err
		}
		calls, err := b.o.calls(NewHistory(ops))
		if err != nil {
			return invalidHistory(err), nil
		}
		parts = append(parts, b.analyze(calls))
	}
	return b.judge(parts), nil
}

// CheckPartitions is Check on a history given as slot partitions: each op
// is judged alone, and the counts add up. It holds one partition's ops of
// the workload at a time (the CROSSSLOT refusals of its other ops count
// too), and the first examples.
func (c crossSlot) CheckPartitions(ctx context.Context, n int, load PartitionLoader) (Result, error) {
	parts := make([]*crossSlotPartial, 0, n)
	for i := range n {
		ops, err := load(i, c.o.filter())
		if err != nil {
			return Result{}, err
		}
		calls, err := c.o.calls(NewHistory(ops))
		if err != nil {
			return invalidHistory(err), nil
		}
		parts = append(parts, c.analyze(calls))
	}
	return c.judge(parts), nil
}

// placedAnomalies are anomalies that remember where each class was first
// found and where each example kept was, as (scan, op index, adds before)
// in the order a check adds them (scans of the calls in index order, one
// after the other), so that those of partitions merge into the whole's
// (mergePlacedAnomalies).
type placedAnomalies struct {
	*anomalies
	first map[string]anomalyPlace
	at    map[string][]anomalyPlace
	adds  int64
}

// anomalyPlace is where an anomaly was found: the scan, the op's index,
// and how many the partial had added before (two anomalies of one op).
type anomalyPlace [3]int64

func newPlacedAnomalies(max int) *placedAnomalies {
	return &placedAnomalies{anomalies: newAnomalies(max), first: map[string]anomalyPlace{}, at: map[string][]anomalyPlace{}}
}

func (a *placedAnomalies) add(scan int, index int64, class string, ex map[string]any) {
	pl := anomalyPlace{int64(scan), index, a.adds}
	a.adds++
	if a.count[class] == 0 {
		a.first[class] = pl
	}
	if len(a.examples[class]) < a.max {
		a.at[class] = append(a.at[class], pl)
	}
	a.anomalies.add(class, ex)
}

func (p anomalyPlace) compare(q anomalyPlace) int { return slices.Compare(p[:], q[:]) }

// mergePlacedAnomalies merges the anomalies of partitions (an op's are
// all in one) as one check of the whole adds them: counts summed, each
// class's first examples by place, the classes in the order first found.
func mergePlacedAnomalies(parts []*placedAnomalies, maxExamples int) *placedAnomalies {
	m := newPlacedAnomalies(maxExamples)
	type placed struct {
		at anomalyPlace
		ex map[string]any
	}
	byClass := map[string][]placed{}
	for _, p := range parts {
		for _, c := range p.order {
			if f, seen := m.first[c]; !seen || p.first[c].compare(f) < 0 {
				if !seen {
					m.order = append(m.order, c)
				}
				m.first[c] = p.first[c]
			}
			m.count[c] += p.count[c]
			for i, ex := range p.examples[c] {
				byClass[c] = append(byClass[c], placed{p.at[c][i], ex})
			}
		}
	}
	slices.SortStableFunc(m.order, func(a, b string) int { return m.first[a].compare(m.first[b]) })
	for c, ex := range byClass {
		slices.SortStableFunc(ex, func(a, b placed) int { return a.at.compare(b.at) })
		for _, e := range capList(ex, maxExamples) {
			m.examples[c] = append(m.examples[c], e.ex)
			m.at[c] = append(m.at[c], e.at)
		}
	}
	return m
}

// byExampleIndex orders examples by their op's "index".
func byExampleIndex(a, b map[string]any) int {
	return cmp.Compare(a["index"].(int64), b["index"].(int64))
}
