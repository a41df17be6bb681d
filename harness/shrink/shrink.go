// Package shrink makes an invalid run smaller while its anomaly persists:
// it reruns the run with fewer fault steps, a shorter time limit, fewer
// workers and fewer keys, keeps each change under which the same checker
// still finds the run invalid, and stops at the smallest run it found or
// when its budget (runs, time) is spent. The search is a pure function of
// the run function it is given: tests drive it with a fake one.
package shrink

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/nemesis"
)

// Trial is what one rerun showed: the checkers that found it invalid and
// where it is stored.
type Trial struct {
	Dir     string   `json:"dir,omitempty"`
	Invalid []string `json:"invalid,omitempty"`
}

// RunFunc reruns a config (a full run: cluster, traffic, faults, checks).
type RunFunc func(ctx context.Context, cfg harness.Config) (Trial, error)

// Options bound the search and say what must persist.
type Options struct {
	// Checkers: a rerun reproduces the anomaly when one of these is
	// invalid in it (the original run's invalid checkers).
	Checkers []string
	// MaxRuns bounds the reruns (0: 20).
	MaxRuns int
	// TimeBudget bounds the time spent rerunning (0: no bound). A rerun
	// is not started when the time left is less than the last rerun took.
	TimeBudget time.Duration
	Now        func() time.Time // the clock (nil: time.Now)
	Log        func(format string, args ...any)
}

// Size is what the search makes smaller.
type Size struct {
	Steps       int    `json:"fault_steps"`
	TimeLimit   string `json:"time_limit"`
	Concurrency int    `json:"concurrency"`
	Keys        int    `json:"keys"` // 0: the workloads' defaults
}

// Attempt is one rerun of the search.
type Attempt struct {
	N          int      `json:"n"`
	Change     string   `json:"change"`
	Size       Size     `json:"size"`
	Reproduced bool     `json:"reproduced"`
	Invalid    []string `json:"invalid,omitempty"`
	Dir        string   `json:"dir,omitempty"`
	Error      string   `json:"error,omitempty"`
	TookS      float64  `json:"took_s"`
}

// Result is the search's outcome: the smallest config that still showed
// the anomaly (the original when nothing smaller did), the run that showed
// it, every attempt, and why the search stopped.
type Result struct {
	Checkers    []string                `json:"checkers"`
	Original    Size                    `json:"original"`
	Smallest    Size                    `json:"smallest"`
	Config      harness.Config          `json:"config"`
	Schedule    []nemesis.ScheduledStep `json:"schedule"`
	SmallestDir string                  `json:"smallest_dir"`
	Attempts    []Attempt               `json:"attempts"`
	Stopped     string                  `json:"stopped"`
}

// SizeOf is a config's size.
func SizeOf(cfg harness.Config) Size {
	return Size{Steps: len(cfg.Schedule), TimeLimit: cfg.TimeLimit.D().String(), Concurrency: cfg.Concurrency, Keys: cfg.Keys}
}

// candidate is a smaller config and the change that made it.
type candidate struct {
	change string
	cfg    harness.Config
}

// Shrink searches from base (stored in baseDir, its schedule filled in)
// for the smallest config under which run still reproduces the anomaly.
// Greedy, in the order that removes the most first: the fault steps (all,
// then halves, then one at a time, as delta debugging does), the time
// limit (to just past the last remaining step, then halves), the workers
// (halves), the keys (halves; from the workloads' defaults: 1, 2, 4).
// After each change that reproduces, it starts over from the new config.
func Shrink(ctx context.Context, base harness.Config, baseDir string, run RunFunc, o Options) Result {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	logf := o.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	maxRuns := o.MaxRuns
	if maxRuns <= 0 {
		maxRuns = 20
	}
	res := Result{Checkers: o.Checkers, Original: SizeOf(base), Config: base, SmallestDir: baseDir}
	started := now()
	var lastTook time.Duration
	tried := map[string]bool{}
	stop := func() string {
		switch {
		case ctx.Err() != nil:
			return "interrupted"
		case len(res.Attempts) >= maxRuns:
			return fmt.Sprintf("max-runs reached (%d reruns)", maxRuns)
		case o.TimeBudget > 0 && now().Sub(started)+lastTook > o.TimeBudget:
			return fmt.Sprintf("time budget spent (%s of %s used, a rerun takes about %s)", now().Sub(started).Round(time.Second), o.TimeBudget, lastTook.Round(time.Second))
		}
		return ""
	}
	cur := base
	for {
		progressed := false
		for _, c := range candidates(cur) {
			key := fmt.Sprintf("%+v", SizeOf(c.cfg)) + stepsKey(c.cfg.Schedule)
			if tried[key] {
				continue
			}
			if why := stop(); why != "" {
				res.Stopped = why
				res.Smallest, res.Schedule = SizeOf(res.Config), res.Config.Schedule
				return res
			}
			tried[key] = true
			t0 := now()
			tr, err := run(ctx, c.cfg)
			lastTook = now().Sub(t0)
			a := Attempt{N: len(res.Attempts) + 1, Change: c.change, Size: SizeOf(c.cfg), Invalid: tr.Invalid, Dir: tr.Dir,
				TookS: math.Round(lastTook.Seconds()*10) / 10}
			if err != nil {
				a.Error = err.Error()
			}
			a.Reproduced = err == nil && slices.ContainsFunc(tr.Invalid, func(n string) bool { return slices.Contains(o.Checkers, n) })
			res.Attempts = append(res.Attempts, a)
			logf("shrink: rerun %d (%s): %s", a.N, c.change, map[bool]string{true: "reproduced", false: "not reproduced"}[a.Reproduced])
			if a.Reproduced {
				cur = c.cfg
				res.Config, res.Smallest, res.SmallestDir = cur, SizeOf(cur), tr.Dir
				progressed = true
				break
			}
		}
		if !progressed {
			res.Stopped = "no smaller candidate reproduces the anomaly"
			break
		}
	}
	res.Smallest, res.Schedule = SizeOf(res.Config), res.Config.Schedule
	return res
}

