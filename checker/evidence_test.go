package checker

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/history"
)

// Issue 10 class 1: no evidence is unknown, for every correctness checker.
func TestNoEvidenceIsUnknown(t *testing.T) {
	onlyNemesis := func() []history.Op {
		var h hist
		h.nemesis(0, "start-partition", "n1")
		h.nemesis(10, "stop-partition", "n1")
		return h.done()
	}
	allFailed := func(f string, in any) []history.Op {
		var h hist
		h.call(0, f, "k", in, 0, history.Fail, nil, 10)
		h.withErr("CLUSTERDOWN")
		h.nemesis(20, "final-reads")
		h.call(1, "read", "k", nil, 30, history.Fail, nil, 40)
		return h.done()
	}
	checkers := []Checker{Counter(), Set(), Linearizable(LinearizableOptions{NoVisualization: true})}
	for _, c := range checkers {
		for name, ops := range map[string][]history.Op{"empty": nil, "only-nemesis": onlyNemesis()} {
			r := check(t, c, ops)
			if r.Valid != Unknown {
				t.Errorf("%s on %s history: %v, want unknown (%v)", c.Name(), name, r.Valid, r.Figures)
			}
			if s, _ := r.Values()["why"].(string); s == "" {
				t.Errorf("%s on %s history: no why figure", c.Name(), name)
			}
		}
	}
	for _, c := range []struct {
		ch Checker
		f  string
		in any
	}{{Counter(), "add", 1}, {Set(), "add", 1}, {Linearizable(LinearizableOptions{NoVisualization: true}), "write", 1}} {
		if r := check(t, c.ch, allFailed(c.f, c.in)); r.Valid != Unknown {
			t.Errorf("%s with every op failed: %v, want unknown", c.ch.Name(), r.Valid)
		}
	}
	// A key prefix that matches nothing leaves nothing to judge.
	ops := lossHistory(10)
	if r := check(t, Counter(Scope{KeyPrefix: "nomatch:"}), ops); r.Valid != Unknown {
		t.Errorf("counter with a prefix matching nothing: %v, want unknown", r.Valid)
	}
}

// Issue 10 class 2: a key whose final read failed makes the counter unknown,
// naming the key, unless another key proves the run invalid.
func TestCounterMissingFinalReadIsUnknown(t *testing.T) {
	var h hist
	h.call(0, "add", "a", 1, 0, history.OK, nil, 10)
	h.call(0, "add", "b", 1, 11, history.OK, nil, 20)
	h.nemesis(30, "final-reads")
	h.call(1, "read", "a", nil, 40, history.OK, 1, 50)
	h.call(1, "read", "b", nil, 60, history.Fail, nil, 70)
	r := check(t, Counter(), h.done())
	wantValid(t, r, Unknown)
	if w := fig[string](t, r, "why"); !strings.Contains(w, "b") || !strings.Contains(w, "final read") {
		t.Fatalf("why = %q", w)
	}
	var g hist // now key a proves the run invalid
	g.call(0, "add", "a", 1, 0, history.OK, nil, 10)
	g.call(0, "add", "b", 1, 11, history.OK, nil, 20)
	g.nemesis(30, "final-reads")
	g.call(1, "read", "a", nil, 40, history.OK, 0, 50)
	g.call(1, "read", "b", nil, 60, history.Fail, nil, 70)
	wantValid(t, check(t, Counter(), g.done()), Invalid)
}

func TestSetMissingFinalReadIsUnknown(t *testing.T) {
	var h hist
	h.call(0, "add", "a", 1, 0, history.OK, nil, 10)
	h.call(0, "add", "b", 2, 11, history.OK, nil, 20)
	h.nemesis(30, "final-reads")
	h.call(1, "read", "a", nil, 40, history.OK, []int{1}, 50)
	h.call(1, "read", "b", nil, 60, history.Fail, nil, 70)
	r := check(t, Set(), h.done())
	wantValid(t, r, Unknown)
	if w := fig[string](t, r, "why"); !strings.Contains(w, "b") {
		t.Fatalf("why = %q", w)
	}
}

