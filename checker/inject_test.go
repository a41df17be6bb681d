package checker

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/redline-dev/redline/history"
)

// lastRead returns the position of the last ok read of key.
func lastRead(ops []history.Op, key string) int {
	for i := len(ops) - 1; i >= 0; i-- {
		if ops[i].Key == key && ops[i].F == "read" && ops[i].Type == history.OK {
			return i
		}
	}
	panic("no read of " + key)
}

func TestCounterGeneratedWithLoss(t *testing.T) {
	ops := genCounter(3, 10, 300, 4, 0)
	i := lastRead(ops, "c4")
	n, _ := ops[i].Int()
	ops[i].SetValue(n - 3) // three increments vanish at the end
	r := check(t, Counter(), ops)
	wantValid(t, r, Invalid)
	if lost := fig[int64](t, r, "lost"); lost != 3 {
		t.Fatalf("lost = %d, want 3: %v", lost, r.Figures)
	}
	if lk := fig[[]map[string]any](t, r, "lost_keys"); len(lk) != 1 || lk[0]["key"] != "c4" {
		t.Fatalf("lost_keys %v", lk)
	}
}

// With indeterminate increments a loss may hide behind those that landed:
// lost is then a lower bound and lost_max covers the true loss.
func TestCounterLossHiddenByIndeterminate(t *testing.T) {
	ops := genCounter(3, 10, 300, 4, 0.05)
	i := lastRead(ops, "c4")
	n, _ := ops[i].Int()
	ops[i].SetValue(n - 3)
	r := check(t, Counter(), ops)
	if lost, lostMax := fig[int64](t, r, "lost"), fig[int64](t, r, "lost_max"); lost > 3 || lostMax < 3 {
		t.Fatalf("lost %d, lost_max %d: the true loss 3 is not within", lost, lostMax)
	}
}

func TestSetGeneratedWithLoss(t *testing.T) {
	ops := genSet(3, 10, 300, 4, 0.02, 0.05)
	i := lastRead(ops, "s6")
	vals, _ := ops[i].Ints()
	// Drop an element whose add was acknowledged.
	acked := map[int64]bool{}
	var pairs, _ = history.Pairs(ops)
	for _, p := range pairs {
		if p.Invoke.Key == "s6" && p.Invoke.F == "add" && p.Outcome() == history.OK {
			v, _ := p.Invoke.Int()
			acked[v] = true
		}
	}
	var victim int64 = -1
	for j, v := range vals {
		if acked[v] {
			victim = v
			vals = slices.Delete(vals, j, j+1)
			break
		}
	}
	ops[i].SetValue(vals)
	r := check(t, Set(), ops)
	wantValid(t, r, Invalid)
	lost := fig[[]map[string]any](t, r, "lost_elements")
	if fig[int](t, r, "lost") != 1 || lost[0]["element"] != victim || lost[0]["key"] != "s6" {
		t.Fatalf("lost %v, want element %d", lost, victim)
	}
}

// TestRunSummaryJSON runs every checker of every workload through Run and
// checks that results.json round-trips with the documented figure names.
func TestRunSummaryJSON(t *testing.T) {
	ops := withWindows(genSet(5, 5, 200, 3, 0.02, 0.05), 20_000_000, 5_000_000)
	named := func(n string) Scope { return Scope{Name: n} }
	cs := []Checker{Set(named("set/set")), RPO(RPOOptions{Scope: named("set/rpo"), Kind: "set"}), Perf(PerfOptions{Scope: named("set/perf")}), RTO(named("set/rto")),
		Linearizable(LinearizableOptions{Scope: named("register/linearizable")}), Counter(named("counter/counter")), ListAppend(named("txn/list-append"))}
	s := Run(context.Background(), ops, cs, nil)
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	set := back.Checkers["set/set"]
	if set.Valid != Valid {
		t.Fatalf("set: %v", set)
	}
	for _, name := range []string{"lost", "unexpected", "recovered", "stale_reads", "wait_satisfied", "wait_unsatisfied", "no_wait"} {
		if _, ok := set.Values()[name]; !ok {
			t.Errorf("set lacks figure %q", name)
		}
	}
	for _, name := range []string{"set/perf", "set/rto", "set/rpo", "register/linearizable"} {
		if _, ok := back.Checkers[name]; !ok {
			t.Errorf("summary lacks checker %q", name)
		}
	}
	// A set history holds no list-append transaction: nothing to judge.
	if back.NotApplicable["txn/list-append"] == "" {
		t.Errorf("txn/list-append on a set history: want not applicable, got %v", back.NotApplicable)
	}
	if back.Valid != s.Valid {
		t.Fatalf("verdict %v after round trip, was %v", back.Valid, s.Valid)
	}
}
