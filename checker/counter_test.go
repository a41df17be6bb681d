package checker

import (
	"testing"

	"github.com/redline-dev/redline/history"
)

func TestCounterClean(t *testing.T) {
	var h hist
	h.call(0, "add", "c", 1, 0, history.OK, nil, 10)
	h.call(1, "read", "c", nil, 5, history.OK, nil, 8) // concurrent with the add: 0 is fine
	h.call(1, "read", "c", nil, 12, history.OK, 1, 14)
	h.call(0, "add", "c", 2, 20, history.OK, nil, 30)
	h.call(2, "add", "c", 5, 20, history.Info, nil, 30) // may or may not land
	h.call(3, "add", "c", 7, 20, history.Fail, nil, 30) // certainly not
	h.call(1, "read", "c", nil, 40, history.OK, 3, 50)
	h.call(1, "read", "c", nil, 60, history.OK, 8, 70)
	h.nemesis(80, "final-reads")
	h.call(1, "read", "c", nil, 90, history.OK, 8, 95)
	r := check(t, Counter(), h.done())
	wantValid(t, r, Valid)
	if fig[int64](t, r, "lost") != 0 || fig[int64](t, r, "unexpected") != 0 || fig[int64](t, r, "acked") != 3 || fig[int64](t, r, "attempted") != 8 {
		t.Fatalf("figures %v", r.Figures)
	}
}

// lossHistory: acked increments 5 with WAIT satisfied, 2 with WAIT short,
// 3 without WAIT; one final read of `final`.
func lossHistory(final int) []history.Op {
	var h hist
	tm := int64(0)
	p := 0
	for range 5 {
		h.call(p, "add", "c", 1, tm, history.OK, nil, tm+1)
		h.withWait(1, 1)
		tm += 2
	}
	for range 2 {
		h.call(p, "add", "c", 1, tm, history.OK, nil, tm+1)
		h.withWait(1, 0)
		tm += 2
	}
	for range 3 {
		h.call(p, "add", "c", 1, tm, history.OK, nil, tm+1)
		tm += 2
	}
	h.call(1, "read", "c", nil, tm, history.OK, 10, tm+1) // all there
	h.nemesis(tm+5, "final-reads")
	h.call(1, "read", "c", nil, tm+10, history.OK, final, tm+11)
	return h.done()
}

func TestCounterLost(t *testing.T) {
	r := check(t, Counter(), lossHistory(7))
	wantValid(t, r, Invalid)
	if fig[int64](t, r, "lost") != 3 || fig[int64](t, r, "no_wait") != 3 || fig[int64](t, r, "wait_unsatisfied") != 0 || fig[int64](t, r, "wait_satisfied") != 0 {
		t.Fatalf("figures %v", r.Figures)
	}
	r = check(t, Counter(), lossHistory(3))
	wantValid(t, r, Invalid)
	if fig[int64](t, r, "lost") != 7 || fig[int64](t, r, "no_wait") != 3 || fig[int64](t, r, "wait_unsatisfied") != 2 || fig[int64](t, r, "wait_satisfied") != 2 {
		t.Fatalf("figures %v", r.Figures)
	}
	if fig[int64](t, r, "wait_satisfied_max") != 5 {
		t.Fatalf("wait_satisfied_max = %v", r.Values()["wait_satisfied_max"])
	}
}

func TestCounterUnexpectedAndBadRead(t *testing.T) {
	var h hist
	h.call(0, "add", "c", 1, 0, history.OK, nil, 10)
	h.call(1, "read", "c", nil, 20, history.OK, 0, 30) // below the acked sum
	h.nemesis(40, "final-reads")
	h.call(1, "read", "c", nil, 50, history.OK, 4, 60) // more than ever attempted
	r := check(t, Counter(), h.done())
	wantValid(t, r, Invalid)
	if fig[int64](t, r, "unexpected") != 3 || fig[int](t, r, "bad_reads") != 2 {
		t.Fatalf("figures %v", r.Figures)
	}
}

func TestCounterNoReadsIsUnknown(t *testing.T) {
	var h hist
	h.call(0, "add", "c", 1, 0, history.OK, nil, 10)
	wantValid(t, check(t, Counter(), h.done()), Unknown)
}

func TestCounterPerKey(t *testing.T) {
	var h hist
	h.call(0, "add", "a", 3, 0, history.OK, nil, 10)
	h.call(0, "add", "b", 4, 11, history.OK, nil, 20)
	h.nemesis(30, "final-reads")
	h.call(1, "read", "a", nil, 40, history.OK, 3, 50)
	h.call(1, "read", "b", nil, 60, history.OK, 1, 70)
	r := check(t, Counter(), h.done())
	wantValid(t, r, Invalid)
	if fig[int64](t, r, "lost") != 3 {
		t.Fatalf("figures %v", r.Figures)
	}
	lk := fig[[]map[string]any](t, r, "lost_keys")
	if len(lk) != 1 || lk[0]["key"] != "b" {
		t.Fatalf("lost_keys = %v", lk)
	}
}
