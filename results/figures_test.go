package results

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

// TestKeyFiguresFreshAndStored: the runs table's line reads the perf and
// RPO checkers' typed figures, the same from a summary just computed and
// from one read back from results.json.
func TestKeyFiguresFreshAndStored(t *testing.T) {
	var ops []history.Op
	op := func(p history.Process, typ history.Type, f string, v any, at int64) {
		o := history.Op{Index: int64(len(ops)), Time: at, Process: p, Type: typ, F: f, Key: "s"}
		if v != nil {
			o.SetValue(v)
		}
		ops = append(ops, o)
	}
	nemesis := func(f string, at int64) {
		ops = append(ops, history.Op{Index: int64(len(ops)), Time: at, Process: history.Nemesis, Type: history.Info, F: f,
			Ext: &history.Ext{Nodes: []string{"n1"}}})
	}
	nemesis("start-partition", 1_000_000_000)
	op(0, history.Invoke, "add", 1, 1_100_000_000)
	op(0, history.OK, "add", 1, 1_150_000_000)
	op(0, history.Invoke, "add", 2, 1_200_000_000)
	op(0, history.OK, "add", 2, 1_250_000_000)
	nemesis("stop-partition", 2_000_000_000)
	nemesis("final-reads", 3_000_000_000)
	op(1, history.Invoke, "read", nil, 3_100_000_000)
	op(1, history.OK, "read", []int{2}, 3_200_000_000)
	fresh := checker.Run(context.Background(), ops, []checker.Checker{checker.Set(), checker.Perf(),
		checker.RPO(checker.RPOOptions{Kind: "set"})}, nil)
	b, err := json.Marshal(fresh)
	if err != nil {
		t.Fatal(err)
	}
	var stored checker.Summary
	if err := json.Unmarshal(b, &stored); err != nil {
		t.Fatal(err)
	}
	line := keyFigures(fresh.Checkers)
	if got := keyFigures(stored.Checkers); got != line {
		t.Fatalf("fresh %q, stored %q", line, got)
	}
	for _, want := range []string{"lost 1", "throughput ", "RPO 0.05s"} {
		if !strings.Contains(line, want) {
			t.Fatalf("%q lacks %q", line, want)
		}
	}
}
