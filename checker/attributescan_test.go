package checker

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/redline-dev/redline/history"
)

// scanOf scans ops as a history file's scan gives them.
func scanOf(ops []history.Op) Scan {
	return func(observe func(*history.Op)) error {
		for i := range ops {
			op := ops[i]
			observe(&op)
		}
		return nil
	}
}

// spillable says the history pairs and its indexes increase: what a
// spill must find for AttributeScanned to be used.
func spillable(ops []history.Op) bool {
	if _, err := history.Pairs(ops); err != nil {
		return false
	}
	for i := 1; i < len(ops); i++ {
		if ops[i].Index <= ops[i-1].Index {
			return false
		}
	}
	return true
}

// planted is a summary naming ops of the history as anomalies of every
// shape the attribution follows: lost and set-aside elements, stale
// reads, a counter key out of bounds with the reads that showed it, keys
// no order explains, anomalies by class.
func planted(ops []history.Op) Result {
	var lost, stale []map[string]any
	var keys []string
	var counter []map[string]any
	n := 0
	for i := range ops {
		op := &ops[i]
		if op.Process == history.Nemesis || op.Type != history.Invoke || op.Key == "" {
			continue
		}
		n++
		switch n % 97 {
		case 1:
			lost = append(lost, map[string]any{"key": op.Key, "index": op.Index, "element": 3})
		case 2:
			stale = append(stale, map[string]any{"key": op.Key, "index": op.Index})
		case 3:
			keys = append(keys, op.Key)
		case 4:
			counter = append(counter, map[string]any{"key": op.Key, "final_index": op.Index, "lower": 5, "upper": 9, "lost": 1,
				"revealed_index": op.Index, "whole_before_index": op.Index - 7})
		}
	}
	return Result{Valid: Invalid, Figures: Map{"lost_elements": lost, "stale_read_samples": stale, "anomalous_keys": keys, "lost_keys": counter,
		"anomalies": map[string]any{"lost-write": map[string]any{"examples": stale}}}}
}

// TestAttributeScanned compares the attribution of a history scanned
// (AttributeScanned: its own first pass, then the log of served calls),
// and of its first pass made as a stream of another pass with other
// stream checkers beside it (AttributionPass, as `redline check`'s one
// pass makes it), with the whole history's, byte for byte, on every
// stream case that a spill would send down that path: the corpus (with
// its unserved windows), gen-6k, generated runs with faults, lies told of
// them that still pair, and anomalies planted.
func TestAttributeScanned(t *testing.T) {
	ran, unserved := 0, 0
	for _, h := range streamCases(t) {
		if !spillable(h.ops) {
			continue
		}
		ran++
		s := Run(context.Background(), h.ops, []Checker{Linearizable(), Counter(), Set()}, nil)
		s.Checkers["planted"] = planted(h.ops)
		topo := []TopologySample{{Time: 2e9, ClusterNodes: "a"}, {Time: 1e9, ClusterNodes: "b"}}
		logs := []LogLine{{Node: "n1", Time: 3e9, Text: "Failover election won for slot 7"}}
		whole, _ := json.Marshal(AttributeWithTopology(h.ops, s, logs, topo))
		runWide := history.NemesisEvents(h.ops)
		scanned, err := AttributeScanned(scanOf(h.ops), runWide, runEnd(h.ops), s, logs, topo)
		if err != nil {
			t.Fatalf("%s: %v", h.name, err)
		}
		if g, _ := json.Marshal(scanned); string(whole) != string(g) {
			t.Errorf("%s: scanned attribution differs\nwhole:   %s\nscanned: %s", h.name, whole, g)
		}
		a, err := NewAttributionPass(runWide, runEnd(h.ops))
		if err != nil {
			t.Fatal(err)
		}
		p := NewStreamPass([]StreamChecker{Perf().(StreamChecker), a.StreamChecker(), Coverage(CoverageOptions{}).(StreamChecker)}, runWide, runEnd(h.ops))
		for i := range h.ops {
			op := h.ops[i]
			p.Observe(&op)
		}
		p.Results(context.Background())
		if !a.Ready(runWide) {
			t.Fatalf("%s: the pass is not ready after it ended", h.name)
		}
		rode, err := a.Attribute(scanOf(h.ops), runWide, s, logs, topo)
		a.Close()
		if err != nil {
			t.Fatalf("%s: %v", h.name, err)
		}
		if g, _ := json.Marshal(rode); string(whole) != string(g) {
			t.Errorf("%s: the attribution of a pass riding along differs\nwhole: %s\npass:  %s", h.name, whole, g)
		}
		for _, at := range scanned {
			if at.Kind == "unserved" {
				unserved++
			}
		}
	}
	if ran < 10 || unserved == 0 {
		t.Fatalf("%d histories, %d unserved windows: the cases do not exercise the scan", ran, unserved)
	}
	t.Logf("%d histories, %d unserved windows", ran, unserved)
}

