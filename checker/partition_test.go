package checker

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/redline-dev/redline/history"
)

// spillOps writes ops as a compressed history file and spills it into n
// slot partitions, as a bounded-memory check does (issue 42).
func spillOps(t *testing.T, ops []history.Op, n int) *history.Partitions {
	t.Helper()
	path, err := writeHistory(t, ops)
	if err != nil {
		t.Fatal(err)
	}
	return spillFile(t, path, n)
}

// writeHistory writes ops as a compressed history file, its path.
func writeHistory(t *testing.T, ops []history.Op) (string, error) {
	t.Helper()
	var lines bytes.Buffer
	for i := range ops {
		if err := history.Encode(&lines, &ops[i]); err != nil {
			return "", err
		}
	}
	var buf bytes.Buffer
	fw, err := history.NewFrameWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.WriteFrame(lines.Bytes(), len(ops)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), history.FileName)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, nil
}

func spillFile(t *testing.T, path string, n int) *history.Partitions {
	t.Helper()
	p, err := history.Spill(path, t.TempDir(), n, history.SlotPartition(n))
	if err != nil {
		t.Fatal(err)
	}
	if !p.Paired || !p.IndexesIncrease {
		t.Fatalf("%s: paired %v, indexes increase %v: not a history a partitioned check takes", path, p.Paired, p.IndexesIncrease)
	}
	return p
}

// samePartitioned checks c on the whole of ops and on p's partitions and
// fails unless results.json would say the same (its JSON, byte for byte)
// and the same pictures are drawn.
func samePartitioned(t *testing.T, what string, c Checker, ops []history.Op, p *history.Partitions) Result {
	t.Helper()
	whole := c.Check(context.Background(), NewHistory(ops))
	parts, err := c.(PartitionChecker).CheckPartitions(WithHistoryEnd(context.Background(), p.Latest), p.N(), p.LoadWhere)
	if err != nil {
		t.Fatal(err)
	}
	wj, err := json.Marshal(whole)
	if err != nil {
		t.Fatal(err)
	}
	pj, err := json.Marshal(parts)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(wj, pj) {
		t.Fatalf("%s, %d partitions:\nwhole       %s\npartitioned %s", what, p.N(), wj, pj)
	}
	if w, g := slices.Sorted(maps.Keys(whole.Files)), slices.Sorted(maps.Keys(parts.Files)); !slices.Equal(w, g) {
		t.Fatalf("%s, %d partitions: pictures %v, the whole's %v", what, p.N(), g, w)
	}
	return whole
}

// plants are anomalies written into a clean register history, each of a
// kind the linearizable checker reports in its own figures, so that every
// figure's merge is compared.
var plants = []struct {
	name string
	// plant changes ops; the verdict the whole history must then get.
	plant func(ops []history.Op)
	want  Validity
}{
	{"clean", func([]history.Op) {}, Valid},
	{"impossible reads", func(ops []history.Op) {
		// A value no write produced, on many keys (more than the examples
		// kept, so that the caps are merged too).
		for _, key := range []string{"r5", "r17", "r2", "r9", "r11", "r20"} {
			setFirst(ops, key, "read", func(op *history.Op) { op.Value = rawInt(99) })
		}
	}, Invalid},
	{"garbage replies", func(ops []history.Op) {
		for _, key := range []string{"r3", "r14", "r8", "r1"} {
			setFirst(ops, key, "read", func(op *history.Op) { op.Value = json.RawMessage(`"x"`) })
		}
	}, Invalid},
	{"replica reads", func(ops []history.Op) {
		// Reads a replica served (on a node no write went to) are left
		// out; one of them reads a value nobody wrote.
		for i := range ops {
			if op := &ops[i]; op.Type == history.OK && op.F == "read" && op.Index%7 == 0 {
				op.Node = "10.0.0.9:6379"
				op.SetReplica(true)
			}
		}
		setFirst(ops, "r6", "read", func(op *history.Op) { op.Node = "10.0.0.9:6379"; op.SetReplica(true); op.Value = rawInt(77) })
	}, Invalid},
	{"contradicted replica flags", func(ops []history.Op) {
		// Every op served by one node, the primary: a read it flags as a
		// replica's is its primary's.
		for i := range ops {
			if op := &ops[i]; op.Type != history.Invoke {
				op.Node = "10.0.0.1:6379"
				if op.Type == history.OK && op.F == "read" && op.Index%11 == 0 {
					op.SetReplica(true)
				}
			}
		}
	}, Valid},
	{"malformed invocations", func(ops []history.Op) {
		for _, key := range []string{"r4", "r19"} {
			for i := range ops {
				if op := &ops[i]; op.Key == key && op.Type == history.Invoke && op.F == "write" {
					op.Value = json.RawMessage(`"zz"`)
					break
				}
			}
		}
	}, Unknown},
	{"stale reads", plantStale, Invalid},
}

// setFirst changes the first ok completion of f on key.
func setFirst(ops []history.Op, key, f string, change func(op *history.Op)) {
	for i := range ops {
		if op := &ops[i]; op.Key == key && op.Type == history.OK && op.F == f {
			change(op)
			return
		}
	}
}

