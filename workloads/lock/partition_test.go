package lock

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/checker/checkertest"
	"github.com/redline-dev/redline/history"
)

// lockHistories are histories of one lock each (one of them of two), as
// the tests above build them: valid ones, every anomaly and its
// classifications (with their fault windows), the garbage and the
// contradictions.
func lockHistories() [][]history.Op {
	valid := twoHolds(20, 2)
	valid.acq(2, "k", "c", 5000, 25, history.Fail, nil, 26, "B")
	valid.rel(2, "k", "c", 0, 26, history.Fail, 27)
	failover := func(wait bool) *lockH {
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
		return h
	}
	clock := func(struck string) *lockH {
		h := &lockH{}
		h.acq(0, "k", "a", 5000, 0, history.OK, 1, 1, "A")
		h.rel(0, "k", "a", 3000, 1, history.Info, 3100)
		h.Nemesis(100, "start-clock", struck)
		h.Nemesis(2600, "stop-clock", struck)
		h.acq(1, "k", "b", 5000, 2500, history.OK, 2, 2501, "A")
		h.rel(1, "k", "b", 10, 2501, history.OK, 2520)
		return h
	}
	fence := func(fb any) *lockH {
		h := &lockH{}
		h.acq(0, "k", "a", 5000, 0, history.OK, 2, 1, "A")
		h.rel(0, "k", "a", 1, 1, history.OK, 3)
		h.acq(1, "k", "b", 5000, 10, history.OK, fb, 11, "A")
		h.rel(1, "k", "b", 1, 11, history.OK, 13)
		return h
	}
	anothers := &lockH{}
	anothers.acq(0, "k", "a", 10, 0, history.OK, 1, 1, "A")
	anothers.acq(1, "k", "b", 5000, 20, history.OK, 2, 21, "A")
	anothers.rel(0, "k", "a", 0, 30, history.OK, 31)
	anothers.rel(1, "k", "b", 0, 40, history.Fail, 41)
	slack := func(b0 int64) *lockH {
		h := &lockH{}
		h.acq(0, "k", "a", 50, 0, history.OK, 1, 1, "A")
		h.rel(0, "k", "a", 200, 1, history.Fail, 202)
		h.acq(1, "k", "b", 5000, b0, history.OK, 2, b0+1, "A")
		h.rel(1, "k", "b", 0, 300, history.OK, 301)
		return h
	}
	early := &lockH{}
	early.acq(0, "k", "a", 5000, 0, history.OK, 1, 10, "A")
	early.rel(1, "k", "a", 0, 5, history.OK, 6)
	lostHeld := &lockH{}
	lostHeld.acq(0, "k", "a", 5000, 0, history.OK, 1, 1, "A")
	lostHeld.Nemesis(10, "start-kill", "A")
	lostHeld.rel(0, "k", "a", 10, 20, history.Fail, 31)
	lostHeld.acq(1, "k", "b", 5000, 40, history.OK, 2, 41, "B")
	lostHeld.rel(1, "k", "b", 5, 41, history.Fail, 47)
	cleared := twoHolds(20, 2)
	cleared.Call(9, "clear", "k", nil, 500, history.OK, nil, 501)
	clearedEarly := twoHolds(4, 2)
	clearedEarly.Call(9, "clear", "k", nil, 2, history.OK, nil, 3)
	afterClear := &lockH{}
	afterClear.acq(0, "k", "a", 5000, 0, history.OK, 1, 1, "A")
	afterClear.Call(9, "clear", "k", nil, 2, history.OK, nil, 3)
	afterClear.rel(0, "k", "a", 0, 4, history.Fail, 5)
	call := func(f string, in, out any) *lockH {
		h := twoHolds(20, 2)
		h.Call(5, f, "k", in, 300, history.OK, out, 301)
		return h
	}
	hs := []*lockH{
		valid, twoHolds(4, 2), failover(false), failover(true), clock("A"), clock("C"), fence(1), fence(2), twoHolds(20, 1),
		anothers, slack(47), slack(40), early, lostHeld, cleared, clearedEarly, afterClear,
		(&lockH{}).acq(0, "k", "a", 5000, 0, history.OK, 1, 1, "A").rel(0, "k", "a", 1, 1, history.OK, 3).rel(1, "k", "zzz", 0, 5, history.OK, 6),
		(&lockH{}).acq(0, "k", "a", 5000, 0, history.OK, 1, 1, "A").rel(0, "k", "a", 1, 1, history.OK, 3).
			acq(1, "k", "b", 5000, 0, history.Fail, nil, 1, "A").rel(1, "k", "b", 0, 2, history.OK, 3),
		// Another lock's token: k2 lands in another partition.
		(&lockH{}).acq(0, "k", "a", 5000, 0, history.OK, 1, 1, "A").rel(0, "k2", "a", 1, 1, history.OK, 3),
		(&lockH{}).acq(0, "k", "a", 5000, 0, history.OK, "7", 1, "A"),
		(&lockH{}).acq(0, "k", "a", 5000, 0, history.OK, nil, 1, "A"),
		twoHolds(20, 2).acq(5, "k", "z", -5, 200, history.OK, 9, 201, "A").rel(6, "k", "z", 1, 202, history.OK, 203),
		twoHolds(20, 2).acq(5, "k", "z", 50, 200, history.OK, 9, 201, "A").rel(5, "k", "z", -3, 201, history.OK, 202),
		twoHolds(20, 2).acq(5, "k", "b", 50, 200, history.OK, 9, 201, "A"),
		call("acquire", map[string]any{"ttl_ms": 5}, map[string]any{"fence": 9}),
		call("acquire", "abc", 3),
		call("read", nil, 3),
		call("release", map[string]any{"token": "b", "hold_ms": 0}, "2"),
	}
	var out [][]history.Op
	for _, h := range hs {
		out = append(out, h.Done())
	}
	return out
}

