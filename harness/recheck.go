package harness

import (
	"context"
	"fmt"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/results"
)

// StoredRun is a stored run as `redline check` reads it: its config and
// its history as written (a torn last line kept for the run-files
// checker).
type StoredRun struct {
	Run     *results.Run
	Config  Config
	History history.ReadResult
}

// ReadStoredRun reads run's config.json and history (history.Path: the
// compressed history.jsonl.zst, or history.jsonl of older runs). An error means
// the run cannot be checked at all (no config, a history that does not
// decode): the caller's bad arguments.
func ReadStoredRun(run *results.Run) (*StoredRun, error) {
	r := &StoredRun{Run: run}
	if err := run.ReadJSON("config.json", &r.Config); err != nil {
		return nil, fmt.Errorf("cannot read the run's config: %w", err)
	}
	var err error
	if r.History, err = history.ReadRun(run.Dir); err != nil {
		return nil, err
	}
	return r, nil
}

// Check re-runs the checkers on the stored run, as `redline check` does:
// its config picks the checkers, census.json stands in for a census line
// the history lost, the run's files are cross-examined (RunFiles) and the
// verdict is attributed from the run's logs. A run the runner recorded
// (RecordedByRunner) that lacks the entries it writes at the end of every
// run did not finish: unknown, naming them (UnfinishedEntries). An error means the config
// names checkers that do not exist (an unknown workload). pr and log may
// be nil.
func (r *StoredRun) Check(ctx context.Context, pr *Progress, log *Log) (checker.Summary, error) {
	switch h := &r.History; {
	case h.TruncatedTail && h.TornBytes > 0:
		log.Printf("the history is torn: its last %d bytes are a frame cut mid-write (the run crashed); the %d entries before it are checked, the verdict cannot be valid", h.TornBytes, len(h.Ops))
	case h.TruncatedTail:
		log.Printf("the last line of the history was torn (the run crashed mid-write); it was left out")
	}
	// What the history itself lacks of the runner's last entries, before
	// census.json stands in for a census line it lost.
	unfinished, recordedBy := UnfinishedEntries(r.Config, r.History.Ops)
	var censusFrom string
	if r.History.Ops, censusFrom = WithCensusFile(r.Run, r.History.Ops); censusFrom == history.CensusFile {
		log.Printf("the history carries no census (its line torn or missing): read %s", history.CensusFile)
	}
	checkers, err := CheckersFor(r.Config)
	if err != nil {
		return checker.Summary{}, err
	}
	if len(checkers) > 0 {
		// The files themselves are witnesses too: a torn history (a
		// prefix was checked), an index given twice, topology samples
		// out of order make the verdict unknown, in results.json and the
		// verdict line, not only on stderr.
		rf := RunFilesOf(r.Run, &r.History)
		rf.Unfinished, rf.RecordedBy = unfinished, recordedBy
		checkers = append(checkers, checker.RunFiles(rf), ConfigEpochChecker(rf.Topology, topologyExpected(r.Run, recordedBy)), ElectionsChecker(r.Run, "", electionNodeTimeout(r.Config)))
	}
	s := Check(ctx, r.History.Ops, checkers, pr, log)
	Attribute(r.Run, r.History.Ops, &s)
	return s, nil
}

// RecordedByRunner says what shows that cfg is the config.json of a run
// the runner recorded, one that writes at the end of every run the
// entries UnfinishedEntries requires, or "" when nothing does. The
// evidence is the client under test in config.json (client_library):
// the runner writes it before the first op of every history run since
// main 6ea7dcc (2026-12-01), which came after the final-reads marker
// (the first runner, 6080ba6), the heal entry and the census entry (main
// 4f27a21). Hand-made histories (the tests of `redline check`, the
// checkers' own) come with a config.json of a few fields and none of
// these entries, and a run of an older redline lacks the census: neither
// says it was cut, so neither is held to them. The check is not weakened
// for a real run: every runner that writes client_library writes them.
func RecordedByRunner(cfg Config) string {
	if cfg.ClientInfo == nil {
		return ""
	}
	return "config.json names the client under test (client_library), which only a runner that writes them records"
}

// UnfinishedEntries lists the entries the runner writes at the end of
// every run that ops lack, in the order it writes them (Execute): the
// nemesis's "heal" (invoke and info) when the run has faults, the
// "final-reads" marker, the "census" when the run has a key prefix, the
// "audit" on a cluster redline did not create. An interrupted run stops
// before them too: it did not finish either. Nothing is required of a
// run RecordedByRunner cannot vouch for (recordedBy "").
func UnfinishedEntries(cfg Config, ops []history.Op) (missing []string, recordedBy string) {
	recordedBy = RecordedByRunner(cfg)
	if recordedBy == "" {
		return nil, ""
	}
	type entry struct {
		f string
		t history.Type
	}
	seen := map[entry]bool{}
	for i := range ops {
		if op := &ops[i]; op.Process == history.Nemesis {
			seen[entry{op.F, op.Type}] = true
		}
	}
	want := func(f string, t history.Type, name string) {
		if !seen[entry{f, t}] {
			missing = append(missing, name)
		}
	}
	if hasFaults(cfg.Nemesis) {
		want(history.Heal, history.Invoke, "heal (its start)")
		want(history.Heal, history.Info, "heal (its end_phase record)")
	}
	want(history.FinalReads, history.Info, history.FinalReads)
	if cfg.KeyPrefix != "" {
		want(history.CensusEvent, history.Info, history.CensusEvent)
	}
	if cfg.Target == "external" {
		want(history.Audit, history.Info, history.Audit)
	}
	return missing, recordedBy
}
