package checker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/redline-dev/redline/history"
)

// partitionedKind says whether the RPO and default-failover checkers of
// kind judge a history given as slot partitions: the counter and set
// analyses are per key, list-append's per key and transaction (txnUnits).
// A kind detected from the ops is not (a partition may have no read to
// tell it by).
func partitionedKind(kind string) bool {
	return kind == "counter" || kind == "set" || kind == "list-append"
}

type historyEndKey struct{}

// WithHistoryEnd is ctx carrying the latest time of a history given as
// slot partitions (history.Partitions.Latest), for CheckPartitions: a fault
// window never closed runs to the end of the history (Windows), and a
// partition's own latest entry may come before it.
func WithHistoryEnd(ctx context.Context, end int64) context.Context {
	return context.WithValue(ctx, historyEndKey{}, end)
}

// partitionWindows is the fault windows of a partition's ops (their
// run-wide entries are the whole history's) in the history whose end ctx
// carries (WithHistoryEnd); without it, an error: no verdict rather than
// windows that may end early.
func partitionWindows(ctx context.Context, ops []history.Op) ([]Window, error) {
	end, ok := ctx.Value(historyEndKey{}).(int64)
	if !ok {
		return nil, errors.New("the history's end is not known (WithHistoryEnd): its fault windows cannot be told from a partition")
	}
	return windowsUntil(ops, max(end, runEnd(ops))), nil
}

// partitionWindowsOf is partitionWindows of a partition's History
// (whole or compact: its run-wide entries are the same, and so is its
// end).
func partitionWindowsOf(ctx context.Context, in *History) ([]Window, error) {
	end, ok := ctx.Value(historyEndKey{}).(int64)
	if !ok {
		return nil, errors.New("the history's end is not known (WithHistoryEnd): its fault windows cannot be told from a partition")
	}
	return windowsUntil(in.Ops, max(end, in.runEndOf())), nil
}

// rpoParts is the RPO checker of a counter or a set workload, which judges
// a history given as slot partitions too.
type rpoParts struct{ rpo }

// CheckPartitions is Check on a history given as slot partitions
// (PartitionChecker): each partition charges its keys' losses to the fault
// windows (run-wide: every partition has them) and counts its keys active
// in each, and the partials add up (rpoPartial.merge). It holds one
// partition's ops and analysis at a time.
func (r rpoParts) CheckPartitions(ctx context.Context, n int, load PartitionLoader) (Result, error) {
	if r.o.Kind == "list-append" {
		return r.txnPartitions(ctx, n, load)
	}
	var m *rpoPartial
	var windows []Window
	for i := range n {
		in, err := PartitionCalls(ctx, load, i, r.o.Scope)
		if err != nil {
			return Result{}, err
		}
		calls, err := r.o.calls(in)
		if err != nil {
			// The caller checks such a history whole; if not, the first
			// partition's word.
			return invalidHistory(err), nil
		}
		if windows, err = partitionWindowsOf(ctx, in); err != nil {
			return Result{}, err
		}
		p, res := r.partial(in, r.o.Kind, calls, windows)
		if p == nil {
			return res, nil // not of a counter's or a set's kind
		}
		m = m.merge(p)
	}
	return r.result(r.o.Kind, windows, m), nil
}

// merge adds o's charges and key counts to p's (nil: none yet): the
// partitions' keys are apart.
func (p *rpoPartial) merge(o *rpoPartial) *rpoPartial {
	if p == nil {
		return o
	}
	for i, b := range p.buckets {
		b.merge(o.buckets[i])
		p.keys[i] = p.keys[i].add(o.keys[i])
	}
	p.outside.merge(o.outside)
	return p
}

func (b *rpoBucket) merge(o *rpoBucket) {
	b.lost += o.lost
	for i := range b.split {
		b.split[i] += o.split[i]
	}
	maps.Copy(b.keys, o.keys)
	b.firstInv, b.firstAck, b.lastAck = min(b.firstInv, o.firstInv), min(b.firstAck, o.firstAck), max(b.lastAck, o.lastAck)
	b.boundFrom, b.boundTo = min(b.boundFrom, o.boundFrom), max(b.boundTo, o.boundTo)
	b.unattributed += o.unattributed
}

// defaultFailoverParts is the default-failover checker of a counter or a
// set workload, which judges a history given as slot partitions too.
type defaultFailoverParts struct{ defaultFailover }

