package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/harness/suite"
	"github.com/redline-dev/redline/results"
)

type suiteOptions struct {
	resume  string
	preset  string
	sets    []string
	results string
	dryRun  bool
	stdout  io.Writer
	stderr  io.Writer
}

func newSuiteCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &suiteOptions{stdout: stdout, stderr: stderr}
	c := &cobra.Command{
		Use:   "suite FILE",
		Short: "Run a YAML matrix of tests one after another; junit.xml and a summary for CI",
		Long: `Run a suite of tests: a YAML file whose keys are 'redline run' flag names,
with defaults, a matrix whose lists are crossed, and a list of runs:

  name: release-check
  defaults: {target: redis, time-limit: 60s, server-binary: ./src/redis-server}
  matrix: {workload: [register, set, txn], nemesis: [partition, kill, failover, migrate]}
  runs:
    - {workload: counter, nemesis: partition, wait: 1}

Runs go one after another (one cluster at a time), each stored as a normal run.
The suite writes redline-results/suites/<name>/<timestamp>/ with suite.yaml (expanded),
summary.json, junit.xml (one testcase per run) and summary.html. --dry-run
lists the expanded runs with their flags and the estimated time (each run's
time limit plus about 15 s) and starts nothing.

Exit code: the worst verdict (1 some run invalid, else 2 some run unknown or
failed, else 0); 254 for a bad file, naming the line and key, or a --results
that is not a writable directory; 130 if the suite was interrupted (resume it
with --resume DIR).`,
		Example: `  redline suite release-check.yaml
  redline suite --preset release --dry-run
  redline suite --preset release --set target=redis --set server-binary=./src/redis-server
  redline suite --resume redline-results/suites/release-check/20261130T210000.000`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSuite(cmd.Context(), o, args)
		},
	}
	f := c.Flags()
	f.StringVar(&o.resume, "resume", "", "suite directory of an interrupted suite: run only what has no verdict yet")
	f.StringVar(&o.preset, "preset", "", "a bundled suite instead of FILE: release (every workload under every fault, 32 runs, about 24 min), clients (5 client libraries x kill, partition, pause, failover, migrate of a primary on counter, about 25 min); --dry-run lists the runs")
	f.StringArrayVar(&o.sets, "set", nil, "key=value applied to every run over the file (repeatable), e.g. --set target=redis")
	f.StringVar(&o.results, "results", defaultStore, "directory of the results store (runs, and suites/<name>/<ts>/)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print every run's flags and the estimated total time; start nothing")
	return c
}

func runSuite(ctx context.Context, o *suiteOptions, args []string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var s *suite.Suite
	var prior *suite.Summary
	var dir string
	switch {
	case o.resume != "":
		if len(args) > 0 || o.preset != "" || len(o.sets) > 0 {
			return badArgs("--resume continues a suite as it was: give no FILE, --preset or --set with it")
		}
		var err error
		if prior, err = suite.Load(o.resume); err != nil {
			return badArgs("--resume: %v", err)
		}
		s, dir = prior.Suite(), o.resume
		if prior.ResultsRoot != "" {
			o.results = prior.ResultsRoot // the runs of one suite stay in one store
		}
	default:
		var data []byte
		var err error
		var name string
		switch {
		case o.preset != "" && len(args) > 0:
			return badArgs("give a suite FILE or --preset, not both")
		case o.preset != "":
			name = "preset " + o.preset
			if data, err = suite.Preset(o.preset); err != nil {
				return badArgs("--preset: %v", err)
			}
		case len(args) == 1:
			name = args[0]
			if data, err = os.ReadFile(args[0]); err != nil {
				return badArgs("suite file: %v", err)
			}
		default:
			return badArgs("give a suite FILE (see 'redline suite --help') or --preset release")
		}
		if err := checkStoreDir("--results", o.results); err != nil {
			return err
		}
		overrides, err := parseSets(o.sets)
		if err != nil {
			return err
		}
		s, err = suite.Parse(data, overrides, checkRunFlag, func(ps suite.Params) error {
			return validateSuiteRun(ps, o.preset != "")
		})
		if err != nil {
			return badArgs("%s: %v", name, err)
		}
		for _, sk := range s.Skipped {
			fmt.Fprintf(o.stderr, "redline: suite %s: skipping %s\n", s.Name, sk)
		}
		dir = filepath.Join(o.results, "suites", s.Name, time.Now().UTC().Format(results.TimeLayout))
	}
	if o.dryRun {
		return printSuitePlan(o.stdout, s, dir, hasVerdict(prior))
	}
	return executeSuite(ctx, s, dir, prior, o.results, "redline suite", o.stdout, o.stderr)
}

// hasVerdict says which runs of a resumed suite keep their verdict (nil
// for a new suite).
func hasVerdict(prior *suite.Summary) func(int) bool {
	if prior == nil {
		return nil
	}
	return func(i int) bool {
		if i >= len(prior.Runs) {
			return false
		}
		switch prior.Runs[i].Verdict {
		case suite.Valid, suite.Invalid, suite.Unknown:
			return true
		}
		return false
	}
}

