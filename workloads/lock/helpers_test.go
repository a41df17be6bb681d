package lock

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

// hist builds synthetic histories (as checker's own tests do). Times are in milliseconds for
// readability and stored as nanoseconds.
type hist struct {
	ops []history.Op
}

const msec = int64(time.Millisecond)

// call records a complete operation: invocation at t0 with value in, and a
// completion of type typ at t1 with value out. typ 0 (no type) leaves it open.
func (h *hist) call(p int, f, key string, in any, t0 int64, typ history.Type, out any, t1 int64) *history.Op {
	inv := history.Op{Time: t0 * msec, Process: history.Process(p), Type: history.Invoke, F: f, Key: key}
	inv.SetValue(in)
	h.ops = append(h.ops, inv)
	if typ == 0 {
		return nil
	}
	c := history.Op{Time: t1 * msec, Process: history.Process(p), Type: typ, F: f, Key: key}
	c.SetValue(out)
	h.ops = append(h.ops, c)
	return &h.ops[len(h.ops)-1]
}

// withErr / withWait decorate the last completion.
func (h *hist) withErr(e string) *hist {
	h.ops[len(h.ops)-1].SetError(e)
	return h
}

func (h *hist) withWait(want, acked int) *hist {
	h.ops[len(h.ops)-1].SetWait(&history.Wait{Want: want, Acked: acked})
	return h
}

func (h *hist) nemesis(t int64, f string, nodes ...string) {
	h.ops = append(h.ops, history.Op{Time: t * msec, Process: history.Nemesis, Type: history.Info, F: f, Ext: history.NewExt(history.Ext{Nodes: nodes})})
}

// done orders entries by time (stable, so an invocation stays before its
// completion at the same time) and numbers them.
func (h *hist) done() []history.Op {
	ops := slices.Clone(h.ops)
	slices.SortStableFunc(ops, func(a, b history.Op) int { return cmpInt(a.Time, b.Time) })
	for i := range ops {
		ops[i].Index = int64(i)
	}
	return ops
}

func check(t *testing.T, c checker.Checker, ops []history.Op) checker.Result {
	t.Helper()
	return c.Check(context.Background(), checker.NewHistory(ops))
}

func wantValid(t *testing.T, r checker.Result, want checker.Validity) {
	t.Helper()
	if r.Valid != want {
		t.Fatalf("valid = %v, want %v; figures %v", r.Valid, want, r.Figures)
	}
}

func fig[T any](t *testing.T, r checker.Result, name string) T {
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

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
