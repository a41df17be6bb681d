package checker

import (
	"context"
	"encoding/json"
	"fmt"
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
// twice or three times (AttributeScanned) with the whole history's, byte
// for byte, on every stream case that a spill would send down that path:
// the corpus (with its unserved windows), gen-6k, generated runs with
// faults, lies told of them that still pair, and anomalies planted.
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
		whole := AttributeWithTopology(h.ops, s, logs, topo)
		scanned, err := AttributeScanned(scanOf(h.ops), history.NemesisEvents(h.ops), runEnd(h.ops), s, logs, topo)
		if err != nil {
			t.Fatalf("%s: %v", h.name, err)
		}
		w, _ := json.Marshal(whole)
		g, _ := json.Marshal(scanned)
		if string(w) != string(g) {
			t.Errorf("%s: scanned attribution differs\nwhole:   %s\nscanned: %s", h.name, w, g)
		}
		for _, at := range whole {
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
