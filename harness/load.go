package harness

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/harness/bench"
	"github.com/redline-dev/redline/workloads/kv"
)

// LoadDriver is the load driver: harness/bench's engine sends the kv
// workload open loop at --rate (or closed loop) under the faults and
// measures it in per-second histograms; no op is recorded unless
// --history asks for bench's compressed op log. With a capacity search
// (--slo) it runs one step per rate. What it measured is stored as
// bench.json, results.json and the report (SaveLoad) and returned as
// Outcome.Load.
type LoadDriver struct{}

// Open has nothing to ready: the engine opens its own connections, and
// the config is complete as given.
func (LoadDriver) Open(context.Context, *Session) error { return nil }

func (LoadDriver) Drive(ctx context.Context, s *Session) (Outcome, error) {
	if c := s.Config.Capacity; c != nil && c.SLO != "" {
		return capacitySearch(ctx, s)
	}
	res, err := benchRuns(ctx, s)
	if err != nil {
		return Outcome{}, err
	}
	SnapshotNodes(ctx, s.Run, s.Cluster, s.Credentials, "after", s.Log)
	if t := s.Config.Thresholds; t != "" {
		ts, err := bench.ParseThresholds(t)
		if err != nil {
			return Outcome{}, fmt.Errorf("--threshold: %v", err)
		}
		res.Thresholds = bench.EvaluateThresholds(res, ts)
	}
	if err := SaveLoad(s.Run, res); err != nil {
		return Outcome{}, err
	}
	return Outcome{Load: res}, nil
}

// benchRuns runs the load Config.RunCount times on the cluster (the key
// space populated once) and returns the one result or the aggregate.
func benchRuns(ctx context.Context, s *Session) (*bench.Result, error) {
	n := max(s.Config.RunCount, 1)
	opts := benchOptions(s)
	var runs []*bench.Result
	for i := 1; i <= n; i++ {
		if n > 1 {
			s.Log.Printf("run %d of %d", i, n)
		}
		res, err := benchOnce(ctx, s, opts, true)
		if err != nil {
			return nil, err
		}
		if n > 1 {
			s.Log.Printf("run %d of %d: %s ops/s, p99 %s ms", i, n, bench.Count(res.Throughput), bench.Num(res.Ops["total"].Corrected.P99))
		}
		runs = append(runs, res)
		opts.KV.Populate = false
	}
	if n == 1 {
		return runs[0], nil
	}
	return bench.Aggregate(runs), nil
}

// benchOptions are the engine's options of a run's kv load.
func benchOptions(s *Session) bench.Options {
	cfg := s.Config
	load := *cfg.KV
	load.Prefix = cfg.KeyPrefix
	opts := bench.Options{
		Seeds: nodeAddrs(s.Cluster), KV: load, Concurrency: cfg.Concurrency, Rate: cfg.Rate,
		Duration: cfg.TimeLimit.D(), OpTimeout: cfg.OpTimeout.D(), Seed: cfg.Seed, Log: s.Log.Printf,
		ConnPerWorker: cfg.ConnPerWorker, NodeNames: map[string]string{},
	}
	for _, n := range s.Cluster.Nodes() {
		opts.NodeNames[n.Addr] = n.Name
	}
	// Nodes a plan adds while the load runs (scale-out) are named at the
	// end from the cluster as it is then.
	opts.NameOf = func(addr string) string {
		for _, n := range s.Cluster.Nodes() {
			if n.Addr == addr {
				return n.Name
			}
		}
		return ""
	}
	if cfg.History {
		opts.HistoryPath = s.Run.Path("ops.jsonl.gz")
	}
	if s.Nemesis != nil {
		opts.Nemesis = s.Nemesis
	}
	return opts
}

