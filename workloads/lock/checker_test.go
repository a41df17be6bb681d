package lock

import (
	"github.com/redline-dev/redline/checker/checkertest"
	"strings"
	"testing"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

// lockH builds lock histories: times in ms.
type lockH struct{ checkertest.Hist }

// acq records an acquire of key by token with ttl ms; fence is the
// completion's fence (any JSON value, nil: none) on ok.
func (h *lockH) acq(p int, key, token string, ttl, t0 int64, typ history.Type, fence any, t1 int64, node string) *lockH {
	in := map[string]any{"token": token, "ttl_ms": ttl}
	var out any = in
	if typ == history.OK {
		out = map[string]any{"token": token, "ttl_ms": ttl, "fence": fence}
	}
	if c := h.Call(p, "acquire", key, in, t0, typ, out, t1); c != nil {
		c.Node = node
		if typ == history.Fail {
			c.SetError(Held)
		}
	}
	return h
}

// rel records a release of token sent hold ms after t0.
func (h *lockH) rel(p int, key, token string, hold, t0 int64, typ history.Type, t1 int64) *lockH {
	in := map[string]any{"token": token, "hold_ms": hold}
	if c := h.Call(p, "release", key, in, t0, typ, in, t1); c != nil && typ == history.Fail {
		c.SetError(NotOwner)
	}
	return h
}

// twoHolds: A holds k from 1 to 11 ms (released at 1+10); B acquires at
// b0 and holds until 100.
func twoHolds(b0 int64, fenceB any) *lockH {
	h := &lockH{}
	h.acq(0, "k", "a", 5000, 0, history.OK, 1, 1, "A")
	h.rel(0, "k", "a", 10, 1, history.OK, 12)
	h.acq(1, "k", "b", 5000, b0, history.OK, fenceB, b0+1, "B")
	h.rel(1, "k", "b", 50, b0+1, history.OK, b0+60)
	return h
}

func TestLockValidHistory(t *testing.T) {
	h := twoHolds(20, 2)
	h.acq(2, "k", "c", 5000, 25, history.Fail, nil, 26, "B") // refused while B holds it
	h.rel(2, "k", "c", 0, 26, history.Fail, 27)              // and its release deletes nothing
	r := checkertest.Check(t, Checker(), h.Done())
	checkertest.WantValid(t, r, checker.Valid)
	if checkertest.Fig[int](t, r, "holds") != 2 || checkertest.Fig[int](t, r, "double_holds") != 0 || checkertest.Fig[int](t, r, "acquires_fail") != 1 ||
		checkertest.Fig[int](t, r, "releases_not_owner") != 1 {
		t.Fatalf("figures %v", r.Figures)
	}
}

func TestLockDoubleHoldUnexplained(t *testing.T) {
	// B acquires at 5 ms while A holds until 11 ms: no fault explains it.
	r := checkertest.Check(t, Checker(), twoHolds(4, 2).Done())
	checkertest.WantValid(t, r, checker.Invalid)
	if checkertest.Fig[int](t, r, "double_holds") != 1 || checkertest.Fig[int](t, r, "double_holds_unexplained") != 1 || checkertest.Fig[int](t, r, "double_holds_after_failover_loss") != 0 {
		t.Fatalf("figures %v", r.Figures)
	}
	if w := r.Why(); !strings.Contains(w, "double-hold") || !strings.Contains(w, "1 unexplained") || !strings.Contains(w, "op ") {
		t.Fatalf("why %q", w)
	}
}

// A kill of the node that acknowledged A's lock, then B takes it on
// another node: the documented loss of asynchronous replication, still
// invalid. With A's WAIT satisfied it is unexplained.
func TestLockDoubleHoldAfterFailoverLoss(t *testing.T) {
	build := func(wait bool) []history.Op {
		h := &lockH{}
		h.acq(0, "k", "a", 5000, 0, history.OK, 1, 1, "A")
		if wait {
			h.WithWait(1, 1)
		}
		h.rel(0, "k", "a", 3000, 1, history.Info, 3100)
		h.Nemesis(100, "start-kill", "A")
		h.Nemesis(200, "stop-kill", "A")
		h.acq(1, "k", "b", 5000, 2500, history.OK, 1, 2501, "B")
		h.rel(1, "k", "b", 10, 2501, history.OK, 2520)
		return h.Done()
	}
	r := checkertest.Check(t, Checker(), build(false))
	checkertest.WantValid(t, r, checker.Invalid)
	if checkertest.Fig[int](t, r, "double_holds_after_failover_loss") != 1 || checkertest.Fig[int](t, r, "double_holds_in_fault_window") != 1 ||
		checkertest.Fig[int](t, r, "double_holds_wait_satisfied") != 0 {
		t.Fatalf("figures %v", r.Figures)
	}
	if !strings.Contains(r.Why(), "1 after-failover-loss") {
		t.Fatalf("why %q", r.Why())
	}
	// The same fence twice: the fence key was lost with the lock, so the
	// regression is classified as the double hold is.
	if checkertest.Fig[int](t, r, "fence_regressions") != 1 || checkertest.Fig[int](t, r, "fence_regressions_after_failover_loss") != 1 {
		t.Fatalf("figures %v", r.Figures)
	}
	r = checkertest.Check(t, Checker(), build(true))
	checkertest.WantValid(t, r, checker.Invalid)
	if checkertest.Fig[int](t, r, "double_holds_unexplained") != 1 || checkertest.Fig[int](t, r, "double_holds_wait_satisfied") != 1 {
		t.Fatalf("figures %v", r.Figures)
	}
}

// A clock fault on the node that holds the lock, then another client
// takes it on the same node: the ttl ran on that node's clock, moved
// forward (documented). Still invalid; a clock fault elsewhere explains
// nothing.
func TestLockDoubleHoldAfterClockFault(t *testing.T) {
	build := func(struck string) []history.Op {
		h := &lockH{}
		h.acq(0, "k", "a", 5000, 0, history.OK, 1, 1, "A")
		h.rel(0, "k", "a", 3000, 1, history.Info, 3100)
		h.Nemesis(100, "start-clock", struck)
		h.Nemesis(2600, "stop-clock", struck)
		h.acq(1, "k", "b", 5000, 2500, history.OK, 2, 2501, "A")
		h.rel(1, "k", "b", 10, 2501, history.OK, 2520)
		return h.Done()
	}
	r := checkertest.Check(t, Checker(), build("A"))
	checkertest.WantValid(t, r, checker.Invalid)
	if checkertest.Fig[int](t, r, "double_holds_after_clock_fault") != 1 || checkertest.Fig[int](t, r, "double_holds_unexplained") != 0 {
		t.Fatalf("figures %v", r.Figures)
	}
	if !strings.Contains(r.Why(), "1 after-clock-fault") {
		t.Fatalf("why %q", r.Why())
	}
	r = checkertest.Check(t, Checker(), build("C"))
	checkertest.WantValid(t, r, checker.Invalid)
	if checkertest.Fig[int](t, r, "double_holds_unexplained") != 1 {
		t.Fatalf("a clock fault on another node explains nothing: figures %v", r.Figures)
	}
}

func TestLockFenceRegression(t *testing.T) {
	for _, fb := range []any{1, 2} { // lower, then the same
		h := &lockH{}
		h.acq(0, "k", "a", 5000, 0, history.OK, 2, 1, "A")
		h.rel(0, "k", "a", 1, 1, history.OK, 3)
		h.acq(1, "k", "b", 5000, 10, history.OK, fb, 11, "A")
		h.rel(1, "k", "b", 1, 11, history.OK, 13)
		r := checkertest.Check(t, Checker(), h.Done())
		checkertest.WantValid(t, r, checker.Invalid)
		if checkertest.Fig[int](t, r, "fence_regressions") != 1 || checkertest.Fig[int](t, r, "double_holds") != 0 {
			t.Fatalf("figures %v", r.Figures)
		}
	}
	// The same fence twice on sequential holds.
	r := checkertest.Check(t, Checker(), twoHolds(20, 1).Done())
	checkertest.WantValid(t, r, checker.Invalid)
	if checkertest.Fig[int](t, r, "fence_regressions") != 1 {
		t.Fatalf("figures %v", r.Figures)
	}
}

func TestLockReleasedAnothersLock(t *testing.T) {
	h := &lockH{}
	h.acq(0, "k", "a", 10, 0, history.OK, 1, 1, "A") // expires by 10 ms
	h.acq(1, "k", "b", 5000, 20, history.OK, 2, 21, "A")
	h.rel(0, "k", "a", 0, 30, history.OK, 31) // deleted: B's lock
	h.rel(1, "k", "b", 0, 40, history.Fail, 41)
	r := checkertest.Check(t, Checker(), h.Done())
	checkertest.WantValid(t, r, checker.Invalid)
	if checkertest.Fig[int](t, r, "released_anothers_lock") != 1 || checkertest.Fig[int](t, r, "double_holds") != 0 {
		t.Fatalf("figures %v", r.Figures)
	}
}

func TestLockReleasedUnacquired(t *testing.T) {
	for name, h := range map[string]*lockH{
		"never acquired": (&lockH{}).acq(0, "k", "a", 5000, 0, history.OK, 1, 1, "A").rel(0, "k", "a", 1, 1, history.OK, 3).
			rel(1, "k", "zzz", 0, 5, history.OK, 6),
		"acquire failed": (&lockH{}).acq(0, "k", "a", 5000, 0, history.OK, 1, 1, "A").rel(0, "k", "a", 1, 1, history.OK, 3).
			acq(1, "k", "b", 5000, 0, history.Fail, nil, 1, "A").rel(1, "k", "b", 0, 2, history.OK, 3),
		"another lock's token": (&lockH{}).acq(0, "k", "a", 5000, 0, history.OK, 1, 1, "A").rel(0, "k2", "a", 1, 1, history.OK, 3),
	} {
		r := checkertest.Check(t, Checker(), h.Done())
		if r.Valid != checker.Invalid || checkertest.Fig[map[string]any](t, r, "anomalies")["released-unacquired"] == nil {
			t.Errorf("%s: %v %v", name, r.Valid, r.Figures)
		}
	}
}

// Garbage from the server is invalid; garbage from the harness (an
// invocation it could not have written), a contradiction or an
// impossible order is unknown: never valid.
func TestLockGarbageIsNeverValid(t *testing.T) {
	base := func() *lockH { return twoHolds(20, 2) }
	cases := map[string]struct {
		h    *lockH
		want checker.Validity
	}{
		"fence not a number": {(&lockH{}).acq(0, "k", "a", 5000, 0, history.OK, "7", 1, "A"), checker.Invalid},
		"fence a float":      {(&lockH{}).acq(0, "k", "a", 5000, 0, history.OK, 1.5, 1, "A"), checker.Invalid},
		"no fence":           {(&lockH{}).acq(0, "k", "a", 5000, 0, history.OK, nil, 1, "A"), checker.Invalid},
		"fence zero":         {(&lockH{}).acq(0, "k", "a", 5000, 0, history.OK, 0, 1, "A"), checker.Invalid},
		"no token": {func() *lockH {
			h := base()
			h.Call(5, "acquire", "k", map[string]any{"ttl_ms": 5}, 30, history.OK, map[string]any{"fence": 9}, 31)
			return h
		}(), checker.Unknown},
		"negative ttl": {base().acq(5, "k", "z", -5, 200, history.OK, 9, 201, "A"), checker.Unknown},
		"zero ttl":     {base().acq(5, "k", "z", 0, 200, history.OK, 9, 201, "A"), checker.Unknown},
		"negative hold": {base().acq(5, "k", "z", 50, 200, history.OK, 9, 201, "A").
			rel(5, "k", "z", -3, 201, history.OK, 202), checker.Unknown},
		"token used twice": {base().acq(5, "k", "b", 50, 200, history.OK, 9, 201, "A"), checker.Unknown},
		"value not an object": {func() *lockH {
			h := base()
			h.Call(5, "acquire", "k", "abc", 300, history.OK, 3, 301)
			return h
		}(), checker.Unknown},
		"another op": {func() *lockH {
			h := base()
			h.Call(5, "read", "k", nil, 300, history.OK, 3, 301)
			return h
		}(), checker.Unknown},
	}
	// A release's reply that is neither 1 nor 0: recorded raw.
	g := base()
	g.Call(5, "release", "k", map[string]any{"token": "b", "hold_ms": 0}, 300, history.OK, "2", 301)
	cases["release reply 2"] = struct {
		h    *lockH
		want checker.Validity
	}{g, checker.Invalid}
	for name, c := range cases {
		r := checkertest.Check(t, Checker(), c.h.Done())
		if r.Valid != c.want {
			t.Errorf("%s: %v, want %v; %v", name, r.Valid, c.want, r.Figures)
		}
		if r.Valid != checker.Valid && r.Why() == "" {
			t.Errorf("%s: no why", name)
		}
	}
}

func TestLockBrokenHistoriesAreNeverValid(t *testing.T) {
	ops := twoHolds(20, 2).Done()
	// Completed before invoked.
	bad := append([]history.Op(nil), ops...)
	bad[1].Time = bad[0].Time - 1
	if r := checkertest.Check(t, Checker(), bad); r.Valid == checker.Valid {
		t.Errorf("completion before invocation: %v", r.Figures)
	}
	// Duplicated index.
	dup := append([]history.Op(nil), ops...)
	dup[2].Index = dup[0].Index
	if r := checkertest.Check(t, Checker(), dup); r.Valid == checker.Valid {
		t.Errorf("duplicated index: %v", r.Figures)
	}
	// A duplicated entry: the completion of an op not open.
	twice := append(append([]history.Op(nil), ops...), ops[len(ops)-1])
	if r := checkertest.Check(t, Checker(), twice); r.Valid == checker.Valid {
		t.Errorf("duplicated completion: %v", r.Figures)
	}
	// Out of order: a completion before its invocation in the file.
	swapped := append([]history.Op(nil), ops...)
	swapped[0], swapped[1] = swapped[1], swapped[0]
	if r := checkertest.Check(t, Checker(), swapped); r.Valid == checker.Valid {
		t.Errorf("swapped: %v", r.Figures)
	}
	// Torn: the history ends before any acquire completed.
	if r := checkertest.Check(t, Checker(), ops[:1]); r.Valid != checker.Unknown {
		t.Errorf("torn: %v %v", r.Valid, r.Figures)
	}
}

func TestLockNoEvidenceIsUnknown(t *testing.T) {
	checkertest.WantValid(t, checkertest.Check(t, Checker(), nil), checker.Unknown)
	h := (&lockH{}).acq(0, "k", "a", 5000, 0, history.Fail, nil, 1, "A").rel(0, "k", "a", 0, 1, history.Fail, 2)
	r := checkertest.Check(t, Checker(), h.Done())
	checkertest.WantValid(t, r, checker.Unknown)
	if !strings.Contains(r.Why(), "no acquire was acknowledged") {
		t.Fatalf("why %q", r.Why())
	}
}

// A refused acquire and a release that found another owner are the
// lock's own answers, not unavailability (RTO, the shard gate).
func TestLockRefusalsAreServed(t *testing.T) {
	if !checker.ServedError(Held) || !checker.ServedError(NotOwner) || checker.ServedError(NotSent) {
		t.Fatal("lock-held and not-owner are served; not-sent is not")
	}
	if checker.DescribeFigure("double_holds") == "" {
		t.Fatal("double_holds has no explanation")
	}
}

// A hold is certain until its ttl less the server's millisecond slack: a
// second acquire just before the exact expiry is no double-hold, one
// well before it is.
func TestLockExpirySlack(t *testing.T) {
	build := func(b0 int64) []history.Op {
		h := &lockH{}
		h.acq(0, "k", "a", 50, 0, history.OK, 1, 1, "A")
		h.rel(0, "k", "a", 200, 1, history.Fail, 202)
		h.acq(1, "k", "b", 5000, b0, history.OK, 2, b0+1, "A")
		h.rel(1, "k", "b", 0, 300, history.OK, 301)
		return h.Done()
	}
	checkertest.WantValid(t, checkertest.Check(t, Checker(), build(47)), checker.Valid)
	r := checkertest.Check(t, Checker(), build(40))
	checkertest.WantValid(t, r, checker.Invalid)
	if checkertest.Fig[int](t, r, "double_holds") != 1 {
		t.Fatalf("figures %v", r.Figures)
	}
}

// A release invoked before its acquire completed contradicts the
// workload (one worker, one op at a time): unknown.
func TestLockReleaseBeforeItsAcquireIsUnknown(t *testing.T) {
	h := &lockH{}
	h.acq(0, "k", "a", 5000, 0, history.OK, 1, 10, "A")
	h.rel(1, "k", "a", 0, 5, history.OK, 6)
	r := checkertest.Check(t, Checker(), h.Done())
	checkertest.WantValid(t, r, checker.Unknown)
	if !strings.Contains(r.Why(), "released before its acquire") {
		t.Fatalf("why %q", r.Why())
	}
}

// A holder's release that finds its lock gone before the ttl: reported
// (after a fault on the granting node, or not), not judged.
func TestLockLostWhileHeldIsReported(t *testing.T) {
	h := &lockH{}
	h.acq(0, "k", "a", 5000, 0, history.OK, 1, 1, "A")
	h.Nemesis(10, "start-kill", "A")
	h.rel(0, "k", "a", 10, 20, history.Fail, 31)
	h.acq(1, "k", "b", 5000, 40, history.OK, 2, 41, "B")
	h.rel(1, "k", "b", 5, 41, history.Fail, 47) // gone too, no fault on B
	r := checkertest.Check(t, Checker(), h.Done())
	checkertest.WantValid(t, r, checker.Valid)
	if checkertest.Fig[int](t, r, "lost_while_held") != 2 || checkertest.Fig[int](t, r, "lost_while_held_after_fault") != 1 || !strings.Contains(r.Why(), "2 locks were gone") {
		t.Fatalf("figures %v", r.Figures)
	}
}

// The final clear (DEL once traffic has ended) ends the holds of its
// lock; a lock op after it is a contradiction (an early clear could hide
// a double-hold): unknown.
func TestLockClear(t *testing.T) {
	h := twoHolds(20, 2)
	h.Call(9, "clear", "k", nil, 500, history.OK, nil, 501)
	r := checkertest.Check(t, Checker(), h.Done())
	checkertest.WantValid(t, r, checker.Valid)
	if checkertest.Fig[int](t, r, "clears") != 1 {
		t.Fatalf("figures %v", r.Figures)
	}
	h = twoHolds(4, 2) // a double-hold...
	h.Call(9, "clear", "k", nil, 2, history.OK, nil, 3)
	if r := checkertest.Check(t, Checker(), h.Done()); r.Valid == checker.Valid {
		t.Fatalf("an early clear hid a double-hold: %v", r.Figures)
	}
	h = &lockH{}
	h.acq(0, "k", "a", 5000, 0, history.OK, 1, 1, "A")
	h.Call(9, "clear", "k", nil, 2, history.OK, nil, 3)
	h.rel(0, "k", "a", 0, 4, history.Fail, 5)
	checkertest.WantValid(t, checkertest.Check(t, Checker(), h.Done()), checker.Unknown)
}
