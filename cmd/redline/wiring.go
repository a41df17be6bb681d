package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/harness/cluster"
	"github.com/redline-dev/redline/harness/clusteradmin"
	"github.com/redline-dev/redline/nemesis"
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
