package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

// fakePartitionChecker loads partitions in the order its plan says and
// records what it was given; running counts the fakes running at once.
type fakePartitionChecker struct {
	name    string
	keep    *history.Filter
	plan    func(n int) []int // the partitions it loads, in order
	stopAt  int               // returns after loading this partition (-1: never)
	running *atomic.Int32
	most    *atomic.Int32
	served  *[]string // the Filter of every load served, in order
	got     []string
}

func (f *fakePartitionChecker) Name() string { return f.name }
func (f *fakePartitionChecker) Check(context.Context, *checker.History) checker.Result {
	return checker.Result{}
}

func (f *fakePartitionChecker) CheckPartitions(ctx context.Context, n int, load checker.PartitionLoader) (checker.Result, error) {
	enter := func() {
		if k := f.running.Add(1); k > f.most.Load() {
			f.most.Store(k)
		}
	}
	enter()
	defer f.running.Add(-1)
	for _, i := range f.plan(n) {
		f.running.Add(-1)
		ops, err := load(i, f.keep)
		enter()
		if err != nil {
			return checker.Result{}, err
		}
		f.got = append(f.got, fmt.Sprintf("%d:%d", i, len(ops)))
		which := "all"
		if f.keep != nil {
			which = f.keep.KeyPrefix
		}
		*f.served = append(*f.served, which)
		if i == f.stopAt {
			break
		}
	}
	return checker.Result{Valid: checker.Valid, Figures: checker.Map{"loads": len(f.got)}}, nil
}