// plantStale makes each key's first acknowledged write write a value of
// its own (500), and some late reads of the key return it: overwritten
// long before by later writes.
func plantStale(ops []history.Op) {
	inv := map[history.Process]int{}
	done := map[string]bool{}
	for i := range ops {
		op := &ops[i]
		switch {
		case op.Type == history.Invoke:
			inv[op.Process] = i
		case op.Type == history.OK && op.F == "write" && !done[op.Key]:
			done[op.Key] = true
			ops[inv[op.Process]].Value, op.Value = rawInt(500), rawInt(500)
		}
	}
	for i := len(ops) - 1; i >= len(ops)*3/4; i-- {
		if op := &ops[i]; op.Type == history.OK && op.F == "read" && op.Index%5 == 0 && done[op.Key] {
			op.Value = rawInt(500)
		}
	}
}

// The linearizable checker run partition by partition says what it says
// of the whole history (issue 42): the same results.json, byte for byte,
// on a clean history and on one with each kind of anomaly planted, with
// examples capped, for several partition counts.
func TestPartitionedLinearizableAgreesWithWhole(t *testing.T) {
	for _, pl := range plants {
		ops := genRegister(11, 24, 150, 4, 0.03)
		pl.plant(ops)
		for _, maxEx := range []int{2, 0} {
			c := Linearizable(LinearizableOptions{Scope: Scope{MaxExamples: maxEx}, Timeout: time.Minute})
			for _, n := range []int{1, 3, 7} {
				whole := samePartitioned(t, pl.name, c, ops, spillOps(t, ops, n))
				if whole.Valid != pl.want {
					t.Fatalf("%s: the whole history is %v (%s), want %v", pl.name, whole.Valid, whole.Why(), pl.want)
				}
				if pl.name == "stale reads" && fig[int](t, whole, "stale_reads") == 0 {
					t.Fatalf("no stale read planted: %v", whole.Figures)
				}
			}
		}
	}
}

// A search out of time is unknown partitioned as whole, never valid: the
// time budget is the run's, not each partition's.
func TestPartitionedLinearizableOutOfTime(t *testing.T) {
	ops := genRegister(5, 16, 100, 4, 0.03)
	c := Linearizable(LinearizableOptions{Timeout: time.Nanosecond, NoVisualization: true})
	p := spillOps(t, ops, 4)
	r, err := c.(PartitionChecker).CheckPartitions(context.Background(), p.N(), p.LoadWhere)
	if err != nil {
		t.Fatal(err)
	}
	if r.Valid != Unknown || len(fig[[]string](t, r, "unknown_keys")) != 16 {
		t.Fatalf("out of time: %v, unknown keys %v", r.Valid, r.Values()["unknown_keys"])
	}
	// The keys undecided once the budget is spent are made unknown at
	// once (their ops not kept for a second pass that gets no time): the
	// same figures as the whole check's.
	got, _ := json.Marshal(r)
	whole, _ := json.Marshal(c.Check(context.Background(), NewHistory(ops)))
	if !bytes.Equal(got, whole) {
		t.Fatalf("out of time:\nwhole       %s\npartitioned %s", whole, got)
	}
}

// The stored histories: a run of an old redline (its JSON lines) and a
// generated run of counter, register and set under partitions (the shape
// scripts/gen-history writes, 6000 entries: history/testdata/gen-6k).
func TestPartitionedLinearizableStoredHistories(t *testing.T) {
	for _, tc := range []struct{ path, prefix string }{
		{"../history/testdata/old-run-history.jsonl", "r:register:"},
		{"../history/testdata/gen-6k/history.jsonl.zst", "gen:register:"},
	} {
		res, err := history.ReadFile(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		c := Linearizable(LinearizableOptions{Scope: Scope{KeyPrefix: tc.prefix}, Timeout: time.Minute})
		for _, n := range []int{1, 4, 16} {
			samePartitioned(t, tc.path, c, res.Ops, spillFile(t, tc.path, n))
		}
	}
}

// Keys the first pass of their partition leaves undecided (here it has no
// time at all) are decided by the second pass over every partition's, on
// their detached ops, to the whole history's verdict and figures.
func TestPartitionedLinearizableSecondPass(t *testing.T) {
	for _, pl := range plants[:2] {
		ops := genRegister(11, 24, 150, 4, 0.03)
		pl.plant(ops)
		c := Linearizable(LinearizableOptions{Scope: Scope{MaxExamples: 2}, Timeout: time.Minute})
		l := c.(linearizable)
		p := spillOps(t, ops, 5)
		var parts []*regPartial
		for i := range p.N() {
			part, err := p.LoadWhere(i, l.o.Scope.filter())
			if err != nil {
				t.Fatal(err)
			}
			parts = append(parts, l.partial(context.Background(), NewHistory(part), time.Now().Add(-time.Second), time.Minute, true))
		}
		m := mergeRegPartials(parts, l.o.MaxExamples, l.o.NoVisualization)
		undecided := 0
		for _, p := range parts {
			undecided += len(p.undecided)
		}
		if len(m.unknown) != 0 || undecided < 16 {
			t.Fatalf("%s: the first pass with no time left %d keys undecided, %v unknown", pl.name, undecided, m.unknown)
		}
		l.retryUndecided(context.Background(), m, parts, time.Minute, nil)
		got, _ := json.Marshal(l.result(m))
		whole, _ := json.Marshal(c.Check(context.Background(), NewHistory(ops)))
		if !bytes.Equal(got, whole) {
			t.Fatalf("%s:\nwhole       %s\nsecond pass %s", pl.name, whole, got)
		}
	}
}
