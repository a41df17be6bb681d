package ttl

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/checker/checkertest"
	"github.com/redline-dev/redline/history"
)

// keyHistories are histories of one key each, as the tests above build them:
// valid ones, one of each anomaly, hash fields, concurrent writes, and the
// lies of TestTTLLiesAreNeverValid (garbage replies, unreadable or
// repeated sets, an op after the final; Lies tells the others).
func keyHistories() [][]history.Op {
	raw := func(f string, in, out any) *ttlH {
		h := ttlBase()
		h.Call(5, f, "k", in, 30, history.OK, out, 31)
		return h
	}
	valid := ttlBase()
	valid.read(0, "read", "k", 120, "", -2, 121).set(0, "k", "v2", 0, 130, history.OK, 131).read(0, "read", "k", 140, "v2", -1, 141)
	valid.cmd(0, "pexpire", "k", 50, 150, history.OK, 1, 151).read(0, "read", "k", 160, "v2", 40, 161)
	valid.cmd(0, "persist", "k", 0, 170, history.OK, 1, 171).read(0, "read", "k", 500, "v2", -1, 501).read(9, "final", "k", 600, "v2", -1, 601)
	hash := &ttlH{field: "f"}
	hash.set(0, "h", "v1", 100, 0, history.OK, 1).read(0, "read", "h", 120, "v1", 0, 121)
	hashOK := &ttlH{field: "g"}
	hashOK.set(0, "h", "v1", 100, 0, history.OK, 1).read(0, "read", "h", 10, "v1", 90, 11)
	concurrent := ttlBase()
	concurrent.cmd(1, "pexpire", "k", 5000, 50, 0, 0, 0)
	concurrent.read(0, "read", "k", 120, "v1", 4000, 121)
	onB := ttlBase()
	onB.node = "B"
	onB.read(0, "read", "k", 120, "v1", 10, 121)
	hs := []*ttlH{
		valid, hash, hashOK, concurrent, onB, ttlBase(),
		ttlBase().read(0, "read", "k", 120, "v1", 0, 121),
		ttlBase().read(0, "read", "k", 50, "", -2, 51),
		ttlBase().read(0, "read", "k", 20, "v1", 500, 21),
		ttlBase().read(0, "read", "k", 20, "v0", 70, 21).set(1, "k", "v0", 0, 0, history.Info, 0),
		ttlBase().read(0, "read", "k", 120, "", -2, 121).read(0, "read", "k", 130, "v1", 10, 131),
		ttlBase().cmd(0, "persist", "k", 0, 20, history.OK, 1, 21).read(0, "read", "k", 500, "", -2, 501),
		(&ttlH{}).set(0, "k", "v1", 0, 0, history.OK, 1).read(0, "read", "k", 10, "", -2, 11),
		ttlBase().read(0, "read", "k", 20, "zzz", 70, 21),
		ttlBase().read(0, "read", "k", 20, "v1", -1, 21),
		raw("read", nil, map[string]any{"got": "v1"}),
		raw("read", nil, map[string]any{"pttl": -7}),
		raw("pexpire", map[string]any{"ttl_ms": 10}, map[string]any{"reply": 5}),
		raw("persist", nil, map[string]any{}),
		ttlBase().set(1, "k", "vf", 0, 20, history.Fail, 21).read(0, "read", "k", 30, "vf", -1, 31),
		ttlBase().read(0, "read", "k", 20, "v9", -1, 21).set(1, "k", "v9", 0, 30, history.OK, 31),
		raw("set", map[string]any{"ttl_ms": 5}, nil),
		ttlBase().set(1, "k", "v1", 0, 20, history.OK, 21),
		raw("pexpire", map[string]any{"ttl_ms": 0}, map[string]any{"reply": 1}),
		ttlBase().read(9, "final", "k", 40, "v1", 60, 41).read(0, "read", "k", 50, "v1", 50, 51),
		raw("incr", map[string]any{}, nil),
	}
	var out [][]history.Op
	for _, h := range hs {
		out = append(out, h.Done())
	}
	return out
}

