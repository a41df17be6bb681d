package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/docker"
	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/kube"
	"github.com/redline-dev/redline/nemesis"
)

// runtimeCaps is where a run's cluster comes from and the faults it can
// cause at most, as the runtime itself says (from its cluster type's
// methods): a runtime that gains a fault needs no change here.
type runtimeCaps struct {
	name string // in words, for errors
	flag string // how to choose it
	caps []cluster.Capability
	// plain are the capabilities without the add-on (nil: no add-on).
	plain []cluster.Capability
	addOn string
}

var (
	dockerRuntime   = runtimeCaps{name: "the docker runtime", flag: "the default", caps: docker.Capabilities()}
	kubeRuntime     = runtimeCaps{name: "the kubernetes runtime", flag: "--runtime kubernetes", caps: kube.Capabilities(), plain: kube.CapabilitiesWithoutChaos(), addOn: "Chaos Mesh"}
	externalRuntime = runtimeCaps{name: "an existing cluster (--addrs, --selector)", flag: "--addrs", caps: clusteradmin.ExternalCapabilities()}
	runtimes        = []runtimeCaps{dockerRuntime, kubeRuntime, externalRuntime}
)

// runtimeOf is the runtime a validated config's cluster comes from.
func runtimeOf(cfg *harness.Config) runtimeCaps {
	switch {
	case cfg.Target == "external":
		return externalRuntime
	case cfg.Runtime == "kubernetes":
		return kubeRuntime
	}
	return dockerRuntime
}

// runtimesWith names the runtimes that offer c: "the docker runtime (the
// default), the kubernetes runtime (--runtime kubernetes)".
func runtimesWith(c cluster.Capability) []string {
	var out []string
	for _, rt := range runtimes {
		switch {
		case !slices.Contains(rt.caps, c):
		case rt.addOn != "" && !slices.Contains(rt.plain, c):
			out = append(out, fmt.Sprintf("%s (%s, with %s installed)", rt.name, rt.flag, rt.addOn))
		default:
			out = append(out, fmt.Sprintf("%s (%s)", rt.name, rt.flag))
		}
	}
	return out
}

// checkCapabilities refuses, before anything starts, a fault the run's
// runtime can never cause (delay on docker, kill on an existing cluster
// without a hook): such a run used to fail only once its cluster was up.
func checkCapabilities(cfg *harness.Config, hooks []string) error {
	rt := runtimeOf(cfg)
	var hooked []string
	for _, h := range hooks {
		k, _, _ := strings.Cut(h, "=")
		hooked = append(hooked, strings.TrimSpace(k))
	}
	un := nemesis.Unsupported(cfg.Nemesis, rt.caps, hooked)
	if len(un) == 0 {
		return checkHost(cfg)
	}
	u := un[0]
	msg := fmt.Sprintf("--nemesis %s: %s %s", u.Name, rt.name, u.Words())
	if where := runtimesWith(u.Capability); len(where) > 0 {
		msg += "; " + strings.Join(where, " and ") + " can"
	}
	if u.Hookable && cfg.Target == "external" {
		msg += fmt.Sprintf("; give --nemesis-hook %s='<command>' or drop %s from --nemesis", u.Fault, u.Name)
	} else {
		msg += fmt.Sprintf("; drop %s from --nemesis", u.Name)
	}
	if len(un) > 1 {
		var rest []string
		for _, x := range un[1:] {
			rest = append(rest, x.Name)
		}
		msg += fmt.Sprintf(" (%s cannot run here either)", strings.Join(rest, ", "))
	}
	return badArgs("%s", msg)
}

// checkHost asks this host, before anything starts, whether it can cause
// what the runtime could: the docker runtime's delay needs the kernel's
// sch_netem, which this kind of machine lacks (a run used to start its
// cluster and only then be refused).
func checkHost(cfg *harness.Config) error {
	if runtimeOf(cfg).name != dockerRuntime.name {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := nemesis.CheckHost(ctx, cfg.Nemesis, docker.HostProber()); err != nil {
		return badArgs("--nemesis: %v", err)
	}
	return nil
}

func nemesisNames() []string { return nemesis.Names() }

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