// uniqueTokens gives every token its history's number (the suffix Join
// gives its keys), as the workload's tokens are unique in a run.
func uniqueTokens(t *testing.T, ops []history.Op) []history.Op {
	for i := range ops {
		op := &ops[i]
		var v map[string]any
		if op.Process == history.Nemesis || json.Unmarshal(op.Value, &v) != nil || v["token"] == nil {
			continue
		}
		v["token"] = fmt.Sprintf("%v@%s", v["token"], op.Key[strings.LastIndex(op.Key, "-")+1:])
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		op.Value = b
	}
	return ops
}

// The lock checker run partition by partition says what it says of the
// whole history, byte for byte in results.json, on 1, 3, 7 and 16
// partitions: every lock of the tests above in one history, with tokens
// unique as the workload makes them and with tokens used on many locks
// (Check looks tokens up across locks: the second and third passes), with
// examples capped at 1, 2 and 50, and lies told of it.
func TestLockPartitionedAgreesWithWhole(t *testing.T) {
	hs := lockHistories()
	unique := func(ops []history.Op) []history.Op { return uniqueTokens(t, ops) }
	cases := map[string][]history.Op{
		"every lock, tokens unique": unique(checkertest.Join(hs...)),
		"every lock, tokens shared": checkertest.Join(hs...),
		"valid locks":               unique(checkertest.Join(hs[0], hs[10], hs[13], hs[14])),
		"valid locks, one token":    checkertest.Join(hs[0], hs[14]),
		"empty":                     nil,
	}
	for _, base := range []string{"every lock, tokens unique", "valid locks"} {
		for name, ops := range checkertest.Lies(cases[base], 3) {
			cases[base+": "+name] = ops
		}
	}
	// The honest histories, and the lies the whole check cannot tell.
	valid := map[string]bool{"valid locks": true, "valid locks" + ": a nemesis entry of garbage": true}
	// The adversary's stored runs of the workload (valid as recorded),
	// and lies told of them.
	for run, ops := range checkertest.Corpus(t, "../..", "lock") {
		cases[run] = ops
		valid[run] = true
		for lie, ops := range checkertest.Lies(ops, 5) {
			cases[run+": "+lie] = ops
		}
	}
	verdicts := map[checker.Validity]int{}
	for name, ops := range cases {
		for _, max := range []int{1, 2, 50} {
			what, c := fmt.Sprintf("%s (examples %d)", name, max), Checker(checker.Scope{MaxExamples: max})
			asBefore(t, what, c, ops)
			r := checkertest.SameOnPartitions(t, what, c, ops)
			verdicts[r.Valid]++
			if valid[name] && r.Valid != checker.Valid {
				t.Fatalf("%s: %v, want valid: %s", what, r.Valid, r.Why())
			}
		}
	}
	for _, v := range []checker.Validity{checker.Valid, checker.Invalid, checker.Unknown} {
		if verdicts[v] == 0 {
			t.Fatalf("no case was %v: %v", v, verdicts)
		}
	}
}

// A partition that cannot be loaded, or a partitioned check without the
// history's end, is no verdict (the caller's unknown).
func TestLockPartitionedLoadError(t *testing.T) {
	c := Checker().(checker.PartitionChecker)
	load := func(int, *history.Filter) ([]history.Op, error) { return nil, fmt.Errorf("gone") }
	if _, err := c.CheckPartitions(checker.WithHistoryEnd(t.Context(), 0), 3, load); err == nil {
		t.Fatal("a lost partition gave a verdict")
	}
	ok := func(int, *history.Filter) ([]history.Op, error) { return twoHolds(20, 2).Done(), nil }
	if _, err := c.CheckPartitions(t.Context(), 1, ok); err == nil {
		t.Fatal("a check without the history's end gave a verdict")
	}
	// A partition that does not pair (the spill sends such a history
	// whole; if not, its word is the pairing's, unknown).
	unpaired := func(i int, keep *history.Filter) ([]history.Op, error) {
		ops, err := ok(i, keep)
		return ops[1:], err
	}
	if r, err := c.CheckPartitions(checker.WithHistoryEnd(t.Context(), 0), 2, unpaired); err != nil || r.Valid != checker.Unknown || !strings.Contains(r.Why(), "cannot be paired") {
		t.Fatalf("an unpaired partition: %v %v", r.Valid, err)
	}
}

// asBefore fails unless Check gives what it gave before it judged slot
// partitions (refCheck), byte for byte.
func asBefore(t *testing.T, what string, c checker.Checker, ops []history.Op) {
	t.Helper()
	in := checker.NewHistory(ops)
	now, err := json.Marshal(c.Check(t.Context(), in))
	if err != nil {
		t.Fatal(err)
	}
	was, err := json.Marshal(c.(lockChecker).refCheck(t.Context(), in))
	if err != nil {
		t.Fatal(err)
	}
	if string(now) != string(was) {
		t.Fatalf("%s: Check changed:\nnow    %s\nbefore %s", what, now, was)
	}
}
