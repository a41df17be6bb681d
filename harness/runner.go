package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/harness/bench"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads"
	"github.com/redline-dev/redline/workloads/client"
	"github.com/redline-dev/redline/workloads/clientlib"
)

// Nemesis is the fault schedule of a run, as the runner drives it.
type Nemesis interface {
	// Run injects faults until ctx is done, recording each start and stop.
	Run(ctx context.Context, rec history.Recorder) error
	// Heal ends every fault (end phase) and records that it did.
	Heal(ctx context.Context, rec history.Recorder) error
	// Current names the fault in force, for the progress display.
	Current() string
}

// healConverger is a Nemesis whose Heal ends by waiting for the cluster to
// agree on one slot map (nemesis.Nemesis with faults to heal): the end
// phase then does not wait a second time.
type healConverger interface {
	HealConverges() bool
}

// scriptedNemesis is a Nemesis following a stored schedule (a replay,
// a shrink try): ScriptDone is closed once it has fired every step.
type scriptedNemesis interface {
	ScriptDone() <-chan struct{}
}

// trafficContext ends the traffic phase at the time limit, or, for a
// nemesis following a stored schedule that has not fired all of it by
// then, when it has (at most one more time limit later): a replay must
// replay every recorded step, and a machine slower to restart nodes
// reaches the last slots later than the recorded run did. The extension
// is logged; the schedule's steps keep their slots on the timeline.
func trafficContext(ctx context.Context, cfg Config, nem Nemesis, log *Log) (context.Context, context.CancelFunc) {
	limit := cfg.TimeLimit.D()
	var done <-chan struct{}
	if s, ok := nem.(scriptedNemesis); ok {
		done = s.ScriptDone()
	}
	if done == nil {
		return context.WithTimeout(ctx, limit)
	}
	tctx, cancel := context.WithCancel(ctx)
	go func() {
		defer cancel()
		t := time.NewTimer(limit)
		defer t.Stop()
		select {
		case <-tctx.Done():
			return
		case <-t.C:
		}
		select {
		case <-done:
			return
		default:
		}
		log.Printf("traffic: the stored schedule has steps left at the time limit (%s); traffic goes on until they have run, for at most %s more", limit, limit)
		t.Reset(limit)
		select {
		case <-tctx.Done():
		case <-done:
			log.Printf("traffic: the last stored step has run; traffic ends")
		case <-t.C:
			log.Printf("traffic: the stored schedule still had steps left %s past the time limit; they are not replayed", limit)
		}
	}()
	return tctx, cancel
}

// Outcome is what a run produced.
type Outcome struct {
	Summary     checker.Summary
	Ops         int
	Interrupted bool
	// Audit is the foreign-data audit of a run on a cluster redline did
	// not create (nil: none).
	Audit *clusteradmin.AuditResult
	// Dir is the run's directory (Run).
	Dir string
	// Load is what the load driver measured (nil: a history run), with
	// its capacity search in Load.Capacity when it made one.
	Load *bench.Result
}

