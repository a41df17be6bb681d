package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/redline-dev/redline/harness/suite"
	"github.com/redline-dev/redline/results"
)

type rpoOptions struct {
	targets, scenarios, waits, nodeTimeouts string
	persistence                             string
	clients                                 string
	seeds                                   int
	minReplicas                             bool
	maxLag                                  int
	base                                    []string
	results, resume                         string
	dryRun                                  bool
	stdout, stderr                          io.Writer
}

func newRPOCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &rpoOptions{stdout: stdout, stderr: stderr}
	c := &cobra.Command{
		Use:   "rpo",
		Short: "RPO study: how many acknowledged writes, and how many seconds of them, a failure loses",
		Long: `Measure what a primary's failure costs: for each scenario, target, WAIT setting
and node-timeout, run the set workload (every write unique, so each lost
acknowledged write is known with its ack time) under exactly one fault, repeat
it --seeds times, and write redline-results/rpo/<timestamp>/ with rpo.json, rpo.md (a
table and a paragraph per scenario in plain words) and rpo.html (plots), plus
the suite files of the runs.

The default target is redis-server (Debian's, or any build with --set
server-binary=PATH): an RPO document is about a real server. --target
reference measures redline's bundled reference server, a model of Redis
Cluster, and the document says so in its title with the date of the model's
last fidelity check against redis-server.

Scenarios: isolate-primary (a primary cut off from every peer, clients still
reach it), kill-primary, pause-primary (frozen longer than node-timeout: the
zombie primary), primary-in-minority (a primary on the minority side); and,
not run unless named, power-shard (a primary and its replicas lose power:
what they had not fsynced is gone) and power-all (every node at once), which
need FUSE (the nodes' data directories go through redline's power layer).

--persistence always,everysec,no,rdb,none runs every cell with each
persistence setting (appendfsync always / everysec / no, RDB snapshots only
at Redis's default save points, none); without it the nodes run appendonly
yes with appendfsync everysec. With the power scenarios rpo.md then says
"with appendfsync everysec, a power loss loses up to N ms of acknowledged
writes".

How long it takes: targets x scenarios x WAIT values x node-timeouts x
settings (2 with --min-replicas) x seeds runs, one after another; each runs
1.45 x max(10 s, 5 x node-timeout) of traffic plus about 15 s to start the
cluster and check. The defaults are 4 scenarios x 2 WAIT values x 2 seeds =
16 runs of 14 s + 15 s, about 8 minutes; --dry-run prints the runs and the
estimate and starts nothing.

Lost writes are what the study measures, so its runs' checkers are mostly
invalid; the exit code says whether it could measure: 0 when every run gave
figures, 2 when some did not (listed in rpo.md), 254 bad arguments, 130
interrupted (continue with --resume DIR), 255 redline itself failed.`,
		Example: `  redline rpo --dry-run
  redline rpo --target redis --scenarios isolate-primary --wait 0,1 --seeds 2
  redline rpo --target reference,redis --node-timeout 1s,2s,5s --min-replicas
  redline rpo --target reference,redis --scenarios power-shard,power-all --persistence always,everysec,no --wait 0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRPO(cmd.Context(), o) },
	}
	f := c.Flags()
	// An RPO document is about a real server: the default is Debian's
	// redis-server (or --set server-binary=PATH); the reference server is
	// redline's model of Redis, which a document made on it says.
	f.StringVar(&o.targets, "target", "redis", "targets, comma separated: redis (Debian's redis-server, or --set server-binary=PATH), reference (redline's model of Redis); reference,redis runs both side by side")
	f.StringVar(&o.scenarios, "scenarios", strings.Join(suite.DefaultScenarios, ","), "scenarios, comma separated, from "+strings.Join(suite.ScenarioNames(), ", "))
	f.StringVar(&o.persistence, "persistence", "", "persistence settings to compare, comma separated, from "+strings.Join(suite.PersistenceNames(), ", ")+" (empty: appendonly yes, appendfsync everysec)")
	f.StringVar(&o.clients, "client", "", "client libraries to compare, comma separated (a matrix axis; empty: redline's own client), e.g. go-redis,rueidis,redis-py")
	f.StringVar(&o.waits, "wait", "0,1", "WAIT replica counts after each write, comma separated (0 = no WAIT)")
	f.StringVar(&o.nodeTimeouts, "node-timeout", "2s", "cluster-node-timeout values, comma separated")
	f.IntVar(&o.seeds, "seeds", 2, "repetitions of each cell (seeds 1..N)")
	f.BoolVar(&o.minReplicas, "min-replicas", false, "also run every cell with min-replicas-to-write 1")
	f.IntVar(&o.maxLag, "min-replicas-max-lag", 10, "min-replicas-max-lag (seconds) with --min-replicas")
	f.StringArrayVar(&o.base, "set", nil, "key=value 'redline run' flag for every run, e.g. server-binary=./src/redis-server, concurrency=20")
	f.StringVar(&o.results, "results", defaultStore, "directory of the results store (runs, and rpo/<ts>/)")
	f.StringVar(&o.resume, "resume", "", "an interrupted study's directory: run only what has no verdict yet")
	f.BoolVar(&o.dryRun, "dry-run", false, "print every run's flags and the estimated total time; start nothing")
	return c
}

func runRPO(ctx context.Context, o *rpoOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var s *suite.Suite
	var prior *suite.Summary
	dir := filepath.Join(o.results, "rpo", time.Now().UTC().Format(results.TimeLayout))
	if o.resume != "" {
		var err error
		if prior, err = suite.Load(o.resume); err != nil {
			return badArgs("--resume: %v", err)
		}
		s, dir = prior.Suite(), o.resume
		if prior.ResultsRoot != "" {
			o.results = prior.ResultsRoot
		}
	} else {
		if err := checkStoreDir("--results", o.results); err != nil {
			return err
		}
		st := suite.Study{Targets: splitList(o.targets), Scenarios: splitList(o.scenarios), Seeds: o.seeds, Clients: splitList(o.clients)}
		for _, w := range splitList(o.waits) {
			n, err := strconv.Atoi(w)
			if err != nil || n < 0 {
				return badArgs("--wait %q: want replica counts like 0,1", o.waits)
			}
			st.Waits = append(st.Waits, n)
		}
		for _, d := range splitList(o.nodeTimeouts) {
			v, err := time.ParseDuration(d)
			if err != nil {
				return badArgs("--node-timeout %q: want durations like 1s,2s,5s", o.nodeTimeouts)
			}
			st.NodeTimeouts = append(st.NodeTimeouts, v)
		}
		if len(st.Targets) == 0 || len(st.Scenarios) == 0 || len(st.Waits) == 0 || len(st.NodeTimeouts) == 0 {
			return badArgs("--target, --scenarios, --wait and --node-timeout need at least one value each")
		}
		persist := [][]string{nil}
		if o.persistence != "" {
			persist = nil
			for _, name := range splitList(o.persistence) {
				p, ok := suite.PersistenceByName(name)
				if !ok {
					return badArgs("--persistence %q: choose from %s", name, strings.Join(suite.PersistenceNames(), ", "))
				}
				persist = append(persist, p.Settings)
			}
		}
		st.Settings = nil
		for _, p := range persist {
			st.Settings = append(st.Settings, p)
			if o.minReplicas {
				st.Settings = append(st.Settings, append(slices.Clone(p), "min-replicas-to-write 1", "min-replicas-max-lag "+strconv.Itoa(o.maxLag)))
			}
		}
		base, err := parseSets(o.base)
		if err != nil {
			return err
		}
		st.Base = base
		if s, err = st.Suite("rpo"); err != nil {
			return badArgs("%v", err)
		}
		for _, r := range s.Runs {
			if err := validateSuiteRun(r.Params, false); err != nil {
				return badArgs("run %s: %v", r.Name, err)
			}
		}
	}
	if o.dryRun {
		return printSuitePlan(o.stdout, s, dir, hasVerdict(prior))
	}
	err := executeSuite(ctx, s, dir, prior, o.results, "redline rpo", o.stdout, o.stderr)
	if _, isVerdict := err.(verdict); err != nil && !isVerdict {
		return err
	}
	// Lost writes make checkers invalid: that is what the study measures,
	// not a failure of the study. Its exit code says whether it could
	// measure: 0 when every run has figures.
	sum, lerr := suite.Load(dir)
	if lerr != nil {
		return harnessFailed(lerr)
	}
	rep := suite.NewStudyReport(sum, max(o.seeds, 1))
	b, _ := json.MarshalIndent(rep, "", "  ")
	for name, data := range map[string][]byte{"rpo.json": append(b, '\n'), "rpo.md": rep.Markdown()} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return harnessFailed(err)
		}
	}
	h, err := rep.HTML()
	if err != nil {
		return harnessFailed(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rpo.html"), h, 0o644); err != nil {
		return harnessFailed(err)
	}
	fmt.Fprintf(o.stdout, "\n%s\nrpo: %s\n", rep.Markdown(), filepath.Join(dir, "rpo.md"))
	for _, e := range rep.Entries {
		if len(e.Failed) > 0 || e.Runs == 0 {
			return verdict{exitUnknown}
		}
	}
	return nil
}