// probeOf is a history of the probe alone, answered out at t ms.
func probeOf(out any, t int64) []history.Op {
	h := &checkertest.Hist{}
	h.Call(50, "probe", "probe", nil, t, history.OK, out, t)
	return h.Done()
}

// faults are a clock fault on A and a kill of B over the keys' ops, and
// one never stopped.
func faults() []history.Op {
	h := &checkertest.Hist{}
	h.Nemesis(40, "start-clock", "A")
	h.Nemesis(60, "stop-clock", "A")
	h.Nemesis(45, "start-kill", "B")
	h.Nemesis(70, "stop-kill", "B")
	h.Nemesis(300, "start-power", "A")
	return h.Done()
}

// The ttl checker run partition by partition says what it says of the
// whole history, byte for byte in results.json, on 1, 3, 7 and 16
// partitions: every key of the tests above in one history, with fault
// windows, with and without probes (the last one by index counts), with
// examples capped at 1, 2 and 50, and lies told of it.
func TestTTLPartitionedAgreesWithWhole(t *testing.T) {
	keys := keyHistories()
	noHFE := map[string]any{"hash_field_expiry": false, "missing": []string{"HPEXPIRE"}}
	var plainKeys [][]history.Op
	for _, ops := range keys {
		if !slices.ContainsFunc(ops, func(op history.Op) bool { return op.Key == "h" }) {
			plainKeys = append(plainKeys, ops)
		}
	}
	cases := map[string][]history.Op{
		"every key":                 checkertest.Join(append(keys, faults())...),
		"every key, no faults":      checkertest.Join(keys...),
		"valid keys":                checkertest.Join(keys[0], keys[2], keys[3], keys[5], faults()),
		"probe: no hfe, no hash op": checkertest.Join(append(slices.Clone(plainKeys), probeOf(noHFE, 2), faults())...),
		"probe: no hfe, hash ops":   checkertest.Join(append(slices.Clone(keys), probeOf(noHFE, 2))...),
		"probes: garbage, then two": checkertest.Join(append(slices.Clone(keys), probeOf("yes", 1), probeOf(noHFE, 3), probeOf(map[string]any{"hash_field_expiry": true}, 4))...),
		"probes: the last has none": checkertest.Join(keys[0], probeOf(map[string]any{"hash_field_expiry": true}, 1), probeOf(noHFE, 5)),
		"probe: no hfe, valid keys": checkertest.Join(keys[0], keys[5], probeOf(noHFE, 2)),
		"probe: no hfe, a hash op":  checkertest.Join(keys[0], keys[2], probeOf(noHFE, 2)),
		"empty":                     nil,
	}
	for name, ops := range checkertest.Lies(cases["every key"], 1) {
		cases["every key: "+name] = ops
	}
	for name, ops := range checkertest.Lies(cases["valid keys"], 2) {
		cases["valid keys: "+name] = ops
	}
	// The honest histories, and the lies the whole check cannot tell.
	valid := map[string]bool{"valid keys": true, "valid keys" + ": a nemesis entry of garbage": true}
	// The adversary's stored runs of the workload (valid as recorded),
	// and lies told of them.
	for run, ops := range checkertest.Corpus(t, "../..", "ttl") {
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
func TestTTLPartitionedLoadError(t *testing.T) {
	c := Checker().(checker.PartitionChecker)
	load := func(int, *history.Filter) ([]history.Op, error) { return nil, fmt.Errorf("gone") }
	if _, err := c.CheckPartitions(checker.WithHistoryEnd(t.Context(), 0), 3, load); err == nil {
		t.Fatal("a lost partition gave a verdict")
	}
	ok := func(int, *history.Filter) ([]history.Op, error) { return ttlBase().Done(), nil }
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
	was, err := json.Marshal(c.(ttlChecker).refCheck(t.Context(), in))
	if err != nil {
		t.Fatal(err)
	}
	if string(now) != string(was) {
		t.Fatalf("%s: Check changed:\nnow    %s\nbefore %s", what, now, was)
	}
}
