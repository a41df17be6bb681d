package checker

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/redline-dev/redline/history"
)

// sameShape says whether a compact partition's op is the whole history's
// op but for what it leaves to the call (index, time, process).
func sameShape(t *testing.T, what string, got, want *history.Op) {
	t.Helper()
	if (got == nil) != (want == nil) {
		t.Fatalf("%s: compact %v, whole %v", what, got, want)
	}
	if got == nil {
		return
	}
	w := *want
	w.Index, w.Time, w.Process = 0, 0, 0
	if len(w.Value) == 0 && len(got.Value) == 0 && (w.Value == nil) == (got.Value == nil) {
		w.Value = got.Value
	}
	if !reflect.DeepEqual(*got, w) {
		t.Fatalf("%s: compact %+v, whole %+v", what, *got, w)
	}
}

// A compact partition is the whole History's calls, run-wide entries and
// end: the same calls in the same order, each with its index and times and
// ops of the same shape; the same windows, addresses, final reads, census
// and end. Its shared table holds every shape, overflowing or not.
func TestCompactHistoryIsTheWhole(t *testing.T) {
	wait := func(ops []history.Op) []history.Op {
		for i := range ops {
			op := &ops[i]
			switch {
			case op.Type == history.OK && op.F == "add" && i%5 == 0:
				op.SetWait(&history.Wait{Want: 1, Acked: i % 2, Reply: string(rawInt(int64(i % 4)))})
			case op.Type == history.OK && op.F == "add" && i%11 == 0:
				op.SetWait(&history.Wait{Want: 1, Acked: 1, Probes: []history.WaitProbe{{}}})
			case op.Type == history.OK && op.F == "read" && i%7 == 0:
				op.SetReplica(true)
			case op.Type == history.Info && i%3 == 0:
				op.SetAttempts(3, 2)
			}
		}
		return ops
	}
	histories := map[string][]history.Op{
		"counter, faults":        counterLosses(faulted(genCounter(7, 16, 120, 4, 0.05))),
		"counter, unanswered":    unanswered(withFaults(genCounter(3, 5, 200, 3, 0.1))),
		"counter, rare fields":   wait(faulted(genCounter(9, 4, 300, 4, 0.1))),
		"set, faults":            setLosses(faulted(genSet(5, 12, 100, 4, 0.05, 0.3))),
		"register, other prefix": genRegister(4, 8, 100, 3, 0.1),
	}
	for _, shapes := range []int{1 << 14, 3} {
		saved := maxShapes
		maxShapes = shapes
		for name, ops := range histories {
			for _, prefix := range []string{"", "c1", "s"} {
				o := Scope{KeyPrefix: prefix}
				whole := NewHistory(ops)
				h, err := CompactHistory(o, ScanOps(ops), len(ops)/3)
				if err != nil {
					t.Fatal(err)
				}
				wc, werr := o.calls(whole)
				cc, cerr := o.calls(h)
				if werr != nil || cerr != nil {
					t.Fatalf("%s: pairing: whole %v, compact %v", name, werr, cerr)
				}
				if len(wc) != len(cc) {
					t.Fatalf("%s %q: %d calls whole, %d compact", name, prefix, len(wc), len(cc))
				}
				for i := range wc {
					w, c := wc[i], cc[i]
					if w.index != c.index || w.start != c.start || w.end != c.end {
						t.Fatalf("%s: call %d: index/start/end %d/%d/%d compact, %d/%d/%d whole", name, i, c.index, c.start, c.end, w.index, w.start, w.end)
					}
					sameShape(t, name+" inv", c.inv, w.inv)
					sameShape(t, name+" comp", c.comp, w.comp)
				}
				for _, op := range h.Ops {
					if op.Process != history.Nemesis {
						t.Fatalf("%s: a client op among the run-wide entries: %+v", name, op)
					}
				}
				if h.runEndOf() != whole.runEndOf() || h.finalReadsStartOf() != whole.finalReadsStartOf() ||
					!reflect.DeepEqual(h.windowsOf(), whole.windowsOf()) || !reflect.DeepEqual(h.nodeAddrsOf(), whole.nodeAddrsOf()) ||
					!reflect.DeepEqual(h.censusOf(), whole.censusOf()) || !reflect.DeepEqual(failoverEvents(h.Ops), failoverEvents(whole.Ops)) {
					t.Fatalf("%s: the run-wide entries or the end differ", name)
				}
			}
		}
		maxShapes = saved
	}
}

// Ops alike are one op in a compact partition (what makes it small), and
// its ops hold their own values: a decoder reusing its buffers, or the
// loaded ops let go, change nothing.
func TestCompactHistorySharesAndOwns(t *testing.T) {
	ops := genCounter(7, 2, 400, 4, 0)
	h, err := CompactHistory(Scope{}, ScanOps(ops), len(ops))
	if err != nil {
		t.Fatal(err)
	}
	calls, _ := Scope{}.calls(h)
	distinct := map[*history.Op]bool{}
	for _, c := range calls {
		if c.inv.F == "add" {
			distinct[c.inv] = true
		}
	}
	if len(distinct) > 2*5 {
		t.Errorf("%d distinct add invocations for 2 keys and 5 amounts", len(distinct))
	}
	before := map[int]string{}
	for i, c := range calls {
		if c.comp != nil {
			before[i] = string(c.comp.Value)
		}
	}
	for i := range ops {
		for j := range ops[i].Value {
			ops[i].Value[j] = 'x'
		}
	}
	for i, c := range calls {
		if c.comp != nil && string(c.comp.Value) != before[i] {
			t.Fatalf("call %d's value changed with the ops it was read from: %q, was %q", i, c.comp.Value, before[i])
		}
	}
}

// A history that does not pair is refused by a compact partition as by
// the whole: the same error, no calls; and calls of another scope than
// its own are an error, never none.
func TestCompactHistoryRefuses(t *testing.T) {
	base := genCounter(3, 2, 50, 2, 0)
	twice := append([]history.Op(nil), base...)
	twice = append(twice, history.Op{Time: 1e12, Process: 0, Type: history.Invoke, F: "read", Key: "c0"},
		history.Op{Time: 1e12 + 1, Process: 0, Type: history.Invoke, F: "read", Key: "c0"})
	orphan := append([]history.Op(nil), base...)
	orphan = append(orphan, history.Op{Time: 1e12, Process: 77, Type: history.OK, F: "read", Key: "c0", Value: json.RawMessage("3")})
	for name, ops := range map[string][]history.Op{"invokes twice": renumber(twice), "completes unasked": renumber(orphan)} {
		o := Scope{}
		_, werr := o.calls(NewHistory(ops))
		h, err := CompactHistory(o, ScanOps(ops), len(ops))
		if err != nil {
			t.Fatal(err)
		}
		calls, cerr := o.calls(h)
		if werr == nil || cerr == nil || werr.Error() != cerr.Error() || calls != nil {
			t.Fatalf("%s: whole %v, compact %v (%d calls)", name, werr, cerr, len(calls))
		}
	}
	h, _ := CompactHistory(Scope{KeyPrefix: "c"}, ScanOps(base), len(base))
	if calls, err := (Scope{KeyPrefix: "s"}).calls(h); err == nil || !strings.Contains(err.Error(), "own scope") {
		t.Fatalf("calls of another scope: %d calls, %v", len(calls), err)
	}
}
