package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/harness/shrink"
	"github.com/redline-dev/redline/results"
)

type shrinkOptions struct {
	maxRuns    int
	timeBudget time.Duration
	checkers   string
	yes        bool
	// again are the settings a replay never takes from config.json
	// (withholdUnsafe), given again on the command line, by flag name.
	again map[string]*string
}

// shrinkAgain are the run flags shrink takes to give again what
// withholdUnsafe leaves out of the stored config.
var shrinkAgain = []struct{ name, usage string }{
	{"client", "the client library under test, if the run's was an exec: command (not taken from config.json)"},
	{"addrs", "the existing cluster the run tested (not taken from config.json)"},
	{"selector", "kubernetes: the existing pods the run tested (not taken from config.json)"},
	{"runtime", "the run's runtime, if it was kubernetes (not taken from config.json)"},
	{"namespace", "kubernetes: the namespace, with --runtime kubernetes"},
	{"kubeconfig", "kubernetes: the kubeconfig file (not taken from config.json)"},
	{"server-binary", "the server binary the run tested (not taken from config.json)"},
	{"image", "the container image the run tested (not taken from config.json)"},
	{"results", "directory of the results store the reruns go to (not taken from config.json) [" + defaultStore + "]"},
}

// applyAgain withholds from cfg what a replay never takes from a stored
// config, then sets what the command line gave again.
func (so *shrinkOptions) applyAgain(cfg *harness.Config) []string {
	given := func(name string) bool { p := so.again[name]; return p != nil && *p != "" }
	withheld := withholdUnsafe(cfg, given)
	for _, a := range shrinkAgain {
		if !given(a.name) {
			continue
		}
		v := *so.again[a.name]
		switch a.name {
		case "client":
			cfg.Client = v
		case "addrs":
			cfg.Target, cfg.Addrs = "external", splitList(v)
		case "selector":
			cfg.Selector = v
		case "runtime":
			cfg.Runtime = v
		case "namespace":
			cfg.Namespace = v
		case "kubeconfig":
			cfg.Kubeconfig = v
		case "server-binary":
			cfg.ServerBinary = v
		case "image":
			cfg.Image = v
		case "results":
			cfg.ResultsDir = v
		}
	}
	return withheld
}

func newShrinkCmd(stdout, stderr io.Writer) *cobra.Command {
	so := &shrinkOptions{}
	c := &cobra.Command{
		Use:   "shrink DIR",
		Short: "Rerun an invalid run smaller and smaller while its anomaly persists",
		Long: `Rerun the stored invalid run in DIR (its config and exact fault schedule, as
'redline run --replay' does) while dropping fault steps, time, workers and keys,
keeping each change under which the same checker still finds the run invalid.
It ends with the smallest run that still shows the anomaly and the command that
reruns it, written to DIR/shrink.json and DIR/shrink.md. Every rerun is a full
run (cluster, traffic, faults, checks) stored in the results directory.

Exit codes: 0 the search ran (whether or not it shrank anything), 254 bad
arguments (e.g. DIR is not an invalid run), 130 interrupted (what it found so
far is written), 255 redline itself failed.`,
		Example: `  redline shrink redline-results/latest --max-runs 12 --time-budget 30m
  redline shrink redline-results/latest --checker register/linearizable`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return badArgs("shrink needs exactly one run directory, e.g. 'redline shrink redline-results/latest'")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runShrink(cmd.Context(), args[0], so, stdout, stderr)
		},
	}
	f := c.Flags()
	f.IntVar(&so.maxRuns, "max-runs", 20, "at most this many reruns")
	f.DurationVar(&so.timeBudget, "time-budget", time.Hour, "stop starting reruns when this much time is spent (0 = no bound)")
	f.StringVar(&so.checkers, "checker", "", "the anomaly to keep: checkers (comma separated) one of which must stay invalid [the run's invalid checkers]")
	f.BoolVarP(&so.yes, "yes", "y", false, "on a cluster redline did not create, start topology-changing faults without asking")
	so.again = map[string]*string{}
	for _, a := range shrinkAgain {
		so.again[a.name] = f.String(a.name, "", a.usage)
	}
	return c
}

