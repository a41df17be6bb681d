package checker

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/redline-dev/redline/history"
)

// StreamChecker is a checker that can judge a history fed to it once, in
// order, entry by entry (StreamPass: one scan of the history file for
// every such checker at once), keeping only state of its own that does
// not grow with the run's length (issue 42: a run of hours does not fit
// in memory whole). Its result is the one Check gives on the whole
// history, for any history: the same verdict and figures, byte for byte
// in results.json, an unpaired or torn one included.
type StreamChecker interface {
	Checker
	// NewStream starts a pass over one history, whose nemesis entries
	// and end are known before it (t; t.PairErr is set before End).
	NewStream(t *Tail) Stream
}

// Stream is one StreamChecker's pass over one history.
type Stream interface {
	// Call is each client op of the history once, every scope's: at its
	// completion, in the history's order, and the ops that never
	// completed at the end, in the order of their invocations. It is not
	// called once the history failed to pair (Tail.PairErr). seq is the
	// op's place among the history's invocations (the order of the
	// whole history's calls). c and what it points to are only valid
	// during the call.
	Call(c *call, seq int)
	// End is the result.
	End(ctx context.Context) Result
}

// Tail is what a streaming pass knows of the whole history from its
// start: its nemesis entries, a few hundred in a run of hours, and its
// latest time (a spill of the history gathers both: history.Partitions'
// RunWide and Latest); and, at its end, whether the history paired.
type Tail struct {
	// History holds the nemesis entries alone, in the history's order,
	// with the whole history's latest time as its end, so that what the
	// checkers derive from the nemesis entries (the fault windows, the
	// node addresses, the start of the final reads, the census) is the
	// whole history's. It has no client op: its calls are none.
	*History
	// PairErr is why the whole history cannot be paired (pairIndexes'
	// error), nil when it pairs.
	PairErr error
}

// pairErr is the result of a checker whose history cannot be paired.
func (t *Tail) pairErr() (Result, bool) {
	if t.PairErr != nil {
		return invalidHistory(t.PairErr), true
	}
	return Result{}, false
}

// StreamPass feeds one history, entry by entry (Observe), to the streams
// of several StreamCheckers at once. It pairs the client ops as
// pairIndexes does (the same pairs, the same first error), holding only
// the open invocation of each process; the nemesis entries it is given
// before it (the Tail), and skips them in the scan. A stream that panics
// is unknown with the panic as its "error", as Run makes a checker that
// panics (the stack differs from the whole check's).
type StreamPass struct {
	streams []Stream
	dead    []*Result
	// open is each process's invocation awaiting its completion, with
	// its position among the invocations (the order Call gives the ops
	// that never completed).
	open    map[history.Process]openInv
	invoked int
	pairErr error
	tail    *Tail
}

type openInv struct {
	op  history.Op
	seq int
}

// NewStreamPass starts a pass of one history through checkers. runWide
// are (at least) the history's nemesis entries in its order, latest its
// latest time: every StreamChecker knows them before the first entry.
func NewStreamPass(checkers []StreamChecker, runWide []history.Op, latest int64) *StreamPass {
	var nemesis []history.Op
	for i := range runWide {
		if runWide[i].Process == history.Nemesis {
			nemesis = append(nemesis, *detachOp(&runWide[i]))
		}
	}
	t := &Tail{History: NewHistory(nemesis)}
	t.endOnce.Do(func() { t.end = latest })
	p := &StreamPass{open: map[history.Process]openInv{}, dead: make([]*Result, len(checkers)), tail: t}
	for _, c := range checkers {
		p.streams = append(p.streams, c.NewStream(t))
	}
	return p
}