// rawOK records an ok completion with a raw JSON value, as a workload does
// for a reply that cannot be what it wrote.
func (h *hist) rawCall(p int, f, key string, in any, t0 int64, raw string, t1 int64) {
	h.call(p, f, key, in, t0, history.OK, nil, t1)
	h.ops[len(h.ops)-1].Value = json.RawMessage(raw)
}

// Issue 10 class 3: garbage replies are anomalies with their op index.
func TestCounterGarbageIsInvalid(t *testing.T) {
	for _, raw := range []string{`"abc"`, `1.5`, `99999999999999999999`, `[1]`} {
		var h hist
		h.call(0, "add", "c", 1, 0, history.OK, nil, 10)
		h.nemesis(20, "final-reads")
		h.rawCall(1, "read", "c", nil, 30, raw, 40)
		h.call(1, "read", "c", nil, 50, history.OK, 1, 60)
		ops := h.done()
		r := check(t, Counter(), ops)
		wantValid(t, r, Invalid)
		ex := typed[*CounterFigures](t, r).Anomalies["garbage"].Examples
		if ex[0]["index"] != int64(3) || ex[0]["value"] != raw {
			t.Fatalf("%s: garbage examples %v", raw, ex)
		}
	}
}

// Integers beyond int64 must not collapse into one value: two different
// huge replies are both garbage, neither equals a written value.
func TestParseIntNoFloatCollapse(t *testing.T) {
	for _, s := range []string{"9223372036854775808", "9223372036854775809", "1e3", "2.0", `"7"`} {
		if n, ok := history.ParseInt(json.RawMessage(s)); ok {
			t.Errorf("history.ParseInt(%s) = %d, want garbage", s, n)
		}
	}
	if _, ok := history.ParseInts(json.RawMessage(`[1, 9223372036854775808]`)); ok {
		t.Error("parseInts accepted an integer beyond int64")
	}
}

// Issue 10 class 4: one acked INCRBY 1, no WAIT, final -5: lost is 1 (not
// 6), the rest is an unexplained deficit, and no WAIT class is charged
// more than its writes.
func TestCounterLostAtMostAcked(t *testing.T) {
	var h hist
	h.call(0, "add", "c", 1, 0, history.OK, nil, 10)
	h.nemesis(20, "final-reads")
	h.call(1, "read", "c", nil, 30, history.OK, -5, 40)
	r := check(t, Counter(), h.done())
	wantValid(t, r, Invalid)
	if fig[int64](t, r, "lost") != 1 || fig[int64](t, r, "no_wait") != 1 || fig[int64](t, r, "wait_satisfied") != 0 || fig[int64](t, r, "unexplained") != 5 {
		t.Fatalf("figures %v", r.Figures)
	}
	// The same with WAITs: each class at most its acknowledged writes.
	var g hist
	g.call(0, "add", "c", 2, 0, history.OK, nil, 10)
	g.withWait(1, 1)
	g.call(0, "add", "c", 3, 11, history.OK, nil, 20)
	g.withWait(1, 0)
	g.nemesis(30, "final-reads")
	g.call(1, "read", "c", nil, 40, history.OK, -100, 50)
	r = check(t, Counter(), g.done())
	if fig[int64](t, r, "lost") != 5 || fig[int64](t, r, "wait_satisfied") != 2 || fig[int64](t, r, "wait_unsatisfied") != 3 || fig[int64](t, r, "no_wait") != 0 {
		t.Fatalf("figures %v", r.Figures)
	}
}

