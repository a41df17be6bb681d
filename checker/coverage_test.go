package checker

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/redline-dev/redline/history"
)

// coverageHistory: counter key "c:a" lives on n1, set key "s:b" on n2; a
// partition cuts only replica n3 (no keys), a kill strikes n1; a pause was
// scheduled and skipped. Both shards serve an op every 100 ms, n1 none
// while it is down.
func coverageHistory() []history.Op {
	var h hist
	h.nodesEvent(map[string]string{"n1": n1, "n2": n2, "n3": "10.0.0.3:6379"})
	p := 0
	serve := func(from, to int64, key, node string, up func(t int64) bool) {
		for t := from; t < to; t += 100 {
			if up(t) {
				h.call(p, "add", key, 1, t, history.OK, nil, t+5)
				h.on(node)
			} else {
				h.call(p, "add", key, 1, t, history.Fail, nil, t+5)
				h.withErr("CLUSTERDOWN")
			}
			p++
		}
	}
	always := func(int64) bool { return true }
	serve(0, 9000, "s:b", n2, always)
	serve(0, 9000, "c:a", n1, func(t int64) bool { return t < 5000 || t >= 7000 })
	h.nemesis(1000, "start-partition", "n3")
	h.nemesis(3000, "stop-partition", "n3")
	h.ops = append(h.ops, history.Op{Time: 4000 * msec, Process: history.Nemesis, Type: history.Info, F: "start-pause",
		Ext: history.NewExt(history.Ext{Detail: json.RawMessage(`{"skipped":"no primary"}`)})})
	h.nemesis(5000, "start-kill", "n1")
	h.nemesis(7000, "stop-kill", "n1")
	h.nemesis(9000, "final-reads")
	return h.done()
}

func TestCoverageNamesTheKindsWithoutEvidence(t *testing.T) {
	ops := coverageHistory()
	opts := CoverageOptions{Requested: []string{"partition", "kill:primary", "pause"}, Workloads: map[string]string{"counter": "c:", "set": "s:"}}
	r := check(t, Coverage(opts), ops)
	wantValid(t, r, Valid)
	f := typed[*CoverageFigures](t, r)
	if got := f.NoEvidence; !reflect.DeepEqual(got, []string{"partition", "pause"}) {
		t.Fatalf("no_evidence %v, want partition and pause", got)
	}
	kinds := f.PerKind
	kill := kinds["kill"]
	if kill.WindowsWithEvidence != 1 || !reflect.DeepEqual(kill.Primaries, []string{"n1"}) || !reflect.DeepEqual(kill.Workloads, []string{"counter"}) {
		t.Fatalf("kill coverage %+v", kill)
	}
	// 20 acked writes on c:a after the kill (7000..9000), none during.
	if kill.AckedWrites != 20 {
		t.Fatalf("kill acked writes %v, want 20", kill.AckedWrites)
	}
	part := kinds["partition"]
	if part.Windows != 1 || part.WindowsWithEvidence != 0 || part.Summary != "partition: 1 window, touched no primary holding keys that were served during or after it: no evidence" {
		t.Fatalf("partition coverage %+v", part)
	}
	if pause := kinds["pause"]; pause.NotEffective != 1 {
		t.Fatalf("pause coverage %+v", pause)
	}
	// The untouched shard n2 kept its rate during the kill.
	w := f.PerWindow[1]
	if w.Fault != "kill" || val(w.UntouchedOKRatio) != 1.0 {
		t.Fatalf("kill window %+v", w)
	}
	// The caveats beside the verdict, also from a stored results.json.
	s := Run(context.Background(), ops, []Checker{Coverage(opts)}, nil)
	b, _ := json.Marshal(s)
	var back Summary
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	want := []string{"partition: no evidence", "pause: no evidence"}
	if !reflect.DeepEqual(s.Caveats(), want) || !reflect.DeepEqual(back.Caveats(), want) {
		t.Fatalf("caveats %v / %v after a round trip", s.Caveats(), back.Caveats())
	}
	if VerdictWord(back.Checkers[CoverageName]) != "measured" {
		t.Fatalf("coverage reads %q, want measured", VerdictWord(back.Checkers[CoverageName]))
	}
	// --require-coverage: we cannot say.
	opts.Require = true
	r = check(t, Coverage(opts), ops)
	wantValid(t, r, Unknown)
	if r.Why() != "--require-coverage: partition: no evidence, pause: no evidence" {
		t.Fatalf("why %q", r.Why())
	}
	// Only the kill asked for: covered, valid even under Require.
	opts.Requested = []string{"kill"}
	r = check(t, Coverage(opts), ops)
	wantValid(t, r, Valid)
	if f := typed[*CoverageFigures](t, r); len(f.NoEvidence) != 0 {
		t.Fatalf("no_evidence %v", f.NoEvidence)
	}
	// No fault asked for: nothing to cover.
	if r := check(t, Coverage(CoverageOptions{Requested: []string{"none"}}), ops); r.NotApplicable == "" {
		t.Fatalf("coverage without a fault requested: %v", r.Valid)
	}
}

// TestCoverageCountsACompositionThatStruck: a handoff composition's start
// records the interrupted move's error and took_effect (its failover
// promoted): a window with evidence. The old checker took every start with
// an error for one that did nothing ("migrate: 1 scheduled, none took
// effect": F007's Valkey run, all four failovers promoted).
func TestCoverageCountsACompositionThatStruck(t *testing.T) {
	var h hist
	h.nodesEvent(map[string]string{"n1": n1, "n2": n2})
	for p, at := 0, int64(0); at < 6000; at, p = at+100, p+1 {
		h.call(p, "add", "s:b", 1, at, history.OK, nil, at+5)
		h.on(n1)
	}
	detail := func(s string) *history.Ext {
		return history.NewExt(history.Ext{Nodes: []string{"n1", "n2"}, Detail: json.RawMessage(s)})
	}
	h.ops = append(h.ops,
		history.Op{Time: 1000 * msec, Process: history.Nemesis, Type: history.Invoke, F: "start-migrate", Ext: detail(`{"mode":"classic-failover-src"}`)},
		history.Op{Time: 2000 * msec, Process: history.Nemesis, Type: history.Info, F: "start-migrate",
			Ext: detail(`{"mode":"classic-failover-src","error":"CLUSTER SETSLOT 7 MIGRATING: ERR Please use SETSLOT only with masters","took_effect":true,"steps":[{"step":"strike","promoted":true}]}`)},
		history.Op{Time: 3000 * msec, Process: history.Nemesis, Type: history.Invoke, F: "start-migrate", Ext: detail(`{"mode":"classic-failover-src"}`)},
		history.Op{Time: 3500 * msec, Process: history.Nemesis, Type: history.Info, F: "start-migrate",
			Ext: detail(`{"mode":"classic-failover-src","error":"no reachable replica"}`)})
	h.nemesis(6000, "final-reads")
	r := check(t, Coverage(CoverageOptions{Requested: []string{"migrate:classic-failover-src"}, Workloads: map[string]string{"set": "s:"}}), h.done())
	m := typed[*CoverageFigures](t, r).PerKind["migrate"]
	if m.Windows != 1 || m.WindowsWithEvidence != 1 || m.NotEffective != 1 {
		t.Fatalf("migrate coverage %+v: want the struck start as 1 window with evidence, the failed one not effective", m)
	}
}
