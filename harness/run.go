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
	// The callbacks get the run's config as Run completed it so far (key
	// prefix, start time; Faults also the versions and the client under
	// test). Start starts (or attaches to) the cluster. Until it returns
	// the run logs to memory only: a run that cannot even start its
	// cluster leaves no half-made directory behind.
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

// Session is one run in progress, the one value a run travels in: the
// plan it carries out (its Config completed by Run: key prefix, start
// time, versions, the client under test) and what Run made of it: the
// cluster, the run's directory (run.log, config.json and the journal
// already there), its faults, its log and the client under test.
type Session struct {
	Plan
	Cluster cluster.Cluster
	Run     *results.Run
	Journal *clusteradmin.Journal
	Nemesis Nemesis // nil: no faults
	Log     *Log
	TTY     bool

	// lib is the client library under test, open before the run's
	// directory exists (openClient); nil: redline's own client.
	lib      workloads.Client
	closeLib func() error
	rounds   int // a distributed bench's rounds so far (generators/<n>/)
}

// Driver carries a run's traffic and stores what it measured in the run's
// directory. There are two: HistoryDriver (workers that record every op,
// then the end phase and the checkers) and LoadDriver (harness/bench:
// open or closed loop, per-second histograms, no history). The kind of
// the run's workloads picks one (DriverFor).
type Driver interface {
	// Open readies what the driver needs on the started cluster before
	// the run's directory exists and completes s.Config with what only
	// that tells (the client under test's name and version), so that
	// config.json is written once, complete. Run closes it (closeClient).
	Open(ctx context.Context, s *Session) error
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
// for consent, has the driver ready itself (Driver.Open: the client under
// test), creates the run directory with run.log, config.json (complete,
// written once) and the admin journal, builds the faults, and has the
// driver fill in the rest (history, nodes/, results.json, report). The
// Outcome's Dir is the run's directory once it exists.
func Run(ctx context.Context, p Plan) (Outcome, error) {
	s := &Session{Plan: p}
	var out Outcome
	if f, ok := p.Stdout.(*os.File); ok {
		s.TTY = IsTerminal(f)
	}
	s.Config.Started = time.Now().UTC()
	s.Config.KeyPrefix = "redline:" + randomID() + ":"

	var early bytes.Buffer
	s.Log = NewLog(&early, p.Stderr)
	log := s.Log
	log.Printf("test %s, seed %d", s.Config.TestName, s.Config.Seed)
	redis.SetLogger(FileOnly{L: log})

	cl, err := p.Start(ctx, s.Config, log)
	if err != nil {
		return out, err
	}
	s.Cluster = cl
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
		if err := p.Consent(ctx, s.Config, cl); err != nil {
			return out, err
		}
	}
	drv := DriverFor(s.Config)
	defer func() { _ = s.closeClient() }()
	if err := drv.Open(ctx, s); err != nil {
		return out, err
	}
	if d, ok := cl.(cluster.Describer); ok {
		s.Config.Versions = d.Describe()
	}
	if p.Version != "" {
		if s.Config.Versions == nil {
			s.Config.Versions = map[string]string{}
		}
		s.Config.Versions["redline"] = p.Version
	}

	store := results.Store{Root: s.Config.ResultsDir}
	run, err := store.NewRun(s.Config.TestName, s.Config.Started)
	if err != nil {
		return out, err
	}
	s.Run = run
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
	// The config is final: the one write of config.json, with the
	// directory, so that a run that stops anywhere after this point
	// still says what it was.
	if err := run.WriteJSON("config.json", s.Config); err != nil {
		return out, err
	}

	if s.Journal, err = clusteradmin.OpenJournal(run.Path(clusteradmin.JournalFile)); err != nil {
		return out, err
	}
	defer s.Journal.Close()
	if p.Faults != nil {
		if s.Nemesis, err = p.Faults(s.Config, cl, s.Journal, log); err != nil {
			return out, err
		}
	}
	o, err := drv.Drive(ctx, s)
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

// Open opens the client under test (openClient), whose name and version
// config.json records.
func (HistoryDriver) Open(ctx context.Context, s *Session) error { return s.openClient(ctx) }

func (HistoryDriver) Drive(ctx context.Context, s *Session) (Outcome, error) {
	out, err := Execute(ctx, s)
	if err != nil {
		return out, fmt.Errorf("%w (partial history in %s)", err, s.Run.Dir)
	}
	if out.Interrupted {
		return out, nil
	}
	return out, SaveResults(s.Run, out.Summary, out.Audit, nil)
}
