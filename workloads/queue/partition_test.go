package queue

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/checker/checkertest"
	"github.com/redline-dev/redline/history"
)

// queueHistories are histories of one queue each (a few of two), as the
// tests above build them: valid lists and streams, losses and their
// classification, every anomaly, duplicates, lost acks, id regressions,
// the garbage and the contradictions.
func queueHistories() [][]history.Op {
	drained := func(h *queueH) *queueH { return h.drainList("q", 100, []string{"c"}, []string{"b"}) }
	lost := func(kill bool) *queueH {
		h := listOK()
		if kill {
			h.Nemesis(50, "start-kill", "A")
			h.Nemesis(60, "stop-kill", "A")
		}
		return h.drainList("q", 100, nil, []string{"b"})
	}
	call := func(f string, in, out any) *queueH {
		h := drained(listOK())
		h.Call(5, f, "q", in, 30, history.OK, out, 31)
		return h
	}
	hs := []*queueH{
		listOK().deq(2, "dequeue", "q", "c2", 12, history.OK, 13).drainList("q", 100, []string{"c"}, []string{"b"}),
		lost(false), lost(true),
		listOK().deq(2, "dequeue", "q", "c2", 12, history.OK, 13, "zzz").drainList("q", 100, []string{"c"}, []string{"b", "zzz"}),
		listOK().enq(3, "q", "f", 20, history.Fail, "", 21, "A").drainList("q", 100, []string{"c", "f"}, []string{"b"}),
		// Another queue's message: q2 lands in another partition.
		listOK().enq(3, "q2", "x", 20, history.OK, "", 21, "A").drainList("q2", 100, []string{"x"}, nil).drainList("q", 100, []string{"c", "x"}, []string{"b"}),
		listOK().deq(2, "dequeue", "q", "c2", 12, history.OK, 13, "late").enq(3, "q", "late", 20, history.OK, "", 21, "A").
			drainList("q", 100, []string{"c"}, []string{"b", "late"}),
		listOK().deq(2, "dequeue", "q", "c2", 12, history.OK, 13, "a").drainList("q", 100, []string{"c", "c"}, []string{"b"}),
		listOK().drainList("q", 100, []string{"c"}, []string{"a", "b"}),
		streamOK().drainStream("s", 100, []string{"a@1-0", "b@2-0", "c@3-0"}, "2-0", "2-0"),
		streamOK().deq(2, "claim", "s", "c2", 20, history.OK, 21, "b@2-0").drainStream("s", 100, []string{"a@1-0", "b@2-0", "c@3-0"}, "2-0", "2-0"),
		streamOK().drainStream("s", 100, []string{"a@1-0", "b@2-0", "c@3-0"}, "3-0", "2-0"),
		streamOK().deq(2, "dequeue", "s", "c2", 20, history.OK, 21, "c@9-0").drainStream("s", 100, []string{"a@1-0", "b@2-0", "c@3-0"}, "3-0", "2-0", "3-0"),
		streamOK().drainStream("s", 100, []string{"a@1-0", "b@2-0", "c@3-0"}, "3-0", "2-0", "3-0"),
		streamOK().deq(2, "dequeue", "s", "c2", 20, history.Info, 21).drainStream("s", 100, []string{"a@1-0", "b@2-0", "c@3-0"}, "3-0", "2-0", "3-0"),
		streamOK().enq(0, "s", "d", 20, history.OK, "2-0", 21, "B").deq(1, "dequeue", "s", "c1", 22, history.OK, 23, "c@3-0").
			deq(1, "dequeue", "s", "c1", 24, history.OK, 25, "d@2-0").drainStream("s", 100, []string{"a@1-0", "d@2-0"}, "3-0", "2-0", "3-0"),
		call("dequeue", map[string]any{"kind": "list", "consumer": "c5"}, map[string]any{"kind": "list", "msgs": "abc"}),
		drained(listOK().ack(1, "q", "c1", "b", 20, history.OK, 7, 21)),
		(&queueH{kind: Stream}).enq(0, "s", "a", 0, history.OK, "", 1, "A").drainStream("s", 100, []string{"a@1-0"}, "0-0"),
		(&queueH{kind: Stream}).enq(0, "s", "a", 0, history.OK, "1-0", 1, "A").drainStream("s", 100, []string{"a@1-0"}, "everything"),
		func() *queueH {
			h := listOK()
			h.Call(90, "drain", "q", map[string]any{"kind": "list"}, 100, history.OK, "garbage", 101)
			return h
		}(),
		call("enqueue", map[string]any{"msg": "z"}, nil),
		drained(listOK().enq(5, "q", "a", 30, history.OK, "", 31, "A")),
		drained(listOK().ack(5, "q", "c5", "c", 30, history.OK, 1, 31)),
		drained(listOK()).enq(5, "q", "z", 200, history.Fail, "", 201, "A"),
		call("read", map[string]any{"kind": "list"}, nil),
		listOK(),
		func() *queueH {
			h := listOK()
			h.Call(90, "drain", "q", map[string]any{"kind": "list"}, 100, history.Info, nil, 101)
			return h
		}(),
		(&queueH{kind: List}).enq(0, "q", "a", 0, history.OK, "", 1, "A").deq(1, "dequeue", "q", "c1", 6, history.OK, 7, "a"),
	}
	var out [][]history.Op
	for _, h := range hs {
		out = append(out, h.Done())
	}
	return out
}

