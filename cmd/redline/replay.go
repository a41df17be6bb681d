package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/nemesis"
	"github.com/redline-dev/redline/results"
	"github.com/redline-dev/redline/workloads/clientlib"
)

// flagValue is one flag of `redline run` and its value as text; bool says
// it is a bool flag ("--name" or "--name=false" on a command line: pflag
// reads "--name false" as the flag and a stray argument).
type flagValue struct {
	name, value string
	bool        bool
}

// configFlags are the flags of `redline run` that give a run the config
// cfg (what --replay applies, and what the shrink report prints). The
// credentials are not among them: they come from the environment or a
// file each time.
func configFlags(cfg harness.Config) []flagValue {
	d := func(x harness.Duration) string { return x.D().String() }
	var out []flagValue
	add := func(name, value string) {
		out = append(out, flagValue{name: name, value: value, bool: value == "true" && boolFlags[name]})
	}
	if cfg.Target == "external" {
		add("addrs", strings.Join(cfg.Addrs, ","))
	} else {
		add("target", cfg.Target)
		add("nodes", strconv.Itoa(cfg.Nodes))
		add("replicas", strconv.Itoa(cfg.Replicas))
	}
	add("workload", strings.Join(cfg.Workloads, ","))
	nem := strings.Join(cfg.Nemesis, ",")
	if nem == "" {
		nem = "none"
	}
	add("nemesis", nem)
	add("nemesis-interval", d(cfg.NemesisInterval))
	if cfg.PartitionClients {
		add("partition-clients", "true")
	}
	add("time-limit", d(cfg.TimeLimit))
	add("concurrency", strconv.Itoa(cfg.Concurrency))
	if cfg.Rate != 0 {
		add("rate", strconv.FormatFloat(cfg.Rate, 'f', -1, 64))
	}
	if cfg.Keys != 0 {
		add("keys", strconv.Itoa(cfg.Keys))
	}
	if cfg.Wait != 0 {
		add("wait", strconv.Itoa(cfg.Wait))
		add("wait-timeout", d(cfg.WaitTimeout))
	}
	add("seed", strconv.FormatInt(cfg.Seed, 10))
	add("node-timeout", d(cfg.NodeTimeout))
	add("op-timeout", d(cfg.OpTimeout))
	add("check-timeout", d(cfg.CheckTimeout))
	if cfg.Image != "" {
		add("image", cfg.Image)
	}
	if cfg.ServerBinary != "" {
		add("server-binary", cfg.ServerBinary)
	}
	for _, s := range cfg.ServerConfig {
		add("server-config", s)
	}
	if cfg.Runtime == "kubernetes" { // docker is the flag's default
		add("runtime", cfg.Runtime)
		add("namespace", cfg.Namespace)
		if cfg.Kubeconfig != "" {
			add("kubeconfig", cfg.Kubeconfig)
		}
		if cfg.Selector != "" {
			add("selector", cfg.Selector)
		}
		if cfg.Announce != "" {
			add("announce", cfg.Announce)
		}
	}
	if cfg.RestoreRoles {
		add("restore-roles", "true")
	}
	if cfg.Client != "" {
		add("client", cfg.Client)
	}
	if cfg.RequireCoverage {
		add("require-coverage", "true")
	}
	if cfg.ResultsDir != "" {
		add("results", cfg.ResultsDir)
	}
	return out
}

// boolFlags are configFlags' bool flags.
var boolFlags = map[string]bool{"partition-clients": true, "restore-roles": true, "require-coverage": true}

// commandLine renders flags as one shell command line.
func commandLine(cmd string, flags []flagValue) string {
	parts := []string{cmd}
	for _, f := range flags {
		if f.bool {
			if f.value == "true" {
				parts = append(parts, "--"+f.name)
			} else {
				parts = append(parts, "--"+f.name+"="+f.value)
			}
			continue
		}
		v := f.value
		if v == "" || strings.ContainsAny(v, " \t'\"$;&|<>*?()[]{}\\`") {
			v = "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
		}
		parts = append(parts, "--"+f.name+" "+v)
	}
	return strings.Join(parts, " ")
}

// loadReplay reads what a replay of the run in dir needs: its config and
// the fault schedule it followed (config.json's, else the one its history
// records; nil for a run older than recorded schedules, which then
// replays by its seed alone).
func loadReplay(dir string) (harness.Config, []nemesis.ScheduledStep, error) {
	var cfg harness.Config
	run, err := results.Open(dir)
	if err != nil {
		return cfg, nil, err
	}
	if err := run.ReadJSON("config.json", &cfg); err != nil {
		return cfg, nil, fmt.Errorf("cannot read the run's config: %w", err)
	}
	if cfg.Bench || cfg.KV != nil {
		return cfg, nil, fmt.Errorf("%s is a load test (bench): --replay reruns correctness runs only", dir)
	}
	if len(cfg.Schedule) > 0 {
		return cfg, cfg.Schedule, nil
	}
	hist, err := history.ReadRun(run.Dir)
	if err != nil {
		return cfg, nil, fmt.Errorf("cannot read the run's history for its fault schedule: %w", err)
	}
	return cfg, nemesis.ScheduleOf(hist.Ops), nil
}