// Observe is the history's next entry. op is only read during the call:
// a scan may reuse it (history.Scan).
func (p *StreamPass) Observe(op *history.Op) {
	if op.Process == history.Nemesis {
		return // in the Tail already
	}
	if p.pairErr != nil {
		return
	}
	if op.Type == history.Invoke {
		if o, busy := p.open[op.Process]; busy {
			p.pairErr = fmt.Errorf("entry %d: process %d invokes while its op at entry %d is still open", op.Index, op.Process, o.op.Index)
			return
		}
		// A copy of what the entry points to too: a scan reuses its
		// buffers, and the invocation outlives the entry.
		p.open[op.Process] = openInv{*detachOp(op), p.invoked}
		p.invoked++
		return
	}
	o, busy := p.open[op.Process]
	if !busy {
		p.pairErr = fmt.Errorf("entry %d: process %d completes an op it never invoked", op.Index, op.Process)
		return
	}
	delete(p.open, op.Process)
	p.call(&call{inv: &o.op, comp: op, start: o.op.Time, end: op.Time, index: o.op.Index}, o.seq)
}

func (p *StreamPass) call(c *call, seq int) {
	for i, s := range p.streams {
		if p.dead[i] == nil {
			p.guard(i, func() { s.Call(c, seq) })
		}
	}
}

// guard runs f for stream i, making the stream unknown if f panics.
func (p *StreamPass) guard(i int, f func()) {
	defer func() {
		if r := recover(); r != nil {
			p.dead[i] = &Result{Valid: Unknown, Figures: Map{
				"error": fmt.Sprintf("checker panicked: %v\n%s", r, debug.Stack()),
			}}
		}
	}()
	f()
}

// Results ends the pass: the ops that never completed are given to the
// streams, then each stream's result, in the order of the checkers.
func (p *StreamPass) Results(ctx context.Context) []Result {
	if p.pairErr == nil {
		left := make([]openInv, 0, len(p.open))
		for _, o := range p.open {
			left = append(left, o)
		}
		slices.SortFunc(left, func(a, b openInv) int { return a.seq - b.seq })
		for i := range left {
			p.call(&call{inv: &left[i].op, start: left[i].op.Time, end: inf, index: left[i].op.Index}, left[i].seq)
		}
	}
	p.open = nil
	p.tail.PairErr = p.pairErr
	out := make([]Result, len(p.streams))
	for i, s := range p.streams {
		if p.dead[i] == nil {
			p.guard(i, func() { out[i] = s.End(ctx) })
		}
		if p.dead[i] != nil {
			out[i] = *p.dead[i]
		}
	}
	return out
}

// CheckStream is c's result on ops given one entry at a time, as a
// streaming pass over a history file gives them.
func CheckStream(ctx context.Context, c StreamChecker, ops []history.Op) Result {
	p := NewStreamPass([]StreamChecker{c}, ops, runEnd(ops))
	for i := range ops {
		p.Observe(&ops[i])
	}
	return p.Results(ctx)[0]
}

// runWide is the stream of a checker that reads only the history's
// nemesis entries and its end (a Tail has both), or nothing of it: its
// state is the Tail, a few hundred entries in a run of hours. Its Check
// on the Tail is its Check on the whole history.
type runWide struct {
	c Checker
	t *Tail
}

func (runWide) Call(*call, int) {}

func (s runWide) End(ctx context.Context) Result { return s.c.Check(ctx, s.t.History) }

// NewStream: the end phase reads the heal's record, the census and the
// migrations' placements, all nemesis entries (runWide).
func (e endPhase) NewStream(t *Tail) Stream { return runWide{e, t} }

// NewStream: the replica census reads the census alone (runWide).
func (c replicaCensus) NewStream(t *Tail) Stream { return runWide{c, t} }

// NewStream: the failovers' promotions are read from the failover
// entries and the fault windows (runWide).
func (f failoverPromotion) NewStream(t *Tail) Stream { return runWide{f, t} }

// NewStream: the configEpochs are judged on the topology samples, the
// history giving only the node addresses (runWide).
func (c configEpoch) NewStream(t *Tail) Stream { return runWide{c, t} }

// NewStream: the elections are read from the servers' logs, not the
// history (runWide).
func (c electionLog) NewStream(t *Tail) Stream { return runWide{c, t} }
