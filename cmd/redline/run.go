package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/nemesis"
	"github.com/redline-dev/redline/results"
	"github.com/redline-dev/redline/workloads"
	"github.com/redline-dev/redline/workloads/clientlib"
	"github.com/redline-dev/redline/workloads/kv"
)

type runOptions struct {
	cfg        harness.Config
	workloads  string
	nemesis    string
	addrs      string
	hooks      []string
	yes        bool                // --yes: no question before faults on a cluster redline did not create
	dryRun     bool                // --dry-run: print the plan, start nothing
	seedPicked bool                // the plan's seed was picked, not given
	creds      cluster.Credentials // read from the environment or a file, never stored
	replay     string              // --replay DIR: rerun a stored run's config and fault schedule
	flags      *pflag.FlagSet      // the command's flags, for the command a dry run prints (nil: none)
	kv         kv.Flags            // bench's kv workload
	capacity   capacityFlags       // bench's --slo search and --plan
	ci         ciFlags             // bench's --threshold, --json, --csv
	stdout     io.Writer
	stderr     io.Writer
	// runDir, if set, learns each run's directory as soon as it exists
	// (a suite links its summary to it).
	runDir func(dir string)
}

func newRunCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &runOptions{stdout: stdout, stderr: stderr}
	c := &cobra.Command{
		Use:   "run",
		Short: "Run one test: start a cluster, drive workloads under faults, check the history",
		Long: `Run one test. By default redline starts a 6-node cluster of the bundled reference
server in containers, runs the register workload for 60 s, heals, reads the
final state, checks the history and stores everything under ./redline-results.

Exit codes: 0 all checkers valid, 1 some checker found an anomaly, 2 some
checker could not decide, 253 the environment failed (the cluster at --addrs
cannot be reached, the Docker engine does not answer), 254 bad arguments,
255 redline itself failed, 130 interrupted (Ctrl-C: traffic stops, faults
end, the cluster is torn down; a second Ctrl-C stops waiting for that).`,
		Example: `  redline run --workload register --time-limit 30s
  redline run --target redis --workload counter,set --nemesis partition --wait 1
  redline run --addrs 127.0.0.1:7000,127.0.0.1:7001 --workload register --time-limit 10s
  redline run --replay redline-results/latest --server-binary /path/to/valkey-server`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.cfg.Command = os.Args
			o.flags = cmd.Flags()
			if o.replay != "" {
				if err := applyReplay(cmd.Flags(), o); err != nil {
					return err
				}
			}
			return runRun(cmd.Context(), o, cmd.Flags().Changed("target"))
		},
	}
	addRunFlags(c, o)
	c.Flags().StringVar(&o.replay, "replay", "", "rerun the stored run in DIR: its flags (those given here override them) and its exact fault schedule (each step's fault, mode, seed, timing)")
	return c
}

