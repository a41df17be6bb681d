package harness

import (
	"strings"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/workloads"
	_ "github.com/redline-dev/redline/workloads/all" // the workloads in their own folders register themselves
)

// CheckersFor rebuilds the checker list from a config; `redline check`
// uses it on a stored config.json, so it depends on nothing else. Each
// workload brings its checkers (workloads.Checkers); a load test only
// measures.
func CheckersFor(cfg Config) ([]checker.Checker, error) {
	var out []checker.Checker
	for _, w := range cfg.Workloads {
		// A Load workload (kv) brings none: the load driver measured it
		// as it ran (bench.json).
		opts := workloads.CheckOptions{Timeout: cfg.CheckTimeout.D()}
		if cfg.Target != "external" && len(cfg.Addrs) == 0 {
			// The run made the cluster: each primary has cfg.Replicas.
			opts.Replicas = cfg.Replicas
		}
		if len(cfg.Workloads) > 1 {
			opts.Name = w
		}
		cs, err := workloads.Checkers(w, workloads.Config{Prefix: cfg.KeyPrefix, Keys: cfg.Keys}, opts, cfg.Bench)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	if hasFaults(cfg.Nemesis) && len(out) > 0 {
		out = append(out, checker.Coverage(checker.CoverageOptions{Requested: cfg.Nemesis, Workloads: workloadPrefixes(cfg), Require: cfg.RequireCoverage}),
			checker.FailoverPromotions())
	}
	if len(out) > 0 {
		// Once per run: the end phase heals the whole cluster, not one
		// workload's keys; the census holds every workload's keys.
		// A run the runner recorded has a census: without it these
		// say unknown, not valid (RecordedByRunner says why it must).
		var sc checker.Scope
		if by := RecordedByRunner(cfg); by != "" && cfg.KeyPrefix != "" {
			sc.CensusExpected = by
		}
		out = append(out, checker.EndPhase(sc), checker.Census(sc), checker.ReplicaCensus(sc))
	}
	return out, nil
}

// hasFaults says the --nemesis list asks for some fault.
func hasFaults(names []string) bool {
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" && n != "none" {
			return true
		}
	}
	return false
}

// workloadPrefixes is the key prefix of each workload of cfg that has one.
func workloadPrefixes(cfg Config) map[string]string {
	prefixes := map[string]string{}
	for _, w := range cfg.Workloads {
		if ww, err := workloads.New(w, workloads.Config{Prefix: cfg.KeyPrefix, Keys: cfg.Keys}); err == nil {
			prefixes[w] = ww.KeyPrefix()
		}
	}
	return prefixes
}