// Execute runs the test of a history run: setup, traffic with faults
// until the time limit, the end phase (heal, converge, final reads), then
// the checkers. A cancelled ctx (Ctrl-C) stops traffic at once, skips the
// checkers and returns Interrupted; the history written so far stays on
// disk. The caller (Run) owns the cluster: it starts it before and tears
// it down after.
func Execute(ctx context.Context, s *Session) (Outcome, error) {
	cfg := s.Config
	log := s.Log
	var out Outcome
	ws := make([]workloads.Workload, 0, len(cfg.Workloads))
	for _, name := range cfg.Workloads {
		w, err := workloads.New(name, cfg.Workload())
		if err != nil {
			return out, err
		}
		ws = append(ws, w)
	}
	checkers, err := CheckersFor(cfg)
	if err != nil {
		return out, err
	}
	var auditor *clusteradmin.Auditor
	if cfg.Target == "external" {
		// Not redline's cluster: count what is not redline's before and after.
		auditor = &clusteradmin.Auditor{Nodes: s.Cluster.Nodes, Prefix: cfg.KeyPrefix, Journal: s.Journal, Creds: s.Credentials}
	}
	progress := NewProgress(s.Stdout, s.TTY, log)

	addrs := nodeAddrs(s.Cluster)
	cl, err := client.New(ctx, client.Options{
		Seeds:     addrs,
		Timeout:   cfg.OpTimeout.D(),
		PoolSize:  cfg.Concurrency + 4,
		Username:  s.Credentials.User,
		Password:  s.Credentials.Password,
		TLSConfig: s.Credentials.TLS,
	})
	if err != nil {
		return out, fmt.Errorf("cannot reach the cluster at %v: %w", addrs, err)
	}
	defer cl.Close()

	if auditor != nil {
		log.Printf("audit: counting the keys that are not this run's, slot by slot")
		if err := auditor.Before(ctx); err != nil {
			return out, fmt.Errorf("auditing the data that is not redline's before the run (nothing was changed): %w", err)
		}
	}

	for _, w := range ws {
		if err := w.Setup(ctx, cl); err != nil {
			return out, fmt.Errorf("workload %s setup: %w", w.Name(), err)
		}
	}

	SnapshotNodes(ctx, s.Run, s.Cluster, s.Credentials, "before", log)

	// The client under test carries the traffic; setup and the final
	// reads stay with redline's own client (the judge's reads must not
	// come from a replica or through the library being judged).
	// Run opened it before the run's directory existed (openClient).
	var lib workloads.Client = workloads.Own{Conn: cl}
	if s.lib != nil {
		lib = s.lib
	}

	start := time.Now()
	rec, err := NewRecorder(s.Run.Path(history.FileName), start)
	if err != nil {
		return out, err
	}
	closed := false
	defer func() {
		if !closed {
			_ = rec.Close()
		}
	}()
	recordNodes(s.Cluster, rec)
	// Roles and slots sampled through the run, for the topology timeline;
	// stopped once the final reads are done.
	sampleCtx, stopSampling := context.WithCancel(ctx)
	var sampleWG sync.WaitGroup
	sampleWG.Add(1)
	go func() {
		defer sampleWG.Done()
		sampleTopology(sampleCtx, s.Credentials, addrs, start, s.Run.Path(TopologyFile), log)
	}()
	stopSampler := func() { stopSampling(); sampleWG.Wait() }
	defer stopSampler()

	if failed := settledPhase(ctx, cfg, ws, func(w workloads.Workload) []history.Op { return w.InitOps() }, cl, rec, 1<<20); failed > 0 {
		return out, fmt.Errorf("%d setup operations (e.g. initial balances) never succeeded", failed)
	}

	// Traffic phase.
	trafficCtx, stopTraffic := trafficContext(ctx, cfg, s.Nemesis, log)
	defer stopTraffic()
	var nemErr error
	var nemWG sync.WaitGroup
	fault := func() string { return "" }
	if s.Nemesis != nil {
		fault = s.Nemesis.Current
		nemWG.Add(1)
		go func() {
			defer nemWG.Done()
			nemErr = s.Nemesis.Run(trafficCtx, rec)
		}()
	}
	live := newLiveWatch(ws)
	rec.Watch(live.observe)
	if progress != nil {
		progress.StartRun(cfg.TimeLimit.D(), Status{Counts: rec.Counts, Fault: fault, Faults: live.Faults, Verdicts: live.Verdicts})
	}
	// The gate routes by redline's own view of the topology (cl): the
	// library under test may route differently, but a key's shard is the
	// cluster's fact, not the library's.
	gate := newShardGate(cl, cfg.Concurrency)
	if gate != nil {
		log.Printf("traffic: %d workers, %s, workloads %v, nemesis %v, client %s; at most %d ops in flight per primary", cfg.Concurrency, cfg.TimeLimit.D(), cfg.Workloads, cfg.Nemesis, cfg.Client, gate.share)
	} else {
		log.Printf("traffic: %d workers, %s, workloads %v, nemesis %v, client %s", cfg.Concurrency, cfg.TimeLimit.D(), cfg.Workloads, cfg.Nemesis, cfg.Client)
	}
	runWorkersGated(trafficCtx, ctx, cfg, ws, lib, rec, gate)
	if gate != nil && gate.redrawn.Load() > 0 {
		log.Printf("traffic: %d ops drawn for a primary that had its share of ops in flight were not sent (drawn again)", gate.redrawn.Load())
	}
	nemWG.Wait()
	if err := s.closeClient(); err != nil {
		return out, fmt.Errorf("the client under test (%s) broke down, so the history cannot be trusted: %w", cfg.Client, err)
	}
	if progress != nil {
		progress.EndRun()
	}
	ok, fail, info := rec.Counts()
	log.Printf("traffic done: %d ok, %d fail, %d info, %d faults started; live checks: %s", ok, fail, info, live.Faults(), live.Verdicts())
	for _, a := range live.FirstAnomalies() {
		log.Printf("live check, first anomaly (the checkers judge the whole history at the end): %s", a)
	}
	if nemErr != nil && !errors.Is(nemErr, context.Canceled) && !errors.Is(nemErr, context.DeadlineExceeded) {
		log.Printf("nemesis stopped with an error: %v", nemErr)
	}

	if ctx.Err() != nil {
		out.Interrupted = true
		if auditor != nil {
			// Not redline's cluster: a slot left half-migrated stays so
			// after Ctrl-C unless redline finishes its own steps now.
			out.Audit = endGuestRun(ctx, s, auditor, rec, log)
		}
		out.Ops = rec.Len()
		closed = true
		return out, rec.Close()
	}

	// End phase: heal, converge, final reads.
	endCtx, cancelEnd := context.WithTimeout(ctx, 3*time.Minute)
	defer cancelEnd()
	if s.Nemesis != nil {
		log.Printf("end phase: healing every fault")
		if err := s.Nemesis.Heal(endCtx, rec); err != nil {
			log.Printf("heal reported an error: %v", err)
		}
	}
	// One convergence: a nemesis that converges as it heals has waited
	// already (and recorded whether the cluster converged in its heal
	// entry, which the end-phase checker reads); otherwise the end phase
	// waits here, before the final reads.
	if hc, ok := s.Nemesis.(healConverger); !ok || !hc.HealConverges() {
		log.Printf("end phase: waiting for the cluster to converge")
		cctx, cancel := context.WithTimeout(endCtx, 90*time.Second)
		if err := clusteradmin.WaitConverged(cctx, s.Credentials, addrs); err != nil {
			log.Printf("cluster did not converge: %v (final reads go ahead; failed reads are retried)", err)
		}
		cancel()
	}
	if err := cl.Refresh(endCtx); err != nil {
		log.Printf("topology refresh before final reads: %v", err)
	}
	rec.Record(history.Op{Process: history.Nemesis, Type: history.Info, F: history.FinalReads})
	if failed := settledPhase(endCtx, cfg, ws, func(w workloads.Workload) []history.Op { return w.FinalOps() }, cl, rec, 1<<21); failed > 0 {
		log.Printf("%d final reads never succeeded; checkers will say what that leaves unknown", failed)
	}

	stopSampler()
	census(endCtx, s, rec, log)
	if auditor != nil {
		out.Audit = audit(endCtx, auditor, rec, log)
	}
	SnapshotNodes(ctx, s.Run, s.Cluster, s.Credentials, "after", log)

	out.Ops = rec.Len()
	closed = true
	if err := rec.Close(); err != nil {
		return out, fmt.Errorf("writing the history: %w", err)
	}
	if ctx.Err() != nil {
		out.Interrupted = true
		return out, nil
	}
	// The checkers read the history back from its file, as `redline
	// check` does: the recorder keeps nothing in memory (a soak run's
	// history outgrows it), and the verdict is about what is on disk. A
	// big one is spilled first, for the checkers that judge it partition
	// by partition (PartitionAbove).
	parts, err := spillBig(s.Run.Dir, workloadFamilies(s.Config))
	if err != nil {
		return out, fmt.Errorf("reading back the history just written: %w", err)
	}
	if parts != nil && (parts.Read.TruncatedTail || parts.Read.Entries != out.Ops) {
		parts.RemoveAll()
		return out, lostEntries(parts.Read.Entries, out.Ops, parts.Read.TruncatedTail)
	}
	if len(checkers) > 0 {
		// The topology sampled through the run is a witness as well: the
		// same checker `redline check` runs on it.
		checkers = append(slices.Clone(checkers), ConfigEpochChecker(topologySamples(s.Run), "the runner samples the topology through every run"))
		// So are the servers' own logs, where the runtime keeps them.
		expected := ""
		if _, ok := s.Cluster.(cluster.LogSource); ok {
			expected = "the runtime keeps each node's log (nodes/<node>/server.log)"
		}
		checkers = append(checkers, ElectionsChecker(s.Run, expected, electionNodeTimeout(s.Config)))
	}
	if parts != nil {
		var attr *checker.AttributionPass
		if checkers, attr, err = checkSpilled(ctx, parts, spillSource(parts), s.Run.Dir, nil, checkers, log); err != nil {
			return out, fmt.Errorf("reading back the history just written: %w", err)
		}
		defer attr.Close()
		if parts.Paired && parts.IndexesIncrease && !readsWhole(checkers) {
			// As `redline check` does (StoredRun.checkScanned): the
			// attribution scans the file, the history is not read whole.
			log.Printf("every checker was judged on the partitions or in one pass: the history is not read whole")
			out.Summary = CheckJudged(ctx, out.Ops, checkers, progress, log)
			if err := attributeScanned(s.Run, parts, parts.RunWide, attr, &out.Summary); err != nil {
				return out, fmt.Errorf("reading back the history just written: %w", err)
			}
			return out, nil
		}
	}
	hist, err := history.ReadRun(s.Run.Dir)
	if err != nil {
		return out, fmt.Errorf("reading back the history just written: %w", err)
	}
	if hist.TruncatedTail || len(hist.Ops) != out.Ops {
		return out, lostEntries(len(hist.Ops), out.Ops, hist.TruncatedTail)
	}
	ops := hist.Ops
	out.Summary = Check(ctx, ops, checkers, progress, log)
	Attribute(s.Run, ops, &out.Summary)
	return out, nil
}

