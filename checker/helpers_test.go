package checker

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/history"
)

// hist builds synthetic histories. Times are in milliseconds for
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

func check(t *testing.T, c Checker, ops []history.Op) Result {
	t.Helper()
	return c.Check(context.Background(), NewHistory(ops))
}

func wantValid(t *testing.T, r Result, want Validity) {
	t.Helper()
	if r.Valid != want {
		t.Fatalf("valid = %v, want %v; figures %v", r.Valid, want, r.Figures)
	}
}

func fig[T any](t *testing.T, r Result, name string) T {
	t.Helper()
	v, ok := r.Values()[name]
	if !ok {
		t.Fatalf("figure %q missing in %v", name, r.Figures)
	}
	x, ok := v.(T)
	if !ok {
		// Typed figures: the field the name is written from, as the
		// checker holds it (Values is their JSON form).
		if g, found := typedFigure(r.Figures, name); found {
			if x, ok = g.(T); ok {
				return x
			}
		}
		t.Fatalf("figure %q is %T (%v), want %T", name, v, v, x)
	}
	return x
}

// typedFigure is the value of the field of typed figures f that writes
// the figure name (a pointer's target for an optional one).
func typedFigure(f any, name string) (any, bool) {
	v := reflect.ValueOf(f)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil, false
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil, false
	}
	for i := 0; i < v.NumField(); i++ {
		sf, fv := v.Type().Field(i), v.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if sf.Anonymous && tag == "" {
			if x, ok := typedFigure(fv.Addr().Interface(), name); ok {
				return x, true
			}
			continue
		}
		if tag != name {
			continue
		}
		if fv.Kind() == reflect.Pointer {
			if fv.IsNil() {
				return nil, false
			}
			fv = fv.Elem()
		}
		return fv.Interface(), true
	}
	return nil, false
}

// typed is r's figures as the type T its checker writes.
func typed[T Figures](t *testing.T, r Result) T {
	t.Helper()
	f, ok := FiguresAs[T](r)
	if !ok {
		t.Fatalf("figures are %T, not %T: %v", r.Figures, f, r.Figures)
	}
	return f
}

// val is an optional figure's value, -1 when absent.
func val[T int | float64 | bool](p *T) any {
	if p == nil {
		return -1
	}
	return *p
}
