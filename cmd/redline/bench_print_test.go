package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/harness/bench"
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

// The last line of every load test is for scripts: "throughput: N ops/s",
// N whole (rounded as %.0f rounds, half to even), no separators, from one
// printer.
func TestThroughputLineIsPinned(t *testing.T) {
	for v, want := range map[float64]string{19950.4: "throughput: 19950 ops/s\n", 998.5: "throughput: 998 ops/s\n", 0: "throughput: 0 ops/s\n", 1234567.6: "throughput: 1234568 ops/s\n"} {
		var b bytes.Buffer
		printThroughput(&b, v)
		if b.String() != want {
			t.Errorf("%v printed %q, want %q", v, b.String(), want)
		}
	}
	r := &bench.Result{DurationS: 10, Rate: 1000, Workers: 4, Pipeline: 1, Throughput: 998.5, Ops: map[string]*bench.OpFigures{
		"get": {OKPerS: 900}, "set": {OKPerS: 98.5}, "total": {OKPerS: 998.5, Corrected: bench.Quantiles{Count: 9985, P99: 1}}}}
	var out bytes.Buffer
	printLoad(&out, &ciFlags{}, harness.Config{}, harness.Outcome{Load: r, Dir: "results/x/1"})
	if !strings.HasSuffix(out.String(), "\nresults: results/x/1\nthroughput: 998 ops/s\n") {
		t.Errorf("the load test's output does not end with its results and throughput lines:\n%s", out.String())
	}
	// One printer: no other file of the command writes the line.
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(src), `"throughput: %`); n > 0 && f != "bench.go" || n > 1 {
			t.Errorf("%s writes the throughput line itself (%d times): call printThroughput", f, n)
		}
	}
}
