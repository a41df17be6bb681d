package checker

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"unsafe"
	"weak"

	"github.com/redline-dev/redline/harness/history"
)

// shared is what the checkers of one Run derive from the same history: its
// pairing and, per key prefix, the calls. A run's checkers (a dozen for
// three workloads) used to pair and copy the whole history each; on a 10M
// entry history that was most of the memory and much of the time. The
// results are the same values either way, computed once.
//
// The calls a checker gets from it are shared with the other checkers: read
// them, never write or reorder them (sortedByStart copies when it must).
type shared struct {
	ops []history.Op

	pairsOnce sync.Once
	pairs     []pairIdx
	pairsErr  error

	mu    sync.Mutex
	calls map[string]*sharedCalls

	windowsOnce sync.Once
	windows     []Window
	addrsOnce   sync.Once
	addrs       map[string]string
	finalOnce   sync.Once
	final       int64
	endOnce     sync.Once
	end         int64

	memoMu sync.Mutex
	memo   map[memoKey]*memoEntry
}

// memoKey names a derivation that two checkers of a Run make alike (the
// counter analysis that counter and rpo both judge by).
type memoKey struct {
	what        string
	keyPrefix   string
	maxExamples int
}

type memoEntry struct {
	mu sync.Mutex
	p  any // weak.Pointer[T]
}

// memoized returns the value of key made by mk, made once for as long as
// some checker still holds it: the memo holds it weakly, so a derivation
// of hundreds of megabytes is shared by the checkers that run at the same
// time and not kept for the rest of the Run. A later checker makes it
// again, the same value (mk is a pure function of the history).
func memoized[T any](s *shared, key memoKey, mk func() *T) *T {
	s.memoMu.Lock()
	if s.memo == nil {
		s.memo = map[memoKey]*memoEntry{}
	}
	e := s.memo[key]
	if e == nil {
		e = &memoEntry{}
		s.memo[key] = e
	}
	s.memoMu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if wp, ok := e.p.(weak.Pointer[T]); ok {
		if v := wp.Value(); v != nil {
			return v
		}
	}
	v := mk()
	e.p = weak.Make(v)
	return v
}

// counterAnalysisOf is analyzeCounter of o's calls, shared within a Run by
// the checkers that run at once: read-only.
func counterAnalysisOf(ctx context.Context, ops []history.Op, o Options, calls []call) *counterAnalysis {
	mk := func() *counterAnalysis { return analyzeCounter(calls, finalReadsStartOf(ctx, ops), o.MaxExamples) }
	if s := sharedFor(ctx, ops); s != nil {
		return memoized(s, memoKey{"counter", o.KeyPrefix, o.MaxExamples}, mk)
	}
	return mk()
}

type sharedCalls struct {
	once  sync.Once
	calls []call
	err   error
}

type sharedKey struct{}

// withShared returns a context that carries the shared derivations of ops.
func withShared(ctx context.Context, ops []history.Op) context.Context {
	return context.WithValue(ctx, sharedKey{}, &shared{ops: ops, calls: map[string]*sharedCalls{}})
}

// sharedFor returns the shared derivations of ops carried by ctx, or nil
// when ctx carries none or carries another history's.
func sharedFor(ctx context.Context, ops []history.Op) *shared {
	if ctx == nil {
		return nil
	}
	s, _ := ctx.Value(sharedKey{}).(*shared)
	if s == nil || len(s.ops) != len(ops) || unsafe.SliceData(s.ops) != unsafe.SliceData(ops) {
		return nil
	}
	return s
}

// pairIdx is history.Pair as positions in the history (comp -1: the op
// never completed): 8 bytes a pair where two pointers are 16, for as long
// as the Run lasts.
type pairIdx struct{ inv, comp int32 }

func (s *shared) pairing() ([]pairIdx, error) {
	s.pairsOnce.Do(func() { s.pairs, s.pairsErr = pairIndexes(s.ops) })
	return s.pairs, s.pairsErr
}

