package checker

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/redline-dev/redline/history"
)

// What a checker outside this package builds on to judge a history given
// as slot partitions (PartitionChecker) with one implementation: it
// analyses each partition (or the whole history, as one) as Check would
// the whole, notes each finding with the place a check of the whole
// history finds it (Pos), keeps the first few of each list by that place
// (Firsts, Findings), and merges the partials: sums, and the first
// examples in the whole's order.

// Pos is where a check of the whole history comes upon a finding, in the
// order it does: its pass (Phase), then the key the pass is at ("" for a
// pass over the calls in the order of their invocations: a key is in one
// partition, an index is unique), then At and Seq within it (an index, a
// time, the order a partition found them in). A partition's findings are
// found in Pos order; merged by Pos, those of several are in the whole's.
type Pos struct {
	Phase   int
	Key     string
	At, Seq int64
}

// Compare orders positions as the whole check finds them.
func (p Pos) Compare(q Pos) int {
	if c := cmp.Compare(p.Phase, q.Phase); c != 0 {
		return c
	}
	if c := strings.Compare(p.Key, q.Key); c != 0 {
		return c
	}
	if c := cmp.Compare(p.At, q.At); c != 0 {
		return c
	}
	return cmp.Compare(p.Seq, q.Seq)
}

// Firsts counts a list's items and keeps its first n by Pos (and the Pos
// of the very first, when n is 0): what a capped list of examples needs of
// each partition.
type Firsts[T any] struct {
	n, count int
	first    Pos
	items    []posItem[T]
}

type posItem[T any] struct {
	p Pos
	x T
}

// NewFirsts keeps the first n items.
func NewFirsts[T any](n int) *Firsts[T] { return &Firsts[T]{n: max(n, 0)} }

// Add counts x, found at p, and keeps it if it is among the first n.
func (f *Firsts[T]) Add(p Pos, x T) {
	if f.count == 0 || p.Compare(f.first) < 0 {
		f.first = p
	}
	f.count++
	f.keep(p, x)
}

// keep keeps x if it is among the first n found.
func (f *Firsts[T]) keep(p Pos, x T) {
	if len(f.items) == f.n && (f.n == 0 || p.Compare(f.items[f.n-1].p) >= 0) {
		return
	}
	i, _ := slices.BinarySearchFunc(f.items, p, func(it posItem[T], p Pos) int {
		if it.p.Compare(p) <= 0 {
			return -1 // after those found at or before p: stable
		}
		return 1
	})
	f.items = slices.Insert(f.items, i, posItem[T]{p, x})
	if len(f.items) > f.n {
		f.items = f.items[:f.n]
	}
}

// Merge adds g's items to f (both keep as many).
func (f *Firsts[T]) Merge(g *Firsts[T]) {
	if g == nil || g.count == 0 {
		return
	}
	if f.count == 0 || g.first.Compare(f.first) < 0 {
		f.first = g.first
	}
	f.count += g.count
	for _, it := range g.items {
		f.keep(it.p, it.x)
	}
}

// Count is how many were added; Items the first n, in Pos order.
func (f *Firsts[T]) Count() int { return f.count }
func (f *Firsts[T]) Items() []T {
	out := make([]T, len(f.items))
	for i, it := range f.items {
		out[i] = it.x
	}
	return out
}

// Findings are a checker's anomalies by class, each class's count and its
// first examples by Pos: the partial of one partition, or merged, of the
// whole history (Recorder).
type Findings struct {
	max     int
	classes map[string]*Firsts[map[string]any]
}

// NewFindings keeps up to max examples of each class.
func NewFindings(max int) *Findings {
	return &Findings{max: max, classes: map[string]*Firsts[map[string]any]{}}
}

// Add records one instance of class, found at p; ex should carry "index"
// and "key" where they apply. The strings of an example kept are copied,
// so that it does not hold its partition's ops.
func (f *Findings) Add(p Pos, class string, ex map[string]any) {
	c := f.classes[class]
	if c == nil {
		c = NewFirsts[map[string]any](f.max)
		f.classes[class] = c
	}
	for k, v := range ex {
		if s, ok := v.(string); ok {
			ex[k] = strings.Clone(s)
		}
	}
	c.Add(p, ex)
}

// Garbage records a completion whose value cannot be what the workload
// wrote, found at p, as AnomalyRecorder.Garbage does.
func (f *Findings) Garbage(p Pos, c *Call, why string) {
	f.Add(p, "garbage", map[string]any{"index": c.Inv.Index, "key": c.Inv.Key, "f": c.Inv.F, "value": rawString(c.Comp.Value), "why": why})
}

// Count is the number of instances of class found.
func (f *Findings) Count(class string) int {
	if c := f.classes[class]; c != nil {
		return c.count
	}
	return 0
}

// Merge adds g's findings to f.
func (f *Findings) Merge(g *Findings) {
	for class, gc := range g.classes {
		c := f.classes[class]
		if c == nil {
			c = NewFirsts[map[string]any](f.max)
			f.classes[class] = c
		}
		c.Merge(gc)
	}
}

