package harness

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads"
	"github.com/redline-dev/redline/workloads/client"
)

// fakeCluster completes the counter workload's requests (INCRBY, GET) in
// memory, with the outcome outcome picks for the n-th request. A write
// that fails never lands; one whose outcome is unknown lands every other
// time, as a timed-out write may or may not have. After stopAfter requests
// it calls stop (the end of the traffic phase), so no test depends on time.
type fakeCluster struct {
	outcome   func(n int) history.Type
	stopAfter int
	stop      context.CancelFunc

	mu        sync.Mutex
	values    map[string]int64
	requests  int
	refreshes int
}

func newFakeCluster(outcome func(n int) history.Type) *fakeCluster {
	return &fakeCluster{outcome: outcome, values: map[string]int64{}}
}

func (f *fakeCluster) Do(ctx context.Context, req client.Request) client.Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests++
	n := f.requests
	if f.stop != nil && n >= f.stopAfter {
		f.stop()
	}
	cmds := req.Build(ctx)
	res := client.Result{Node: "10.0.0.1:6379", Cmds: cmds, Outcome: f.outcome(n)}
	switch res.Outcome {
	case history.Fail:
		res.Err = errors.New("CLUSTERDOWN The cluster is down")
		return res
	case history.Info:
		res.Err = errors.New("read tcp: i/o timeout")
		if n%2 == 0 {
			f.apply(cmds)
		}
		return res
	}
	f.apply(cmds)
	return res
}

func (f *fakeCluster) apply(cmds []redis.Cmder) {
	for _, cmd := range cmds {
		args := cmd.Args()
		key := fmt.Sprint(args[1])
		switch c := cmd.(type) {
		case *redis.IntCmd: // incrby key delta
			d, _ := strconv.ParseInt(fmt.Sprint(args[2]), 10, 64)
			f.values[key] += d
			c.SetVal(f.values[key])
		case *redis.StringCmd: // get key
			if v, ok := f.values[key]; ok {
				c.SetVal(strconv.FormatInt(v, 10))
			} else {
				c.SetErr(redis.Nil)
			}
		}
	}
}

func (f *fakeCluster) PrimaryClient(slot int) (string, *redis.Client) { return "", nil }
func (f *fakeCluster) NoteError(slot int, err error)                  {}
func (f *fakeCluster) Refresh(ctx context.Context) error {
	f.mu.Lock()
	f.refreshes++
	f.mu.Unlock()
	return nil
}

func always(t history.Type) func(int) history.Type { return func(int) history.Type { return t } }