// pairIndexes is history.Pairs (the same pairs, the same errors) as
// positions. A history in memory is far below 2^31 entries (at 120 bytes
// an entry, that would be 250 GB).
func pairIndexes(ops []history.Op) ([]pairIdx, error) {
	n := 0
	for i := range ops {
		if ops[i].Process != history.Nemesis && ops[i].Type == history.Invoke {
			n++
		}
	}
	pairs := make([]pairIdx, 0, n)
	open := make(map[history.Process]int) // process -> index into pairs
	for i := range ops {
		op := &ops[i]
		if op.Process == history.Nemesis {
			continue
		}
		if op.Type == history.Invoke {
			if j, busy := open[op.Process]; busy {
				return nil, fmt.Errorf("entry %d: process %d invokes while its op at entry %d is still open", op.Index, op.Process, ops[pairs[j].inv].Index)
			}
			open[op.Process] = len(pairs)
			pairs = append(pairs, pairIdx{int32(i), -1})
			continue
		}
		j, busy := open[op.Process]
		if !busy {
			return nil, fmt.Errorf("entry %d: process %d completes an op it never invoked", op.Index, op.Process)
		}
		pairs[j].comp = int32(i)
		delete(open, op.Process)
	}
	return pairs, nil
}

func (s *shared) callsFor(o Options) ([]call, error) {
	s.mu.Lock()
	e := s.calls[o.KeyPrefix]
	if e == nil {
		e = &sharedCalls{}
		s.calls[o.KeyPrefix] = e
	}
	s.mu.Unlock()
	e.once.Do(func() {
		pairs, err := s.pairing()
		if err != nil {
			e.err = err
			return
		}
		e.calls = o.callsOfIdx(s.ops, pairs)
	})
	return e.calls, e.err
}

// sortedByStart returns calls ordered by invocation time (stably). The
// calls of a history are usually in that order already; otherwise it sorts
// a copy, leaving the shared slice as it was.
func sortedByStart(calls []call) []call {
	sorted := true
	for i := 1; i < len(calls); i++ {
		if calls[i].start < calls[i-1].start {
			sorted = false
			break
		}
	}
	if sorted {
		return calls
	}
	out := append([]call(nil), calls...)
	sortStableByStart(out)
	return out
}

func sortStableByStart(calls []call) {
	slices.SortStableFunc(calls, func(a, b call) int { return cmpInt(a.start, b.start) })
}

// The scans of the whole history for its nemesis events, made once per Run.

func (s *shared) windowsOf() []Window {
	s.windowsOnce.Do(func() { s.windows = Windows(s.ops) })
	return s.windows
}

func (s *shared) nodeAddrsOf() map[string]string {
	s.addrsOnce.Do(func() { s.addrs = nodeAddrs(s.ops) })
	return s.addrs
}

func (s *shared) finalReadsStartOf() int64 {
	s.finalOnce.Do(func() { s.final = finalReadsStart(s.ops) })
	return s.final
}

// windowsOf is Windows(ops), shared within a Run: read-only.
func windowsOf(ctx context.Context, ops []history.Op) []Window {
	if s := sharedFor(ctx, ops); s != nil {
		return s.windowsOf()
	}
	return Windows(ops)
}

// nodeAddrsOf is nodeAddrs(ops), shared within a Run: read-only.
func nodeAddrsOf(ctx context.Context, ops []history.Op) map[string]string {
	if s := sharedFor(ctx, ops); s != nil {
		return s.nodeAddrsOf()
	}
	return nodeAddrs(ops)
}

// finalReadsStartOf is finalReadsStart(ops), computed once within a Run.
func finalReadsStartOf(ctx context.Context, ops []history.Op) int64 {
	if s := sharedFor(ctx, ops); s != nil {
		return s.finalReadsStartOf()
	}
	return finalReadsStart(ops)
}

// runEndOf is the latest time in the history (0 when empty).
func runEndOf(ctx context.Context, ops []history.Op) int64 {
	if s := sharedFor(ctx, ops); s != nil {
		s.endOnce.Do(func() { s.end = runEnd(s.ops) })
		return s.end
	}
	return runEnd(ops)
}

func runEnd(ops []history.Op) int64 {
	var end int64
	for i := range ops {
		end = max(end, ops[i].Time)
	}
	return end
}