// lostEntries is the error of a history that reads back short of what
// was written.
func lostEntries(read, written int, torn bool) error {
	return fmt.Errorf("the history just written reads back as %d of its %d entries (torn: %v): the disk lost some, the run cannot be judged", read, written, torn)
}

// endGuestRun ends the faults of an interrupted run on a cluster redline
// did not create, and audits, within two minutes of a fresh context (a
// second Ctrl-C ends it sooner: WithAbort).
func endGuestRun(runCtx context.Context, s *Session, auditor *clusteradmin.Auditor, rec *Recorder, log *Log) *clusteradmin.AuditResult {
	ctx, cancel := AfterCancel(runCtx, 2*time.Minute)
	defer cancel()
	if s.Nemesis != nil {
		log.Printf("interrupted: ending redline's own faults on the cluster first (at most 2 minutes)")
		if err := s.Nemesis.Heal(ctx, rec); err != nil {
			log.Printf("heal reported an error: %v", err)
		}
	}
	return audit(ctx, auditor, rec, log)
}

// census takes the key census (census.go) after the final reads, stores it
// in the run directory and records it in the history, where the checkers'
// attribution (and `redline check` later) reads where each key ended up.
func census(ctx context.Context, s *Session, rec *Recorder, log *Log) {
	if s.Config.KeyPrefix == "" {
		return // every key would count as the run's
	}
	c := censusInSync(ctx, s, rec, log)
	keys, failed := 0, 0
	for _, n := range c.Nodes {
		keys += len(n.Keys)
		if n.Error != "" {
			failed++
			log.Printf("census: %s (%s): %s", n.Name, n.Addr, n.Error)
		}
	}
	log.Printf("census: %d copies of the run's keys on %d nodes (%d nodes could not answer in full)", keys, len(c.Nodes), failed)
	sum := checker.SummarizeCensus(&c)
	if sum.Stranded > 0 {
		log.Printf("census: %d copies of the run's keys are on nodes whose shard does not serve their slot, e.g. %s", sum.Stranded, strings.Join(sum.Examples, "; "))
	}
	if sum.SetAside > 0 {
		log.Printf("census: %d set-aside copies of the run's keys (different copies on both sides of a move; kept beside the key), e.g. %s", sum.SetAside, strings.Join(sum.SetAsideExample, "; "))
	}
	detail, err := json.Marshal(c)
	if err != nil {
		log.Printf("census: %v", err)
		return
	}
	if s.Run != nil {
		if err := s.Run.WriteFile(history.CensusFile, detail); err != nil {
			log.Printf("census: %v", err)
		}
	}
	rec.Record(history.Op{Process: history.Nemesis, Type: history.Info, F: history.CensusEvent, Ext: history.NewExt(history.Ext{Detail: detail})})
}