// Issue 10 class 5: a read that begins after another completed and returns
// less saw the counter go back.
func TestCounterBackwardsReadIsInvalid(t *testing.T) {
	var h hist
	h.call(0, "add", "c", 1, 0, history.OK, nil, 10)
	h.call(2, "add", "c", 1, 0, history.Info, nil, 10) // lands, seen, then gone
	h.call(1, "read", "c", nil, 20, history.OK, 2, 30)
	h.call(1, "read", "c", nil, 40, history.OK, 1, 50)
	h.nemesis(60, "final-reads")
	h.call(1, "read", "c", nil, 70, history.OK, 1, 80)
	r := check(t, Counter(), h.done())
	wantValid(t, r, Invalid)
	an := typed[*CounterFigures](t, r).Anomalies
	if an["backwards-read"].Count != 2 {
		t.Fatalf("anomalies %v", an)
	}
}

// Issue 10 class 7: bank reads must name the group's accounts, and no
// balance may be negative; garbage balances are anomalies.
func TestBankNamesNegativeAndGarbage(t *testing.T) {
	base := func() *hist {
		var h hist
		h.call(0, "init", "g", map[string]int{"a": 10, "b": 10}, 0, history.OK, nil, 10)
		h.call(1, "transfer", "g", map[string]any{"from": "a", "to": "b", "amount": 5}, 20, history.OK, nil, 30)
		return &h
	}
	h := base()
	h.call(2, "read-all", "g", nil, 40, history.OK, map[string]int{"a": 5, "b": 15}, 50)
	wantValid(t, check(t, Bank(0), h.done()), Valid)

	h = base() // right count, wrong names, right sum
	h.call(2, "read-all", "g", nil, 40, history.OK, map[string]int{"a": 5, "zz": 15}, 50)
	r := check(t, Bank(0), h.done())
	wantValid(t, r, Invalid)
	if w := fig[string](t, r, "why"); !strings.Contains(w, "wrong-accounts") || !strings.Contains(w, "op 4") {
		t.Fatalf("why = %q", w)
	}

	h = base() // a negative balance, right sum
	h.call(2, "read-all", "g", nil, 40, history.OK, map[string]int{"a": -5, "b": 25}, 50)
	r = check(t, Bank(0), h.done())
	wantValid(t, r, Invalid)
	if typed[*BankFigures](t, r).NegativeBalances != 1 {
		t.Fatalf("figures %v", r.Figures)
	}

	h = base() // garbage
	h.rawCall(2, "read-all", "g", nil, 40, `{"a":"x","b":15}`, 50)
	wantValid(t, check(t, Bank(0), h.done()), Invalid)
}

// Issue 10 class 6: an append acknowledged before the final read and
// missing from it is a lost append, reported once.
func TestListAppendLostAppend(t *testing.T) {
	var h hist
	h.call(0, "txn", "{g}", [][]any{{"append", "x", 1}}, 0, history.OK, [][]any{{"append", "x", 1}}, 10)
	h.call(0, "txn", "{g}", [][]any{{"append", "x", 2}, {"append", "y", 3}}, 20, history.OK, [][]any{{"append", "x", 2}, {"append", "y", 3}}, 30)
	h.nemesis(40, "final-reads")
	h.call(1, "txn", "{g}", [][]any{{"r", "x", nil}, {"r", "y", nil}}, 50, history.OK, [][]any{{"r", "x", []int{1}}, {"r", "y", []int{3}}}, 60)
	r := check(t, ListAppend(), h.done())
	wantValid(t, r, Invalid)
	la := typed[*ListAppendFigures](t, r).Anomalies["lost-append"]
	if la.Count != 1 {
		t.Fatalf("lost-append %v", la)
	}
	if w := fig[string](t, r, "why"); !strings.Contains(w, "lost-append") || !strings.Contains(w, "key x op 2") {
		t.Fatalf("why = %q", w)
	}
	// A failed final read leaves the appends unknowable.
	var g hist
	g.call(0, "txn", "{g}", [][]any{{"append", "x", 1}}, 0, history.OK, [][]any{{"append", "x", 1}}, 10)
	g.call(1, "txn", "{g}", [][]any{{"r", "x", nil}}, 20, history.OK, [][]any{{"r", "x", []int{1}}}, 30)
	g.call(0, "txn", "{g}", [][]any{{"append", "x", 2}}, 40, history.OK, [][]any{{"append", "x", 2}}, 50)
	g.nemesis(60, "final-reads")
	g.call(1, "txn", "{g}", [][]any{{"r", "x", nil}}, 70, history.Fail, nil, 80)
	r = check(t, ListAppend(), g.done())
	wantValid(t, r, Unknown)
	if w := fig[string](t, r, "why"); !strings.Contains(w, "x") {
		t.Fatalf("why = %q", w)
	}
}