func ascending(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// The checkers of partitions load each partition once for all that ask
// for it with the same Filter, one checker running at a time, one
// workload (Filter) after another, and each gets what it would have
// loaded alone: in increasing order, twice over (rto), out of order
// (txnUnits's unions), stopping early (a checker that is not applicable),
// with a partition that fails to load.
func TestSharedLoadsDecodeEachPartitionOnce(t *testing.T) {
	const n = 8
	load := func(i int, keep *history.Filter) ([]history.Op, error) {
		if keep != nil && keep.KeyPrefix == "broken:" && i == 5 {
			return nil, errors.New("gone")
		}
		size := i + 1
		if keep != nil {
			size += 10 * len(keep.KeyPrefix)
		}
		return make([]history.Op, size), nil
	}
	var running, most atomic.Int32
	var served []string
	mk := func(name string, keep *history.Filter, plan func(int) []int, stopAt int) *fakePartitionChecker {
		return &fakePartitionChecker{name: name, keep: keep, plan: plan, stopAt: stopAt, running: &running, most: &most, served: &served}
	}
	counter := &history.Filter{KeyPrefix: "c:"}
	sameCounter := &history.Filter{KeyPrefix: "c:"} // equal, not the same pointer
	reg := &history.Filter{KeyPrefix: "reg:"}
	twice := func(n int) []int { return append(ascending(n), ascending(n)...) }
	unions := func(n int) []int { return append(ascending(n), 6, 2, 7) }
	fakes := []*fakePartitionChecker{
		mk("counter", counter, ascending, -1),
		mk("rpo", sameCounter, ascending, -1),
		mk("not applicable", counter, ascending, 0),
		mk("rto", counter, twice, -1),
		mk("linearizable", reg, ascending, -1),
		mk("list-append", reg, unions, -1),
		mk("everything", nil, ascending, -1),
		mk("broken", &history.Filter{KeyPrefix: "broken:"}, ascending, -1),
	}
	pcs := make([]checker.PartitionChecker, len(fakes))
	for k, f := range fakes {
		pcs[k] = f
	}
	results, errs, reads, decodes := runShared(context.Background(), n, partitionSource{load: load}, pcs)

	for k, f := range fakes {
		// What it would have loaded alone.
		var want []string
		for _, i := range f.plan(n) {
			ops, err := load(i, f.keep)
			if err != nil {
				break
			}
			want = append(want, fmt.Sprintf("%d:%d", i, len(ops)))
			if i == f.stopAt {
				break
			}
		}
		if !reflect.DeepEqual(f.got, want) {
			t.Errorf("%s loaded %v, want %v", f.name, f.got, want)
		}
		if f.name == "broken" {
			if errs[k] == nil {
				t.Errorf("broken: no error")
			}
		} else if errs[k] != nil || results[k].Valid != checker.Valid {
			t.Errorf("%s: %v, %v", f.name, results[k].Valid, errs[k])
		}
	}
	if m := most.Load(); m != 1 {
		t.Errorf("%d checkers ran at once, want 1", m)
	}
	wantReads := 0
	for _, f := range fakes {
		wantReads += len(f.got)
	}
	wantReads++ // broken's failed load
	if reads != wantReads {
		t.Errorf("%d loads counted, want %d", reads, wantReads)
	}
	// counter: two passes (rto's second); reg: one pass and the three
	// unions; all: one pass; broken: up to its failure.
	if want := 2*n + n + 3 + n + 6; decodes != want {
		t.Errorf("%d partitions decoded, want %d", decodes, want)
	}
	// One workload after another: the Filter served changes three times.
	changes := 0
	for j := 1; j < len(served); j++ {
		if served[j] != served[j-1] {
			changes++
		}
	}
	if changes != 3 {
		t.Errorf("the workloads' loads interleave (%d changes of Filter): %v", changes, served)
	}
}

// historyChecker asks for each partition as a History of its scope's
// calls (checker.PartitionCalls), or as ops first when opsFirst, and
// records the Histories it was given.
type historyChecker struct {
	name     string
	o        checker.Scope
	opsFirst bool
	got      []*checker.History
	ops      [][]history.Op
}

func (h *historyChecker) Name() string { return h.name }
func (h *historyChecker) Check(context.Context, *checker.History) checker.Result {
	return checker.Result{}
}
func (h *historyChecker) CheckPartitions(ctx context.Context, n int, load checker.PartitionLoader) (checker.Result, error) {
	for i := range n {
		if h.opsFirst {
			ops, err := load(i, h.o.Filter())
			if err != nil {
				return checker.Result{}, err
			}
			h.ops = append(h.ops, ops)
			continue
		}
		in, err := checker.PartitionCalls(ctx, load, i, h.o)
		if err != nil {
			return checker.Result{}, err
		}
		h.got = append(h.got, in)
	}
	return checker.Result{Valid: checker.Valid}, nil
}

// The checkers of a workload's calls share one History of each partition,
// decoded once: a compact partition streamed from the spill when none of
// them asked for the ops, else a History of the ops loaded (no second
// decode); and what they are given is the whole partition's calls.
func TestSharedLoadsShareHistories(t *testing.T) {
	var ops []history.Op
	for k := range 40 {
		key := []string{"c:1", "c:2", "s:1", "s:2"}[k%4]
		p := history.Process(k)
		ops = append(ops,
			history.Op{Index: int64(2 * k), Time: int64(2 * k), Process: p, Type: history.Invoke, F: "add", Key: key, Value: []byte("1")},
			history.Op{Index: int64(2*k + 1), Time: int64(2*k + 1), Process: p, Type: history.OK, F: "add", Key: key, Value: []byte("1")})
	}
	ops = append(ops, history.Op{Index: 80, Time: 80, Process: history.Nemesis, Type: history.Info, F: history.FinalReads})
	for k, key := range []string{"c:1", "c:2"} {
		p := history.Process(100 + k)
		ops = append(ops,
			history.Op{Index: int64(81 + 2*k), Time: int64(81 + 2*k), Process: p, Type: history.Invoke, F: "read", Key: key},
			history.Op{Index: int64(82 + 2*k), Time: int64(82 + 2*k), Process: p, Type: history.OK, F: "read", Key: key, Value: []byte("9")})
	}
	path := filepath.Join(t.TempDir(), history.FileName)
	var lines bytes.Buffer
	for i := range ops {
		if err := history.Encode(&lines, &ops[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, lines.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := history.Spill(path, t.TempDir(), 3, history.SlotPartition(3))
	if err != nil {
		t.Fatal(err)
	}
	c, s := checker.Scope{KeyPrefix: "c:"}, checker.Scope{KeyPrefix: "s:"}
	fakes := []*historyChecker{
		{name: "counter", o: c}, {name: "rpo", o: c},
		{name: "set", o: s, opsFirst: true}, {name: "set rpo", o: s},
	}
	pcs := make([]checker.PartitionChecker, len(fakes))
	for k, f := range fakes {
		pcs[k] = f
	}
	_, errs, _, decodes := runShared(context.Background(), p.N(), spillSource(p), pcs)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if decodes != 2*p.N() {
		t.Errorf("%d partitions decoded for two workloads of %d partitions", decodes, p.N())
	}
	for i := range p.N() {
		if fakes[0].got[i] != fakes[1].got[i] || fakes[3].got[i] == nil {
			t.Fatalf("partition %d: the counter's checkers were given two Histories", i)
		}
		if len(fakes[0].got[i].Ops) != len(p.RunWide) {
			t.Errorf("partition %d: the counter's History holds %d ops, not a compact partition (its run-wide entries only)", i, len(fakes[0].got[i].Ops))
		}
		if got, want := len(fakes[3].got[i].Ops), len(fakes[2].ops[i]); got != want {
			t.Errorf("partition %d: the set's History holds %d ops, the set checker loaded %d", i, got, want)
		}
	}
	// A counter checker judging the compact partitions streamed from the
	// spill says what it says of the whole history (10 of the 19 acked
	// increments of c:1 and c:2 read: lost ones).
	counter := checker.Counter(checker.Scope{KeyPrefix: "c:", MaxExamples: 5})
	results, errs, _, _ := runShared(checker.WithHistoryEnd(context.Background(), p.Latest), p.N(), spillSource(p), []checker.PartitionChecker{counter.(checker.PartitionChecker)})
	if errs[0] != nil {
		t.Fatal(errs[0])
	}
	whole := counter.Check(context.Background(), checker.NewHistory(ops))
	got, _ := json.Marshal(results[0])
	want, _ := json.Marshal(whole)
	if string(got) != string(want) || whole.Valid != checker.Invalid {
		t.Errorf("on the partitions: %s\nwhole: %s", got, want)
	}
}
