package checker

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/history"
)

// namedOps is a history a differential test runs on.
type namedOps struct {
	name string
	ops  []history.Op
}

// corpusHistories are the histories of the adversary's stored runs
// (harness/adversary/testdata/corpus): real runs of every workload under
// partitions, kills, pauses, migrations and failovers, with their
// topology samples, census and journal entries.
func corpusHistories(t *testing.T) []namedOps {
	t.Helper()
	paths, err := filepath.Glob("../harness/adversary/testdata/corpus/*.tar.gz")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	var out []namedOps
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(zr)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Base(h.Name)
			if name != history.JSONLinesName && name != history.FileName {
				continue
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), name)
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := history.ReadFile(path)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			out = append(out, namedOps{strings.TrimSuffix(filepath.Base(p), ".tar.gz"), res.Ops})
		}
		f.Close()
	}
	return out
}

// storedHistories are the corpus, the generated run of
// history/testdata/gen-6k (counter, register and set under partitions)
// and an old run's JSON lines.
func storedHistories(t *testing.T) []namedOps {
	t.Helper()
	out := corpusHistories(t)
	for _, p := range []string{"../history/testdata/gen-6k/history.jsonl.zst", "../history/testdata/old-run-history.jsonl"} {
		res, err := history.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, namedOps{p, res.Ops})
	}
	return out
}

// registerWithFaults is a generated register history with fault windows laid
// over it: a partition stopped, a failover never stopped (open until the
// heal), a kill whose start failed (no window), topology samples, the
// heal and the final reads.
func registerWithFaults(seed uint64) []history.Op {
	ops := genRegister(seed, 12, 80, 3, 0.05)
	end := runEnd(ops)
	at := func(frac float64) int64 { return int64(float64(end) * frac) }
	nem := func(t int64, f string, typ history.Type, ext history.Ext) history.Op {
		return history.Op{Time: t, Process: history.Nemesis, Type: typ, F: f, Ext: history.NewExt(ext)}
	}
	topo := json.RawMessage(`{"addrs":{"n1":"10.0.0.1:6379","n2":"10.0.0.2:6379"}}`)
	extra := []history.Op{
		nem(0, history.NodesEvent, history.Info, history.Ext{Detail: topo}),
		nem(at(0.1), history.StartOf("partition"), history.Info, history.Ext{Nodes: []string{"n1"}}),
		nem(at(0.3), history.StopOf("partition"), history.Info, history.Ext{Nodes: []string{"n1"}}),
		nem(at(0.4), history.StartOf("failover"), history.Invoke, history.Ext{Nodes: []string{"n2"}}),
		nem(at(0.45), history.StartOf("failover"), history.Info, history.Ext{Nodes: []string{"n2"}, Detail: json.RawMessage(`{"mode":"default","promoted":true}`)}),
		nem(at(0.5), history.StartOf("kill"), history.Fail, history.Ext{Nodes: []string{"n1"}}),
		nem(at(0.7), history.Heal, history.Invoke, history.Ext{}),
		nem(at(0.75), history.Heal, history.Info, history.Ext{}),
		nem(at(0.8), history.FinalReads, history.Info, history.Ext{}),
	}
	ops = append(ops, extra...)
	slices.SortStableFunc(ops, func(a, b history.Op) int { return cmpInt(a.Time, b.Time) })
	for i := range ops {
		ops[i].Index = int64(i)
	}
	return ops
}

