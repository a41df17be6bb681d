package checker

import (
	"context"
	"errors"
	"fmt"

	"github.com/redline-dev/redline/history"
)

// A compact partition is the History of one partition of a history as the
// checkers that read only a scope's calls and the run-wide entries take
// it (the counter family: counter, rpo, default-failover, wait-probe, rto),
// built as the partition's ops stream by, never holding them (issue 42).
// Held as ops, the hot counter key of a 150M-entry history was 17M ops of
// 104 bytes, 1.8 GB, for as long as the five judged it, beside the calls
// each made of them; as calls, a call is 40 bytes and its invocation and
// completion are drawn from a table of ops alike (every "add 3 to key k"
// invocation is one op, every ok add answered by n2 another), so that
// only the ops with a value of their own (a read's result) are copies.
//
// What a compact partition's calls share is what a call is: its f, key,
// value, node, outcome and rare fields. What is each call's own, its
// index and times, is in the call (call.index, start, end): the shared
// ops have none (0), and their process is 0. A checker judging compact
// calls reads index and times from the call only; the partition
// differential tests (TestPartitioned*AgreesWithWhole) hold every
// checker of the family on compact partitions to the whole history's
// verdict, examples included.

// OpScan hands each op of a partition to fn in the history's order, as
// history.Partitions.ScanWhere does; op is only valid during the call.
type OpScan func(fn func(op *history.Op) error) error

// ScanOps is the OpScan of ops held in memory.
func ScanOps(ops []history.Op) OpScan {
	return func(fn func(op *history.Op) error) error {
		for i := range ops {
			if err := fn(&ops[i]); err != nil {
				return err
			}
		}
		return nil
	}
}

// CallsLoader gives partition i of a history given as slot partitions as
// a History for the checkers that read o's calls and the run-wide entries
// only (PartitionCalls). A check that loads each partition once for
// several checkers (the harness's shared loads) gives one, so that the
// five share one compact partition instead of each holding the ops.
type CallsLoader func(i int, o Scope) (*History, error)

type callsLoaderKey struct{}

// WithCallsLoader is ctx carrying f for the CheckPartitions of the
// counter family (PartitionCalls).
func WithCallsLoader(ctx context.Context, f CallsLoader) context.Context {
	return context.WithValue(ctx, callsLoaderKey{}, f)
}

// PartitionCalls is partition i as a checker of o's calls reads it: the
// CallsLoader of ctx when it carries one, else a compact partition of what
// load loads. The History is shared with the other checkers of o: read it,
// never write it.
func PartitionCalls(ctx context.Context, load PartitionLoader, i int, o Scope) (*History, error) {
	if f, ok := ctx.Value(callsLoaderKey{}).(CallsLoader); ok && f != nil {
		return f(i, o)
	}
	ops, err := load(i, o.filter())
	if err != nil {
		return nil, err
	}
	return CompactHistory(o, ScanOps(ops), len(ops))
}

// errNotPaired is what a compact partition says when asked for the calls
// of a scope it was not made for: it kept no ops to pair again.
var errNotPaired = errors.New("a compact partition holds the calls of its own scope only")

// CompactHistory is the compact partition of the ops scan gives (about
// entries of them: a hint for the calls' size), for the checkers of o's
// calls: the run-wide entries (the nemesis process's) as they are, o's
// calls paired as History.calls pairs them (the same calls, in the same
// order, the same pairing errors), the run's end the latest time of any
// op. An error is scan's.
func CompactHistory(o Scope, scan OpScan, entries int) (*History, error) {
	b := compactBuilder{o: o, open: map[history.Process]openCall{}, shapes: newShapes()}
	b.calls = make([]call, 0, entries/2+1)
	if err := scan(b.add); err != nil {
		return nil, err
	}
	h := NewHistory(b.runWide)
	h.compact = true
	h.endOnce.Do(func() { h.end = b.end })
	h.pairsOnce.Do(func() { h.pairsErr = errNotPaired })
	sc := &sharedCalls{calls: b.calls, err: b.err}
	if b.err != nil {
		sc.calls = nil
	}
	sc.once.Do(func() {})
	h.calls[o.KeyPrefix] = sc
	return h, nil
}

// openCall is a process's open invocation while a partition streams by:
// where its call is (-1: not of the scope) and its index.
type openCall struct {
	at    int
	index int64
}

type compactBuilder struct {
	o       Scope
	runWide []history.Op
	calls   []call
	open    map[history.Process]openCall
	shapes  *shapes
	end     int64
	err     error // the first pairing error, as pairIndexes says it
}

