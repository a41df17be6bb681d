package harness

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"unsafe"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

// sharedLoads runs partition checkers so that each partition is decoded
// once for all the checkers that load it with the same Filter (a
// workload's checkers: its counter, rpo, default-failover, wait-probe and
// rto), not once for each (issue 42: at 150M entries, about 15 decodes of
// the history).
//
// Each checker runs in a goroutine of its own, but one at a time, as they
// ran one after the other before: a turn passes between them only when
// the one holding it asks for a partition or is done. The turn goes to a
// checker not yet started (it runs to its first load, holding nothing
// yet), else to one of the workload being judged (the checkers asking for
// partitions with the Filter of the last partition served) asking for
// the lowest partition, the first asked on a tie; when none of them is
// left, the first checker waiting takes its workload's turn. Since every
// checker takes its partitions in increasing order, all the requests of a
// workload for partition i come in before any of them moves past it, and
// the partition is decoded once and handed to them in turn; a workload's
// checkers finish before the next workload's start loading, so what each
// of them keeps between partitions (its partial) is held beside the
// partials of its own workload only, not every checker's (the lockstep
// of every checker at once held them all: 5.8 GB of RSS at 50M entries
// instead of 2.3, 2026-12-06). The checkers share the loaded ops
// read-only, as every checker shares the whole history when it is read
// whole.
//
// The checkers that read only their workload's calls and the run-wide
// entries (the counter family: counter, rpo, default-failover, wait-probe
// and rto) ask for a partition as a History (checker.CallsLoader), which
// is made once for them all: a compact partition built as the ops are
// decoded, never held as ops, unless a checker of the workload asked for
// the partition's ops first (then a History of those ops). A hot counter
// key of 17M ops was 1.8 GB as ops and is a fraction of it as compact
// calls (issue 42).
type sharedLoads struct {
	src partitionSource

	mu sync.Mutex
	// state of each checker: its turn's channel, whether it started,
	// the partition it waits for (-1: not waiting), whether it is done.
	states []loadState
	// cached is the partition last loaded, for the Filter it was loaded
	// with: the workload being judged.
	cached cachedPart
	// reads counts the checkers' loads, decodes those that loaded a
	// partition (for the log and tests).
	reads, decodes int
	// bound, when set, is told the size of each partition loaded
	// (heapBound).
	bound func(partBytes int64)
}

// cachedPart is a partition loaded for one Filter: its ops when a checker
// asked for them, its History when one asked for that.
type cachedPart struct {
	ok        bool
	i         int
	keep      filterKey
	opsLoaded bool
	ops       []history.Op
	opsErr    error
	hist      *checker.History
	histErr   error
}

// partitionSource is how a check reads the partitions of a spill: whole
// (load), or one op at a time (scan, with entries the number of client
// ops a load of a Filter keeps: what a compact partition is sized by). A
// nil scan makes a compact partition of the loaded ops.
type partitionSource struct {
	load    checker.PartitionLoader
	scan    func(i int, keep *history.Filter, fn func(op *history.Op) error) error
	entries func(i int, keep *history.Filter) int
}

// spillSource is the partitionSource of p's partitions as they are.
func spillSource(p *history.Partitions) partitionSource {
	return partitionSource{load: p.LoadWhere, scan: p.ScanWhere, entries: p.EntriesWhere}
}

// compactCallBytes is about what a compact partition holds a call: the
// call (40 bytes) and, for about one call in two, an op of its own (a
// read's result).
const compactCallBytes = 100

// opBytes is the size of a history.Op in a loaded partition.
const opBytes = int64(unsafe.Sizeof(history.Op{}))

// heapBound returns the bound that keeps the heap of a partitioned check
// near what it holds, and the function that undoes it; nil, nil when the
// user set GOMEMLIMIT (theirs stands). At each load the soft memory
// limit becomes what was live at the last collection, plus the partition
// just loaded, plus half as much again (at least 512 MB more). Without it
// the collector lets the heap grow to twice what is live and the pages
// stay with the process: run50m peaked at 3.55 GB of RSS for 1.2 GB live;
// with a limit of 2000 MiB, 2.21 GB in the same time (2026-12-06). The
// limit is soft: a check that needs more gets more, at the cost of more
// collections.
func heapBound() (bound func(int64), undo func()) {
	if UserMemoryLimit() {
		return nil, nil
	}
	before := debug.SetMemoryLimit(-1)
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	return func(partBytes int64) {
			metrics.Read(sample)
			var live int64
			if sample[0].Value.Kind() == metrics.KindUint64 {
				live = int64(sample[0].Value.Uint64())
			}
			CapHeap(live + partBytes)
		}, func() {
			debug.SetMemoryLimit(before)
		}
}

// UserMemoryLimit says the user set GOMEMLIMIT: a check leaves the heap's
// limit to them.
func UserMemoryLimit() bool { return os.Getenv("GOMEMLIMIT") != "" }

// CapHeap sets the soft memory limit to need, what the check holds, plus
// half as much again (at least 512 MB more): the collector's default lets
// the heap grow to twice what is live, gigabytes of garbage on a big
// history. A check that needs more gets more, at the cost of more
// collections.
func CapHeap(need int64) { debug.SetMemoryLimit(need + max(need/2, 512<<20)) }

type loadState struct {
	wake    chan struct{}
	started bool
	wants   int // the partition it waits for (-1: none)
	keep    filterKey
	done    bool
}

// filterKey is a Filter as a comparable value (all: no Filter).
type filterKey struct {
	all       bool
	keyPrefix string
	fs        string // the fs joined by NUL
}