// censusInSync takes the census once every replica is in sync with its
// primary (WaitReplicasInSync, at most 15 node timeouts, at least 30 s),
// so that the replica census checker can hold each replica to its
// primary's keys; when some pair's offsets moved while the census read
// them (a primary's periodic PING to its replicas), it waits and takes it
// again, three times at most. The census records the wait, as it ended.
func censusInSync(ctx context.Context, s *Session, rec *Recorder, log *Log) history.Census {
	limit := max(30*time.Second, 15*s.Config.NodeTimeout.D())
	var c history.Census
	for attempt := 1; ; attempt++ {
		rs := WaitReplicasInSync(ctx, s.Credentials, s.Cluster.Nodes(), limit)
		if !rs.InSync {
			log.Printf("census: the replicas are %s; the replica census will say unknown", rs.Why)
		}
		c = TakeCensus(ctx, s.Credentials, s.Cluster.Nodes(), s.Config.KeyPrefix, rec.start)
		rs.Attempts = attempt
		c.ReplicaSync = &rs
		moved := ""
		for _, n := range c.Nodes {
			if n.Repl != nil && n.Repl.Offset != n.Repl.OffsetAfter {
				moved = n.Name
			}
		}
		if !rs.InSync || moved == "" || attempt == 3 || ctx.Err() != nil {
			return c
		}
		log.Printf("census: the replication offsets of %s moved while the census read its keys: taking it again", moved)
	}
}