// lies are ops with the kinds of evidence a streaming form must not call
// valid where the whole check does not: entries out of order, missing
// completions, entries given twice, garbage.
func lies(ops []history.Op, seed uint64) []namedOps {
	r := rand.New(rand.NewPCG(seed, 7))
	clientAt := func(typ func(history.Type) bool) []int {
		var at []int
		for i := range ops {
			if ops[i].Process != history.Nemesis && typ(ops[i].Type) {
				at = append(at, i)
			}
		}
		return at
	}
	invs := clientAt(func(t history.Type) bool { return t == history.Invoke })
	comps := clientAt(func(t history.Type) bool { return t != history.Invoke })
	if len(invs) == 0 || len(comps) == 0 {
		return nil
	}
	pick := func(at []int) int { return at[r.IntN(len(at))] }
	var out []namedOps
	mutate := func(name string, f func(ops []history.Op) []history.Op) {
		out = append(out, namedOps{name, f(slices.Clone(ops))})
	}
	mutate("a completion before its invocation", func(ops []history.Op) []history.Op {
		c := pick(comps)
		for i := c - 1; i >= 0; i-- {
			if ops[i].Process == ops[c].Process {
				ops[i], ops[c] = ops[c], ops[i]
				break
			}
		}
		return ops
	})
	mutate("entries out of time order", func(ops []history.Op) []history.Op {
		for range 20 {
			i := pick(comps)
			ops[i].Time -= int64(r.IntN(5)) * int64(time.Second)
		}
		return ops
	})
	mutate("a completion missing mid-run", func(ops []history.Op) []history.Op {
		i := pick(comps)
		return slices.Delete(ops, i, i+1)
	})
	mutate("the last completions missing", func(ops []history.Op) []history.Op {
		n := 0
		for i := len(ops) - 1; i >= 0 && n < 5; i-- {
			if ops[i].Process != history.Nemesis && ops[i].Type != history.Invoke {
				ops = slices.Delete(ops, i, i+1)
				n++
			}
		}
		return ops
	})
	mutate("an invocation given twice", func(ops []history.Op) []history.Op {
		i := pick(invs)
		return slices.Insert(ops, i+1, ops[i])
	})
	mutate("garbage completions", func(ops []history.Op) []history.Op {
		for k := range 10 {
			op := &ops[pick(comps)]
			switch k % 4 {
			case 0:
				op.Type = history.Type(99)
			case 1:
				op.Value = []byte("\x00garbage")
			case 2:
				op.F, op.Key = "", ""
			case 3:
				op.SetError("ERR what")
			}
		}
		return ops
	})
	mutate("a time far in the future", func(ops []history.Op) []history.Op {
		ops[pick(comps)].Time = int64(30 * 24 * time.Hour)
		return ops
	})
	mutate("a nemesis entry of garbage", func(ops []history.Op) []history.Op {
		i := pick(invs)
		g := history.Op{Index: ops[i].Index, Time: ops[i].Time, Process: history.Nemesis, Type: history.Info, F: history.StartOf("partition"),
			Ext: history.NewExt(history.Ext{Detail: json.RawMessage(`{"nodes":`)})}
		return slices.Insert(ops, i, g)
	})
	return out
}

// streamCases are every history the differential tests run on: the
// stored ones, generated ones with faults, and lies told of some.
func streamCases(t *testing.T) []namedOps {
	t.Helper()
	stored := storedHistories(t)
	cases := slices.Clone(stored)
	for seed := range uint64(3) {
		cases = append(cases, namedOps{fmt.Sprintf("generated with faults %d", seed), registerWithFaults(seed)})
	}
	cases = append(cases, namedOps{"empty", nil})
	liars := []namedOps{{"generated", registerWithFaults(9)}}
	for _, h := range stored {
		switch h.name {
		case "reference-counter-failover", "reference-set-migrate", "reference-register-kill", "../history/testdata/gen-6k/history.jsonl.zst":
			liars = append(liars, h)
		}
	}
	for i, h := range liars {
		for _, l := range lies(h.ops, uint64(i)) {
			cases = append(cases, namedOps{h.name + ": " + l.name, l.ops})
		}
	}
	return cases
}

// guarded is f's result, or unknown with "checker panicked" as Run
// gives a checker that panics.
func guarded(f func() Result) (r Result) {
	defer func() {
		if p := recover(); p != nil {
			r = Result{Valid: Unknown, Figures: Map{"error": fmt.Sprintf("checker panicked: %v", p)}}
		}
	}()
	return f()
}

