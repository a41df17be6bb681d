package checker

import (
	"strings"
	"testing"

	"github.com/redline-dev/redline/history"
)

// Issue 36, class 1: a replica read may be stale, never impossible. A value
// no write could have produced is an anomaly wherever it was served.

// A replica answering a counter value above every increment invoked before
// the read ended: no state of the key ever held it.
func TestCounterReplicaReadAboveEveryIncrementIsInvalid(t *testing.T) {
	var h hist
	h.call(0, "add", "c", 2, 0, history.OK, nil, 10)
	h.call(0, "add", "c", 2, 20, history.OK, nil, 30)
	h.call(1, "read", "c", nil, 40, history.OK, 99, 45).SetReplica(true)
	h.call(0, "add", "c", 100, 50, history.OK, nil, 60) // invoked after the read ended: no excuse
	h.nemesis(600, "final-reads")
	h.call(1, "read", "c", nil, 700, history.OK, 104, 705)
	r := check(t, Counter(), h.done())
	wantValid(t, r, Invalid)
	wantWhyNames(t, r, "impossible-replica-read", "op 4")
}

// With increments only, a counter never holds a negative value: a replica
// answering one is not stale but garbage.
func TestCounterReplicaReadBelowEveryStateIsInvalid(t *testing.T) {
	var h hist
	h.call(0, "add", "c", 2, 0, history.OK, nil, 10)
	h.call(1, "read", "c", nil, 40, history.OK, -5, 45).SetReplica(true)
	h.nemesis(600, "final-reads")
	h.call(1, "read", "c", nil, 700, history.OK, 2, 705)
	r := check(t, Counter(), h.done())
	wantValid(t, r, Invalid)
	wantWhyNames(t, r, "impossible-replica-read", "op 2")
}

// A replica read of the initial value (nothing applied yet) stays a stale
// read, as documented.
func TestCounterReplicaReadOfInitialValueIsStale(t *testing.T) {
	var h hist
	h.call(0, "add", "c", 2, 0, history.OK, nil, 10)
	h.call(1, "read", "c", nil, 40, history.OK, nil, 45).SetReplica(true)
	h.nemesis(600, "final-reads")
	h.call(1, "read", "c", nil, 700, history.OK, 2, 705)
	r := check(t, Counter(), h.done())
	wantValid(t, r, Valid)
	if fig[int](t, r, "stale_reads") != 1 {
		t.Fatalf("figures %v", r.Figures)
	}
}

// A replica answering a register value nobody wrote (or wrote only after
// the read ended) is garbage; a value once written is a stale read.
func TestRegisterReplicaReadNeverWrittenIsInvalid(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value any
		want  Validity
	}{
		{"stale", 1, Valid},
		{"initial", nil, Valid},
		{"never written", 77, Invalid},
		{"written after the read", 3, Invalid},
		{"not an integer", "zz", Invalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h hist
			h.call(0, "write", "r", 1, 0, history.OK, nil, 10)
			h.call(0, "write", "r", 2, 20, history.OK, nil, 30)
			h.call(1, "read", "r", nil, 40, history.OK, tc.value, 45).SetReplica(true)
			h.call(0, "write", "r", 3, 50, history.OK, nil, 60)
			h.call(1, "read", "r", nil, 70, history.OK, 3, 75)
			r := check(t, Linearizable(), h.done())
			wantValid(t, r, tc.want)
			if tc.want == Invalid {
				wantWhyNames(t, r, "", "op 4")
			}
		})
	}
}

// A set replica read holding an element no add wrote is flagged as a
// primary's would be (the set checker judges every read's elements).
func TestSetReplicaReadUnwrittenElementIsInvalid(t *testing.T) {
	var h hist
	h.call(0, "add", "s", 1, 0, history.OK, nil, 10)
	h.call(1, "read", "s", nil, 40, history.OK, []int64{1, 9}, 45).SetReplica(true)
	h.call(1, "read", "s", nil, 70, history.OK, []int64{1}, 75)
	r := check(t, Set(), h.done())
	wantValid(t, r, Invalid)
	wantWhyNames(t, r, "", "op 2")
}

// wantWhyNames fails unless the verdict's why holds each of words.
func wantWhyNames(t *testing.T, r Result, words ...string) {
	t.Helper()
	why, _ := r.Values()["why"].(string)
	for _, w := range words {
		if !strings.Contains(why, w) {
			t.Fatalf("why %q does not say %q; figures %v", why, w, r.Figures)
		}
	}
}

// A set replica read is never the key's final state: one that misses an
// acknowledged element after a primary saw it is stale, not a loss, and one
// that holds it is no evidence the element survived to the end.
func TestSetReplicaReadIsNeverTheFinalRead(t *testing.T) {
	var h hist
	h.call(0, "add", "s", 1, 0, history.OK, nil, 10)
	h.call(1, "read", "s", nil, 20, history.OK, []int64{1}, 25)
	h.call(1, "read", "s", nil, 40, history.OK, []int64{}, 45).SetReplica(true)
	r := check(t, Set(), h.done())
	wantValid(t, r, Valid)
	if fig[int](t, r, "lost") != 0 || fig[int](t, r, "stale_reads") != 1 {
		t.Fatalf("a stale replica read counted as a loss, or not as stale: %v", r.Figures)
	}

	var g hist
	g.call(0, "add", "s", 1, 0, history.OK, nil, 10)
	g.call(1, "read", "s", nil, 40, history.OK, []int64{1}, 45).SetReplica(true)
	r = check(t, Set(), g.done())
	wantValid(t, r, Unknown)
	wantWhyNames(t, r, "never read", "s")
}