// CheckPartitions is Check on a history given as slot partitions
// (PartitionChecker): the failovers and fault windows are run-wide (every
// partition has them), each partition judges its keys' losses, and the
// losses of every partition, in index order as Check lists them, make the
// verdict. It holds one partition's ops and analysis at a time, and the
// losses (a few numbers each).
func (d defaultFailoverParts) CheckPartitions(ctx context.Context, n int, load PartitionLoader) (Result, error) {
	if d.o.Kind == "list-append" {
		return d.txnPartitions(ctx, n, load)
	}
	var judged []judgedLoss
	var evs []failoverEvent
	defaults := 0
	for i := range n {
		in, err := PartitionCalls(ctx, load, i, d.o.Scope)
		if err != nil {
			return Result{}, err
		}
		calls, err := d.o.calls(in)
		if err != nil {
			// The caller checks such a history whole; if not, the first
			// partition's word.
			return invalidHistory(err), nil
		}
		if i == 0 {
			evs = failoverEvents(in.Ops)
			for _, e := range evs {
				if e.mode == "default" {
					defaults++
				}
			}
			if defaults == 0 {
				return d.Check(ctx, in), nil // not applicable, as the whole says
			}
		}
		windows, err := partitionWindowsOf(ctx, in)
		if err != nil {
			return Result{}, err
		}
		j, err := d.judgeLosses(in, d.o.Kind, calls, evs, windows, in.runEndOf())
		if err != nil {
			return Result{Valid: Unknown, Figures: &Verdict{Error: err.Error()}}, nil
		}
		judged = append(judged, j...)
	}
	slices.SortStableFunc(judged, func(x, y judgedLoss) int { return cmpInt(x.index, y.index) })
	return d.result(d.o.Kind, evs, defaults, judged), nil
}

// txnPartitions is CheckPartitions of a list-append workload: the lost
// appends of each partition's transactions (lostAppends, per key and
// transaction: txnUnits) charged to the windows, and its keys counted in
// each, as Check does on the whole; the partials add up. It holds one
// partition's ops of the workload at a time.
func (r rpoParts) txnPartitions(ctx context.Context, n int, load PartitionLoader) (Result, error) {
	if _, err := partitionWindows(ctx, nil); err != nil {
		return Result{}, err
	}
	type unit struct {
		p            *rpoPartial
		all, appends int
		windows      []Window
	}
	units, unpaired, err := txnUnits(n, load, r.o.filter(), func(ops []history.Op) (unit, []uint64, error) {
		in := NewHistory(ops)
		calls, err := r.o.calls(in)
		if err != nil {
			return unit{}, nil, err
		}
		windows, _ := partitionWindows(ctx, ops)
		u := unit{all: len(calls), windows: windows}
		calls, u.appends = listAppendCalls(calls)
		u.p, _ = r.partial(in, "list-append", calls, windows)
		return u, lostAppendKeys(calls), nil
	})
	if err != nil {
		return Result{}, err
	}
	if unpaired != nil {
		// The caller checks such a history whole; if not, the first
		// partition's word.
		return invalidHistory(unpaired), nil
	}
	var m *rpoPartial
	all, appends := 0, 0
	for _, u := range units {
		all += u.all
		appends += u.appends
		m = m.merge(u.p)
	}
	if appends == 0 {
		return NotApplicable(fmt.Sprintf("no list append among the workload's %d ops (its other keys, such as bank accounts, are no lists): no list-append RPO to measure", all)), nil
	}
	return r.result("list-append", units[0].windows, m), nil
}

// lostAppendKeys are the hashes of the keys the list-append transactions
// of calls name (txnUnits).
func lostAppendKeys(calls []call) []uint64 {
	txns, _ := parseListAppend(calls, &anomalyLog{max: 0, count: map[string]int{}, examples: map[string][]any{}})
	return txnKeyHashes(txns)
}

// txnPartitions is CheckPartitions of a list-append workload: each
// partition's lost appends (per key and transaction: txnUnits), each
// judged against the run-wide failovers and windows, revealed at the
// history's end (WithHistoryEnd); the losses in index order, as Check
// lists them, make the verdict.
func (d defaultFailoverParts) txnPartitions(ctx context.Context, n int, load PartitionLoader) (Result, error) {
	end, ok := ctx.Value(historyEndKey{}).(int64)
	if !ok {
		_, err := partitionWindows(ctx, nil)
		return Result{}, err
	}
	var evs []failoverEvent
	defaults := -1 // not known until the first partition's run-wide entries
	units, unpaired, err := txnUnits(n, load, d.o.filter(), func(ops []history.Op) ([]judgedLoss, []uint64, error) {
		in := NewHistory(ops)
		calls, err := d.o.calls(in)
		if err != nil {
			return nil, nil, err
		}
		if defaults < 0 {
			evs, defaults = failoverEvents(in.Ops), 0
			for _, e := range evs {
				if e.mode == "default" {
					defaults++
				}
			}
		}
		if defaults == 0 {
			return nil, nil, nil // not applicable, as the whole says
		}
		windows, _ := partitionWindows(ctx, ops)
		j, err := d.judgeLosses(in, d.o.Kind, calls, evs, windows, max(end, runEnd(ops)))
		if err != nil {
			return nil, nil, err // no such kind: not for list-append
		}
		lcalls, _ := listAppendCalls(calls)
		return j, lostAppendKeys(lcalls), nil
	})
	if err != nil {
		return Result{}, err
	}
	if unpaired != nil {
		return invalidHistory(unpaired), nil
	}
	if defaults <= 0 {
		return noDefaultFailover(evs), nil
	}
	var judged []judgedLoss
	for _, u := range units {
		judged = append(judged, u...)
	}
	slices.SortStableFunc(judged, func(x, y judgedLoss) int { return cmpInt(x.index, y.index) })
	return d.result(d.o.Kind, evs, defaults, judged), nil
}