func (b *compactBuilder) add(op *history.Op) error {
	b.end = max(b.end, op.Time)
	if op.Process == history.Nemesis {
		b.runWide = append(b.runWide, *op)
		return nil
	}
	if b.err != nil {
		return nil // the calls are refused; the run-wide entries still read
	}
	if op.Type == history.Invoke {
		if oc, busy := b.open[op.Process]; busy {
			b.err = fmt.Errorf("entry %d: process %d invokes while its op at entry %d is still open", op.Index, op.Process, oc.index)
			return nil
		}
		oc := openCall{at: -1, index: op.Index}
		if b.o.keep(op) {
			oc.at = len(b.calls)
			b.calls = append(b.calls, call{inv: b.shapes.of(op), start: op.Time, end: inf, index: op.Index})
		}
		b.open[op.Process] = oc
		return nil
	}
	oc, busy := b.open[op.Process]
	if !busy {
		b.err = fmt.Errorf("entry %d: process %d completes an op it never invoked", op.Index, op.Process)
		return nil
	}
	delete(b.open, op.Process)
	if oc.at >= 0 {
		c := &b.calls[oc.at]
		c.comp, c.end = b.shapes.of(op), op.Time
	}
	return nil
}

// shapes is the table of a compact partition's ops: one op for each
// shape (what a call reads of an op: type, f, key, value, node, rare
// fields), up to maxShapes of them; an op of a shape not in it (a read's
// result, once the table is full) is a copy of its own. The values are
// copied out of the decoder's slabs, so that an op kept does not keep the
// 64 KB its value was decoded into.
type shapes struct {
	byShape map[opShape]*history.Op
	values  map[string]string // the values of the shapes
	slab    []history.Op
	arena   []byte
}

// maxShapes bounds the table: a counter's adds and reads have a few
// dozen shapes, a read's result or a set's element is a value of its own
// and would grow it with the run.
var maxShapes = 1 << 14

func newShapes() *shapes {
	return &shapes{byShape: map[opShape]*history.Op{}, values: map[string]string{}}
}

// opShape is an op without its index, time and process.
type opShape struct {
	typ          history.Type
	f, key, node string
	value        string
	hasValue     bool // value is not nil (an empty value is not an absent one)
	ext          extShape
}

// extShape is an Ext of no nodes, detail or WAIT probes.
type extShape struct {
	set                         bool
	err                         string
	wait                        bool
	want, acked                 int
	reply                       string
	redirects, attempts, resent int
	replica                     bool
}

// of is the op of op's shape (a copy when it has none in the table).
func (s *shapes) of(op *history.Op) *history.Op {
	sh, ok := s.shape(op)
	if !ok {
		return s.copy(op)
	}
	if t := s.byShape[sh]; t != nil {
		return t
	}
	t := s.copy(op)
	if len(s.byShape) < maxShapes {
		s.byShape[sh] = t
	}
	return t
}

// shape is op's shape; false when it has none the table can hold (a
// value or an Ext of its own, once the table is full).
func (s *shapes) shape(op *history.Op) (opShape, bool) {
	sh := opShape{typ: op.Type, f: op.F, key: op.Key, node: op.Node, hasValue: op.Value != nil}
	if len(op.Value) > 0 {
		v, ok := s.values[string(op.Value)]
		if !ok {
			if len(s.values) >= maxShapes {
				return opShape{}, false
			}
			v = string(op.Value)
			s.values[v] = v
		}
		sh.value = v
	}
	if e := op.Ext; e != nil {
		if len(e.Nodes) > 0 || len(e.Detail) > 0 || e.Wait != nil && len(e.Wait.Probes) > 0 {
			return opShape{}, false
		}
		sh.ext = extShape{set: true, err: e.Error, redirects: e.Redirects, attempts: e.Attempts, resent: e.Resent, replica: e.Replica}
		if w := e.Wait; w != nil {
			sh.ext.wait, sh.ext.want, sh.ext.acked, sh.ext.reply = true, w.Want, w.Acked, w.Reply
		}
	}
	return sh, true
}

// copy is op without its index, time and process, its value copied.
func (s *shapes) copy(op *history.Op) *history.Op {
	if len(s.slab) == cap(s.slab) {
		s.slab = make([]history.Op, 0, 1024)
	}
	s.slab = append(s.slab, *op)
	t := &s.slab[len(s.slab)-1]
	t.Index, t.Time, t.Process = 0, 0, 0
	switch {
	case len(op.Value) > 0:
		t.Value = s.keep(op.Value)
	case op.Value != nil:
		t.Value = []byte{} // empty, not absent, and not in a slab
	}
	return t
}

// keep copies v into the arena (a slab of 64 KB at a time; a value past
// 4 KB on its own), capacity its length.
func (s *shapes) keep(v []byte) []byte {
	if len(v) > 4096 {
		return append([]byte(nil), v...)
	}
	if cap(s.arena)-len(s.arena) < len(v) {
		s.arena = make([]byte, 0, 64<<10)
	}
	n := len(s.arena)
	s.arena = append(s.arena, v...)
	return s.arena[n:len(s.arena):len(s.arena)]
}