// benchOnce runs the engine once, with the progress display when
// progress is set.
func benchOnce(ctx context.Context, s *Session, opts bench.Options, progress bool) (*bench.Result, error) {
	fault := func() string { return "" }
	if s.Nemesis != nil {
		fault = s.Nemesis.Current
	}
	if s.Config.Generators > 0 {
		s.rounds++
		return distributedOnce(ctx, s, opts, fmt.Sprint(s.rounds))
	}
	pr := NewProgress(s.Stdout, s.TTY && progress, s.Log)
	var live func() string
	opts.Live = func(l func() string) { live = l }
	opts.Started = func(counts func() (int64, int64, int64)) {
		logf := s.Log.Printf
		if !progress {
			logf = s.Log.Filef // a capacity step's line on the terminal says the rate already
		}
		logf("traffic: %d workers, %s, kv %s, rate %g", opts.Concurrency, opts.Duration, kvString(opts.KV), opts.Rate)
		if progress {
			pr.StartRun(opts.Duration, Status{Counts: counts, Fault: fault, Live: func() string {
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
		return nil, fmt.Errorf("%w (results so far in %s)", err, s.Run.Dir)
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("interrupted; results so far in %s", s.Run.Dir)
	}
	return res, nil
}

// capacitySearch runs a capacity search on the cluster: one open-loop
// step per rate, the key space populated once, each step's line on
// Stdout as it ends. The best step's run is stored as the run's
// bench.json and report (with the curve, Result.Capacity); every step's
// figures go into capacity.json.
func capacitySearch(ctx context.Context, s *Session) (Outcome, error) {
	cc := s.Config.Capacity
	slo, err := bench.ParseSLO(cc.SLO)
	if err != nil {
		return Outcome{}, fmt.Errorf("--slo: %v", err)
	}
	base := benchOptions(s)
	base.HistoryPath = "" // one op log per step would overwrite the last
	// The engine's own lines (keys populated, ...) go to run.log only:
	// on the terminal they would split a step's line in two.
	base.Log = s.Log.Filef
	base.Warmup = cc.Warmup.D()
	base.Duration = cc.Warmup.D() + cc.Step.D()
	populate := base.KV.Populate
	steps := map[float64]*bench.Result{}
	n := 0
	admin := &clusteradmin.Admin{Creds: s.Credentials}
	defer admin.Close()
	measure := func(ctx context.Context, rate float64) (bench.Step, error) {
		o := base
		o.Rate = rate
		o.KV.Populate = populate
		n++
		// Every step after the first starts once the cluster has worked
		// off the one before it (settle.go).
		var settled time.Duration
		var settle string
		if n > 1 {
			settled, settle = settleReplicas(ctx, admin, s.Cluster.Nodes(), 30*time.Second)
			if settle != "" {
				s.Log.Printf("before step %d: %s", n, settle)
			}
		}
		fmt.Fprintf(s.Stdout, "step %d: %s ops/s for %s (+%s warm-up) ...", n, bench.Count(rate), cc.Step.D(), cc.Warmup.D())
		res, err := benchOnce(ctx, s, o, false)
		if err != nil {
			fmt.Fprintln(s.Stdout)
			return bench.Step{}, err
		}
		populate = false
		if err := leftOut(res); err != nil {
			return bench.Step{}, err
		}
		steps[rate] = res
		st := bench.StepOf(res, slo)
		st.SettleS, st.Settle = settled.Seconds(), settle
		return st, nil
	}
	progress := func(st bench.Step) {
		verdict := "met"
		if !st.Met {
			verdict = "missed: " + strings.Join(st.Missed, "; ")
		}
		verdict += st.Remarks()
		fmt.Fprintf(s.Stdout, " delivered %s ops/s, p99 %s ms, p99.9 %s ms: %s\n", bench.Count(st.OKPerS), bench.Num(st.Latency["p99"]), bench.Num(st.Latency["p99.9"]), verdict)
	}
	capacity, err := bench.Search(ctx, bench.SearchOptions{SLO: slo, Start: cc.Start, MaxRate: cc.MaxRate, Confirm: true, Measure: measure, Progress: progress})
	if err != nil {
		return Outcome{}, err
	}
	// The run's bench.json is the best step (or the lowest tried).
	best := capacity.Rate
	if best == 0 {
		best = capacity.Curve()[0].Rate
	}
	res := steps[best]
	res.Capacity = capacity
	SnapshotNodes(ctx, s.Run, s.Cluster, s.Credentials, "after", s.Log)
	if err := s.Run.WriteJSON("capacity.json", capacity); err != nil {
		return Outcome{}, err
	}
	if err := SaveLoad(s.Run, res); err != nil {
		return Outcome{}, err
	}
	return Outcome{Load: res}, nil
}

func kvString(c kv.Config) string {
	return fmt.Sprintf("ratio %d:%d, value %d-%d B, %d keys %s, pipeline %d", c.SetRatio, c.GetRatio, c.ValueMin, c.ValueMax, c.Keys, c.Pattern, c.Pipeline)
}