// Recorder is the findings as the whole check's AnomalyRecorder holds
// them: the classes in the order first found, the counts, the first
// examples of each.
func (f *Findings) Recorder() AnomalyRecorder {
	classes := make([]string, 0, len(f.classes))
	for class := range f.classes {
		classes = append(classes, class)
	}
	slices.SortFunc(classes, func(a, b string) int { return f.classes[a].first.Compare(f.classes[b].first) })
	a := newAnomalies(f.max)
	for _, class := range classes {
		c := f.classes[class]
		a.order = append(a.order, class)
		a.count[class] = c.count
		if ex := c.Items(); len(ex) > 0 {
			a.examples[class] = ex
		}
	}
	return AnomalyRecorder{a}
}

// Keep says whether the scope judges op (its invocation): what a
// partition of a history is loaded with (PartitionLoader's keep).
func (o Scope) Keep(op *history.Op) bool { return o.keep(op) }

// Filter is what a partition load keeps of the scope's ops (Keep's).
func (o Scope) Filter() *history.Filter { return o.filter() }

// PartitionHistory is the History of one slot partition's ops (its
// run-wide entries are the whole history's), whose fault windows end where
// the whole history's do: the end ctx carries (WithHistoryEnd); without
// it, an error, no verdict rather than windows that may end early.
func PartitionHistory(ctx context.Context, ops []history.Op) (*History, error) {
	ws, err := partitionWindows(ctx, ops)
	if err != nil {
		return nil, err
	}
	h := NewHistory(ops)
	h.windowsOnce.Do(func() { h.windows = ws })
	return h, nil
}

// SharedNames finds the names (a lock's tokens, a queue's messages) that
// more than one slot partition of a history uses, whose owner a check of
// the whole history looks up across keys: defined in two partitions, or
// defined in one and wanted (looked up, not defined) in another. It holds
// 8 bytes a name defined, not the names.
type SharedNames struct {
	defined, wanted []uint64
}

// NameHash is the 64-bit FNV-1a hash of a name.
func NameHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// Add is one partition's names: those it defines, and those it looks up
// without defining them.
func (s *SharedNames) Add(defined, wanted map[string]bool) {
	seen := map[uint64]bool{}
	for n := range defined {
		if h := NameHash(n); !seen[h] {
			seen[h] = true
			s.defined = append(s.defined, h)
		}
	}
	for n := range wanted {
		if !defined[n] {
			s.wanted = append(s.wanted, NameHash(n))
		}
	}
}

// Shared is the hashes of the names more than one partition uses (a hash
// two names share included: the caller resolves names, not hashes), nil
// when there are none.
func (s *SharedNames) Shared() map[uint64]bool {
	slices.Sort(s.defined)
	var out map[uint64]bool
	note := func(h uint64) {
		if out == nil {
			out = map[uint64]bool{}
		}
		out[h] = true
	}
	for i := 1; i < len(s.defined); i++ {
		if s.defined[i] == s.defined[i-1] {
			note(s.defined[i])
		}
	}
	for _, h := range s.wanted {
		if _, found := slices.BinarySearch(s.defined, h); found {
			note(h)
		}
	}
	return out
}

// MergePartitions is one pass of a partitioned folder checker over the n
// partitions of a history: each loaded with keep, made a History
// (PartitionHistory), analysed, handed to each (when not nil) and merged
// into the first in partition order; no partition gives empty(). A
// partition that cannot be loaded is that error; one that analyze cannot
// pair is an UnpairedPartition (PartitionStopped tells them apart).
func MergePartitions[P any](ctx context.Context, n int, load PartitionLoader, keep *history.Filter,
	analyze func(*History) (P, error), merge func(into, p P), empty func() P, each func(P)) (P, error) {
	var m P
	for i := range n {
		ops, err := load(i, keep)
		if err != nil {
			return m, err
		}
		in, err := PartitionHistory(ctx, ops)
		if err != nil {
			return m, err
		}
		p, err := analyze(in)
		if err != nil {
			return m, UnpairedPartition{err}
		}
		if each != nil {
			each(p)
		}
		if i == 0 {
			m = p
		} else {
			merge(m, p)
		}
	}
	if n == 0 {
		m = empty()
	}
	return m, nil
}

// UnpairedPartition is a partition whose entries cannot be paired.
type UnpairedPartition struct{ Err error }

func (u UnpairedPartition) Error() string { return u.Err.Error() }

// PartitionStopped is the answer of a pass that could not go on: a
// partition that cannot be paired (the caller checks such a history
// whole; if not, the first partition's word) or one that could not be
// loaded (no verdict: the error).
func PartitionStopped(err error) (Result, error) {
	var u UnpairedPartition
	if errors.As(err, &u) {
		return InvalidHistory(u.Err), nil
	}
	return Result{}, err
}
