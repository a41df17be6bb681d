// Package checkertest builds synthetic histories for the tests of a
// checker that lives outside package checker (a workload's own folder, as
// workloads/lock), and reads their verdicts and figures: what package
// checker's own tests use, for everyone else.
package checkertest

import (
	"archive/tar"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// Join is one history of several: each history's client ops moved to
// processes of their own (offset by 1000 a history) and its keys given
// the history's suffix, so that they land in different slot partitions;
// the nemesis entries kept; all ordered by time (stable) and numbered.
func Join(hs ...[]history.Op) []history.Op {
	var all []history.Op
	for i, ops := range hs {
		for _, op := range ops {
			if op.Process != history.Nemesis {
				op.Process += history.Process(1000 * i)
				if op.Key != "" {
					op.Key = fmt.Sprintf("%s-%d", op.Key, i)
				}
			}
			all = append(all, op)
		}
	}
	slices.SortStableFunc(all, func(a, b history.Op) int { return cmp.Compare(a.Time, b.Time) })
	for i := range all {
		all[i].Index = int64(i)
	}
	return all
}

// SameOnPartitions checks c (a checker.PartitionChecker) on the whole of
// ops and on 1, 3, 7 and 16 slot partitions of them, as `redline check`
// spills a big history, and fails unless results.json would say the same,
// byte for byte. A history the spill finds unpaired, or whose indexes do
// not increase, is one `redline check` reads whole: then the whole check
// must not be valid (such a history is a lie), and the partitioned one is
// not compared. It returns the whole check's result.
func SameOnPartitions(t *testing.T, what string, c checker.Checker, ops []history.Op) checker.Result {
	t.Helper()
	whole := c.Check(context.Background(), checker.NewHistory(ops))
	wj, err := json.Marshal(whole)
	if err != nil {
		t.Fatal(err)
	}
	path := writeHistory(t, ops)
	for _, n := range []int{1, 3, 7, 16} {
		p, err := history.Spill(path, t.TempDir(), n, history.SlotPartition(n))
		if err != nil {
			t.Fatal(err)
		}
		if !p.Paired || !p.IndexesIncrease {
			if whole.Valid == checker.Valid {
				t.Fatalf("%s: a history that does not pair is valid: %s", what, wj)
			}
			return whole
		}
		parts, err := c.(checker.PartitionChecker).CheckPartitions(checker.WithHistoryEnd(context.Background(), p.Latest), p.N(), p.LoadWhere)
		if err != nil {
			t.Fatal(err)
		}
		pj, err := json.Marshal(parts)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(wj, pj) {
			t.Fatalf("%s, %d partitions:\nwhole       %s\npartitioned %s", what, n, wj, pj)
		}
	}
	return whole
}

// writeHistory writes ops as a compressed history file, as the recorder
// does.
func writeHistory(t *testing.T, ops []history.Op) string {
	t.Helper()
	var lines bytes.Buffer
	for i := range ops {
		if err := history.Encode(&lines, &ops[i]); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	fw, err := history.NewFrameWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.WriteFrame(lines.Bytes(), len(ops)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), history.FileName)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Lies are ops with the kinds of evidence a partitioned check must not
// call valid where the whole check does not, each named: garbage
// completions (what the history format holds: JSON of the wrong shape),
// a history torn (its last third lost), a completion missing mid-run,
// entries out of time order, a completion before its invocation, a nemesis
// entry of garbage.
func Lies(ops []history.Op, seed uint64) map[string][]history.Op {
	r := rand.New(rand.NewPCG(seed, 11))
	var invs, comps []int
	for i := range ops {
		switch {
		case ops[i].Process == history.Nemesis:
		case ops[i].Type == history.Invoke:
			invs = append(invs, i)
		default:
			comps = append(comps, i)
		}
	}
	out := map[string][]history.Op{}
	if len(invs) == 0 || len(comps) == 0 {
		return out
	}
	pick := func(at []int) int { return at[r.IntN(len(at))] }
	renumber := func(ops []history.Op) []history.Op {
		for i := range ops {
			ops[i].Index = int64(i)
		}
		return ops
	}
	mutate := func(name string, f func(ops []history.Op) []history.Op) {
		out[name] = f(slices.Clone(ops))
	}
	mutate("garbage completions", func(ops []history.Op) []history.Op {
		for k := range 12 {
			op := &ops[pick(comps)]
			switch k % 4 {
			case 0:
				op.Value = []byte(`"\u0000garbage"`)
			case 1:
				op.Value = []byte(`{"x":[1,2],"pttl":"7","fence":-3,"msgs":[{}]}`)
			case 2:
				op.Value = nil
			case 3:
				op.SetError("ERR what")
			}
		}
		return ops
	})
	mutate("torn: the last third lost", func(ops []history.Op) []history.Op {
		return ops[:len(ops)*2/3]
	})
	mutate("a completion missing mid-run", func(ops []history.Op) []history.Op {
		// One whose process invokes again after it: the history no
		// longer pairs.
		for _, c := range comps[len(comps)/3:] {
			for i := c + 1; i < len(ops); i++ {
				if ops[i].Process == ops[c].Process {
					return renumber(slices.Delete(ops, c, c+1))
				}
			}
		}
		return ops
	})
	mutate("entries out of time order", func(ops []history.Op) []history.Op {
		for range 10 {
			ops[pick(comps)].Time -= int64(r.IntN(80)) * Msec
		}
		return ops
	})
	mutate("a completion before its invocation", func(ops []history.Op) []history.Op {
		c := pick(comps)
		for i := c - 1; i >= 0; i-- {
			if ops[i].Process == ops[c].Process {
				ops[i].Time, ops[c].Time = ops[c].Time, ops[i].Time
				break
			}
		}
		return ops
	})
	mutate("a nemesis entry of garbage", func(ops []history.Op) []history.Op {
		i := pick(invs)
		g := history.Op{Time: ops[i].Time, Process: history.Nemesis, Type: history.Info, F: history.StartOf("partition"),
			Ext: history.NewExt(history.Ext{Detail: json.RawMessage(`{"nodes":7,"addrs":"x"}`)})}
		return renumber(slices.Insert(ops, i, g))
	})
	return out
}

// Corpus is the histories of the adversary's stored runs whose names
// contain want (harness/adversary/testdata/corpus, found from dir, the
// test's package: real runs under faults), by run name.
func Corpus(t *testing.T, dir, want string) map[string][]history.Op {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "harness/adversary/testdata/corpus/*.tar.gz"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus under %s: %v", dir, err)
	}
	out := map[string][]history.Op{}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".tar.gz")
		if !strings.Contains(name, want) {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(zr)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if base := filepath.Base(h.Name); base != history.FileName && base != history.JSONLinesName {
				continue
			}
			path := filepath.Join(t.TempDir(), filepath.Base(h.Name))
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := history.ReadFile(path)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			out[name] = res.Ops
		}
		f.Close()
	}
	if len(out) == 0 {
		t.Fatalf("no corpus run of %q", want)
	}
	return out
}