// resultBytes is r as results.json writes it, with its not-applicable
// reason.
func resultBytes(t *testing.T, r Result) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + " n/a: " + r.NotApplicable
}

// sameStreamed fails unless c's stream gives the whole Check's result on
// ops, byte for byte; a panic must be one on both (its stack differs).
func sameStreamed(t *testing.T, what string, c Checker, ops []history.Op) Result {
	t.Helper()
	whole := guarded(func() Result { return c.Check(context.Background(), NewHistory(ops)) })
	streamed := CheckStream(context.Background(), c.(StreamChecker), ops)
	if panicked(whole) || panicked(streamed) {
		if !panicked(whole) || !panicked(streamed) || streamed.Valid != Unknown {
			t.Fatalf("%s: %s: a panic on one path only:\nwhole    %s\nstreamed %s", what, c.Name(), resultBytes(t, whole), resultBytes(t, streamed))
		}
		return whole
	}
	if w, s := resultBytes(t, whole), resultBytes(t, streamed); w != s {
		t.Fatalf("%s: %s differs\nwhole    %s\nstreamed %s", what, c.Name(), w, s)
	}
	return whole
}

func panicked(r Result) bool {
	m, ok := r.Figures.(Map)
	if !ok {
		return false
	}
	e, _ := m["error"].(string)
	return strings.HasPrefix(e, "checker panicked")
}

// The perf checker's stream gives, on every history, the figures its
// whole-history form gave before it streamed (perfReference), byte for
// byte, with the adaptive bucket width (made to change many times over a
// short run: MaxBuckets 3 and 7), a fixed one, and one key prefix.
func TestPerfStream(t *testing.T) {
	checkers := []Checker{
		Perf(),
		Perf(PerfOptions{MaxBuckets: 3}),
		Perf(PerfOptions{MaxBuckets: 7}),
		Perf(PerfOptions{Bucket: 250 * time.Millisecond}),
		Perf(PerfOptions{Scope: Scope{KeyPrefix: "gen:counter:"}}),
	}
	for _, tc := range streamCases(t) {
		for _, c := range checkers {
			if c.(perf).o.Bucket > 0 && strings.Contains(tc.name, "far in the future") {
				continue // millions of fixed buckets, on either path
			}
			whole := sameStreamed(t, tc.name, c, tc.ops)
			ref := guarded(func() Result { return perfReference(c.(perf), NewHistory(tc.ops)) })
			if panicked(ref) != panicked(whole) {
				t.Fatalf("%s: the reference panicked %v, perf %v", tc.name, panicked(ref), panicked(whole))
			}
			if !panicked(ref) && resultBytes(t, ref) != resultBytes(t, whole) {
				t.Fatalf("%s: %s differs from the reference\nref  %s\nperf %s", tc.name, c.Name(), resultBytes(t, ref), resultBytes(t, whole))
			}
		}
	}
}

// hdrLowest is the histogram's own bin: v and hdrLowest(v) are
// equivalent and nothing below it is.
func TestHdrLowest(t *testing.T) {
	h := newLatencyHist()
	r := rand.New(rand.NewPCG(1, 2))
	check := func(v int64) {
		lo := hdrLowest(v)
		if lo > v || !h.ValuesAreEquivalent(v, lo) || lo > 1 && h.ValuesAreEquivalent(lo-1, lo) {
			t.Fatalf("hdrLowest(%d) = %d: not the lowest of its bin", v, lo)
		}
	}
	for v := int64(1); v < 10000; v++ {
		check(v)
	}
	for range 100000 {
		check(1 + r.Int64N(int64(2*time.Hour/time.Microsecond)))
	}
	// Recording the bins' lowest values gives the histogram itself.
	a, b := newLatencyHist(), newLatencyHist()
	for range 10000 {
		v := 1 + r.Int64N(int64(time.Minute/time.Microsecond))
		_ = a.RecordValue(v)
		_ = b.RecordValue(hdrLowest(v))
	}
	if !a.Equals(b) {
		t.Fatal("the bins' lowest values make another histogram")
	}

}