// uniqueMsgs gives every message its history's number (the suffix Join
// gives its keys), as the workload's messages are unique in a run.
func uniqueMsgs(t *testing.T, ops []history.Op) []history.Op {
	for i := range ops {
		op := &ops[i]
		var v any
		if op.Process == history.Nemesis || json.Unmarshal(op.Value, &v) != nil {
			continue
		}
		suffix := "#" + op.Key[strings.LastIndex(op.Key, "-")+1:]
		var walk func(v any, field string) any
		walk = func(v any, field string) any {
			switch x := v.(type) {
			case map[string]any:
				for k, e := range x {
					x[k] = walk(e, k)
				}
			case []any:
				for i, e := range x {
					x[i] = walk(e, field)
				}
			case string:
				if field == "msg" || field == "queue" || field == "processing" {
					return x + suffix
				}
			}
			return v
		}
		b, err := json.Marshal(walk(v, ""))
		if err != nil {
			t.Fatal(err)
		}
		op.Value = b
	}
	return ops
}

// The queue checker run partition by partition says what it says of the
// whole history, byte for byte in results.json, on 1, 3, 7 and 16
// partitions: every queue of the tests above in one history, with
// messages unique as the workload makes them and with messages sent on
// many queues (Check looks messages up across queues: the second and
// third passes), with examples capped at 1, 2 and 50, and lies told of
// it. Check gives what it gave before (asBefore).
func TestQueuePartitionedAgreesWithWhole(t *testing.T) {
	hs := queueHistories()
	unique := func(ops []history.Op) []history.Op { return uniqueMsgs(t, ops) }
	cases := map[string][]history.Op{
		"every queue, messages unique": unique(checkertest.Join(hs...)),
		"every queue, messages shared": checkertest.Join(hs...),
		"valid queues":                 unique(checkertest.Join(hs[0], hs[7], hs[8], hs[9], hs[10], hs[14], hs[15], hs[28])),
		"valid queues, one message":    checkertest.Join(hs[0], hs[8]),
		"empty":                        nil,
	}
	for _, base := range []string{"every queue, messages unique", "valid queues"} {
		for name, ops := range checkertest.Lies(cases[base], 4) {
			cases[base+": "+name] = ops
		}
	}
	// The honest histories, and the lies the whole check cannot tell.
	valid := map[string]bool{"valid queues": true, "valid queues" + ": a nemesis entry of garbage": true}
	// The adversary's stored runs of the workload (valid as recorded),
	// and lies told of them.
	for run, ops := range checkertest.Corpus(t, "../..", "queue") {
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
func TestQueuePartitionedLoadError(t *testing.T) {
	c := Checker().(checker.PartitionChecker)
	load := func(int, *history.Filter) ([]history.Op, error) { return nil, fmt.Errorf("gone") }
	if _, err := c.CheckPartitions(checker.WithHistoryEnd(t.Context(), 0), 3, load); err == nil {
		t.Fatal("a lost partition gave a verdict")
	}
	ok := func(int, *history.Filter) ([]history.Op, error) { return drainedList().Done(), nil }
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
	was, err := json.Marshal(c.(queueChecker).refCheck(t.Context(), in))
	if err != nil {
		t.Fatal(err)
	}
	if string(now) != string(was) {
		t.Fatalf("%s: Check changed:\nnow    %s\nbefore %s", what, now, was)
	}
}