func keyOf(f *history.Filter) filterKey {
	if f == nil {
		return filterKey{all: true}
	}
	return filterKey{keyPrefix: f.KeyPrefix, fs: strings.Join(f.Fs, "\x00")}
}

// runShared runs every checker of pcs on n partitions through one
// sharedLoads and returns their results and errors in pcs's order, and
// how many loads they asked for and how many decoded a partition.
func runShared(ctx context.Context, n int, src partitionSource, pcs []checker.PartitionChecker) (results []checker.Result, errs []error, reads, decodes int) {
	s := &sharedLoads{src: src, states: make([]loadState, len(pcs))}
	var undo func()
	if s.bound, undo = heapBound(); undo != nil {
		defer undo()
	}
	for k := range s.states {
		s.states[k] = loadState{wake: make(chan struct{}, 1), wants: -1}
	}
	results = make([]checker.Result, len(pcs))
	errs = make([]error, len(pcs))
	var wg sync.WaitGroup
	for k, pc := range pcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-s.states[k].wake // the turn to start
			defer s.finish(k)
			calls := checker.WithCallsLoader(ctx, func(i int, o checker.Scope) (*checker.History, error) {
				return s.history(k, i, o)
			})
			results[k], errs[k] = pc.CheckPartitions(calls, n, func(i int, keep *history.Filter) ([]history.Op, error) {
				return s.get(k, i, keep)
			})
		}()
	}
	s.mu.Lock()
	s.pass()
	s.mu.Unlock()
	wg.Wait()
	return results, errs, s.reads, s.decodes
}

// get is checker k's load of partition i: it gives up the turn, waits for
// it to come back, and loads the partition unless the one cached is it.
func (s *sharedLoads) get(k, i int, keep *history.Filter) ([]history.Op, error) {
	c := s.turn(k, i, keyOf(keep))
	defer s.mu.Unlock()
	if !c.opsLoaded {
		ops, err := s.src.load(i, keep)
		s.decodes++
		if s.bound != nil {
			s.bound(int64(len(ops)) * opBytes)
		}
		c.opsLoaded, c.ops, c.opsErr = true, ops, err
	}
	return c.ops, c.opsErr
}

// history is checker k's load of partition i as a History of o's calls
// (checker.CallsLoader): the one cached, else one of the ops cached, else
// a compact partition decoded for it.
func (s *sharedLoads) history(k, i int, o checker.Scope) (*checker.History, error) {
	keep := o.Filter()
	c := s.turn(k, i, keyOf(keep))
	defer s.mu.Unlock()
	switch {
	case c.hist != nil || c.histErr != nil:
	case c.opsLoaded && c.opsErr != nil:
		c.histErr = c.opsErr
	case c.opsLoaded:
		c.hist = checker.NewHistory(c.ops)
	default:
		entries := 0
		if s.src.entries != nil {
			entries = s.src.entries(i, keep)
		}
		scan := func(fn func(op *history.Op) error) error { return s.src.scan(i, keep, fn) }
		if s.src.scan == nil {
			ops, err := s.src.load(i, keep)
			if err != nil {
				c.histErr = err
				s.decodes++
				return nil, err
			}
			scan, entries = checker.ScanOps(ops), len(ops)
		}
		c.hist, c.histErr = checker.CompactHistory(o, scan, entries)
		s.decodes++
		if s.bound != nil {
			s.bound(int64(entries/2) * compactCallBytes)
		}
	}
	return c.hist, c.histErr
}

// turn gives up checker k's turn until it comes back for partition i of
// keep, and returns the cache of that partition (emptied when it held
// another: the partition held before is let go before the next is loaded,
// never two of them at once), s.mu held.
func (s *sharedLoads) turn(k, i int, keep filterKey) *cachedPart {
	s.mu.Lock()
	s.states[k].wants, s.states[k].keep = i, keep
	s.pass()
	s.mu.Unlock()
	<-s.states[k].wake
	s.mu.Lock()
	s.states[k].wants = -1
	s.reads++
	c := &s.cached
	if !c.ok || c.i != i || c.keep != keep {
		*c = cachedPart{ok: true, i: i, keep: keep}
	}
	return c
}

// finish marks checker k done and passes the turn on.
func (s *sharedLoads) finish(k int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.states[k].done = true
	if s.done() {
		s.cached = cachedPart{}
	}
	s.pass()
}

func (s *sharedLoads) done() bool {
	for _, st := range s.states {
		if !st.done {
			return false
		}
	}
	return true
}

// pass gives the turn to the next checker (s.mu held): one not started
// yet, else the one waiting for the lowest partition.
func (s *sharedLoads) pass() {
	next := -1
	for k, st := range s.states {
		if !st.done && !st.started {
			next = k
			break
		}
	}
	if next < 0 {
		// The workload being judged: the last partition served's.
		for k, st := range s.states {
			if !st.done && st.wants >= 0 && s.cached.ok && st.keep == s.cached.keep && (next < 0 || st.wants < s.states[next].wants) {
				next = k
			}
		}
	}
	if next < 0 {
		// None of it is left: the first checker waiting takes its
		// workload's turn, at the lowest partition that workload asks.
		for k, st := range s.states {
			if !st.done && st.wants >= 0 {
				next = k
				break
			}
		}
		for k, st := range s.states {
			if next >= 0 && !st.done && st.wants >= 0 && st.keep == s.states[next].keep && st.wants < s.states[next].wants {
				next = k
			}
		}
	}
	if next < 0 {
		return // every checker is done
	}
	s.states[next].started = true
	s.states[next].wake <- struct{}{}
}
