package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/harness/bench"
	"github.com/redline-dev/redline/harness/cluster"
	"github.com/redline-dev/redline/results"
	"github.com/redline-dev/redline/workloads"
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

Other workloads (register, counter, ...) run as in 'redline run', without
their checkers. The last line printed is "throughput: N ops/s".`,
		Example: `  redline bench --concurrency 50 --time-limit 30s
  redline bench --target redis --rate 20000 --nemesis pause --ratio 1:1 --value-size 32-512
  redline bench --addrs 10.0.0.5:6379 --preset ycsb-b --keys 100000 --pipeline 8
  redline bench --target redis --slo 'p99<=2ms,errors<=0.1%' --versus '--nodes 8'
  redline bench --target redis --rate 5000 --time-limit 90s --plan 'at=10s scale-out; at=50s reshard 500'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.cfg.Command = os.Args
			o.cfg.Bench = true
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
	f.StringVar(&o.kv.ratio, "ratio", "1:10", "kv: SET:GET ratio, as memtier's (1:10 = one SET per ten GETs)")
	f.StringVar(&o.kv.valueSize, "value-size", "100", "kv: value bytes of a SET, fixed (100) or a range (32-1024)")
	f.StringVar(&o.kv.pattern, "key-pattern", "uniform", "kv: "+strings.Join(workloads.KVPatterns, ", "))
	f.IntVar(&o.kv.pipeline, "pipeline", 1, "kv: ops a worker sends before reading their replies")
	f.IntVar(&o.kv.hashTags, "hash-tags", 0, "kv: put the keys in N hash tags ({0}..{N-1}), i.e. N slots (0 = no tags)")
	f.BoolVar(&o.kv.populate, "populate", true, "kv: SET every key once before traffic so GETs hit")
	f.StringVar(&o.kv.preset, "preset", "", "kv: YCSB core workload ycsb-a (50/50), ycsb-b (95/5 reads), ycsb-c (reads); zipfian; overrides --ratio and --key-pattern")
	f.BoolVar(&o.cfg.ConnPerWorker, "conn-per-worker", false, "closed loop (--rate 0): each worker its own connection to each node, one write and read per batch, instead of the workers' ops sharing one connection per node, written together (auto-pipelining)")
	f.BoolVar(&o.cfg.History, "history", false, "keep every op in ops.jsonl.gz (off: only per-second histograms are kept)")
	addCapacityFlags(c, o)
	return c
}

// kvFlags are the kv workload's flags before parsing.
type kvFlags struct {
	ratio, valueSize, pattern, preset string
	pipeline, hashTags                int
	populate                          bool
}

// validateKV builds cfg.KV from the flags; kv runs only under bench.
func validateKV(o *runOptions, cfg *harness.Config) error {
	if !cfg.Bench {
		return badArgs("--workload kv is a load workload without checkers: use 'redline bench --workload kv'")
	}
	if len(cfg.Workloads) > 1 {
		return badArgs("--workload kv cannot be combined with other workloads in one bench")
	}
	kv := &workloads.KVConfig{Keys: cfg.Keys, Pattern: o.kv.pattern, Pipeline: o.kv.pipeline, HashTags: o.kv.hashTags, Populate: o.kv.populate}
	var err error
	if kv.SetRatio, kv.GetRatio, err = workloads.ParseRatio(o.kv.ratio); err != nil {
		return badArgs("--ratio: %v", err)
	}
	if kv.ValueMin, kv.ValueMax, err = workloads.ParseValueSize(o.kv.valueSize); err != nil {
		return badArgs("--value-size: %v", err)
	}
	if o.kv.preset != "" {
		p, ok := workloads.KVPresets[o.kv.preset]
		if !ok {
			return badArgs("--preset %q: choose ycsb-a, ycsb-b or ycsb-c", o.kv.preset)
		}
		p(kv)
	}
	if kv.Keys == 0 {
		kv.Keys = 10000
	}
	if err := kv.Validate(); err != nil {
		return badArgs("%v", err)
	}
	cfg.KV = kv
	return validateCapacity(o, cfg)
}

