package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

// TestPrintBenchFreshAndStored: the bench table and its throughput read
// the perf checker's typed figures, the same from a summary just computed
// and from one read back from results.json; an op with no ok completion
// prints "-" for its latencies.
func TestPrintBenchFreshAndStored(t *testing.T) {
	var ops []history.Op
	add := func(p history.Process, f string, typ history.Type, from, to int64) {
		ops = append(ops,
			history.Op{Index: int64(len(ops)), Time: from, Process: p, Type: history.Invoke, F: f, Key: "k"},
			history.Op{Index: int64(len(ops) + 1), Time: to, Process: p, Type: typ, F: f, Key: "k"})
	}
	add(0, "write", history.OK, 0, 2_000_000)
	add(0, "write", history.OK, 500_000_000, 503_000_000)
	add(1, "read", history.Fail, 1_000_000_000, 1_001_000_000)
	fresh := checker.Run(context.Background(), ops, []checker.Checker{checker.Perf()}, nil)
	b, err := json.Marshal(fresh)
	if err != nil {
		t.Fatal(err)
	}
	var stored checker.Summary
	if err := json.Unmarshal(b, &stored); err != nil {
		t.Fatal(err)
	}
	var a, c bytes.Buffer
	printBench(&a, fresh)
	printBench(&c, stored)
	if a.String() != c.String() {
		t.Fatalf("fresh:\n%s\nstored:\n%s", a.String(), c.String())
	}
	rows := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(a.String()), "\n")[1:] {
		fs := strings.Fields(l)
		rows[fs[1]] = fs
	}
	if w := rows["write"]; len(w) != 10 || w[0] != "perf" || w[3] != "2" || w[4] != "0" || !strings.HasPrefix(w[9], "3") {
		t.Fatalf("write row %q in\n%s", w, a.String())
	}
	if r := rows["read"]; len(r) != 10 || r[3] != "0" || r[4] != "1" || r[6] != "-" || r[9] != "-" {
		t.Fatalf("read row %q in\n%s", r, a.String())
	}
	if tf, ts := benchThroughput(fresh), benchThroughput(stored); tf <= 0 || tf != ts {
		t.Fatalf("throughput %v fresh, %v stored", tf, ts)
	}
}
