package checker

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/redline-dev/redline/history"
)

// partitionedKind says whether the RPO and default-failover checkers of
// kind judge a history given as slot partitions: the counter and set
// analyses are per key. A kind detected from the ops is not (a partition
// may have no read to tell it by), nor list-append (a transaction spans
// keys of several slots).
func partitionedKind(kind string) bool { return kind == "counter" || kind == "set" }

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

// rpoParts is the RPO checker of a counter or a set workload, which judges
// a history given as slot partitions too.
type rpoParts struct{ rpo }

// CheckPartitions is Check on a history given as slot partitions
// (PartitionChecker): each partition charges its keys' losses to the fault
// windows (run-wide: every partition has them) and counts its keys active
// in each, and the partials add up (rpoPartial.merge). It holds one
// partition's ops and analysis at a time.
func (r rpoParts) CheckPartitions(ctx context.Context, n int, load PartitionLoader) (Result, error) {
	var m *rpoPartial
	var windows []Window
	for i := range n {
		ops, err := load(i, r.o.keep)
		if err != nil {
			return Result{}, err
		}
		in := NewHistory(ops)
		calls, err := r.o.calls(in)
		if err != nil {
			// The caller checks such a history whole; if not, the first
			// partition's word.
			return invalidHistory(err), nil
		}
		if windows, err = partitionWindows(ctx, ops); err != nil {
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
	var judged []judgedLoss
	var evs []failoverEvent
	defaults := 0
	for i := range n {
		ops, err := load(i, d.o.keep)
		if err != nil {
			return Result{}, err
		}
		in := NewHistory(ops)
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
		windows, err := partitionWindows(ctx, ops)
		if err != nil {
			return Result{}, err
		}
		j, err := d.judgeLosses(in, d.o.Kind, calls, evs, windows)
		if err != nil {
			return Result{Valid: Unknown, Figures: &Verdict{Error: err.Error()}}, nil
		}
		judged = append(judged, j...)
	}
	slices.SortStableFunc(judged, func(x, y judgedLoss) int { return cmpInt(x.index, y.index) })
	return d.result(d.o.Kind, evs, defaults, judged), nil
}
