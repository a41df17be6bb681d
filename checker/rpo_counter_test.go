package checker

import (
	"testing"

	"github.com/redline-dev/redline/history"
)

// counterLossHistory: key a lives on n2; three increments are acknowledged
// (WAIT satisfied, none, WAIT short) and the final read shows 2 lost. A
// partition of n1 (idle for a) comes first; struck adds a kill of n2.
func counterLossHistory(struck bool) []history.Op {
	var h hist
	h.nodesEvent(map[string]string{"n1": n1, "n2": n2})
	h.call(0, "add", "a", 1, 0, history.OK, nil, 10)
	h.on(n2)
	h.withWait(1, 1)
	h.nemesis(1000, "start-partition", "n1")
	h.nemesis(2000, "stop-partition", "n1")
	if struck {
		h.nemesis(2500, "start-kill", "n2")
		h.nemesis(3500, "stop-kill", "n2")
	}
	h.call(0, "add", "a", 1, 3000, history.OK, nil, 3010)
	h.on(n2)
	h.call(0, "add", "a", 1, 3100, history.OK, nil, 3110)
	h.on(n2)
	h.withWait(1, 0)
	h.nemesis(4900, "final-reads")
	h.call(1, "read", "a", nil, 5000, history.OK, 1, 5010)
	h.on(n2)
	return h.done()
}

// Issue 23: a counter's loss goes to the window that touched its key, or
// is reported unattributed; its bound is never 0 beside a loss; the WAIT
// classes agree with the counter checker's.
func TestCounterRPOChargesTheWindowThatTouchedTheKey(t *testing.T) {
	for _, struck := range []bool{false, true} {
		ops := counterLossHistory(struck)
		c := check(t, Counter(), ops)
		wantValid(t, c, Invalid)
		if fig[int64](t, c, "lost") != 2 || fig[int64](t, c, "no_wait") != 1 || fig[int64](t, c, "wait_unsatisfied") != 1 || fig[int64](t, c, "wait_satisfied") != 0 {
			t.Fatalf("counter figures %v", c.Figures)
		}
		r := check(t, RPO(), ops)
		if r.NotApplicable != "" {
			t.Fatalf("rpo n/a: %s", r.NotApplicable)
		}
		f := typed[*RPOFigures](t, r)
		per, out := f.PerWindow, f.Outside
		if per[0].Lost != 0 {
			t.Fatalf("struck=%v: the idle partition of n1 was charged %+v", struck, per[0])
		}
		var split waitSplit
		add := func(m RPOLosses) {
			split[WaitSatisfied] += m.WaitSatisfied
			split[WaitUnsatisfied] += m.WaitUnsatisfied
			split[NoWait] += m.NoWait
			if m.Lost > 0 && (m.BoundMs == nil || *m.BoundMs <= 0) {
				t.Fatalf("struck=%v: a bound of 0 beside a loss: %+v", struck, m)
			}
		}
		for _, m := range per {
			add(m.RPOLosses)
		}
		add(out)
		if split[WaitSatisfied] != 0 || split[WaitUnsatisfied] != 1 || split[NoWait] != 1 {
			t.Fatalf("struck=%v: rpo classes %v disagree with the counter's (1 no_wait, 1 unsatisfied)", struck, split)
		}
		if f.BoundMs == nil || *f.BoundMs <= 0 {
			t.Fatalf("struck=%v: headline bound 0 beside lost %v", struck, f.Lost)
		}
		if !struck {
			if out.Lost != 2 || out.Unattributed != 2 {
				t.Fatalf("unstruck: outside %+v, want 2 lost unattributed", out)
			}
			continue
		}
		if per[1].Lost != 2 || val(per[1].BoundMs) != 1990.0 || out.Lost != 0 {
			t.Fatalf("struck: kill window %+v (bound from the first ack in it, 3010 ms, to the read at 5000), outside %+v", per[1], out)
		}
	}
}

// The WAIT classes of a counter's loss read the same in the counter and the
// rpo checkers (issue 23: 1,487 all wait_unsatisfied beside a window with
// wait_satisfied 35): over many seeds, with losses cut into final reads
// and mid-run reads, the rpo classes (windows plus outside) sum to the
// counter's, and no bucket with a loss has a bound of 0.
func TestCounterAndRPOWaitClassesAgree(t *testing.T) {
	lossy := 0
	for seed := range uint64(40) {
		ops := withWindows(genCounter(seed, 4, 60, 3, 0.02), 3_000_000, 1_000_000)
		cut := 0
		for i := range ops {
			op := &ops[i]
			if op.Process != history.Nemesis && op.Type == history.OK && op.F == "read" && (seed+uint64(i))%3 == 0 {
				if v, ok := history.ParseInt(op.Value); ok && v > 2 {
					op.SetValue(v - 1 - int64(seed%3))
					cut++
				}
			}
		}
		c := check(t, Counter(), ops)
		r := check(t, RPO(), ops)
		if r.NotApplicable != "" {
			continue
		}
		want := waitSplit{}
		want[WaitSatisfied] = fig[int64](t, c, "wait_satisfied")
		want[WaitUnsatisfied] = fig[int64](t, c, "wait_unsatisfied")
		want[NoWait] = fig[int64](t, c, "no_wait")
		var got waitSplit
		var lost int64
		f := typed[*RPOFigures](t, r)
		buckets := []RPOLosses{f.Outside}
		for _, w := range f.PerWindow {
			buckets = append(buckets, w.RPOLosses)
		}
		for _, m := range buckets {
			got[WaitSatisfied] += m.WaitSatisfied
			got[WaitUnsatisfied] += m.WaitUnsatisfied
			got[NoWait] += m.NoWait
			lost += m.Lost
			if m.Lost > 0 && (m.BoundMs == nil || *m.BoundMs <= 0) {
				t.Fatalf("seed %d: bound 0 beside a loss: %+v", seed, m)
			}
		}
		if lost > 0 {
			lossy++
		}
		if got != want || lost != fig[int64](t, c, "lost") {
			t.Fatalf("seed %d (%d reads cut): rpo lost %d classes %v, counter lost %v classes %v", seed, cut, lost, got, c.Values()["lost"], want)
		}
	}
	if lossy < 20 {
		t.Fatalf("only %d of 40 seeds lost anything: the test does not test", lossy)
	}
}