func runShrink(ctx context.Context, dir string, so *shrinkOptions, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if so.maxRuns < 1 {
		return badArgs("--max-runs must be at least 1")
	}
	if so.timeBudget < 0 {
		return badArgs("--time-budget must not be negative")
	}
	cfg, sched, err := loadReplay(dir)
	if err != nil {
		return badArgs("%v", err)
	}
	run, err := results.Open(dir)
	if err != nil {
		return badArgs("%v", err)
	}
	prev, err := run.Summary()
	if err != nil {
		return badArgs("cannot read the run's verdict (results.json): %v; check it first with 'redline check %s'", err, dir)
	}
	var invalid []string
	for name, r := range prev.Checkers {
		if r.Valid == checker.Invalid {
			invalid = append(invalid, name)
		}
	}
	sort.Strings(invalid)
	if len(invalid) == 0 {
		return badArgs("the run in %s is not invalid (verdict %s): there is no anomaly to keep while shrinking", dir, prev.Valid)
	}
	targets := invalid
	if so.checkers != "" {
		targets = splitList(so.checkers)
		for _, t := range targets {
			if !slices.Contains(invalid, t) {
				return badArgs("--checker %s: not invalid in %s (invalid: %s)", t, dir, strings.Join(invalid, ", "))
			}
		}
	}
	sayWithheld(stderr, "shrink", dir, so.applyAgain(&cfg))
	ctx, stop := notifyInterrupts(ctx, stderr)
	defer stop()
	cfg.Schedule, cfg.ReplayOf = sched, dir
	if len(sched) == 0 && len(cfg.Nemesis) > 0 && cfg.Nemesis[0] != "none" {
		fmt.Fprintf(stderr, "shrink: %s recorded no fault schedule (a run older than recorded schedules): its faults replay by seed and cannot be dropped one by one\n", dir)
	}
	fmt.Fprintf(stdout, "shrinking %s: keeping %s invalid; at most %d reruns", dir, strings.Join(targets, " or "), so.maxRuns)
	if so.timeBudget > 0 {
		fmt.Fprintf(stdout, " within %s", so.timeBudget)
	}
	fmt.Fprintln(stdout)
	res := shrink.Shrink(ctx, cfg, run.Dir, rerun(so, stderr), shrink.Options{
		Checkers: targets, MaxRuns: so.maxRuns, TimeBudget: so.timeBudget,
		Log: func(format string, args ...any) { fmt.Fprintf(stdout, format+"\n", args...) },
	})
	command := "redline run --replay " + res.SmallestDir
	if err := run.WriteJSON("shrink.json", struct {
		shrink.Result
		Command string `json:"command"`
	}{res, command}); err != nil {
		return harnessFailed(err)
	}
	if err := run.WriteFile("shrink.md", []byte(shrink.Markdown(res, run.Dir, command))); err != nil {
		return harnessFailed(err)
	}
	o, s := res.Original, res.Smallest
	fmt.Fprintf(stdout, "\nshrunk: %d -> %d fault steps, time limit %s -> %s, %d -> %d workers, keys %d -> %d (0: the workloads' defaults)\n",
		o.Steps, s.Steps, o.TimeLimit, s.TimeLimit, o.Concurrency, s.Concurrency, o.Keys, s.Keys)
	fmt.Fprintf(stdout, "stopped: %s\nsmallest run showing the anomaly: %s\nrerun it: %s\nreport: %s, %s\n",
		res.Stopped, res.SmallestDir, command, run.Path("shrink.md"), run.Path("shrink.json"))
	if ctx.Err() != nil {
		return interrupted("interrupted; the smallest run so far is above")
	}
	return nil
}

// rerun is shrink's run function: a full `redline run` of cfg (validated
// as its flags would be), quiet, returning where it is stored and which
// checkers found it invalid.
func rerun(so *shrinkOptions, stderr io.Writer) shrink.RunFunc {
	return func(ctx context.Context, cfg harness.Config) (shrink.Trial, error) {
		o := &runOptions{stdout: io.Discard, stderr: io.Discard, yes: so.yes}
		o.cfg = cfg
		o.workloads, o.nemesis = strings.Join(cfg.Workloads, ","), strings.Join(cfg.Nemesis, ",")
		if cfg.Target == "external" {
			o.addrs, o.cfg.Addrs = strings.Join(cfg.Addrs, ","), nil
		}
		o.cfg.TestCount, o.cfg.TestIndex, o.cfg.Command = 1, 0, os.Args
		if err := o.validate(false); err != nil {
			return shrink.Trial{}, err
		}
		var tr shrink.Trial
		o.runDir = func(d string) { tr.Dir = d }
		if _, err := runOnce(ctx, o, o.cfg); err != nil {
			fmt.Fprintf(stderr, "shrink: rerun failed: %v\n", err)
			return tr, err
		}
		run, err := results.Open(tr.Dir)
		if err != nil {
			return tr, err
		}
		res, err := run.Summary()
		if err != nil {
			return tr, err
		}
		for name, r := range res.Checkers {
			if r.Valid == checker.Invalid {
				tr.Invalid = append(tr.Invalid, name)
			}
		}
		sort.Strings(tr.Invalid)
		return tr, nil
	}
}