func stepsKey(s []nemesis.ScheduledStep) string {
	var b strings.Builder
	for _, st := range s {
		fmt.Fprintf(&b, "|%d", st.K)
	}
	return b.String()
}

// withSchedule is cfg following steps; no step is no fault at all.
func withSchedule(cfg harness.Config, steps []nemesis.ScheduledStep) harness.Config {
	cfg.Schedule = steps
	if len(steps) == 0 {
		cfg.Nemesis = []string{"none"}
	}
	return cfg
}

// scheduleEnd is when the last step of cfg's schedule is over: its slot
// plus its hold plus one interval for the cluster to notice.
func scheduleEnd(cfg harness.Config) time.Duration {
	if len(cfg.Schedule) == 0 {
		return 0
	}
	last := cfg.Schedule[len(cfg.Schedule)-1]
	iv := cfg.NemesisInterval.D()
	return time.Duration((float64(last.K) + 0.5 + last.Hold + 1) * float64(iv))
}

func candidates(cur harness.Config) []candidate {
	var out []candidate
	s := cur.Schedule
	steps := func(xs []nemesis.ScheduledStep) string {
		var parts []string
		for _, x := range xs {
			parts = append(parts, fmt.Sprintf("%s:%s@%d", x.Fault, x.Mode, x.K))
		}
		return strings.Join(parts, ",")
	}
	if len(s) > 0 {
		out = append(out, candidate{"drop every fault step", withSchedule(cur, nil)})
	}
	// Delta debugging's chunks: keep one of n parts, for n = 2, 4, ...
	for n := 2; n <= len(s); n *= 2 {
		size := (len(s) + n - 1) / n
		for i := 0; i < len(s); i += size {
			keep := slices.Clone(s[i:min(i+size, len(s))])
			if len(keep) < len(s) {
				out = append(out, candidate{"keep fault steps " + steps(keep), withSchedule(cur, keep)})
			}
		}
	}
	for i := len(s) - 1; i >= 0 && len(s) > 1; i-- {
		keep := slices.Delete(slices.Clone(s), i, i+1)
		out = append(out, candidate{"drop fault step " + steps(s[i:i+1]), withSchedule(cur, keep)})
	}
	if len(s) > 0 && s[0].K > 0 {
		shifted := slices.Clone(s)
		for i := range shifted {
			shifted[i].K -= s[0].K
		}
		out = append(out, candidate{fmt.Sprintf("fault steps %d intervals earlier", s[0].K), withSchedule(cur, shifted)})
	}
	tl := cur.TimeLimit.D()
	if end := scheduleEnd(cur).Round(time.Second) + time.Second; len(s) > 0 && end < tl {
		c := cur
		c.TimeLimit = harness.Duration(end)
		out = append(out, candidate{"time limit " + end.String() + " (just past the last fault step)", c})
	}
	if half := (tl / 2).Round(time.Second); half >= time.Second && half >= scheduleEnd(cur) && half < tl {
		c := cur
		c.TimeLimit = harness.Duration(half)
		out = append(out, candidate{"time limit " + half.String(), c})
	}
	if cur.Concurrency > 1 {
		c := cur
		c.Concurrency = cur.Concurrency / 2
		out = append(out, candidate{fmt.Sprintf("%d workers", c.Concurrency), c})
	}
	switch {
	case cur.Keys > 1:
		c := cur
		c.Keys = cur.Keys / 2
		out = append(out, candidate{fmt.Sprintf("%d keys per workload", c.Keys), c})
	case cur.Keys == 0:
		for _, k := range []int{1, 2, 4} {
			c := cur
			c.Keys = k
			out = append(out, candidate{fmt.Sprintf("%d keys per workload", k), c})
		}
	}
	return out
}
