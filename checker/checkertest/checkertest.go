// Package checkertest builds synthetic histories for the tests of a
// checker that lives outside package checker (a workload's own folder, as
// workloads/lock), and reads their verdicts and figures: what package
// checker's own tests use, for everyone else.
package checkertest

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

// Hist builds synthetic histories (as checker's own tests do). Times are in milliseconds for
// readability and stored as nanoseconds.
type Hist struct {
	Ops []history.Op
}

// Msec is a millisecond in the history's nanoseconds.
const Msec = int64(time.Millisecond)

// Call records a complete operation: invocation at t0 with value in, and a
// completion of type typ at t1 with value out. typ 0 (no type) leaves it open.
func (h *Hist) Call(p int, f, key string, in any, t0 int64, typ history.Type, out any, t1 int64) *history.Op {
	inv := history.Op{Time: t0 * Msec, Process: history.Process(p), Type: history.Invoke, F: f, Key: key}
	inv.SetValue(in)
	h.Ops = append(h.Ops, inv)
	if typ == 0 {
		return nil
	}
	c := history.Op{Time: t1 * Msec, Process: history.Process(p), Type: typ, F: f, Key: key}
	c.SetValue(out)
	h.Ops = append(h.Ops, c)
	return &h.Ops[len(h.Ops)-1]
}

// WithErr and WithWait decorate the last completion.
func (h *Hist) WithErr(e string) *Hist {
	h.Ops[len(h.Ops)-1].SetError(e)
	return h
}

func (h *Hist) WithWait(want, acked int) *Hist {
	h.Ops[len(h.Ops)-1].SetWait(&history.Wait{Want: want, Acked: acked})
	return h
}

// Nemesis records a nemesis entry at t ms.
func (h *Hist) Nemesis(t int64, f string, nodes ...string) {
	h.Ops = append(h.Ops, history.Op{Time: t * Msec, Process: history.Nemesis, Type: history.Info, F: f, Ext: history.NewExt(history.Ext{Nodes: nodes})})
}

// Done orders entries by time (stable, so an invocation stays before its
// completion at the same time) and numbers them.
func (h *Hist) Done() []history.Op {
	ops := slices.Clone(h.Ops)
	slices.SortStableFunc(ops, func(a, b history.Op) int { return cmp.Compare(a.Time, b.Time) })
	for i := range ops {
		ops[i].Index = int64(i)
	}
	return ops
}

// Check runs c on ops.
func Check(t *testing.T, c checker.Checker, ops []history.Op) checker.Result {
	t.Helper()
	return c.Check(context.Background(), checker.NewHistory(ops))
}

// WantValid fails the test unless r's verdict is want.
func WantValid(t *testing.T, r checker.Result, want checker.Validity) {
	t.Helper()
	if r.Valid != want {
		t.Fatalf("valid = %v, want %v; figures %v", r.Valid, want, r.Figures)
	}
}

// Fig reads figure name of r as results.json holds it, as a T.
func Fig[T any](t *testing.T, r checker.Result, name string) T {
	t.Helper()
	v, ok := r.Values()[name]
	if !ok {
		t.Fatalf("figure %q missing in %v", name, r.Figures)
	}
	// As results.json holds it: typed figures read back as JSON numbers.
	var x T
	if b, err := json.Marshal(v); err != nil || json.Unmarshal(b, &x) != nil {
		t.Fatalf("figure %q is %T (%v), want %T", name, v, v, x)
	}
	return x
}
