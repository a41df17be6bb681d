package harness

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/harness/bench"
)

// A distributed bench (Config.Generators > 0): the load comes from N
// generators that the runtime runs beside the cluster (cluster.Generators:
// containers, a Job's pods; local processes where the cluster is not
// redline's to run things beside), each open loop at its share of the
// rate from one start in the cluster's clock. This process populates the
// key space, hands each generator its config, waits, keeps their raw
// reports in the run's generators/ folder and merges them exactly
// (bench.MergeGenerators). A capacity search (--slo) runs one such round
// per step, the step's rate split among the generators.

// startLead is how long before the coordinated start the generators are
// launched: enough for the runtime to start them (a container in about a
// second, a pod in a few). One that starts later than the start by more
// than a second is named and left out of the figures.
func startLead(g cluster.Generators) time.Duration {
	if l, ok := g.(interface{ GeneratorLead() time.Duration }); ok {
		return l.GeneratorLead()
	}
	return 5 * time.Second
}

// generatorsOf is who runs the generators: the Session's launcher (local
// processes, set by the caller) or the cluster's runtime.
func generatorsOf(s *Session) (cluster.Generators, error) {
	if s.Generators != nil {
		return s.Generators, nil
	}
	if g, ok := s.Cluster.(cluster.Generators); ok {
		return g, nil
	}
	return nil, errors.New("--generators: this runtime cannot run load generators beside its cluster")
}

// distributedOnce is one round of a distributed bench at opts.Rate: the
// generators' reports merged into one Result. round names the folder of
// its raw reports (generators/<round>/).
func distributedOnce(ctx context.Context, s *Session, opts bench.Options, round string) (*bench.Result, error) {
	gens, err := generatorsOf(s)
	if err != nil {
		return nil, err
	}
	n := s.Config.Generators
	if opts.KV.Populate {
		start := time.Now()
		keys, err := bench.Populate(ctx, opts)
		if err != nil {
			return nil, err
		}
		opts.Log("populated %d keys in %s", keys, time.Since(start).Round(time.Millisecond))
	}
	clockNode := opts.Seeds[0]
	offset, rtt, err := bench.ClusterClockOffset(ctx, clockNode, opts.OpTimeout)
	if err != nil {
		return nil, err
	}
	lead := startLead(gens)
	startAt := time.Now().Add(offset + lead)
	kvc := opts.KV
	kvc.Populate = false
	// One config for all; each generator learns its index from the runtime.
	args := bench.GeneratorArgs(bench.GeneratorConfig{
		Of: n, Seeds: opts.Seeds, KV: kvc, Rate: opts.Rate / float64(n), Concurrency: opts.Concurrency,
		DurationNs: int64(opts.Duration), WarmupNs: int64(opts.Warmup), OpTimeoutNs: int64(opts.OpTimeout),
		Seed: opts.Seed, StartAtNs: startAt.UnixNano(), ClockNode: clockNode,
	})
	// Due: the start, the traffic, and a minute for the end line.
	due := time.Now().Add(lead + opts.Duration + time.Minute)
	runs := make([]cluster.GeneratorRun, n)
	for i := range runs {
		runs[i] = cluster.GeneratorRun{Index: i + 1, Args: args, Due: due}
	}
	opts.Log("traffic: %d generators of %s ops/s each, %d connections per primary each, %s, kv %s; start in %s (the cluster's clock is %s ahead of this host's, read to ±%s)",
		n, bench.Count(opts.Rate/float64(n)), opts.Concurrency, opts.Duration, kvString(opts.KV), lead, offset.Round(time.Microsecond), (rtt / 2).Round(time.Microsecond))
	outs := gens.RunGenerators(ctx, runs)
	if len(outs) != n {
		return nil, fmt.Errorf("the runtime returned %d generator outcomes for %d generators", len(outs), n)
	}
	for _, o := range outs {
		name := fmt.Sprintf("generators/%s/generator-%d.out", round, o.Index)
		if err := s.Run.WriteFile(name, o.Output); err != nil {
			return nil, err
		}
		if len(o.Log) > 0 {
			if err := s.Run.WriteFile(fmt.Sprintf("generators/%s/generator-%d.log", round, o.Index), o.Log); err != nil {
				return nil, err
			}
		}
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("interrupted; the generators' reports so far in %s", s.Run.Path("generators", round))
	}
	res, err := bench.MergeGenerators(bench.MergeConfig{Rate: opts.Rate, Duration: opts.Duration, Concurrency: opts.Concurrency,
		Pipeline: opts.KV.Pipeline, NodeNames: opts.NodeNames}, outs)
	if err != nil {
		return nil, fmt.Errorf("%w (their reports in %s)", err, s.Run.Path("generators", round))
	}
	for _, g := range res.Generators {
		if !g.Merged {
			s.Log.Printf("generator %d of %d (%s) %s: %s", g.Index, n, g.Name, g.Status, g.Problem)
		}
	}
	return res, nil
}

// leftOut names the generators a result's figures leave out, for a
// capacity step, which cannot be judged without them.
func leftOut(r *bench.Result) error {
	var parts []string
	for _, g := range r.Generators {
		if !g.Merged {
			parts = append(parts, fmt.Sprintf("generator %d (%s) %s: %s", g.Index, g.Name, g.Status, g.Problem))
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return fmt.Errorf("the step at %s ops/s cannot be judged without all its generators: %s", bench.Count(r.RequestedRate), strings.Join(parts, "; "))
}