// validate checks flags and fills defaults. Every error is a bad-arguments
// error: nothing has been created yet.
func (o *runOptions) validate(targetChanged bool) error {
	cfg := &o.cfg
	if o.addrs != "" {
		if targetChanged && cfg.Target != "external" {
			return badArgs("--addrs points at an existing cluster, but --target is %q: drop --target or use --target external", cfg.Target)
		}
		cfg.Target = "external"
		for _, a := range strings.Split(o.addrs, ",") {
			cfg.Addrs = append(cfg.Addrs, strings.TrimSpace(a))
		}
		if _, err := cluster.ExternalNodes(cfg.Addrs); err != nil {
			return badArgs("--addrs: %v (expected host:port,host:port,...)", err)
		}
	}
	if err := validateRuntime(cfg, targetChanged); err != nil {
		return err
	}
	switch cfg.Target {
	case "reference", "redis":
	case "external":
		if len(cfg.Addrs) == 0 && cfg.Selector == "" {
			return badArgs("--target external needs --addrs host:port,... of the cluster to test")
		}
	default:
		return badArgs("unknown --target %q: choose reference, redis or external", cfg.Target)
	}
	cfg.Workloads = splitList(o.workloads)
	if len(cfg.Workloads) == 0 {
		return badArgs("--workload is empty: choose from %s", strings.Join(workloads.Names(), ", "))
	}
	for _, w := range cfg.Workloads {
		kind, err := workloads.KindOf(w)
		if err != nil {
			return badArgs("--workload: %v", err)
		}
		if kind == workloads.Load {
			if err := validateLoad(o, cfg); err != nil {
				return err
			}
		}
	}
	if o.ci.threshold != "" && cfg.KV == nil {
		return badArgs("--threshold bounds the kv load's figures: use it with 'redline bench' and --workload kv (the default)")
	}
	if cfg.Generators != 0 && cfg.KV == nil {
		return badArgs("--generators runs the kv load from several generators: use it with --workload kv (the default)")
	}
	if cfg.RunCount > 1 && cfg.KV == nil {
		return badArgs("--run-count repeats the kv load: use it with --workload kv (the default); other workloads repeat with --test-count")
	}
	if o.ci.machine != nil && cfg.KV == nil {
		return badArgs("--json and --csv print the kv load's summary: use them with --workload kv (the default)")
	}
	if err := validateClient(o, cfg); err != nil {
		return err
	}
	cfg.Nemesis = splitList(o.nemesis)
	// The names now, by nemesis's own parse (New reads them with it
	// again); whether the runtime can cause them is checkCapabilities',
	// whether the live target can is nemesis.New's once the cluster exists.
	if _, err := nemesis.Parse(cfg.Nemesis); err != nil {
		return badArgs("--nemesis: %v", err)
	}
	if err := checkCapabilities(cfg, o.hooks); err != nil {
		return err
	}
	if err := validateServer(cfg, targetChanged); err != nil {
		return err
	}
	if err := checkStoreDir("--results", cfg.ResultsDir); err != nil {
		return err
	}
	if cfg.Target != "external" {
		if cfg.Nodes < 3 {
			return badArgs("--nodes %d: a cluster needs at least 3 primaries", cfg.Nodes)
		}
		if cfg.Replicas < 0 || cfg.Nodes/(cfg.Replicas+1) < 3 {
			return badArgs("--nodes %d with --replicas %d leaves fewer than 3 primaries", cfg.Nodes, cfg.Replicas)
		}
	}
	if err := cfg.Validate(); err != nil {
		return badArgs("%v", err)
	}
	if cfg.Wait > 0 && cfg.OpTimeout.D() <= cfg.WaitTimeout.D() {
		// The WAIT shares the op's connection and deadline.
		cfg.OpTimeout = harness.Duration(cfg.WaitTimeout.D() + time.Second)
	}
	for _, h := range o.hooks {
		if !strings.Contains(h, "=") {
			return badArgs("--nemesis-hook %q: expected fault=command", h)
		}
	}
	creds, err := loadCredentials(cfg)
	if err != nil {
		return badArgs("%v", err)
	}
	o.creds = creds
	if cfg.Seed == 0 {
		cfg.Seed = time.Now().UnixNano() & (1<<53 - 1)
	}
	cfg.TestName = testName(cfg)
	if cfg.Bench {
		cfg.TestName = "bench-" + cfg.TestName
	}
	return nil
}