// TestAttributeScannedRefusesUnpaired: a history that does not pair is
// an error, never a partial attribution.
func TestAttributeScannedRefusesUnpaired(t *testing.T) {
	ops := []history.Op{
		{Index: 0, Process: 1, Type: history.Invoke, F: "write", Key: "k"},
		{Index: 1, Process: 1, Type: history.Invoke, F: "write", Key: "k"},
	}
	if _, err := AttributeScanned(scanOf(ops), nil, 0, Summary{}, nil, nil); err == nil {
		t.Fatal(fmt.Sprint("an unpaired history attributed without an error"))
	}
}

// TestAttributionPassNotReady: a first pass that did not see the whole of
// a history that pairs, or saw other fault windows than the attribution
// is given, is not used: Ready is false and Attribute an error, never an
// attribution from part of the evidence.
func TestAttributionPassNotReady(t *testing.T) {
	var h *namedOps
	for _, c := range streamCases(t) {
		if spillable(c.ops) && len(history.NemesisEvents(c.ops)) > 0 {
			h = &c
			break
		}
	}
	if h == nil {
		t.Fatal("no case with faults")
	}
	runWide := history.NemesisEvents(h.ops)
	end := runEnd(h.ops)
	start := func() (*AttributionPass, *StreamPass) {
		a, err := NewAttributionPass(runWide, end)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(a.Close)
		return a, NewStreamPass([]StreamChecker{a.StreamChecker()}, runWide, end)
	}
	attributeFails := func(what string, a *AttributionPass, rw []history.Op) {
		t.Helper()
		if a.Ready(rw) {
			t.Errorf("%s: ready", what)
		}
		if _, err := a.Attribute(scanOf(h.ops), rw, Summary{}, nil, nil); err == nil {
			t.Errorf("%s: attributed without an error", what)
		}
	}

	// Stopped half way: never ended.
	a, p := start()
	for i := range h.ops[:len(h.ops)/2] {
		p.Observe(&h.ops[i])
	}
	attributeFails("a pass stopped half way", a, runWide)

	// A history that does not pair.
	a, p = start()
	bad := slices.Clone(h.ops)
	for i := range bad {
		if bad[i].Process != history.Nemesis && bad[i].Type != history.Invoke {
			bad[i].Type = history.Invoke // an invocation while one is open
			break
		}
	}
	for i := range bad {
		p.Observe(&bad[i])
	}
	p.Results(context.Background())
	attributeFails("an unpaired history", a, runWide)

	// Other fault windows than the pass was started with.
	a, p = start()
	for i := range h.ops {
		p.Observe(&h.ops[i])
	}
	p.Results(context.Background())
	if !a.Ready(runWide) {
		t.Fatal("the whole pass is not ready")
	}
	other := slices.Clone(runWide)
	for i := range other {
		if strings.HasPrefix(other[i].F, "start-") {
			other[i].Time-- // a fault starts a nanosecond earlier
		}
	}
	attributeFails("other fault windows", a, other)

	// A log that cannot be written.
	a, p = start()
	a.first.log.f.Close()
	for i := range h.ops {
		p.Observe(&h.ops[i])
	}
	p.Results(context.Background())
	if a.first.log.err == nil {
		// The writer buffers: the error shows at the flush, in replay.
		if err := a.first.log.replay(func(*servedCall) {}); err == nil {
			t.Fatal("a closed log replayed")
		}
	}
	attributeFails("an unwritable log", a, runWide)
}
