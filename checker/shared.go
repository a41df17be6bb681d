package checker

import (
	"fmt"
	"slices"
	"sync"
	"weak"

	"github.com/redline-dev/redline/history"
)

// History is a checker's input: the ops of one history and what the
// checkers derive from them alike, made once on first use: its pairing
// and, per key prefix, the calls; the fault windows, the node addresses,
// the start of the final reads, the run's end; the counter analysis. A
// run's checkers (a dozen for three workloads) used to pair and copy the
// whole history each; on a 10M entry history that was most of the memory
// and much of the time. Run makes one History and hands the same value to
// every checker; a checker called alone gets its own (NewHistory). The
// results are the same values either way.
//
// What a checker gets from it is shared with the other checkers: read it,
// never write or reorder it (sortedByStart copies when it must).
type History struct {
	Ops []history.Op
	// compact says Ops are the run-wide entries only and the calls of one
	// scope are made already (CompactHistory).
	compact bool

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
	censusOnce  sync.Once
	census      *history.Census

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
func memoized[T any](s *History, key memoKey, mk func() *T) *T {
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

// counterAnalysisOf is analyzeCounter of o's calls, shared by the checkers
// of a Run that run at once: read-only.
func (s *History) counterAnalysisOf(o Scope, calls []call) *counterAnalysis {
	mk := func() *counterAnalysis { return analyzeCounter(calls, s.finalReadsStartOf(), o.MaxExamples) }
	return memoized(s, memoKey{"counter", o.KeyPrefix, o.MaxExamples}, mk)
}

type sharedCalls struct {
	once  sync.Once
	calls []call
	err   error
}

// NewHistory is the checkers' input for ops, nothing derived yet.
func NewHistory(ops []history.Op) *History {
	return &History{Ops: ops, calls: map[string]*sharedCalls{}}
}

// pairIdx is history.Pair as positions in the history (comp -1: the op
// never completed): 8 bytes a pair where two pointers are 16, for as long
// as the Run lasts.
type pairIdx struct{ inv, comp int32 }

func (s *History) pairing() ([]pairIdx, error) {
	s.pairsOnce.Do(func() { s.pairs, s.pairsErr = pairIndexes(s.Ops) })
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

func (s *History) callsFor(o Scope) ([]call, error) {
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
		e.calls = o.callsOfIdx(s.Ops, pairs)
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

func (s *History) windowsOf() []Window {
	s.windowsOnce.Do(func() { s.windows = windowsUntil(s.Ops, s.runEndOf()) })
	return s.windows
}

func (s *History) nodeAddrsOf() map[string]string {
	s.addrsOnce.Do(func() { s.addrs = nodeAddrs(s.Ops) })
	return s.addrs
}

func (s *History) finalReadsStartOf() int64 {
	s.finalOnce.Do(func() { s.final = finalReadsStart(s.Ops) })
	return s.final
}

// censusOf is the end phase's key census the history carries (nil: none).
func (s *History) censusOf() *history.Census {
	s.censusOnce.Do(func() { s.census = history.CensusOf(s.Ops) })
	return s.census
}

// runEndOf is the latest time in the history (0 when empty).
func (s *History) runEndOf() int64 {
	s.endOnce.Do(func() { s.end = runEnd(s.Ops) })
	return s.end
}

func runEnd(ops []history.Op) int64 {
	var end int64
	for i := range ops {
		end = max(end, ops[i].Time)
	}
	return end
}
