package harness

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/results"
	"github.com/redline-dev/redline/workloads"
)

// Plan is one run as its caller decided it: the config (stored as
// config.json), the credentials (never stored), how to get the cluster and
// the faults, and where to report. Run carries it out; the caller only
// maps the Outcome (and the errors its own callbacks return) to what it
// prints and its exit code.
type Plan struct {
	Config      Config
	Credentials cluster.Credentials
	// The callbacks get the run's config as Run completed it (key prefix,
	// start time). Start starts (or attaches to) the cluster. Until it returns the run
	// logs to memory only: a run that cannot even start its cluster leaves
	// no half-made directory behind.
	Start func(ctx context.Context, cfg Config, log *Log) (cluster.Cluster, error)
	// Consent (nil: none) is asked once the cluster is up and before
	// anything is written (topology faults on a cluster redline did not
	// create).
	Consent func(ctx context.Context, cfg Config, c cluster.Cluster) error
	// Faults (nil: none) builds the fault schedule over the cluster,
	// journalling into j; a nil Nemesis is no faults.
	Faults func(cfg Config, c cluster.Cluster, j *clusteradmin.Journal, log *Log) (Nemesis, error)
	// Stdout gets the progress display and a driver's running lines;
	// Stderr the log lines a person should see.
	Stdout, Stderr io.Writer
	// RunDir, if set, learns the run's directory as soon as it exists (a
	// suite links its summary to it).
	RunDir func(dir string)
	// Version is redline's own, recorded in config.json (empty: none).
	Version string
	// Generators runs a distributed bench's generators when the cluster's
	// runtime does not (local processes); nil: the runtime's own.
	Generators cluster.Generators
}

// Session is a run in progress as its Driver gets it: the config with its
// key prefix and start time, the cluster, the run's directory (run.log,
// config.json and the journal already there), its faults and its output.
type Session struct {
	Config      Config
	Credentials cluster.Credentials
	Cluster     cluster.Cluster
	Run         *results.Run
	Journal     *clusteradmin.Journal
	Nemesis     Nemesis // nil: no faults
	Log         *Log
	Stdout      io.Writer
	TTY         bool
	// Generators runs a distributed bench's generators where the cluster
	// does not (cluster.Generators); nil: the cluster's runtime does.
	Generators cluster.Generators

	rounds int // a distributed bench's rounds so far (generators/<n>/)
}

// Driver carries a run's traffic and stores what it measured in the run's
// directory. There are two: HistoryDriver (workers that record every op,
// then the end phase and the checkers) and LoadDriver (harness/bench:
// open or closed loop, per-second histograms, no history). The kind of
// the run's workloads picks one (DriverFor).
type Driver interface {
	Drive(ctx context.Context, s *Session) (Outcome, error)
}

// DriverFor picks the driver of a run by its workloads' Kind: a Load
// workload (kv) goes to the load driver, the rest to the history driver
// (a run does not mix them: cmd refuses it).
func DriverFor(cfg Config) Driver {
	for _, w := range cfg.Workloads {
		if k, _ := workloads.KindOf(w); k == workloads.Load {
			return LoadDriver{}
		}
	}
	return HistoryDriver{}
}

