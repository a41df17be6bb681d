package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/harness/bench"
	"github.com/redline-dev/redline/results"
)

func newBenchCmd(stdout, stderr io.Writer) *cobra.Command {
	return benchCommand(&runOptions{stdout: stdout, stderr: stderr})
}

// benchCommand is the bench command filling o (a --versus run makes a
// second one for its B side).
func benchCommand(o *runOptions) *cobra.Command {
	c := &cobra.Command{
		Use:   "bench",
		Short: "Load test: open-loop GET/SET traffic, throughput and corrected latency, optionally under faults",
		Long: `A load test. It starts (or attaches to) a cluster like 'redline run' and drives
the kv workload (GETs and SETs with memtier's knobs) for --time-limit.

With --rate N the load is open-loop: one schedule of N ops/s, each op
routed at its intended send time to its primary's queue, served by that
primary's own --concurrency connections (a stalled primary holds up its
own ops only); latency is measured from each op's intended send time
(corrected: a stall shows in full) and from the actual send (raw). --rate 0 is a closed
loop for maximum throughput: --concurrency workers, each sending its next op when the
previous one completed; the ops bound for a node share one connection to it and are
written together (auto-pipelining; --conn-per-worker: a connection per worker and node). MOVED and ASK are followed, TRYAGAIN retried,
CLUSTERDOWN and reconnects counted per second; nothing ends the run early.
With --nemesis (migrate, member, failover, pause, ...) every fault gets
before / during / after windows. Memory stays bounded: per-second HDR
histograms, no per-op history unless --history.

--slo 'p99<=2ms' searches the capacity: open-loop steps of --slo-step after
--slo-warmup each (--time-limit does not apply), a doubling ramp from --rate,
then a bisection to 5%, the answer measured twice; it prints the curve and
"capacity: N ops/s at p99<=2ms" before the last line, and what limited it.
--plan 'at=10s scale-out; at=30s reshard 500; at=50s failover' makes
capacity changes at those times under the load, each with its windows.
--versus '--nodes 8' runs the bench again with those flags changed and
compares the two (compare.html beside the second).

--run-count N runs the load N times, one after another, and prints the best
run, the worst and the aggregate (latency from the merged histograms), as
memtier_benchmark. --json or --csv prints the summary on stdout for a
machine (everything else then goes to stderr).

--threshold 'p99<=2ms,errors<=0.1%,ops>=5000' makes the bench a CI gate, as
k6's thresholds: each bound is checked after the run and printed with the
value measured (before the last line); GET.p99<=1ms bounds one command.

Other workloads (register, counter, ...) run as in 'redline run', without
their checkers. The last line printed is "throughput: N ops/s".

Exit codes: 0 ok ops were measured (and every --threshold passed), 99 a
--threshold failed, 2 no op succeeded, 253 the environment failed (the
cluster at --addrs cannot be reached, no Docker engine), 254 bad arguments
(a malformed --threshold among them: nothing is started), 255 redline itself
failed, 130 interrupted.`,
		Example: `  redline bench --concurrency 50 --time-limit 30s
  redline bench --target redis --rate 20000 --nemesis pause --ratio 1:1 --value-size 32-512
  redline bench --addrs 10.0.0.5:6379 --preset ycsb-b --keys 100000 --pipeline 8
  redline bench --target redis --slo 'p99<=2ms,errors<=0.1%' --versus '--nodes 8'
  redline bench --target redis --rate 5000 --time-limit 90s --plan 'at=10s scale-out; at=50s reshard 500'
  redline bench --target redis --rate 5000 --time-limit 30s --threshold 'p99<=2ms,GET.p99.9<=5ms,errors<=0.1%'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.cfg.Command = os.Args
			o.cfg.Bench = true
			o.flags = cmd.Flags()
			if o.ci.json || o.ci.csv {
				if o.ci.json && o.ci.csv {
					return badArgs("--json and --csv: choose one summary format for stdout")
				}
				if o.capacity.versus != "" {
					return badArgs("--json/--csv print one run's summary; --versus runs two: run each bench with --json")
				}
				// The summary alone on stdout; everything for people on stderr.
				o.ci.machine, o.stdout = o.stdout, o.stderr
			}
			if o.capacity.versus != "" {
				return runVersus(cmd, o)
			}
			return runRun(cmd.Context(), o, cmd.Flags().Changed("target"))
		},
	}
	addRunFlags(c, o)
	_ = c.Flags().Set("keys", "10000")
	c.Flags().Lookup("keys").DefValue = "10000"
	_ = c.Flags().Set("workload", "kv")
	c.Flags().Lookup("workload").DefValue = "kv"
	f := c.Flags()
	o.kv.Register(f)
	f.BoolVar(&o.cfg.ConnPerWorker, "conn-per-worker", false, "closed loop (--rate 0): each worker its own connection to each node, one write and read per batch, instead of the workers' ops sharing one connection per node, written together (auto-pipelining)")
	f.BoolVar(&o.cfg.History, "history", false, "keep every op in ops.jsonl.gz (off: only per-second histograms are kept)")
	addCapacityFlags(c, o)
	f.StringVar(&o.ci.threshold, "threshold", "", "pass/fail bounds for CI, comma-joined, as k6's: p50/p90/p99/p99.9/mean/max<=2ms (corrected latency), errors<=0.1% (share) or errors<=10 (count), ops>=5000 (ok ops/s), kb>=100 (KB/s); per command as GET.p99<=1ms, SET.errors<=0; checked after the run, each printed measured vs limit; exit 99 when one fails")
	f.IntVar(&o.cfg.RunCount, "run-count", 1, "run the load N times on the cluster, one run after another, as memtier's --run-count: prints each run's throughput, the BEST RUN, WORST RUN and AGGREGATED AVERAGE RESULTS (latency from the runs' merged histograms); bench.json and --threshold are the aggregate's")
	f.BoolVar(&o.ci.json, "json", false, "print the result summary on stdout as one line of JSON (schema in docs/load-tests.md; the figures, thresholds and exit code); progress and the table go to stderr")
	f.IntVar(&o.cfg.Generators, "generators", 0, "load past one machine: run the load from N generators (containers on the cluster's network with the docker runtime, a Job's pods with --runtime kubernetes, local processes for a cluster at --addrs), each open loop at its share of --rate (each step's with --slo) from one start in the cluster's clock, with --concurrency connections per primary each; their per-second HDR histograms are merged exactly into one report, and a generator that dies or reports garbage is named, its share left out, the verdict unknown")
	f.BoolVar(&o.ci.csv, "csv", false, "print the result summary on stdout as CSV (a header, then a row each for set, get and total); progress and the table go to stderr")
	return c
}

// ciFlags are bench's flags for CI before parsing, and where the
// machine-readable summary goes.
type ciFlags struct {
	threshold string
	json, csv bool
	machine   io.Writer // stdout when --json or --csv, else nil
	csvHeader bool      // the CSV header was printed (--test-count)
}

// printMachine prints the summary of --json or --csv.
func (c *ciFlags) printMachine(res *bench.Result, dir string, code int) {
	if c.machine == nil {
		return
	}
	s := res.Summarize(dir, code)
	if c.json {
		_ = s.WriteJSON(c.machine)
		return
	}
	_ = s.WriteCSV(c.machine, !c.csvHeader)
	c.csvHeader = true
}

// validateLoad checks a run of a Load workload and has kv build cfg.KV
// from its flags (kv is the one Load workload); the load driver runs only under
// bench, and alone.
func validateLoad(o *runOptions, cfg *harness.Config) error {
	if !cfg.Bench {
		return badArgs("--workload kv is a load workload without checkers: use 'redline bench --workload kv'")
	}
	if len(cfg.Workloads) > 1 {
		return badArgs("--workload kv cannot be combined with other workloads in one bench")
	}
	c, err := o.kv.Config(cfg.Keys)
	if err != nil {
		return badArgs("%v", err)
	}
	cfg.KV = c
	switch n := cfg.RunCount; {
	case n < 1:
		return badArgs("--run-count %d: at least 1", n)
	case n == 1:
	case o.capacity.slo != "":
		return badArgs("--run-count with --slo: a capacity search measures each rate twice already; drop --run-count")
	case o.capacity.plan != "" || faultsAsked(o):
		return badArgs("--run-count repeats a healthy load; faults and plans have windows within one run: use --test-count for repeated runs with faults")
	case cfg.History:
		return badArgs("--history with --run-count: one op log per bench; drop one of them")
	}
	if o.ci.threshold != "" {
		if _, err := bench.ParseThresholds(o.ci.threshold); err != nil {
			return badArgs("--threshold: %v", err)
		}
		if o.capacity.slo != "" {
			return badArgs("--threshold bounds one run's figures; --slo searches for the rate that meets its objectives: use one of them")
		}
		if o.capacity.versus != "" {
			return badArgs("--threshold with --versus: which of the two runs would it bound? Run each bench with its own --threshold")
		}
		cfg.Thresholds = o.ci.threshold
	}
	if err := validateGenerators(o, cfg); err != nil {
		return err
	}
	return validateCapacity(o, cfg)
}

// compareBenchRuns compares two kv bench runs figure by figure and writes
// a page with both runs' plots overlaid; done is false when the runs are
// not two kv benches (the generic comparison then applies).
func compareBenchRuns(w io.Writer, dirs []string) (done bool, err error) {
	if len(dirs) != 2 {
		return false, nil
	}
	var rs [2]*bench.Result
	var runs [2]*results.Run
	for i, d := range dirs {
		run, err := results.Open(d)
		if err != nil {
			return false, nil
		}
		r, ok, err := bench.Load(run.Dir)
		if !ok {
			return false, nil
		}
		if err != nil {
			return true, badArgs("%v", err)
		}
		rs[i], runs[i] = r, run
	}
	name := func(r *results.Run) string { return r.Test + "/" + r.Time.Format(results.TimeLayout) }
	if err := bench.Compare(w, "A "+name(runs[0]), "B "+name(runs[1]), rs[0], rs[1]); err != nil {
		return true, harnessFailed(err)
	}
	cfgA, _ := bench.ReadConfig(runs[0].Dir)
	cfgB, _ := bench.ReadConfig(runs[1].Dir)
	page := bench.Page("redline bench: A "+name(runs[0])+" vs B "+name(runs[1]),
		[]bench.Named{{Name: "A " + name(runs[0]), R: rs[0], Config: cfgA}, {Name: "B " + name(runs[1]), R: rs[1], Config: cfgB}})
	path := runs[1].Path("compare.html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		return true, harnessFailed(err)
	}
	fmt.Fprintf(w, "\nplots of both runs overlaid: %s\n", path)
	return true, nil
}

// printLoad prints what the load driver measured and gives the exit code:
// 99 when a --threshold failed; unknown when nothing was measured (no op
// succeeded; a capacity search that met the objectives at no rate). The
// --json or --csv summary goes to ci.machine.
func printLoad(w io.Writer, ci *ciFlags, cfg harness.Config, out harness.Outcome) int {
	res := out.Load
	code := exitValid
	if c := cfg.Capacity; c != nil && c.SLO != "" && res.Capacity != nil {
		capacity := res.Capacity
		best := capacity.Rate
		if best == 0 {
			best = capacity.Curve()[0].Rate
		}
		fmt.Fprintf(w, "\nthe step at %s ops/s:", bench.Count(best))
		res.PrintSummary(w)
		capacity.Print(w)
		fmt.Fprintf(w, "results: %s\n", out.Dir)
		fmt.Fprintln(w, capacity.CapacityLine())
		// The last line is for scripts: the best step's throughput.
		printThroughput(w, res.Throughput)
		if capacity.Rate == 0 {
			code = exitUnknown
		}
		ci.printMachine(res, out.Dir, code)
		return code
	}
	res.PrintRuns(w)
	res.PrintSummary(w)
	bench.PrintThresholds(w, res.Thresholds)
	fmt.Fprintf(w, "results: %s\n", out.Dir)
	// The last line is for scripts.
	printThroughput(w, res.Throughput)
	switch {
	case !bench.ThresholdsPassed(res.Thresholds):
		code = exitThreshold
	case res.Throughput == 0, res.GeneratorsFailed > 0:
		code = exitUnknown
	}
	ci.printMachine(res, out.Dir, code)
	return code
}

// printThroughput prints the line scripts read, the last of every load
// test ('run --bench', 'bench', 'bench --versus'): "throughput: N ops/s",
// N whole, without separators. Its one printer: the format is a contract.
func printThroughput(w io.Writer, opsPerS float64) {
	fmt.Fprintf(w, "throughput: %.0f ops/s\n", opsPerS)
}

// benchThroughput sums the ok ops/s of every perf checker's operations.
func benchThroughput(s checker.Summary) float64 {
	total := 0.0
	for _, r := range s.Checkers {
		for _, op := range r.Ops() {
			if op.OKPerS != nil {
				total += *op.OKPerS
			}
		}
	}
	return total
}

// printBench prints per-operation throughput and latency of a load test.
func printBench(w io.Writer, s checker.Summary) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nCHECKER\tOP\tOK/S\tOK\tFAIL\tINFO\tP50 MS\tP95 MS\tP99 MS\tMAX MS")
	names := make([]string, 0, len(s.Checkers))
	for n := range s.Checkers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, op := range s.Checkers[n].Ops() {
			lat := op.Latency
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", n, op.F, orDash(op.OKPerS), op.OK, op.Fail, op.Info,
				orDash(lat.P50), orDash(lat.P95), orDash(lat.P99), orDash(lat.Max))
		}
	}
	tw.Flush()
}

// orDash prints a figure a result may not have: "-" when it has none (no
// op of the kind completed ok).
func orDash(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}