// audit compares the data that is not the run's with the count from
// before and records the verdict in the history (the report lists it).
func audit(ctx context.Context, a *clusteradmin.Auditor, rec *Recorder, log *Log) *clusteradmin.AuditResult {
	res, err := a.After(ctx)
	if err != nil {
		res = clusteradmin.AuditResult{Summary: "the audit after the run could not count the data that is not redline's: " + err.Error()}
	}
	log.Printf("audit: %s", res.Summary)
	detail, _ := json.Marshal(map[string]any{"clean": res.Clean, "summary": res.Summary})
	rec.Record(history.Op{Process: history.Nemesis, Type: history.Info, F: history.Audit, Ext: history.NewExt(history.Ext{Detail: detail})})
	return &res
}

// Check runs the checkers with progress and logs each verdict.
func Check(ctx context.Context, ops []history.Op, checkers []checker.Checker, pr *Progress, log *Log) checker.Summary {
	return checkEntries(ctx, ops, len(ops), checkers, pr, log)
}

// CheckJudged is Check of a history of entries entries not in memory,
// whose checkers were all judged already (on its partitions or in a pass
// over its file): it reads no op.
func CheckJudged(ctx context.Context, entries int, checkers []checker.Checker, pr *Progress, log *Log) checker.Summary {
	return checkEntries(ctx, nil, entries, checkers, pr, log)
}

func checkEntries(ctx context.Context, ops []history.Op, entries int, checkers []checker.Checker, pr *Progress, log *Log) checker.Summary {
	names := make([]string, len(checkers))
	for i, c := range checkers {
		names[i] = c.Name()
	}
	log.Printf("checking %d entries with %s", entries, checkerList(names))
	tick, end := func(string) {}, func() {}
	if pr != nil {
		tick, end = pr.Checking(names)
	}
	s := checker.Run(ctx, ops, checkers, tick)
	end()
	return s
}