// runCounter drives the counter workload through the traffic phase (until
// the fake has served traffic requests) and the final reads, then checks
// the pairing every history must have and returns the history.
func runCounter(t *testing.T, f *fakeCluster, traffic int) ([]history.Op, workloads.Workload, Config) {
	t.Helper()
	cfg := Config{Concurrency: 4, Seed: 7}
	w, err := workloads.New("counter", workloads.Config{Prefix: "t:"})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := NewRecorder(filepath.Join(t.TempDir(), history.FileName), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	ctx := context.Background()
	trafficCtx, stop := context.WithCancel(ctx)
	f.mu.Lock()
	f.stop, f.stopAfter = stop, traffic
	f.mu.Unlock()
	ws := []workloads.Workload{w}
	runWorkers(trafficCtx, ctx, cfg, ws, workloads.Own{Conn: f}, rec)

	f.mu.Lock()
	f.outcome = always(history.OK) // the cluster has healed
	f.mu.Unlock()
	if failed := settledPhase(ctx, cfg, ws, workloads.Workload.FinalOps, f, rec, 1<<21); failed != 0 {
		t.Fatalf("%d final reads never succeeded against a healed cluster", failed)
	}
	ops := recorded(t, rec)
	pairs, err := history.Pairs(ops)
	if err != nil {
		t.Fatalf("the runner wrote a history that does not pair: %v", err)
	}
	for _, p := range pairs {
		if p.Completion == nil {
			t.Fatalf("op %d never completed", p.Invoke.Index)
		}
		inv, done := p.Invoke, p.Completion
		if done.Process != inv.Process || done.F != inv.F || done.Key != inv.Key {
			t.Fatalf("completion %+v is not paired with its invocation %+v", done, inv)
		}
	}
	return ops, w, cfg
}

func countTypes(ops []history.Op) map[history.Type]int {
	n := map[history.Type]int{}
	for _, op := range ops {
		n[op.Type]++
	}
	return n
}

func counterVerdict(ctx context.Context, w workloads.Workload, ops []history.Op) checker.Result {
	for _, c := range w.Checkers(workloads.CheckOptions{}) {
		if c.Name() == "counter" {
			return c.Check(ctx, checker.NewHistory(ops))
		}
	}
	panic("the counter workload has no counter checker")
}

// A cluster that completes every op: every invocation completes ok, no
// process is retired, and the counter checker finds the history valid.
func TestRunnerPerfectCluster(t *testing.T) {
	f := newFakeCluster(always(history.OK))
	ops, w, cfg := runCounter(t, f, 200)
	n := countTypes(ops)
	if n[history.Fail] != 0 || n[history.Info] != 0 || n[history.OK] != n[history.Invoke] || n[history.OK] < 200 {
		t.Fatalf("types %v: want only invocations and as many ok completions (at least 200)", n)
	}
	for _, op := range ops {
		if op.Process >= history.Process(cfg.Concurrency) && op.Process < 1<<21 {
			t.Fatalf("op %d: process %d retired with no unknown outcome", op.Index, op.Process)
		}
		if op.Type == history.OK && op.F == "add" && op.Node != "10.0.0.1:6379" {
			t.Fatalf("op %d: completion lost the node that served it: %+v", op.Index, op)
		}
	}
	if r := counterVerdict(context.Background(), w, ops); r.Valid != checker.Valid {
		t.Fatalf("counter checker on a perfect run: %v %v", r.Valid, r.Figures)
	}
}

// A cluster that refuses every third op and leaves every third outcome
// unknown: fail completions carry the error and the invocation's value,
// a process whose op is unknown is retired for a fresh one, and the
// counter checker still finds the history valid (unknown adds may land).
func TestRunnerImperfectCluster(t *testing.T) {
	f := newFakeCluster(func(n int) history.Type { return [...]history.Type{history.Fail, history.Info, history.OK}[n%3] })
	ops, w, cfg := runCounter(t, f, 300)
	n := countTypes(ops)
	if n[history.Fail] < 50 || n[history.Info] < 50 || n[history.OK] < 50 {
		t.Fatalf("types %v: want many of each outcome", n)
	}
	pairs, _ := history.Pairs(ops)
	retired := map[history.Process]bool{}
	fresh := 0
	for _, p := range pairs {
		inv, done := p.Invoke, p.Completion
		if retired[inv.Process] {
			t.Fatalf("op %d: process %d invoked again after an unknown outcome", inv.Index, inv.Process)
		}
		if inv.Process >= history.Process(cfg.Concurrency) && inv.Process < 1<<21 {
			fresh++
		}
		switch done.Type {
		case history.Fail, history.Info:
			if done.ErrorText() == "" || string(done.Value) != string(inv.Value) {
				t.Fatalf("%s completion %+v: want the error and the invocation's value %s", done.Type, done, inv.Value)
			}
			if done.Type == history.Info {
				retired[inv.Process] = true
			}
		}
	}
	if fresh == 0 {
		t.Fatal("no fresh process took the place of a retired one")
	}
	if r := counterVerdict(context.Background(), w, ops); r.Valid != checker.Valid {
		t.Fatalf("counter checker on an honest imperfect run: %v %v", r.Valid, r.Figures)
	}
}

// A settled-phase op that fails is retried as a new op until it succeeds;
// one that never succeeds before the context ends is counted.
func TestSettledPhaseRetries(t *testing.T) {
	f := newFakeCluster(func(n int) history.Type {
		if n <= 2 {
			return history.Fail
		}
		return history.OK
	})
	w, _ := workloads.New("counter", workloads.Config{Prefix: "t:"})
	rec, err := NewRecorder(filepath.Join(t.TempDir(), history.FileName), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	ws := []workloads.Workload{w}
	cfg := Config{Concurrency: 4}
	final := len(w.FinalOps())
	if failed := settledPhase(context.Background(), cfg, ws, workloads.Workload.FinalOps, f, rec, 1<<21); failed != 0 {
		t.Fatalf("%d ops never succeeded, want all after a retry", failed)
	}
	n := countTypes(recorded(t, rec))
	if n[history.Invoke] != final+2 || n[history.Fail] != 2 || n[history.OK] != final {
		t.Fatalf("types %v: want %d reads, 2 of them failed and retried as new ops", n, final)
	}

	ctx, cancel := context.WithCancel(context.Background())
	f = newFakeCluster(always(history.Fail))
	f.stop, f.stopAfter = cancel, 1
	if failed := settledPhase(ctx, cfg, ws, workloads.Workload.FinalOps, f, rec, 1<<22); failed != final {
		t.Fatalf("%d ops counted as never succeeded, want all %d", failed, final)
	}
}

func TestCheckerListGroupsByWorkload(t *testing.T) {
	got := checkerList([]string{"counter/counter", "counter/rpo", "set/set", "set/rpo", "perf"})
	if want := "5 checkers: counter (counter, rpo), set (set, rpo), perf"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