// Run carries out one run of a plan, owning its directory end to end:
// it starts the cluster (Plan.Start) and tears it down at the end, asks
// for consent, creates the run directory with run.log, config.json and
// the admin journal, builds the faults, and has the driver fill in the
// rest (history, nodes/, results.json, report). The Outcome's Dir is the
// run's directory once it exists.
func Run(ctx context.Context, p Plan) (Outcome, error) {
	cfg := p.Config
	var out Outcome
	tty := false
	if f, ok := p.Stdout.(*os.File); ok {
		tty = IsTerminal(f)
	}
	cfg.Started = time.Now().UTC()
	cfg.KeyPrefix = "redline:" + randomID() + ":"

	var early bytes.Buffer
	log := NewLog(&early, p.Stderr)
	log.Printf("test %s, seed %d", cfg.TestName, cfg.Seed)
	redis.SetLogger(FileOnly{L: log})

	cl, err := p.Start(ctx, cfg, log)
	if err != nil {
		return out, err
	}
	defer func() {
		// Tear down even after Ctrl-C: a fresh context, bounded, that a
		// second Ctrl-C ends (WithAbort).
		tctx, cancel := AfterCancel(ctx, 2*time.Minute)
		defer cancel()
		if err := cl.Close(tctx); err != nil {
			log.Printf("teardown: %v (run 'redline cluster down' to remove leftovers)", err)
		}
	}()
	if p.Consent != nil {
		if err := p.Consent(ctx, cfg, cl); err != nil {
			return out, err
		}
	}

	store := results.Store{Root: cfg.ResultsDir}
	run, err := store.NewRun(cfg.TestName, cfg.Started)
	if err != nil {
		return out, err
	}
	out.Dir = run.Dir
	if p.RunDir != nil {
		p.RunDir(run.Dir)
	}
	logFile, err := os.Create(run.Path("run.log"))
	if err != nil {
		return out, err
	}
	defer logFile.Close()
	_, _ = logFile.Write(early.Bytes())
	log.SetFile(logFile)
	log.Printf("results in %s", run.Dir)
	if d, ok := cl.(cluster.Describer); ok {
		cfg.Versions = d.Describe()
	}
	if p.Version != "" {
		if cfg.Versions == nil {
			cfg.Versions = map[string]string{}
		}
		cfg.Versions["redline"] = p.Version
	}
	if err := run.WriteJSON("config.json", cfg); err != nil {
		return out, err
	}

	journal, err := clusteradmin.OpenJournal(run.Path(clusteradmin.JournalFile))
	if err != nil {
		return out, err
	}
	defer journal.Close()
	var nem Nemesis
	if p.Faults != nil {
		if nem, err = p.Faults(cfg, cl, journal, log); err != nil {
			return out, err
		}
	}
	o, err := DriverFor(cfg).Drive(ctx, &Session{
		Config: cfg, Credentials: p.Credentials, Cluster: cl, Run: run, Journal: journal,
		Nemesis: nem, Log: log, Stdout: p.Stdout, TTY: tty, Generators: p.Generators,
	})
	o.Dir = run.Dir
	return o, err
}

func randomID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// HistoryDriver is the history driver: the workloads' workers record
// every op in the history under the faults, the end phase heals and
// reads the final state (Execute), and the checkers' verdict is stored as
// results.json beside the report.
type HistoryDriver struct{}

func (HistoryDriver) Drive(ctx context.Context, s *Session) (Outcome, error) {
	cfg := s.Config
	ws := make([]workloads.Workload, 0, len(cfg.Workloads))
	for _, name := range cfg.Workloads {
		w, err := workloads.New(name, cfg.Workload())
		if err != nil {
			return Outcome{}, err
		}
		ws = append(ws, w)
	}
	checkers, err := CheckersFor(cfg)
	if err != nil {
		return Outcome{}, err
	}
	var auditor *clusteradmin.Auditor
	if cfg.Target == "external" {
		// Not redline's cluster: count what is not redline's before and after.
		auditor = &clusteradmin.Auditor{Nodes: s.Cluster.Nodes, Prefix: cfg.KeyPrefix, Journal: s.Journal, Creds: s.Credentials}
	}
	out, err := Execute(ctx, Inputs{
		Config:    cfg,
		Cluster:   s.Cluster,
		Workloads: ws,
		Checkers:  checkers,
		Nemesis:   s.Nemesis,
		Converge: func(ctx context.Context, addrs []string) error {
			return clusteradmin.WaitConverged(ctx, s.Credentials, addrs)
		},
		Run:         s.Run,
		Log:         s.Log,
		Progress:    NewProgress(s.Stdout, s.TTY, s.Log),
		Audit:       auditor,
		Credentials: s.Credentials,
	})
	if err != nil {
		return out, fmt.Errorf("%w (partial history in %s)", err, s.Run.Dir)
	}
	if out.Interrupted {
		return out, nil
	}
	return out, SaveResults(s.Run, out.Summary, out.Audit, nil)
}