func TestListAppendGarbageReply(t *testing.T) {
	var h hist
	h.call(0, "txn", "{g}", [][]any{{"append", "x", 1}}, 0, history.OK, [][]any{{"append", "x", 1}}, 10)
	h.rawCall(1, "txn", "{g}", [][]any{{"r", "x", nil}}, 20, `[["r","x",["abc"]]]`, 30)
	h.call(1, "txn", "{g}", [][]any{{"r", "x", nil}}, 40, history.OK, [][]any{{"r", "x", []int{1}}}, 50)
	r := check(t, ListAppend(), h.done())
	wantValid(t, r, Invalid)
	if _, ok := fig[map[string]any](t, r, "anomalies")["garbage"]; !ok {
		t.Fatalf("figures %v", r.Figures)
	}
}

func TestSetGarbageAndDuplicateMember(t *testing.T) {
	for _, raw := range []string{`[1,1]`, `[1,"x"]`, `"abc"`, `[1,99999999999999999999]`} {
		var h hist
		h.call(0, "add", "s", 1, 0, history.OK, nil, 10)
		h.rawCall(1, "read", "s", nil, 20, raw, 30)
		h.call(1, "read", "s", nil, 40, history.OK, []int{1}, 50)
		r := check(t, Set(), h.done())
		wantValid(t, r, Invalid)
		if w := fig[string](t, r, "why"); !strings.Contains(w, "garbage") || !strings.Contains(w, "op 2") {
			t.Fatalf("%s: why = %q", raw, w)
		}
	}
}

// Issue 10 class 8: a certain stale read is invalid even when the
// linearizability search runs out of time.
func TestStaleReadInvalidDespiteTimeout(t *testing.T) {
	var h hist
	h.call(0, "write", "r", 1, 0, history.OK, nil, 10)
	h.call(0, "write", "r", 2, 20, history.OK, nil, 30)
	h.call(1, "read", "r", nil, 40, history.OK, 1, 50)
	r := check(t, Linearizable(LinearizableOptions{Timeout: time.Nanosecond, NoVisualization: true}), h.done())
	wantValid(t, r, Invalid)
	if w := fig[string](t, r, "why"); !strings.Contains(w, "stale") || !strings.Contains(w, "op 4") {
		t.Fatalf("why = %q", w)
	}
}

func TestRegisterGarbageRead(t *testing.T) {
	var h hist
	h.call(0, "write", "r", 1, 0, history.OK, nil, 10)
	h.rawCall(1, "read", "r", nil, 20, `"one"`, 30)
	r := check(t, Linearizable(LinearizableOptions{NoVisualization: true}), h.done())
	wantValid(t, r, Invalid)
}

// The RPO checker never charges a WAIT class more than its writes either.
func TestRPOCounterWaitClassCapped(t *testing.T) {
	var h hist
	h.nemesis(0, "start-partition", "n1")
	h.call(0, "add", "c", 1, 10, history.OK, nil, 20)
	h.nemesis(30, "stop-partition", "n1")
	h.nemesis(40, "final-reads")
	h.call(1, "read", "c", nil, 50, history.OK, -5, 60)
	r := check(t, RPO(RPOOptions{Kind: "counter"}), h.done())
	w := typed[*RPOFigures](t, r).PerWindow[0]
	if w.Lost != 1 || w.NoWait != 1 || w.WaitSatisfied != 0 {
		t.Fatalf("window %+v", w)
	}
}