// withholdUnsafe clears from a stored config what a replay must not take
// from a file someone else may have written (results directories travel
// by mail, as CI artefacts and in the findings' one-command
// reproductions): a command redline would run (an exec: client), a
// binary or image it would run, a cluster it would act on (an existing
// cluster's addresses or pods, a Kubernetes runtime, a kubeconfig) and
// where it writes (the results path). given says the command line gives
// the setting again: then it is used, and nothing is said. It returns one
// line per setting left out, to say on stderr.
func withholdUnsafe(cfg *harness.Config, given func(flag string) bool) []string {
	var out []string
	withhold := func(flag, value, why string, clear func()) {
		if value == "" || given(flag) {
			return
		}
		clear()
		out = append(out, commandLine("", []flagValue{{name: flag, value: value}})[1:]+": "+why)
	}
	if strings.HasPrefix(cfg.Client, clientlib.ExecPrefix) {
		withhold("client", cfg.Client, "a command redline would run; the replay uses redline's own client", func() { cfg.Client = "" })
	}
	if cfg.Target == "external" {
		withhold("addrs", strings.Join(cfg.Addrs, ","), "an existing cluster redline would act on; the replay starts a reference cluster", func() { cfg.Addrs = nil })
	}
	if cfg.Runtime == "kubernetes" {
		withhold("runtime", "kubernetes", "a Kubernetes cluster redline would create objects in (namespace "+cfg.Namespace+"); the replay runs on docker", func() {
			cfg.Runtime, cfg.Namespace, cfg.Kubeconfig, cfg.Selector, cfg.Announce = "", "", "", "", ""
		})
	}
	withhold("selector", cfg.Selector, "an existing cluster's pods redline would act on; the replay starts a reference cluster", func() { cfg.Selector = "" })
	withhold("kubeconfig", cfg.Kubeconfig, "credentials redline would use; the replay uses the default kubeconfig", func() { cfg.Kubeconfig = "" })
	withhold("server-binary", cfg.ServerBinary, "a binary redline would run; the replay uses the target's own build", func() { cfg.ServerBinary = "" })
	withhold("image", cfg.Image, "an image redline would run; the replay builds the target's own", func() { cfg.Image = "" })
	if cfg.ResultsDir != defaultStore {
		withhold("results", cfg.ResultsDir, "where redline would write; the replay writes to "+defaultStore, func() { cfg.ResultsDir = defaultStore })
	}
	if cfg.Target == "external" && len(cfg.Addrs) == 0 && cfg.Selector == "" && !given("addrs") && !given("selector") {
		cfg.Target = "reference"
	}
	return out
}

// sayWithheld tells the user what a replay left out of the stored config.
func sayWithheld(w io.Writer, what, dir string, lines []string) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "%s of %s: left out of its config.json (give them again to use them):\n", what, dir)
	for _, l := range lines {
		fmt.Fprintf(w, "  %s\n", l)
	}
}

// applyReplay sets every run flag the user did not give from the stored
// run in o.replay (but what withholdUnsafe leaves out), and the fault schedule that run followed, unless the
// user changed what the schedule depends on (--nemesis, --seed): then the
// new faults or seed plan the schedule as ever.
func applyReplay(f *pflag.FlagSet, o *runOptions) error {
	old, sched, err := loadReplay(o.replay)
	if err != nil {
		return badArgs("--replay %s: %v", o.replay, err)
	}
	// A target given here replaces the stored one whole: its server
	// build and its addresses go with it.
	ownPlan := f.Changed("nemesis") || f.Changed("seed") // before the stored flags count as changed
	sayWithheld(o.stderr, "replay", o.replay, withholdUnsafe(&old, f.Changed))
	targetGiven := false
	for _, name := range []string{"target", "addrs", "server-binary", "image"} {
		targetGiven = targetGiven || f.Changed(name)
	}
	for _, fv := range configFlags(old) {
		if f.Changed(fv.name) || f.Lookup(fv.name) == nil {
			continue
		}
		switch fv.name {
		case "target", "addrs", "server-binary", "image":
			if targetGiven {
				continue
			}
		case "server-config", "nodes", "replicas":
			if f.Changed("addrs") {
				continue
			}
		}
		if err := f.Set(fv.name, fv.value); err != nil {
			return badArgs("--replay %s: its config's %s %q: %v", o.replay, fv.name, fv.value, err)
		}
	}
	o.cfg.ReplayOf = o.replay
	if ownPlan {
		fmt.Fprintf(o.stderr, "replay of %s: --nemesis or --seed given, so faults follow their own plan, not the stored schedule\n", o.replay)
		return nil
	}
	if len(sched) == 0 {
		fmt.Fprintf(o.stderr, "replay of %s: the run recorded no fault schedule (no fault, or a run older than recorded schedules); replaying by its seed %d\n", o.replay, old.Seed)
		return nil
	}
	o.cfg.Schedule = sched
	fmt.Fprintf(o.stderr, "replay of %s: %d scheduled fault steps, seed %d\n", o.replay, len(sched), old.Seed)
	return nil
}