// checkerList names checkers short: "17 checkers: counter (counter, rpo,
// perf), set (set, rpo)" groups workload/checker names by workload.
func checkerList(names []string) string {
	var groups []string
	members := map[string][]string{}
	for _, n := range names {
		w, c, ok := strings.Cut(n, "/")
		if !ok {
			w, c = "", n
		}
		if _, seen := members[w]; !seen {
			groups = append(groups, w)
		}
		members[w] = append(members[w], c)
	}
	parts := make([]string, 0, len(groups))
	for _, w := range groups {
		if w == "" {
			parts = append(parts, strings.Join(members[w], ", "))
			continue
		}
		parts = append(parts, w+" ("+strings.Join(members[w], ", ")+")")
	}
	return fmt.Sprintf("%d checkers: %s", len(names), strings.Join(parts, ", "))
}

// recordNodes writes each node's name and address into the history: fault
// events name nodes, client ops record addresses, and the checkers need
// both to say which keys lived on the nodes a fault touched.
func recordNodes(c cluster.Cluster, rec history.Recorder) {
	addrs := map[string]string{}
	for _, n := range c.Nodes() {
		addrs[n.Name] = n.Addr
	}
	d, err := json.Marshal(history.NodesDetail{Addrs: addrs})
	if err != nil {
		return
	}
	rec.Record(history.Op{Process: history.Nemesis, Type: history.Info, F: history.NodesEvent, Ext: history.NewExt(history.Ext{Detail: d})})
}

func nodeAddrs(c cluster.Cluster) []string {
	var out []string
	for _, n := range c.Nodes() {
		out = append(out, n.Addr)
	}
	return out
}

// runWorkers drives the traffic until trafficCtx is done. Ops already in
// flight then complete normally (under rootCtx), so the stop does not
// manufacture indeterminate results.
func runWorkers(trafficCtx, rootCtx context.Context, cfg Config, ws []workloads.Workload, cl workloads.Client, rec *Recorder) {
	var route any = cl
	if own, ok := cl.(workloads.Own); ok {
		route = own.Conn
	}
	runWorkersGated(trafficCtx, rootCtx, cfg, ws, cl, rec, newShardGate(route, cfg.Concurrency))
}

// runWorkersGated is runWorkers with the shard gate given (nil: none).
func runWorkersGated(trafficCtx, rootCtx context.Context, cfg Config, ws []workloads.Workload, cl workloads.Client, rec *Recorder, gate *shardGate) {
	var wg sync.WaitGroup
	var interval time.Duration
	if cfg.Rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(cfg.Concurrency) / cfg.Rate)
	}
	for worker := 0; worker < cfg.Concurrency; worker++ {
		w := ws[worker%len(ws)]
		gen := w.Generator(worker, cfg.Seed)
		wg.Add(1)
		go func() {
			defer wg.Done()
			process := history.Process(worker)
			next := time.Now()
			for trafficCtx.Err() == nil {
				if interval > 0 {
					next = next.Add(interval)
					if d := time.Until(next); d > 0 {
						select {
						case <-time.After(d):
						case <-trafficCtx.Done():
							return
						}
					}
				}
				var inv history.Op
				shard := ""
				if gate != nil {
					var ok bool
					if inv, shard, ok = gate.next(trafficCtx, gen); !ok {
						return
					}
				} else {
					inv = gen.Next()
				}
				inv.Process, inv.Type = process, history.Invoke
				done := invokeOp(rootCtx, w, cl, rec, inv)
				typ := done.Type
				if shard != "" {
					gate.leave(shard, typ == history.Info || typ == history.Fail && !checker.ServedError(done.ErrorText()))
				}
				if typ == history.Info {
					// Jepsen: a process whose op is indeterminate may still
					// be running it; a fresh process takes its place.
					process += history.Process(cfg.Concurrency)
				}
			}
		}()
	}
	wg.Wait()
}

// opConn is what the traffic and settled phases need of the cluster: the
// workloads' Conn, and a topology reload between retries of a settled op.
// *client.Client implements it; the runner's tests use a fake.
type opConn interface {
	workloads.Conn
	Refresh(ctx context.Context) error
}