// A script reply that is neither 1 nor 0 is recorded raw on an ok op: the
// cas is flagged (and treated as indeterminate), so is the transfer.
func TestScriptGarbage(t *testing.T) {
	var h hist
	h.call(0, "write", "r", 1, 0, history.OK, nil, 10)
	h.rawCall(1, "cas", "r", []int{1, 2}, 20, `"ERR weird"`, 30)
	h.call(2, "read", "r", nil, 40, history.OK, 1, 50)
	r := check(t, Linearizable(LinearizableOptions{NoVisualization: true}), h.done())
	wantValid(t, r, Invalid)
	if w := fig[string](t, r, "why"); !strings.Contains(w, "garbage") || !strings.Contains(w, "op 2") {
		t.Fatalf("why = %q", w)
	}

	var g hist
	g.call(0, "init", "g", map[string]int{"a": 10, "b": 10}, 0, history.OK, nil, 10)
	g.rawCall(1, "transfer", "g", map[string]any{"from": "a", "to": "b", "amount": 2}, 20, `"2"`, 30)
	g.call(2, "read-all", "g", nil, 40, history.OK, map[string]int{"a": 10, "b": 10}, 50)
	wantValid(t, check(t, Bank(0), g.done()), Invalid)
}

// An invocation that cannot be read hides what it wrote: unknown, not valid.
func TestMalformedInvocationIsUnknown(t *testing.T) {
	var h hist
	h.call(0, "add", "c", 1, 0, history.OK, nil, 10)
	h.call(1, "add", "c", "lots", 11, history.OK, nil, 20)
	h.nemesis(30, "final-reads")
	h.call(2, "read", "c", nil, 40, history.OK, 1, 50)
	r := check(t, Counter(), h.done())
	wantValid(t, r, Unknown)
	if w := fig[string](t, r, "why"); !strings.Contains(w, "cannot be read") {
		t.Fatalf("why = %q", w)
	}
}

// Issue 23: a txn sub-checker none of whose ops are in the history (the 2%
// of cross-slot ops a short run may never draw) is not applicable; one
// whose ops were all attempted and failed stays unknown.
func TestTxnSubCheckerWithoutItsOpsIsNotApplicable(t *testing.T) {
	var other hist // a txn run's other ops only: a committed list-append read, no cross-slot op
	other.call(0, "txn", "list-0", []any{[]any{"r", "list-0:a", nil}}, 0, history.OK, []any{[]any{"r", "list-0:a", []int{}}}, 10)
	for _, c := range []Checker{Bank(0), ListAppend(), CrossSlot()} {
		for name, ops := range map[string][]history.Op{"empty": nil, "only-nemesis": func() []history.Op {
			var h hist
			h.nemesis(0, "start-partition", "n1")
			h.nemesis(10, "stop-partition", "n1")
			return h.done()
		}()} {
			if r := check(t, c, ops); r.NotApplicable == "" {
				t.Errorf("%s on %s history: %v %v, want not applicable", c.Name(), name, r.Valid, r.Figures)
			}
		}
	}
	if r := check(t, CrossSlot(), other.done()); r.NotApplicable == "" {
		t.Errorf("cross-slot with no cross-slot op: %v %v, want not applicable", r.Valid, r.Figures)
	}
	// Attempted, all failed: the checker should have judged and could not.
	for _, c := range []struct {
		ch Checker
		f  string
		in any
	}{{CrossSlot(), "cross-slot", []any{"a", "b"}}, {Bank(0), "transfer", map[string]any{"from": "a", "to": "b", "amount": 1}}, {ListAppend(), "txn", []any{[]any{"append", "list-0:a", 1}}}} {
		var h hist
		h.call(0, c.f, "k", c.in, 0, history.Fail, nil, 10)
		h.withErr("CLUSTERDOWN")
		r := check(t, c.ch, h.done())
		if r.NotApplicable != "" || r.Valid != Unknown {
			t.Errorf("%s with its one op failed: %v (n/a %q), want unknown", c.ch.Name(), r.Valid, r.NotApplicable)
		}
	}
}