// executeSuite runs a suite into dir and turns its summary into an exit
// code; the RPO study goes through here too (command names it for the
// resume hint).
func executeSuite(ctx context.Context, s *suite.Suite, dir string, prior *suite.Summary, resultsRoot, command string, stdout, stderr io.Writer) error {
	ctx, stop := notifyInterrupts(ctx, stderr)
	defer stop()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return harnessFailed(fmt.Errorf("suite directory: %w", err))
	}
	// The runs' own output (progress lines, logs) goes to suite.log; the
	// terminal shows the suite's progress.
	logFile, err := os.OpenFile(filepath.Join(dir, "suite.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return harnessFailed(err)
	}
	defer logFile.Close()
	tty := false
	if f, ok := stdout.(*os.File); ok {
		tty = harness.IsTerminal(f)
	}
	fmt.Fprintf(stdout, "suite %s: %d runs, results in %s\n", s.Name, len(s.Runs), dir)
	sum, err := suite.Execute(ctx, s, suite.Options{
		Dir: dir, ResultsRoot: resultsRoot, Out: stdout, TTY: tty, Prior: prior,
		Run: func(ctx context.Context, r suite.Run) suite.Outcome {
			return runSuiteRun(ctx, r, resultsRoot, logFile)
		},
	})
	if err != nil {
		return harnessFailed(err)
	}
	c := sum.Counts()
	fmt.Fprintf(stdout, "\nsuite %s: %s (valid %d, invalid %d, unknown %d, error %d, not run %d)\nsummary: %s\njunit:   %s\n",
		s.Name, strings.ToUpper(sum.Verdict()), c[suite.Valid], c[suite.Invalid], c[suite.Unknown], c[suite.Error], c[suite.Pending],
		filepath.Join(dir, "summary.html"), filepath.Join(dir, "junit.xml"))
	if sum.Interrupted {
		return interrupted("suite interrupted; resume it with '%s --resume %s'", command, dir)
	}
	if code := sum.ExitCode(); code != exitValid {
		return verdict{code}
	}
	return nil
}

// runSuiteRun runs one test of a suite exactly as `redline run` would with
// the same flags, its output going to the suite's log.
func runSuiteRun(ctx context.Context, r suite.Run, resultsRoot string, log io.Writer) suite.Outcome {
	o, c := newRunOptions(log, log)
	var out suite.Outcome
	fail := func(err error) suite.Outcome {
		out.Code, out.Err = exitHarness, err.Error()
		var ee *exitError
		if errors.As(err, &ee) {
			out.Code = ee.code
		}
		return out
	}
	if err := applyParams(c, r.Params); err != nil {
		return fail(badArgs("%v", err))
	}
	o.cfg.ResultsDir = resultsRoot
	o.cfg.Command = append(os.Args[:len(os.Args):len(os.Args)], "# run "+r.Name)
	if err := o.validate(c.Flags().Changed("target")); err != nil {
		return fail(err)
	}
	o.runDir = func(dir string) { out.Dir = dir }
	fmt.Fprintf(log, "\n=== suite run %s: %s\n", r.Name, o.cfg.TestName)
	code, err := runOnce(ctx, o, o.cfg)
	if err != nil {
		fmt.Fprintf(log, "redline: %v\n", err)
		return fail(err)
	}
	out.Code = code
	return out
}

// newRunOptions is a fresh `run` command's options and flag set.
func newRunOptions(stdout, stderr io.Writer) (*runOptions, *cobra.Command) {
	o := &runOptions{stdout: stdout, stderr: stderr}
	c := &cobra.Command{Use: "run"}
	addRunFlags(c, o)
	return o, c
}

// suiteOnlyKeys are run flags a suite decides itself.
var suiteOnlyKeys = map[string]string{
	"results":    "the suite stores every run under its own --results",
	"test-count": "list the run again or vary seed in the matrix instead",
	"dry-run":    "give --dry-run to the suite command",
}

// checkRunFlag validates one suite key by setting the `run` flag of that
// name on a fresh flag set.
func checkRunFlag(key string, values []string) error {
	if why, ok := suiteOnlyKeys[key]; ok {
		return fmt.Errorf("%s is not allowed in a suite: %s", key, why)
	}
	_, c := newRunOptions(io.Discard, io.Discard)
	return applyParams(c, suite.Params{{Key: key, Values: values}})
}

func applyParams(c *cobra.Command, ps suite.Params) error {
	for _, p := range ps {
		f := c.Flags().Lookup(p.Key)
		if f == nil {
			return fmt.Errorf("unknown key %q: keys are 'redline run' flag names (see 'redline run --help')", p.Key)
		}
		values := p.Values
		if f.Value.Type() != "stringArray" {
			values = []string{strings.Join(values, ",")}
		}
		for _, v := range values {
			if err := c.Flags().Set(p.Key, v); err != nil {
				return fmt.Errorf("--%s %s: %v", p.Key, v, err)
			}
		}
	}
	return nil
}

// validateSuiteRun checks a whole run as `redline run` would before
// starting anything. In a preset, a fault the target cannot suffer skips
// the run instead of failing the suite.
func validateSuiteRun(ps suite.Params, preset bool) error {
	_, err := suiteRunOptions(ps)
	if err != nil && preset && strings.Contains(err.Error(), "--nemesis clock:") {
		return fmt.Errorf("%w: %v", suite.ErrSkip, err)
	}
	return err
}

// suiteRunOptions are a suite run's options as `redline run` would have
// them, validated.
func suiteRunOptions(ps suite.Params) (*runOptions, error) {
	o, c := newRunOptions(io.Discard, io.Discard)
	if err := applyParams(c, ps); err != nil {
		return nil, err
	}
	return o, o.validate(c.Flags().Changed("target"))
}

// parseSets reads --set key=value overrides.
func parseSets(sets []string) (suite.Params, error) {
	var out suite.Params
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, badArgs("--set %q: expected key=value, e.g. target=redis", s)
		}
		if err := checkRunFlag(k, []string{v}); err != nil {
			return nil, badArgs("--set %s: %v", s, err)
		}
		out = append(out, suite.Param{Key: k, Values: []string{v}})
	}
	return out, nil
}