// validateClient checks --client against what the library path can do:
// a library runs each op as one command on one key, with no WAIT of its
// own on the write's connection.
func validateClient(o *runOptions, cfg *harness.Config) error {
	if cfg.Client == clientlib.Own {
		cfg.Client = ""
	}
	if err := clientlib.Validate(cfg.Client); err != nil {
		return badArgs("--client: %v", err)
	}
	if cfg.Client == "" {
		return nil
	}
	for _, w := range cfg.Workloads {
		if k, _ := workloads.KindOf(w); k == workloads.Load {
			return badArgs("--client %s: bench's kv load driver sends through redline's own pipelined connections; "+
				"use --workload register, counter or set to bench a client library", cfg.Client)
		}
		if why := workloads.LibUnsupported(w); why != "" {
			return badArgs("--client %s: %s", cfg.Client, why)
		}
	}
	if cfg.Wait > 0 {
		return badArgs("--client %s with --wait: a library sends WAIT on any connection, so its count says nothing "+
			"about the write; drop --wait or use --client redline", cfg.Client)
	}
	if cfg.TLS && (strings.HasPrefix(cfg.Client, clientlib.ExecPrefix) || cfg.Client == "redis-py" || cfg.Client == "node-redis") {
		return badArgs("--client %s: client processes get no TLS settings (protocol 1); use go-redis or rueidis on a TLS cluster", cfg.Client)
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func testName(cfg *harness.Config) string {
	// fault:mode becomes fault-mode: a colon would read as a URL scheme in links.
	name := buildName(cfg) + "-" + strings.Join(cfg.Workloads, "+") + "-" + strings.ReplaceAll(strings.Join(cfg.Nemesis, "+"), ":", "-")
	if cfg.Wait > 0 {
		name += fmt.Sprintf("-wait%d", cfg.Wait)
	}
	if cfg.Client != "" {
		name += "-" + clientTag(cfg.Client)
	}
	// A long list of fault modes would exceed a file name's 255 bytes:
	// keep the head and make the rest a digest (the full list is in
	// config.json).
	if len(name) > maxTestName {
		sum := sha256.Sum256([]byte(name))
		name = name[:maxTestName-9] + "-" + hex.EncodeToString(sum[:4])
	}
	return name
}

// clientTag names the client under test in a test's name: an exec
// command by a digest (it may hold spaces, slashes, anything).
func clientTag(client string) string {
	if strings.HasPrefix(client, clientlib.ExecPrefix) {
		sum := sha256.Sum256([]byte(client))
		return "exec-" + hex.EncodeToString(sum[:4])
	}
	return strings.ReplaceAll(client, ":", "-")
}

// maxTestName bounds a test's directory name.
const maxTestName = 120

func runRun(ctx context.Context, o *runOptions, targetChanged bool) error {
	if o.nemesis == "list" {
		printNemesisList(o.stdout)
		return nil
	}
	if o.cfg.Client == "list" {
		fmt.Fprint(o.stdout, clientlib.Describe())
		return nil
	}
	seedGiven := o.cfg.Seed != 0
	if err := o.validate(targetChanged); err != nil {
		return err
	}
	if o.dryRun {
		o.seedPicked = !seedGiven
		command := "redline run"
		if o.cfg.Bench {
			command = "redline bench"
		}
		printRunPlan(o.stdout, o, command)
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := notifyInterrupts(ctx, o.stderr)
	defer stop()
	worst := exitValid
	for i := 0; i < o.cfg.TestCount; i++ {
		cfg := o.cfg
		cfg.TestIndex = i
		if i > 0 {
			cfg.Seed = o.cfg.Seed + int64(i)
		}
		code, err := runOnce(ctx, o, cfg)
		if err != nil {
			return err
		}
		if code > worst {
			worst = code
		}
		if code == exitInvalid {
			break
		}
	}
	if worst != exitValid {
		return verdict{worst}
	}
	return nil
}

func runOnce(ctx context.Context, o *runOptions, cfg harness.Config) (int, error) {
	stdout := o.stdout
	plan := harness.Plan{
		Config:      cfg,
		Credentials: o.creds,
		Start: func(ctx context.Context, cfg harness.Config, log *harness.Log) (cluster.Cluster, error) {
			return startCluster(ctx, cfg, o.creds, log)
		},
		Faults: func(cfg harness.Config, c cluster.Cluster, j *clusteradmin.Journal, log *harness.Log) (harness.Nemesis, error) {
			return buildNemesis(cfg, c, o.creds, o.hooks, j, log)
		},
		Stdout:  stdout,
		Stderr:  o.stderr,
		RunDir:  o.runDir,
		Version: redlineVersion(),
	}
	if cfg.Generators > 0 && cfg.Target == "external" && cfg.Runtime != "kubernetes" {
		// Nothing runs beside a cluster redline did not start: the
		// generators are processes of this machine.
		plan.Generators = localGenerators{}
	}
	if cfg.Target == "external" && cfg.TestIndex == 0 { // one answer covers every --test-count run
		plan.Consent = func(ctx context.Context, cfg harness.Config, c cluster.Cluster) error {
			return askConsent(ctx, o, cfg, c)
		}
	}
	out, err := harness.Run(ctx, plan)
	if err != nil {
		return 0, harnessFailed(err)
	}
	if out.Load != nil {
		return printLoad(stdout, &o.ci, cfg, out), nil
	}
	if out.Interrupted && out.Audit != nil {
		fmt.Fprintf(stdout, "audit: %s\n", out.Audit.Summary)
	}
	if out.Interrupted {
		return 0, interrupted("interrupted; the history so far (%d entries) is in %s; check it with 'redline check %s'", out.Ops, out.Dir, out.Dir)
	}
	if cfg.Bench {
		printBench(stdout, out.Summary)
	}
	printVerdict(stdout, out.Summary, out.Dir)
	if out.Audit != nil {
		fmt.Fprintf(stdout, "audit: %s\n", out.Audit.Summary)
	}
	if cfg.Bench {
		printThroughput(stdout, benchThroughput(out.Summary))
	}
	if out.Audit != nil && !out.Audit.Clean {
		// Never the cluster's anomaly: what changed is redline's (or
		// someone else's) doing during the run, not a checker verdict.
		return 0, harnessFailed(fmt.Errorf("the audit found data that is not redline's changed during the run "+
			"(see audit in %s): %s", filepath.Join(out.Dir, "results.json"), out.Audit.Summary))
	}
	return out.Summary.Valid.ExitCode(), nil
}

// printVerdict prints the table a person reads first.
func printVerdict(w io.Writer, s checker.Summary, dir string) {
	names := make([]string, 0, len(s.Checkers))
	for n := range s.Checkers {
		names = append(names, n)
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nCHECKER\tVERDICT\tFIGURES")
	for _, n := range names {
		r := s.Checkers[n]
		fmt.Fprintf(tw, "%s\t%s\t%s\n", n, checker.VerdictWord(r), results.HeadlineFigures(r))
	}
	tw.Flush()
	printNotApplicable(w, s)
	// What made each verdict invalid or unknown, in words (the checker's
	// "why": first keys and ops with their indexes).
	for _, n := range names {
		r := s.Checkers[n]
		if r.Valid == checker.Valid {
			continue
		}
		if why := r.Why(); why != "" {
			fmt.Fprintf(w, "%s is %s: %s\n", n, r.Valid, why)
		}
	}
	printAttribution(w, s, dir)
	printCoverage(w, s)
	fmt.Fprintf(w, "\nverdict: %s\nresults: %s\n", verdictLine(s), dir)
}

// verdictLine is the verdict with its caveats: "VALID (partition: no
// evidence)" when a requested fault kind exercised nothing.
func verdictLine(s checker.Summary) string {
	v := strings.ToUpper(s.Valid.String())
	if c := s.Caveats(); len(c) > 0 {
		v += " (" + strings.Join(c, "; ") + ")"
	}
	return v
}

// printCoverage says per requested fault kind what the run exercised.
func printCoverage(w io.Writer, s checker.Summary) {
	for _, k := range s.Checkers[checker.CoverageName].Coverage() {
		if k.Summary != "" {
			fmt.Fprintf(w, "coverage: %s\n", k.Summary)
		}
	}
}

// printAttribution says, per group of attributed anomalies, whose doing
// it was (results.json and the report have the evidence); dir is the
// run's directory, where the report left the groups it made with the
// history's evidence.
func printAttribution(w io.Writer, s checker.Summary, dir string) {
	if c := s.Census; c != nil && c.Stranded > 0 {
		fmt.Fprintf(w, "\ncensus: %d copies of the run's keys are on nodes whose shard does not serve their slot (stranded), e.g. %s\n", c.Stranded, strings.Join(c.Examples[:min(3, len(c.Examples))], "; "))
	}
	if c := s.Census; c != nil && c.InOpenSlots > 0 {
		fmt.Fprintf(w, "census: %d copies of the run's keys are outside their slot's shard in slots left MIGRATING/IMPORTING, e.g. %s\n", c.InOpenSlots, strings.Join(c.OpenExamples[:min(3, len(c.OpenExamples))], "; "))
	}
	if len(s.Attribution) == 0 {
		return
	}
	// One line per cause (checker, verdict, acknowledging node, fault
	// window) with its count and three examples: a partition that lost
	// hundreds of writes is one line, not hundreds.
	fmt.Fprintln(w, "\nanomalies by cause (evidence in results.json and report.html):")
	for _, l := range results.GroupLines(dir, s) {
		fmt.Fprintln(w, "  "+l)
	}
}

// printNotApplicable names the checkers the history gave nothing to judge,
// so that a person sees they were not part of the verdict and why, on one
// line.
func printNotApplicable(w io.Writer, s checker.Summary) {
	if line := results.NotApplicableLine(s.NotApplicable); line != "" {
		fmt.Fprintf(w, "not applicable, left out of the verdict: %s\n", line)
	}
}

// addRunFlags registers the flags shared by run and bench.
func addRunFlags(c *cobra.Command, o *runOptions) {
	f := c.Flags()
	cfg := &o.cfg
	f.StringVar(&cfg.Target, "target", "reference", "cluster to test: reference (bundled server), redis (Debian's Redis 7), external (needs --addrs)")
	f.StringVar(&o.addrs, "addrs", "", "host:port,... of an existing cluster to test (implies --target external)")
	f.IntVar(&cfg.Nodes, "nodes", 6, "nodes to start (primaries + replicas)")
	f.IntVar(&cfg.Replicas, "replicas", 1, "replicas per primary")
	f.StringVar(&cfg.Client, "client", clientlib.Own, "client library under test: "+strings.Join(clientlib.Names(), ", ")+
		" (traffic goes through it; setup and final reads through redline's own client); list: what each is")
	f.StringVar(&o.workloads, "workload", "register", "workloads, comma separated: "+strings.Join(workloads.Names(), ", "))
	f.StringVar(&o.nemesis, "nemesis", "none", "faults, comma separated, fault:mode for one mode ('--nemesis list' says what each does): "+strings.Join(nemesisNames(), ", "))
	f.DurationVar((*time.Duration)(&cfg.NemesisInterval), "nemesis-interval", 10*time.Second, "time between fault starts")
	f.BoolVar(&cfg.PartitionClients, "partition-clients", false, "partitions also cut clients from the minority side")
	f.StringArrayVar(&o.hooks, "nemesis-hook", nil, "fault=command for external targets, e.g. kill='ssh $REDLINE_NODE_HOST pkill -9 redis'")
	f.DurationVar((*time.Duration)(&cfg.TimeLimit), "time-limit", 60*time.Second, "how long traffic runs")
	f.IntVar(&cfg.Concurrency, "concurrency", 10, "client processes")
	f.Float64Var(&cfg.Rate, "rate", 0, "total ops/s (0 = as fast as the cluster answers)")
	f.IntVar(&cfg.Keys, "keys", 0, "keys per workload (0 = the workload's default)")
	f.IntVar(&cfg.Wait, "wait", 0, "send WAIT N after each write, on the same connection, and record the replica count")
	f.DurationVar((*time.Duration)(&cfg.WaitTimeout), "wait-timeout", 100*time.Millisecond, "timeout of each WAIT")
	f.Int64Var(&cfg.Seed, "seed", 0, "random seed of op and fault schedules (0 = pick one and print it)")
	f.DurationVar((*time.Duration)(&cfg.NodeTimeout), "node-timeout", 2*time.Second, "cluster-node-timeout of clusters redline creates")
	f.DurationVar((*time.Duration)(&cfg.OpTimeout), "op-timeout", time.Second, "client timeout of one operation (an op that times out is recorded as info)")
	f.DurationVar((*time.Duration)(&cfg.CheckTimeout), "check-timeout", 60*time.Second, "time the linearizability search may take before it says unknown")
	f.StringVar(&cfg.ResultsDir, "results", defaultStore, "directory of the results store")
	f.IntVar(&cfg.TestCount, "test-count", 1, "run the test this many times (stops at the first invalid run)")
	f.StringVar(&cfg.Image, "image", "", "local container image to use instead of building one (see README: its contract); on kubernetes the image the pods pull")
	addRuntimeFlags(f, cfg)
	addServerFlags(f, cfg)
	f.BoolVarP(&o.yes, "yes", "y", false, "on a cluster redline did not create, start topology-changing faults without asking")
	f.BoolVar(&cfg.RequireCoverage, "require-coverage", false, "a requested fault kind that touched no primary holding keys (no evidence) makes the verdict unknown (exit 2) instead of VALID with a caveat")
	f.BoolVar(&cfg.RestoreRoles, "restore-roles", false, "at the end, switch the roles of failovers redline caused back (CLUSTER FAILOVER on the former primary)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the run's settings, its fault schedule and the estimated time; start nothing")
	addCredentialFlags(c, cfg)
}