// invoke records an invocation, runs it and records its completion, paired
// with the invocation here and only here (process, f, and the key unless
// the workload named one). It returns the completion's type.
func invoke(ctx context.Context, w workloads.Workload, cl workloads.Client, rec *Recorder, inv history.Op) history.Type {
	return invokeOp(ctx, w, cl, rec, inv).Type
}

// invokeOp is invoke returning the completion as recorded.
func invokeOp(ctx context.Context, w workloads.Workload, cl workloads.Client, rec *Recorder, inv history.Op) history.Op {
	inv = rec.Record(inv)
	done := cl.Invoke(ctx, w, inv)
	done.Process, done.F = inv.Process, inv.F
	if done.Key == "" {
		done.Key = inv.Key
	}
	return rec.Record(done)
}

// settledPhase runs the init or final ops of every workload, outside the
// traffic phase. An op that fails (e.g. CLUSTERDOWN while the cluster
// settles) is retried as a new op, so the history shows every attempt. It
// returns how many ops never succeeded. Process ids start at base, clear of
// every traffic process.
func settledPhase(ctx context.Context, cfg Config, ws []workloads.Workload, opsOf func(workloads.Workload) []history.Op, cl opConn, rec *Recorder, base history.Process) int {
	process := base
	var mu sync.Mutex
	nextProcess := func() history.Process {
		mu.Lock()
		defer mu.Unlock()
		process++
		return process
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, cfg.Concurrency))
	failed := 0
	for _, w := range ws {
		for _, op := range opsOf(w) {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				for attempt := 0; attempt < 15 && ctx.Err() == nil; attempt++ {
					inv := op
					inv.Process, inv.Type = nextProcess(), history.Invoke
					if invoke(ctx, w, workloads.Own{Conn: cl}, rec, inv) == history.OK {
						return
					}
					if attempt%5 == 4 {
						_ = cl.Refresh(ctx)
					}
					select {
					case <-time.After(time.Second):
					case <-ctx.Done():
					}
				}
				mu.Lock()
				failed++
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	return failed
}

// openClient opens the client library under test (Config.Client) on the
// started cluster and records its name and version in the config (an
// adapter process names its version only in its handshake): Run does so
// before it writes config.json, so that the file is written once and
// names the client before the first op. Without a library the client
// under test is redline's own (Execute's connections).
func (s *Session) openClient(ctx context.Context) error {
	cfg := &s.Config
	s.closeLib = func() error { return nil }
	if cfg.Client == "" || cfg.Client == clientlib.Own {
		info := clientlib.OwnInfo()
		cfg.ClientInfo = &info
		return nil
	}
	lib, err := clientlib.Open(ctx, cfg.Client, clientlib.Options{
		Seeds: nodeAddrs(s.Cluster), Timeout: cfg.OpTimeout.D(), Concurrency: cfg.Concurrency,
		Username: s.Credentials.User, Password: s.Credentials.Password, TLSConfig: s.Credentials.TLS,
		Log: logWriter{s.Log},
	})
	if err != nil {
		return fmt.Errorf("opening the client under test: %w", err)
	}
	info := lib.Info()
	cfg.ClientInfo = &info
	s.Log.Printf("client under test: %s (%s %s); its retries: %s", info.Name, info.Library, info.Version, info.Retries)
	var once sync.Once
	var cerr error
	s.lib, s.closeLib = lib, func() error {
		once.Do(func() { cerr = lib.Close() })
		return cerr
	}
	return nil
}

// closeClient closes the client library under test (once; nil: none
// open) and says whether it broke down.
func (s *Session) closeClient() error {
	if s.closeLib == nil {
		return nil
	}
	return s.closeLib()
}

// logWriter logs each line written (an adapter process's stderr).
type logWriter struct{ l *Log }

func (w logWriter) Write(b []byte) (int, error) {
	if w.l != nil {
		w.l.Printf("%s", strings.TrimRight(string(b), "\n"))
	}
	return len(b), nil
}

// ConfigJSON renders a config for config.json.
func ConfigJSON(c Config) ([]byte, error) { return json.MarshalIndent(c, "", "  ") }