// kvRun is what runKV needs from runOnce.
type kvRun struct {
	cfg     harness.Config
	cluster cluster.Cluster
	run     *results.Run
	nemesis harness.Nemesis
	log     *harness.Log
	stdout  io.Writer
	tty     bool
}

// runKV drives the kv load workload through harness/bench and stores
// bench.json, results.json and a report page.
func runKV(ctx context.Context, k kvRun) (int, error) {
	if c := k.cfg.Capacity; c != nil && c.SLO != "" {
		return runCapacity(ctx, k)
	}
	opts := benchOptions(k)
	res, err := runBenchOnce(ctx, k, opts, true)
	if err != nil {
		return 0, err
	}
	snapshotNodes(k.cluster, k.log)(ctx, k.run, "after")
	if err := bench.Save(k.run, res); err != nil {
		return 0, harnessFailed(err)
	}
	res.PrintSummary(k.stdout)
	fmt.Fprintf(k.stdout, "results: %s\n", k.run.Dir)
	// The last line is for scripts.
	fmt.Fprintf(k.stdout, "throughput: %.0f ops/s\n", res.Throughput)
	if res.Throughput == 0 {
		return exitUnknown, nil
	}
	return exitValid, nil
}

// benchOptions are the engine's options of a kv bench.
func benchOptions(k kvRun) bench.Options {
	cfg := k.cfg
	kv := *cfg.KV
	kv.Prefix = cfg.KeyPrefix
	opts := bench.Options{
		Seeds: seedAddrs(k.cluster), KV: kv, Concurrency: cfg.Concurrency, Rate: cfg.Rate,
		Duration: cfg.TimeLimit.D(), OpTimeout: cfg.OpTimeout.D(), Seed: cfg.Seed, Log: k.log.Printf,
		ConnPerWorker: cfg.ConnPerWorker, NodeNames: map[string]string{},
	}
	for _, n := range k.cluster.Nodes() {
		opts.NodeNames[n.Addr] = n.Name
	}
	if cfg.History {
		opts.HistoryPath = k.run.Path("ops.jsonl.gz")
	}
	if k.nemesis != nil {
		opts.Nemesis = k.nemesis
	}
	return opts
}

// runBenchOnce runs the engine once, with the progress display when
// progress is set.
func runBenchOnce(ctx context.Context, k kvRun, opts bench.Options, progress bool) (*bench.Result, error) {
	fault := func() string { return "" }
	if k.nemesis != nil {
		fault = k.nemesis.Current
	}
	pr := harness.NewProgress(k.stdout, k.tty && progress, k.log)
	var live func() string
	opts.Live = func(l func() string) { live = l }
	opts.Started = func(counts func() (int64, int64, int64)) {
		k.log.Printf("traffic: %d workers, %s, kv %s, rate %g", opts.Concurrency, opts.Duration, kvString(opts.KV), opts.Rate)
		if progress {
			pr.StartRun(opts.Duration, harness.Status{Counts: counts, Fault: fault, Live: func() string {
				if live == nil {
					return ""
				}
				return live()
			}})
		}
	}
	res, err := bench.Run(ctx, opts)
	if progress {
		pr.EndRun()
	}
	if err != nil {
		return nil, harnessFailed(fmt.Errorf("%w (results so far in %s)", err, k.run.Dir))
	}
	if ctx.Err() != nil {
		return nil, harnessFailed(fmt.Errorf("interrupted; results so far in %s", k.run.Dir))
	}
	return res, nil
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

func seedAddrs(c cluster.Cluster) []string {
	var out []string
	for _, n := range c.Nodes() {
		out = append(out, n.Addr)
	}
	return out
}

func kvString(kv workloads.KVConfig) string {
	return fmt.Sprintf("ratio %d:%d, value %d-%d B, %d keys %s, pipeline %d", kv.SetRatio, kv.GetRatio, kv.ValueMin, kv.ValueMax, kv.Keys, kv.Pattern, kv.Pipeline)
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
