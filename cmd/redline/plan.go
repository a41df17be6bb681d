package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/harness/suite"
	"github.com/redline-dev/redline/nemesis"
	"github.com/redline-dev/redline/workloads/clientlib"
)

// runOverhead is what a run takes beyond its --time-limit: starting and
// forming the cluster, the end phase (heal, converge, final reads), the
// checkers and the report. Measured on the 2-core development machine
// shared with other jobs: a 10 s reference run with partition and kill
// took 20 s wall ('redline run --time-limit 10s --workload
// counter,set,register --nemesis partition,kill'), the two 14 s runs of a
// kill-primary RPO study 32 and 29 s; a loaded machine takes longer (a
// 20 s kill+failover run took 50 s while a node restart timed out).
const runOverhead = 15 * time.Second

// estimate is the wall time a run's config is expected to take, all of its
// --test-count repetitions.
func estimate(cfg harness.Config) time.Duration {
	return time.Duration(max(cfg.TestCount, 1)) * (cfg.TimeLimit.D() + runOverhead)
}

// roughly renders a planned duration a person reads: "about 1h 4m".
func roughly(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%dh %02dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm %02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}

// printRunPlan is `run --dry-run`: the run's effective flags, its test
// name, the fault schedule its seed gives, and the estimated time.
func printRunPlan(w io.Writer, o *runOptions, command string) {
	cfg := o.cfg
	fmt.Fprintf(w, "plan: 1 test%s, about %s (%s of traffic + about %s per run to start the cluster, heal, check and report)\n",
		plural(cfg.TestCount, " run %d times"), roughly(estimate(cfg)), cfg.TimeLimit.D(), roughly(runOverhead))
	fmt.Fprintf(w, "  %s\n", planCommand(o, command))
	fmt.Fprintf(w, "  test name %s, stored under %s/%s/<timestamp>/\n", cfg.TestName, cfg.ResultsDir, cfg.TestName)
	if steps := faultSchedule(cfg); len(steps) > 0 {
		fmt.Fprintf(w, "  faults (seed %d; targets are picked from the live topology when each fires; some modes hold longer, see --nemesis list):\n", cfg.Seed)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, s := range steps {
			fmt.Fprintf(tw, "    %s\t%s\tfor about %s\n", s.at, s.what, s.hold)
		}
		tw.Flush()
	}
	if o.seedPicked {
		fmt.Fprintf(w, "  the seed was picked for this plan: add --seed %d to run this schedule\n", cfg.Seed)
	}
	fmt.Fprintln(w, "nothing was started (--dry-run)")
}

func plural(n int, format string) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf(format, n)
}

// configFlagNames are the flags configFlags renders from a config: a
// dry run takes these from the effective config (a picked seed, --addrs
// implying --target external), every other flag as it was given.
var configFlagNames = []string{"target", "addrs", "nodes", "replicas", "workload", "nemesis", "nemesis-interval",
	"partition-clients", "time-limit", "concurrency", "rate", "keys", "wait", "wait-timeout", "seed", "node-timeout",
	"op-timeout", "check-timeout", "image", "server-binary", "server-config", "runtime", "namespace", "kubeconfig",
	"selector", "announce", "restore-roles", "client", "require-coverage", "results"}

// planCommand is the command a dry run stands for, as one shell line that
// runs exactly this plan: the effective config (configFlags, with --client
// and --results even at their defaults), then every other flag given
// (--replay, whose stored schedule no flag carries; bench's; --user, the
// password and TLS files, never a password; hooks; --test-count; --yes).
func planCommand(o *runOptions, command string) string {
	fs := configFlags(o.cfg)
	if o.cfg.Client == "" {
		fs = append(fs, flagValue{name: "client", value: clientlib.Own})
	}
	skip := map[string]bool{"dry-run": true, "help": true}
	for _, n := range configFlagNames {
		skip[n] = true
	}
	if o.flags == nil {
		return commandLine(command, fs)
	}
	o.flags.VisitAll(func(f *pflag.Flag) {
		if !f.Changed || skip[f.Name] {
			return
		}
		switch {
		case f.Name == "password-file":
			// loadCredentials rewrote the value to where the password
			// came from: only a file is a flag.
			if path, ok := strings.CutPrefix(o.cfg.PasswordFrom, "file "); ok {
				fs = append(fs, flagValue{name: f.Name, value: path})
			}
		case f.Value.Type() == "bool":
			fs = append(fs, flagValue{name: f.Name, value: f.Value.String(), bool: true})
		default:
			if sv, ok := f.Value.(pflag.SliceValue); ok && f.Value.Type() == "stringArray" {
				for _, v := range sv.GetSlice() {
					fs = append(fs, flagValue{name: f.Name, value: v})
				}
				return
			}
			fs = append(fs, flagValue{name: f.Name, value: f.Value.String()})
		}
	})
	return commandLine(command, fs)
}

func isNone(n []string) bool { return len(n) == 0 || (len(n) == 1 && n[0] == "none") }

type plannedFault struct{ at, what, hold string }