// Every width BucketWidth can still pick is a multiple of the grain, and
// a longer run's grain is a multiple of a shorter one's.
func TestPerfGrain(t *testing.T) {
	prev := time.Duration(0)
	for run := time.Duration(0); run < 2000*time.Hour; run += run/50 + time.Second {
		w := BucketWidth(run, 600)
		g := perfGrain(w)
		if w%g != 0 || prev != 0 && g%prev != 0 {
			t.Fatalf("run %v: width %v, grain %v after %v", run, w, g, prev)
		}
		for _, later := range []time.Duration{run * 2, run * 7, run * 100} {
			if lw := BucketWidth(later, 600); lw%g != 0 {
				t.Fatalf("run %v: grain %v, a later width %v", run, g, lw)
			}
		}
		prev = g
	}
}

// The checkers that read only the nemesis entries (the end phase, the
// replica census, the failovers' promotions, the configEpochs, the
// elections) give on the Tail of a pass what they give on the whole
// history, byte for byte, with and without a census expected.
func TestRunWideStream(t *testing.T) {
	expected := Scope{CensusExpected: "the runner takes one"}
	checkers := []Checker{
		EndPhase(), EndPhase(expected), ReplicaCensus(), ReplicaCensus(expected), FailoverPromotions(),
		ConfigEpochs(ConfigEpochOptions{Samples: promotion("3")}), ConfigEpochs(ConfigEpochOptions{Samples: promotion("1")}),
		ConfigEpochs(ConfigEpochOptions{Expected: "sampled"}),
		Elections(ElectionLogOptions{Expected: "logged"}),
	}
	seen := map[Validity]int{}
	for _, tc := range streamCases(t) {
		for _, c := range checkers {
			r := sameStreamed(t, tc.name, c, tc.ops)
			if r.NotApplicable == "" {
				seen[r.Valid]++
			}
		}
	}
	if seen[Valid] == 0 || seen[Unknown] == 0 {
		t.Fatalf("verdicts %v: the histories judge too little", seen)
	}
}

// The handoff checker's stream (two figures per key) gives its whole
// check's result, byte for byte: on the corpus's migrations among the
// rest, for every key and for one workload's.
func TestHandoffStream(t *testing.T) {
	checkers := []Checker{Handoff(), Handoff(Scope{KeyPrefix: "redline:721189da:set:", MaxExamples: 1})}
	judged := 0
	for _, tc := range streamCases(t) {
		for _, c := range checkers {
			if r := sameStreamed(t, tc.name, c, tc.ops); r.NotApplicable == "" {
				judged++
			}
		}
	}
	if judged == 0 {
		t.Fatal("no history moved a slot")
	}
}

// The write-pause checker's stream (per migration unit, the writes
// acknowledged around it) gives its whole check's result and the one it
// gave before it streamed (writePauseReference), byte for byte.
func TestWritePauseStream(t *testing.T) {
	checkers := []Checker{WritePause(), WritePause(Scope{KeyPrefix: "redline:721189da:set:"})}
	judged := 0
	for _, tc := range streamCases(t) {
		for _, c := range checkers {
			whole := sameStreamed(t, tc.name, c, tc.ops)
			if whole.NotApplicable == "" {
				judged++
			}
			ref := guarded(func() Result { return writePauseReference(c.(writePause), NewHistory(tc.ops)) })
			if resultBytes(t, ref) != resultBytes(t, whole) {
				t.Fatalf("%s: %s differs from the reference\nref   %s\nwhole %s", tc.name, c.Name(), resultBytes(t, ref), resultBytes(t, whole))
			}
		}
	}
	if judged == 0 {
		t.Fatal("no history measured a write pause")
	}
}

