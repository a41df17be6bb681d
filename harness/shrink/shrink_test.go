package shrink

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/nemesis"
)

func base() harness.Config {
	return harness.Config{
		Workloads: []string{"register"}, Nemesis: []string{"kill", "failover"}, Seed: 5,
		NemesisInterval: harness.Duration(6 * time.Second), TimeLimit: harness.Duration(60 * time.Second),
		Concurrency: 10, Schedule: nemesis.Schedule([]string{"kill", "failover"}, 5, 9),
	}
}

// fakeRun shows the anomaly only when step culprit (by its seed) is in
// the schedule, at least minWorkers workers run and the time limit covers
// the step; it counts its calls and advances a fake clock by took.
type fakeRun struct {
	culprit    uint64
	minWorkers int
	calls      int
	clock      time.Time
	took       time.Duration
	failAt     int
}

func (f *fakeRun) run(_ context.Context, cfg harness.Config) (Trial, error) {
	f.calls++
	f.clock = f.clock.Add(f.took)
	if f.calls == f.failAt {
		return Trial{}, errors.New("the cluster did not start")
	}
	tr := Trial{Dir: fmt.Sprintf("run-%d", f.calls)}
	i := slices.IndexFunc(cfg.Schedule, func(s nemesis.ScheduledStep) bool { return s.Seed == f.culprit })
	if i < 0 || cfg.Concurrency < f.minWorkers {
		return tr, nil
	}
	st := cfg.Schedule[i]
	if at := time.Duration((float64(st.K) + 0.5 + st.Hold) * float64(cfg.NemesisInterval.D())); at > cfg.TimeLimit.D() {
		return tr, nil
	}
	tr.Invalid = []string{"linearizable", "rto"}
	return tr, nil
}

// The search ends with the one culprit step, moved to the first slot, the
// shortest time limit that still covers it, the fewest workers that show
// it and one key, and names the run that showed it.
func TestShrinkFindsTheCulprit(t *testing.T) {
	b := base()
	culprit := b.Schedule[6]
	f := &fakeRun{culprit: culprit.Seed, minWorkers: 3, took: time.Minute}
	r := Shrink(context.Background(), b, "orig", f.run, Options{Checkers: []string{"linearizable"}, MaxRuns: 100, Now: func() time.Time { return f.clock }})
	if len(r.Schedule) != 1 || r.Schedule[0].Seed != culprit.Seed || r.Schedule[0].K != 0 {
		t.Fatalf("schedule %+v: want only the culprit step (seed %d) at slot 0", r.Schedule, culprit.Seed)
	}
	if r.Config.Concurrency != 5 {
		t.Fatalf("concurrency %d: halving from 10 with 3 needed ends at 5 (10, 5, then 2 fails)", r.Config.Concurrency)
	}
	if r.Config.Keys != 1 {
		t.Fatalf("keys %d, want 1", r.Config.Keys)
	}
	if tl := r.Config.TimeLimit.D(); tl > 15*time.Second || tl < time.Duration((0.5+culprit.Hold)*6*float64(time.Second)) {
		t.Fatalf("time limit %s: want just past the culprit step at slot 0 and one interval more", tl)
	}
	if r.SmallestDir == "orig" || !strings.HasPrefix(r.SmallestDir, "run-") || !strings.Contains(r.Stopped, "no smaller candidate") {
		t.Fatalf("smallest dir %q, stopped %q", r.SmallestDir, r.Stopped)
	}
	last := r.Attempts[len(r.Attempts)-1]
	for _, a := range r.Attempts {
		if a.Reproduced && a.Dir == r.SmallestDir {
			last = a
		}
	}
	if !last.Reproduced || last.Size != r.Smallest {
		t.Fatalf("the smallest run %q is not a reproducing attempt of that size: %+v", r.SmallestDir, last)
	}
	if r.Original.Steps != 9 || r.Smallest.Steps != 1 {
		t.Fatalf("sizes %+v -> %+v", r.Original, r.Smallest)
	}
	md := Markdown(r, "orig", "redline run --replay "+r.SmallestDir)
	if !strings.Contains(md, "redline run --replay "+r.SmallestDir) || !strings.Contains(md, "| smallest | 1 |") {
		t.Fatalf("shrink.md:\n%s", md)
	}
}

// An anomaly of another checker does not count, nor does a rerun that
// failed; with nothing reproducing, the original stays the smallest.
func TestShrinkKeepsTheOriginalWhenNothingReproduces(t *testing.T) {
	b := base()
	f := &fakeRun{culprit: b.Schedule[0].Seed, took: time.Second, failAt: 1}
	r := Shrink(context.Background(), b, "orig", f.run, Options{Checkers: []string{"set"}, MaxRuns: 200, Now: func() time.Time { return f.clock }})
	if r.SmallestDir != "orig" || len(r.Schedule) != 9 || r.Config.Concurrency != 10 {
		t.Fatalf("want the original back, got %s with %d steps", r.SmallestDir, len(r.Schedule))
	}
	if r.Attempts[0].Error == "" || r.Attempts[0].Reproduced {
		t.Fatalf("a failed rerun must be recorded as such: %+v", r.Attempts[0])
	}
	for _, a := range r.Attempts {
		if a.Reproduced {
			t.Fatalf("attempt %+v: linearizable's anomaly does not reproduce set's", a)
		}
	}
}

// The budget bounds the reruns: max-runs exactly, and no rerun starts
// when the time left is less than the last one took.
func TestShrinkBudget(t *testing.T) {
	b := base()
	f := &fakeRun{culprit: b.Schedule[6].Seed, took: time.Minute}
	r := Shrink(context.Background(), b, "orig", f.run, Options{Checkers: []string{"linearizable"}, MaxRuns: 3, Now: func() time.Time { return f.clock }})
	if f.calls != 3 || len(r.Attempts) != 3 || !strings.Contains(r.Stopped, "max-runs") {
		t.Fatalf("%d calls, %d attempts, stopped %q: want 3 and max-runs", f.calls, len(r.Attempts), r.Stopped)
	}
	// Rerun 1 (no fault) fails, 2 (the first half) fails, 3 (the second
	// half, with the culprit) reproduces: stopped there, it is the smallest.
	if !r.Attempts[2].Reproduced || len(r.Schedule) != len(b.Schedule)/2 || r.Smallest.Steps != len(r.Schedule) || r.SmallestDir != r.Attempts[2].Dir {
		t.Fatalf("stopped after a reproducing rerun: schedule %d steps, smallest %+v, dir %s; attempts %+v", len(r.Schedule), r.Smallest, r.SmallestDir, r.Attempts)
	}
	f = &fakeRun{culprit: b.Schedule[6].Seed, took: time.Minute}
	r = Shrink(context.Background(), b, "orig", f.run, Options{Checkers: []string{"linearizable"}, MaxRuns: 100,
		TimeBudget: 150 * time.Second, Now: func() time.Time { return f.clock }})
	if f.calls != 2 || !strings.Contains(r.Stopped, "time budget") {
		t.Fatalf("%d calls, stopped %q: 2 one-minute reruns fit 150 s, a third does not", f.calls, r.Stopped)
	}
}
