package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/google/shlex"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/redline-dev/redline/harness/bench"
)

// runVersus runs the bench as given (A), then with --versus's flags
// changed (B), and compares the two. B gets every flag A was given except
// the ones --versus sets (which replace A's, repeatable ones included)
// and A's seed, so the two differ only in what --versus names.
func runVersus(cmd *cobra.Command, o *runOptions) error {
	bArgs, err := versusArgs(cmd, o.capacity.versus)
	if err != nil {
		return err
	}
	// B's flags are checked before A runs: a typo must not cost a run.
	check := &runOptions{stdout: o.stdout, stderr: o.stderr}
	cc := benchCommand(check)
	if err := cc.ParseFlags(bArgs); err != nil {
		return badArgs("--versus: %v", err)
	}
	check.cfg.Bench = true
	if err := check.validate(cc.Flags().Changed("target")); err != nil {
		return fmt.Errorf("--versus (B): %w", err)
	}

	var dirs [2]string
	fmt.Fprintf(o.stdout, "=== A: the bench as given\n")
	o.runDir = func(d string) { dirs[0] = d }
	codeA, err := versusCode(runRun(cmd.Context(), o, cmd.Flags().Changed("target")))
	if err != nil {
		return err
	}
	fmt.Fprintf(o.stdout, "\n=== B: %s\n", o.capacity.versus)
	ob := &runOptions{stdout: o.stdout, stderr: o.stderr, runDir: func(d string) { dirs[1] = d }}
	cb := benchCommand(ob)
	cb.SetArgs(bArgs)
	cb.SetContext(cmd.Context())
	cb.SilenceUsage, cb.SilenceErrors = true, true
	codeB, err := versusCode(cb.Execute())
	if err != nil {
		return err
	}
	if dirs[0] == "" || dirs[1] == "" {
		return harnessFailed(errors.New("--versus: a side left no run directory to compare"))
	}
	fmt.Fprintf(o.stdout, "\n=== A vs B (B: %s)\n", o.capacity.versus)
	if _, err := compareBenchRuns(o.stdout, dirs[:]); err != nil {
		return err
	}
	ra, _, errA := bench.Load(dirs[0])
	rb, _, errB := bench.Load(dirs[1])
	if errA == nil && errB == nil && ra != nil && rb != nil {
		if ra.Capacity != nil && rb.Capacity != nil {
			fmt.Fprintf(o.stdout, "versus: capacity at %s: A %s ops/s, B %s ops/s (%s)\n", ra.Capacity.SLO.Text, bench.Count(ra.Capacity.Rate), bench.Count(rb.Capacity.Rate), pctDelta(ra.Capacity.Rate, rb.Capacity.Rate))
			for _, side := range []struct {
				name string
				c    *bench.Capacity
			}{{"A", ra.Capacity}, {"B", rb.Capacity}} {
				if k := side.c.LimitKind; k == "host" || k == "generator" {
					fmt.Fprintf(o.stdout, "  note: %s's limit was %s, not the cluster: the difference may be the machine's, not the configuration's (repeat it, or run the generator elsewhere)\n",
						side.name, map[string]string{"host": "host contention", "generator": "the generator's CPU"}[k])
				}
			}
		}
		fmt.Fprintf(o.stdout, "versus: throughput A %s ops/s, B %s ops/s (%s)\n", bench.Count(ra.Throughput), bench.Count(rb.Throughput), pctDelta(ra.Throughput, rb.Throughput))
		printThroughput(o.stdout, rb.Throughput)
	}
	if code := max(codeA, codeB); code != exitValid {
		return verdict{code}
	}
	return nil
}

// versusArgs are B's arguments: A's flags (with A's seed, chosen now if
// A has none) except --versus and those the --versus string sets, then
// the --versus string's.
func versusArgs(cmd *cobra.Command, versus string) ([]string, error) {
	extra, err := shlex.Split(versus)
	if err != nil || len(extra) == 0 {
		return nil, badArgs("--versus %q: expected the flags that change for B, e.g. --versus '--nodes 8'", versus)
	}
	changed := map[string]bool{}
	for _, a := range extra {
		name, ok := strings.CutPrefix(a, "--")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, "=")
		if cmd.Flags().Lookup(name) == nil {
			return nil, badArgs("--versus: bench has no flag --%s", name)
		}
		if name == "versus" {
			return nil, badArgs("--versus cannot contain --versus")
		}
		changed[name] = true
	}
	if !cmd.Flags().Changed("seed") {
		_ = cmd.Flags().Set("seed", fmt.Sprint(rand.Int64N(1<<53-1)+1))
	}
	var args []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if f.Name == "versus" || changed[f.Name] {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				args = append(args, "--"+f.Name+"="+v)
			}
			return
		}
		args = append(args, "--"+f.Name+"="+f.Value.String())
	})
	return append(args, extra...), nil
}

// versusCode turns a side's error into its exit code; other errors stop.
func versusCode(err error) (int, error) {
	var v verdict
	if err == nil {
		return exitValid, nil
	}
	if errors.As(err, &v) {
		return v.code, nil
	}
	return 0, err
}

func pctDelta(a, b float64) string {
	if a == 0 {
		return "A measured nothing"
	}
	return fmt.Sprintf("%+.1f%%", (b-a)/a*100)
}