// The coverage checker's stream (per window and slot, the ok ops it
// counts; per span between window starts and slot, the last op a
// primary served) gives its whole check's result and the one it gave
// before it streamed (coverageReference), byte for byte.
func TestCoverageStream(t *testing.T) {
	checkers := []Checker{
		Coverage(CoverageOptions{Requested: []string{"all"}}),
		Coverage(CoverageOptions{Requested: []string{"partition", "kill", "failover", "migrate", "pause"}, Require: true,
			Workloads: map[string]string{"register": "r", "set": "redline:721189da:set:", "gen": "gen:"}}),
		Coverage(CoverageOptions{Requested: []string{"none"}}),
	}
	evidence := 0
	for _, tc := range streamCases(t) {
		for _, c := range checkers {
			whole := sameStreamed(t, tc.name, c, tc.ops)
			ref := guarded(func() Result { return coverageReference(c.(coverage), NewHistory(tc.ops)) })
			if resultBytes(t, ref) != resultBytes(t, whole) {
				t.Fatalf("%s: %s differs from the reference\nref   %s\nwhole %s", tc.name, c.Name(), resultBytes(t, ref), resultBytes(t, whole))
			}
			if f, ok := whole.Figures.(*CoverageFigures); ok {
				for _, w := range f.PerWindow {
					if w.Evidence && w.UntouchedOKRatio != nil {
						evidence++
					}
				}
			}
		}
	}
	if evidence == 0 {
		t.Fatal("no window with evidence and a ratio of an untouched shard")
	}
}

// The census checker's stream (what the ops could have left in each key
// of the census) gives its whole check's result, byte for byte; some of
// the histories carry a census that judges copies, some none.
func TestCensusStream(t *testing.T) {
	checkers := []Checker{Census(), Census(Scope{CensusExpected: "the runner takes one", MaxExamples: 1})}
	judged := 0
	for _, tc := range streamCases(t) {
		for _, c := range checkers {
			if r := sameStreamed(t, tc.name, c, tc.ops); r.NotApplicable == "" && r.Valid != Unknown {
				judged++
			}
		}
	}
	if judged == 0 {
		t.Fatal("no census judged a copy")
	}
}

// A census that holds a value no write produced is invalid on both
// paths, never valid on the stream's.
func TestCensusStreamGarbage(t *testing.T) {
	planted := 0
	for _, h := range storedHistories(t) {
		if !strings.Contains(h.name, "register") {
			continue // a register's census value is judged by its writes
		}
		ops := slices.Clone(h.ops)
		for i := len(ops) - 1; i >= 0; i-- {
			op := &ops[i]
			if op.Process != history.Nemesis || op.F != history.CensusEvent {
				continue
			}
			var c map[string]any
			if json.Unmarshal(op.DetailRaw(), &c) != nil {
				break
			}
			nodes, _ := c["nodes"].([]any)
			done := false
			for _, n := range nodes {
				keys, _ := n.(map[string]any)["keys"].(map[string]any)
				for _, k := range slices.Sorted(maps.Keys(keys)) {
					if v, ok := keys[k].(map[string]any); ok && v["value"] != nil && v["type"] == "string" {
						v["value"] = "garbage-never-written"
						done = true
						break
					}
				}
				if done {
					break
				}
			}
			if !done {
				break
			}
			b, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			ext := *op.Ext
			ext.Detail = b
			op.Ext = history.NewExt(ext)
			r := sameStreamed(t, h.name+": garbage in the census", Census(), ops)
			if r.Valid != Invalid {
				t.Fatalf("%s: the census holds garbage: %v %s", h.name, r.Valid, resultBytes(t, r))
			}
			planted++
			break
		}
	}
	if planted == 0 {
		t.Fatal("no census to plant garbage in")
	}
}
