package checker

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/redline-dev/redline/history"
)

// Run shares the pairing, the calls of each key prefix and the scans of
// nemesis events among its checkers: every verdict and figure must be what
// each checker gives alone on the same history (and, under -race, the
// sharing must be read-only).
func TestRunSharesWithoutChangingResults(t *testing.T) {
	// Three workloads in one history, keys apart by prefix, partitions.
	var ops []history.Op
	for _, part := range [][]history.Op{
		prefixed("c:", genCounter(7, 8, 200, 4, 0.05)),
		prefixed("s:", genSet(7, 8, 200, 4, 0.05, 0.1)),
		prefixed("r:", genRegister(7, 8, 200, 4, 0.05)),
	} {
		ops = append(ops, part...)
	}
	slices.SortStableFunc(ops, func(a, b history.Op) int { return cmpInt(a.Time, b.Time) })
	ops = withWindows(ops, int64(50*time.Microsecond), int64(20*time.Microsecond))
	var checkers []Checker
	for _, p := range []string{"c:", "s:", "r:"} {
		o := func(name string) Scope { return Scope{KeyPrefix: p, Name: p + name} }
		switch p {
		case "c:":
			checkers = append(checkers, Counter(o("counter")), RPO(RPOOptions{Scope: o("rpo")}))
		case "s:":
			checkers = append(checkers, Set(o("set")), RPO(RPOOptions{Scope: o("rpo")}))
		case "r:":
			checkers = append(checkers, Linearizable(LinearizableOptions{Scope: o("linearizable"), NoVisualization: true}))
		}
		checkers = append(checkers, Perf(PerfOptions{Scope: o("perf")}), RTO(o("rto")), WritePause(o("write-pause")))
	}
	s := Run(context.Background(), ops, checkers, nil)
	for _, c := range checkers {
		alone, err := json.Marshal(c.Check(context.Background(), NewHistory(ops)))
		if err != nil {
			t.Fatal(err)
		}
		shared, _ := json.Marshal(s.Checkers[c.Name()])
		if string(alone) != string(shared) {
			t.Errorf("%s differs when run with the others:\nalone:  %s\nshared: %s", c.Name(), alone, shared)
		}
	}
}

// prefixed puts a prefix on every key and shifts process ids apart.
func prefixed(p string, ops []history.Op) []history.Op {
	off := map[string]history.Process{"c:": 0, "s:": 100000, "r:": 200000}[p]
	for i := range ops {
		if ops[i].Process != history.Nemesis {
			ops[i].Process += off
		}
		if ops[i].Key != "" {
			ops[i].Key = p + ops[i].Key
		}
	}
	return ops
}

// A history whose times go backwards is sorted on a copy: the shared calls
// keep their order for the next checker.
func TestSortedByStartLeavesSharedCallsAlone(t *testing.T) {
	calls := []call{{start: 3}, {start: 1}, {start: 2}}
	got := sortedByStart(calls)
	if calls[0].start != 3 || got[0].start != 1 || got[2].start != 3 {
		t.Fatalf("calls %v sorted %v", calls, got)
	}
	in := []call{{start: 1}, {start: 2}}
	if out := sortedByStart(in); &out[0] != &in[0] {
		t.Fatal("sorted calls were copied")
	}
}

// The Run's pairing by positions is history.Pairs: the same pairs, and the
// same error when the history cannot be paired.
func TestPairIndexesArePairs(t *testing.T) {
	op := func(i int64, p history.Process, typ history.Type) history.Op {
		return history.Op{Index: i, Time: i, Process: p, Type: typ, F: "read"}
	}
	cases := map[string][]history.Op{
		"valid": genRegister(3, 4, 100, 3, 0.1),
		"open at end": {op(0, 1, history.Invoke), op(1, history.Nemesis, history.Info), op(2, 2, history.Invoke),
			op(3, 1, history.OK)},
		"invokes twice":     {op(0, 1, history.Invoke), op(1, 1, history.Invoke)},
		"completes unasked": {op(0, 1, history.Invoke), op(1, 1, history.OK), op(2, 1, history.Fail)},
	}
	for name, ops := range cases {
		want, wantErr := history.Pairs(ops)
		got, err := pairIndexes(ops)
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Errorf("%s: error %v, want %v", name, err, wantErr)
			continue
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d pairs, want %d", name, len(got), len(want))
			continue
		}
		for i, p := range got {
			comp := (*history.Op)(nil)
			if p.comp >= 0 {
				comp = &ops[p.comp]
			}
			if &ops[p.inv] != want[i].Invoke || comp != want[i].Completion {
				t.Errorf("%s: pair %d is (%d, %d), not history.Pairs'", name, i, p.inv, p.comp)
			}
		}
	}
}