// faultSchedule is the schedule the nemesis will follow (nemesis.Plan is a
// pure function of faults and seed; fault k starts at (k+1/2) intervals).
func faultSchedule(cfg harness.Config) []plannedFault {
	if isNone(cfg.Nemesis) {
		return nil
	}
	faults := cfg.Nemesis
	for _, f := range faults {
		if f == "all" {
			faults = nemesis.Faults() // those the target cannot cause are dropped when it starts
		}
	}
	iv := cfg.NemesisInterval.D()
	n := int((cfg.TimeLimit.D() - iv/2) / iv)
	if cfg.TimeLimit.D() > iv/2 {
		n++
	}
	var out []plannedFault
	for k, st := range nemesis.Plan(faults, cfg.Seed, n) {
		at := time.Duration((float64(k) + 0.5) * float64(iv))
		out = append(out, plannedFault{
			at:   fmt.Sprintf("at %s", at.Round(100*time.Millisecond)),
			what: st.Fault + ":" + st.Mode,
			hold: (time.Duration(st.Hold * float64(iv))).Round(100 * time.Millisecond).String(),
		})
	}
	return out
}

// printSuitePlan is `suite --dry-run` and `rpo --dry-run`: one line per run
// with what sets it apart and its flags, and the estimated total.
func printSuitePlan(w io.Writer, s *suite.Suite, dir string, skip func(i int) bool) error {
	var total time.Duration
	n := 0
	common := commonParams(s.Runs)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  #\tRUN\tESTIMATE\tFLAGS OF ITS OWN")
	for i, r := range s.Runs {
		if skip != nil && skip(i) {
			fmt.Fprintf(tw, "  %d\t%s\tdone\t(has a verdict; --resume keeps it)\n", i+1, r.Name)
			continue
		}
		o, err := suiteRunOptions(r.Params)
		if err != nil {
			return badArgs("run %s: %v", r.Name, err)
		}
		e := estimate(o.cfg)
		total += e
		n++
		var own suite.Params
		for _, p := range r.Params {
			if !common[p.Key] {
				own = append(own, p)
			}
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\n", i+1, r.Name, roughly(e), strings.Join(suiteFlags(own), " "))
	}
	fmt.Fprintf(w, "plan: suite %s, %d runs one after another, about %s (each run's time limit + about %s), results in %s\n",
		s.Name, n, roughly(total), roughly(runOverhead), dir)
	if len(s.Runs) > 0 {
		var shared suite.Params
		for _, p := range s.Runs[0].Params {
			if common[p.Key] {
				shared = append(shared, p)
			}
		}
		fmt.Fprintf(w, "  every run: redline run %s\n", strings.Join(suiteFlags(shared), " "))
	}
	tw.Flush()
	for _, sk := range s.Skipped {
		fmt.Fprintf(w, "  skipped: %s\n", sk)
	}
	fmt.Fprintln(w, "nothing was started (--dry-run)")
	return nil
}

// commonParams are the keys every run of a suite sets to the same values.
func commonParams(runs []suite.Run) map[string]bool {
	if len(runs) == 0 {
		return nil
	}
	common := map[string]bool{}
	for _, p := range runs[0].Params {
		common[p.Key] = true
	}
	for _, r := range runs[1:] {
		for k := range common {
			if r.Params.Get(k) != runs[0].Params.Get(k) || !hasKey(r.Params, k) {
				delete(common, k)
			}
		}
	}
	if len(runs) == 1 {
		return map[string]bool{} // one run: its flags are its own
	}
	return common
}

func hasKey(ps suite.Params, k string) bool {
	for _, p := range ps {
		if p.Key == k {
			return true
		}
	}
	return false
}

// suiteFlags renders a run's parameters as the `redline run` flags they are.
func suiteFlags(ps suite.Params) []string {
	var fs []string
	for _, p := range ps {
		values := p.Values
		if p.Key != "server-config" && p.Key != "nemesis-hook" {
			values = []string{strings.Join(values, ",")} // as applyParams sets them
		}
		for _, v := range values {
			if strings.ContainsAny(v, " \t") {
				v = fmt.Sprintf("%q", v)
			}
			fs = append(fs, "--"+p.Key+" "+v)
		}
	}
	return fs
}

// printNemesisList is `--nemesis list`: every fault with its modes and what
// each does, from the nemesis registry.
func printNemesisList(w io.Writer) {
	fmt.Fprintln(w, "Faults for --nemesis, comma separated. A fault's name draws its modes at random (seeded);")
	fmt.Fprintln(w, "fault:mode picks one mode; [study] modes are only picked that way. all = every fault the target can cause.")
	for _, d := range nemesis.Describe() {
		fmt.Fprintf(w, "\n%s: %s\n", d.Name, d.What)
		if d.Capability == "" {
			fmt.Fprintln(w, "  runs on any target (through admin connections)")
		} else {
			where := runtimesWith(d.Capability)
			if d.Hook {
				where = append(where, fmt.Sprintf("an existing cluster with --nemesis-hook %s=COMMAND", d.Name))
			}
			if len(where) == 0 {
				where = []string{"no runtime offers it yet"}
			}
			fmt.Fprintf(w, "  needs to %s: %s\n", d.Needs, strings.Join(where, "; "))
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, m := range d.Modes {
			what := m.What
			if m.Study {
				what = "[study] " + what
			}
			fmt.Fprintf(tw, "  %s:%s\t%s\n", d.Name, m.Name, what)
		}
		tw.Flush()
	}
}

// buildCommit is set by 'make build' (-ldflags -X): this machine builds
// with GOFLAGS=-buildvcs=false, so the build info has no revision.
var buildCommit string

// redlineVersion is the commit redline was built from ("e503682ad067",
// "+dirty" when the tree had changes), from the build info Go embeds; ""
// when the build has none (go test, -buildvcs=false).
func redlineVersion() string {
	if buildCommit != "" {
		return buildCommit
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && dirty {
		rev += "+dirty"
	}
	return rev
}
