package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/harness/bench"
	"github.com/redline-dev/redline/nemesis"
)

// capacityFlags are bench's --slo search and --plan flags before parsing.
type capacityFlags struct {
	slo          string
	step, warmup time.Duration
	maxRate      float64
	plan         string
	versus       string
}

func addCapacityFlags(c *cobra.Command, o *runOptions) {
	f := c.Flags()
	f.StringVar(&o.capacity.slo, "slo", "", "capacity search: the objectives a rate must meet, comma-joined: p99<=2ms, p99.9<=10ms, mean<=1ms, max<=50ms, errors<=0.1% (latency corrected, from the intended send time); the rate ramps up from --rate (default 1000) doubling, then bisects around the knee; prints 'capacity: N ops/s at SLO' before the last line")
	f.DurationVar(&o.capacity.step, "slo-step", bench.DefaultStep, "capacity search: the measured length of each rate's step")
	f.DurationVar(&o.capacity.warmup, "slo-warmup", bench.DefaultWarmup, "capacity search: traffic at each step's rate before it is measured (whole seconds)")
	f.Float64Var(&o.capacity.maxRate, "slo-max-rate", 0, "capacity search: the highest rate to try (0: no ceiling but the generator's); a cluster that meets the objectives there has 'at least' that capacity")
	f.StringVar(&o.capacity.versus, "versus", "", "before/after in one command: run this bench (A), then again with these flags changed (B, e.g. --versus '--nodes 8' or --versus '--server-binary /path/valkey-server'), each on its own cluster with the same seed, and compare: config differences, deltas (capacities with --slo) and the plots overlaid in compare.html")
	f.StringVar(&o.capacity.plan, "plan", "", "capacity changes while the load runs, at chosen times: 'at=10s scale-out; at=30s reshard 500; at=50s failover; at=70s scale-in' (or @FILE, one step a line); each gets before/during/after windows, the move's duration, keys moved and the MOVED/ASK/TRYAGAIN it caused")
}

// buildPlan is the nemesis of a --plan: the changes at their times.
func buildPlan(cfg harness.Config, c cluster.Cluster, creds cluster.Credentials, journal *clusteradmin.Journal, log *harness.Log) (harness.Nemesis, error) {
	plan, err := nemesis.ParsePlan(cfg.Capacity.Plan)
	if err != nil {
		return nil, badArgs("--plan: %v", err)
	}
	n, err := nemesis.NewPlan(plan, c, nemesis.Options{Seed: cfg.Seed, NodeTimeout: cfg.NodeTimeout.D(), Log: log.Printf, Journal: journal, RestoreRoles: cfg.RestoreRoles, Credentials: creds})
	if err != nil {
		return nil, badArgs("--plan: %v", err)
	}
	return n, nil
}

// faultsAsked: --nemesis names a fault (validateLoad runs before the
// nemesis list is parsed into the config, so the flag is read here).
func faultsAsked(o *runOptions) bool {
	for _, f := range splitList(o.nemesis) {
		if f != "none" {
			return true
		}
	}
	return false
}

// validateCapacity checks --slo and its companions.
func validateCapacity(o *runOptions, cfg *harness.Config) error {
	fc := o.capacity
	if fc.plan != "" {
		if fc.slo != "" {
			return badArgs("--plan and --slo are two different tests: search the capacity (--slo) or make changes under a load (--plan --rate N)")
		}
		if faultsAsked(o) {
			return badArgs("--plan makes its own changes at its own times: drop --nemesis")
		}
		plan, err := nemesis.ParsePlan(fc.plan)
		if err != nil {
			return badArgs("--plan: %v", err)
		}
		if last := plan[len(plan)-1].At; last >= cfg.TimeLimit.D() {
			return badArgs("--plan: the last change is at %s, but traffic runs for --time-limit %s: raise --time-limit (leave time after it for the 'after' window)", last, cfg.TimeLimit.D())
		}
		cfg.Capacity = &harness.CapacityConfig{Plan: fc.plan}
		return nil
	}
	if fc.slo == "" {
		return nil
	}
	if _, err := bench.ParseSLO(fc.slo); err != nil {
		return badArgs("--slo: %v", err)
	}
	if faultsAsked(o) {
		return badArgs("--slo searches the capacity of a healthy cluster: drop --nemesis (faults under load: --rate N --nemesis ...)")
	}
	if fc.step < time.Second {
		return badArgs("--slo-step %s is too short to be stable: at least 1s (default %s)", fc.step, bench.DefaultStep)
	}
	if fc.warmup < 0 || fc.warmup%time.Second != 0 {
		return badArgs("--slo-warmup %s: a whole number of seconds, 0 or more (default %s)", fc.warmup, bench.DefaultWarmup)
	}
	if cfg.ConnPerWorker {
		return badArgs("--slo steps the open-loop rate; --conn-per-worker is for the closed loop (--rate 0): drop it")
	}
	if fc.maxRate < 0 || fc.maxRate > 0 && cfg.Rate > fc.maxRate {
		return badArgs("--slo-max-rate %g: must be positive and at least the starting --rate %g", fc.maxRate, cfg.Rate)
	}
	cfg.Capacity = &harness.CapacityConfig{SLO: fc.slo, Step: harness.Duration(fc.step), Warmup: harness.Duration(fc.warmup), Start: cfg.Rate, MaxRate: fc.maxRate}
	return nil
}
