package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/harness/cluster"
	"github.com/redline-dev/redline/harness/clusteradmin"
	"github.com/redline-dev/redline/nemesis"
	"github.com/redline-dev/redline/workloads"
)

func nemesisNames() []string { return nemesis.Names() }

// validateNemesis checks names before anything is started; whether the
// target supports them is checked by nemesis.New once the cluster exists.
func validateNemesis(names []string) error {
	if len(names) == 0 {
		return fmt.Errorf("empty: choose from %s", strings.Join(nemesis.Names(), ", "))
	}
	known := map[string]bool{}
	for _, n := range nemesis.Names() {
		known[n] = true
	}
	for _, n := range names {
		if f, mode, ok := strings.Cut(n, ":"); ok && known[f] {
			if !slices.Contains(nemesis.AllModes(f), mode) {
				return fmt.Errorf("unknown mode %q of fault %s: choose from %s", mode, f, strings.Join(nemesis.AllModes(f), ", "))
			}
			continue
		}
		if !known[n] {
			return fmt.Errorf("unknown fault %q: choose from %s", n, strings.Join(nemesis.Names(), ", "))
		}
	}
	if len(names) > 1 {
		for _, n := range names {
			if n == "none" {
				return fmt.Errorf("\"none\" cannot be combined with other faults")
			}
		}
	}
	return nil
}

// buildNemesis returns nil for "none".
func buildNemesis(cfg harness.Config, c cluster.Cluster, creds cluster.Credentials, hooks []string, journal *clusteradmin.Journal, log *harness.Log) (harness.Nemesis, error) {
	if cfg.Capacity != nil && cfg.Capacity.Plan != "" {
		return buildPlan(cfg, c, creds, journal, log)
	}
	if len(cfg.Nemesis) == 1 && cfg.Nemesis[0] == "none" {
		return nil, nil
	}
	hookMap := map[string]string{}
	for _, h := range hooks {
		k, v, _ := strings.Cut(h, "=")
		hookMap[strings.TrimSpace(k)] = v
	}
	n, err := nemesis.New(cfg.Nemesis, c, nemesis.Options{
		Interval:         cfg.NemesisInterval.D(),
		Seed:             cfg.Seed,
		PartitionClients: cfg.PartitionClients,
		NodeTimeout:      cfg.NodeTimeout.D(),
		Hooks:            hookMap,
		Log:              log.Printf,
		Journal:          journal,
		Credentials:      creds,
		RestoreRoles:     cfg.RestoreRoles,
		Script:           cfg.Schedule,
		Guest:            cfg.Target == "external",
	})
	if err != nil {
		return nil, badArgs("--nemesis: %v", err)
	}
	return n, nil
}

// checkersFor rebuilds the checker list from a config; `redline check`
// uses it on a stored config.json, so it depends on nothing else. Each
// workload brings its checkers (workloads.Checkers); a load test only
// measures.
func checkersFor(cfg harness.Config) ([]checker.Checker, error) {
	var out []checker.Checker
	for _, w := range cfg.Workloads {
		// A Load workload (kv) brings none: the load driver measured it
		// as it ran (bench.json).
		opts := checker.Options{Timeout: cfg.CheckTimeout.D()}
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
		prefixes := map[string]string{}
		for _, w := range cfg.Workloads {
			if ww, err := workloads.New(w, workloads.Config{Prefix: cfg.KeyPrefix, Keys: cfg.Keys}); err == nil {
				prefixes[w] = ww.KeyPrefix()
			}
		}
		out = append(out, checker.Coverage(checker.CoverageOptions{Requested: cfg.Nemesis, Workloads: prefixes, Require: cfg.RequireCoverage}))
	}
	if len(out) > 0 {
		// Once per run: the end phase heals the whole cluster, not one
		// workload's keys.
		out = append(out, checker.EndPhase(checker.Options{Timeout: cfg.CheckTimeout.D()}))
	}
	return out, nil
}

// driverKind is the kind of a run's workloads, which picks its traffic
// driver: Load (kv) the load driver, harness/bench; History the history
// workers. validate lets no run mix them.
func driverKind(names []string) workloads.Kind {
	for _, n := range names {
		if k, _ := workloads.KindOf(n); k == workloads.Load {
			return workloads.Load
		}
	}
	return workloads.History
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
