package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/harness/cluster"
	"github.com/redline-dev/redline/harness/clusteradmin"
	"github.com/redline-dev/redline/nemesis"
	"github.com/redline-dev/redline/results"
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
func buildNemesis(cfg harness.Config, c cluster.Cluster, hooks []string, journal *clusteradmin.Journal, log *harness.Log) (harness.Nemesis, error) {
	if cfg.Capacity != nil && cfg.Capacity.Plan != "" {
		return buildPlan(cfg, c, journal, log)
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
		if w == "kv" {
			// The kv load workload is measured by harness/bench as it
			// runs (bench.json); it has no checker of a history.
			continue
		}
		opts := workloads.CheckOptions{Timeout: cfg.CheckTimeout.D()}
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
		out = append(out, checker.EndPhase())
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

// snapshotNodes stores each node's CLUSTER NODES view and server log.
func snapshotNodes(c cluster.Cluster, log *harness.Log) func(context.Context, *results.Run, string) {
	return func(ctx context.Context, run *results.Run, when string) {
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		for _, n := range c.Nodes() {
			text, err := clusteradmin.ClusterNodesText(ctx, n.Addr)
			if err != nil {
				text = "error: " + err.Error() + "\n"
			}
			if err := run.WriteFile("nodes/"+n.Name+"/cluster-nodes-"+when+".txt", []byte(text)); err != nil {
				log.Printf("saving CLUSTER NODES of %s: %v", n.Name, err)
			}
			if when != "after" {
				continue
			}
			if ls, ok := c.(cluster.LogSource); ok {
				rc, err := ls.Logs(ctx, n.Name)
				if err != nil {
					log.Printf("server log of %s: %v", n.Name, err)
					continue
				}
				b, _ := io.ReadAll(io.LimitReader(rc, 64<<20))
				rc.Close()
				_ = run.WriteFile("nodes/"+n.Name+"/server.log", b)
			}
		}
	}
}
