package harness

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

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
	// OnHistoryRead, when set, is called once the whole history is in
	// memory, before the checkers that read it whole run (`redline check`
	// caps the heap there).
	OnHistoryRead func()
	// parts is a big history spilled by key slot (PartitionAbove): Check
	// runs the checkers that judge partitions one at a time first, and
	// reads History whole only after them.
	parts *history.Partitions
	// scanned is that spill once every checker was judged on its
	// partitions or in one pass (readsWhole false): the run-wide steps
	// of Check then read its RunWide entries and scan the history file,
	// and History holds no ops.
	scanned *history.Partitions
	// attr is the attribution's first pass, made in the one pass of the
	// partitioned check (checkSpilled); attributeScanned reads and
	// closes it.
	attr *checker.AttributionPass
	// checkersFor picks the config's checkers (nil: CheckersFor); a test
	// keeps those judged on partitions or in a pass.
	checkersFor func(Config) ([]checker.Checker, error)
	// wholeReads counts the history's reads whole in Check.
	wholeReads int
}

// PartitionAbove is the size of a history file above which `redline
// check` spills it into key-slot partitions (history.Spill) so that the
// checkers that can (checker.PartitionChecker) judge it one partition in
// memory at a time, before the whole history is read for the others
// (issue 42: a run of hours does not fit in memory whole). 64 MB is about
// 4M entries. Below it, the spill costs more than it saves.
var PartitionAbove int64 = 64 << 20

// partitions is how many key-slot partitions a big history is spilled
// into: the largest holds about 1/partitions of the register traffic.
const partitions = 64

// ReadStoredRun reads run's config.json and history (history.Path: the
// compressed history.jsonl.zst, or history.jsonl of older runs); a history
// bigger than PartitionAbove is read once to spill it, and read whole
// later (Check). An error means the run cannot be checked at all (no
// config, a history that does not decode): the caller's bad arguments.
func ReadStoredRun(run *results.Run) (*StoredRun, error) {
	r := &StoredRun{Run: run}
	if err := run.ReadJSON("config.json", &r.Config); err != nil {
		return nil, fmt.Errorf("cannot read the run's config: %w", err)
	}
	var err error
	if r.parts, err = spillBig(run.Dir, workloadFamilies(r.Config)); err != nil {
		return nil, err
	}
	if r.parts != nil {
		r.History = r.parts.Read // read whole later, in Check
		return r, nil
	}
	if r.History, err = history.ReadRun(run.Dir); err != nil {
		return nil, err
	}
	return r, nil
}

// spillBig spills the history of the run in dir into key-slot partitions
// in a directory of $TMPDIR when it is bigger than PartitionAbove (nil
// when it is not), each partition's ops a file a family (familyOf: nil,
// one). It scans as ReadFile does: a corrupt entry is the same error, a
// torn tail is in the partitions' Read.
func spillBig(dir string, familyOf func(*history.Op) int) (*history.Partitions, error) {
	path := history.Path(dir)
	if fi, err := os.Stat(path); err != nil || fi.Size() <= PartitionAbove {
		return nil, nil // ReadRun says what is wrong with the file
	}
	tmp, err := os.MkdirTemp("", "redline-check-")
	if err != nil {
		return nil, fmt.Errorf("spilling the history: %w", err)
	}
	p, err := history.SpillFamilies(path, tmp, partitions, history.SlotPartition(partitions), familyOf)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return p, nil
}

// workloadFamilies is the family of an op in a spill of a run of cfg: the
// workload whose key prefix its key has (the longest), or one family more
// for keys of none. A workload's checkers load their own keys' ops
// (checker.Scope's Filter), so each decodes its own workload's file of a
// partition and not the others' (issue 42: on run10m, 60 % of the entries
// are the counter's, which the register's and the set's checkers read and
// dropped).
func workloadFamilies(cfg Config) func(*history.Op) int {
	byName := workloadPrefixes(cfg)
	var prefixes []string
	for _, w := range cfg.Workloads {
		if p := byName[w]; p != "" {
			prefixes = append(prefixes, p)
		}
	}
	if len(prefixes) < 2 {
		return nil
	}
	return func(op *history.Op) int {
		best, n := len(prefixes), -1
		for i, p := range prefixes {
			if len(p) > n && strings.HasPrefix(op.Key, p) {
				best, n = i, len(p)
			}
		}
		return best
	}
}

// checkPartitionedFrom runs the checkers that can judge p's partitions
// (of a history that pairs and whose indexes increase, as any the recorder
// writes), loading them with load (p.LoadWhere, or a stored run's:
// StoredRun.checkPartitions), and returns the checkers with those replaced
// by their results, for Check to run with the rest. It removes the
// partitions.
func checkPartitionedFrom(ctx context.Context, p *history.Partitions, load partitionSource, checkers []checker.Checker, log *Log) []checker.Checker {
	defer p.RemoveAll()
	if !p.Paired || !p.IndexesIncrease {
		log.Printf("the history does not pair or its indexes do not increase: every checker reads it whole")
		return checkers
	}
	checkers = slices.Clone(checkers)
	var pcs []checker.PartitionChecker
	var at []int
	var names []string
	for i, c := range checkers {
		if pc, ok := c.(checker.PartitionChecker); ok {
			pcs = append(pcs, pc)
			at = append(at, i)
			names = append(names, c.Name())
		}
	}
	if len(pcs) == 0 {
		return checkers
	}
	log.Printf("checking %d checkers on %d key-slot partitions of the history, each partition loaded once for the checkers of its workload: %s",
		len(pcs), p.N(), strings.Join(names, ", "))
	results, errs, reads, decodes := runShared(checker.WithHistoryEnd(ctx, p.Latest), p.N(), load, pcs)
	for j, res := range results {
		if err := errs[j]; err != nil {
			// The disk lost a partition Spill wrote whole: no verdict.
			msg := fmt.Sprintf("a partition of the history could not be read back: %v", err)
			res = checker.Result{Valid: checker.Unknown, Figures: checker.Map{"error": msg, "why": msg}}
		}
		checkers[at[j]] = checked{names[j], res}
	}
	log.Printf("%d checkers judged on the partitions: %d partitions decoded for their %d loads", len(pcs), decodes, reads)
	return checkers
}

// checkSpilled runs the checkers that judge p's partitions
// (checkPartitionedFrom) and those that judge the history in one pass
// (checkStreamed) side by side, on two cores where there are: the pass
// reads the history file, the partitions their own files, and neither
// waits for the other (issue 42: one after the other, a 10M-entry check
// spent 22 s on the partitions and then 10 s on the pass, on one core of
// two). A checker that can do both is judged on the partitions, as it was
// when they ran in turn. A history that does not pair, or whose indexes
// do not increase, is not judged on the partitions: the pass then takes
// every checker it can, as before. Of a history that does, the pass also
// makes the attribution's first pass, returned (attributeScanned reads
// it; the caller closes it).
func checkSpilled(ctx context.Context, p *history.Partitions, load partitionSource, dir string, censusOf *results.Run, checkers []checker.Checker, log *Log) ([]checker.Checker, *checker.AttributionPass, error) {
	if !p.Paired || !p.IndexesIncrease {
		checkers = checkPartitionedFrom(ctx, p, load, checkers, log)
		checkers, err := checkStreamed(ctx, dir, censusOf, p, checkers, nil, log)
		return checkers, nil, err
	}
	attr, err := checker.NewAttributionPass(passRunWide(censusOf, p), p.Latest)
	if err != nil {
		return nil, nil, err
	}
	// The pass's list: the partitions' checkers left out of it.
	forPass := slices.Clone(checkers)
	for i, c := range forPass {
		if _, ok := c.(checker.PartitionChecker); ok {
			forPass[i] = onPartitions{c}
		}
	}
	var streamed []checker.Checker
	var streamErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		streamed, streamErr = checkStreamed(ctx, dir, censusOf, p, forPass, attr, log)
	}()
	out := checkPartitionedFrom(ctx, p, load, checkers, log)
	<-done
	if streamErr != nil {
		attr.Close()
		return nil, nil, streamErr
	}
	for i, c := range streamed {
		if _, left := forPass[i].(onPartitions); !left {
			if _, judged := c.(checked); judged {
				out[i] = c
			}
		}
	}
	return out, attr, nil
}

// onPartitions stands for a checker judged on the partitions in the list
// the one pass is given (checkSpilled): not a stream checker, so the pass
// leaves it alone.
type onPartitions struct{ checker.Checker }

// checkPartitions is checkSpilled of r's partitions (each with the
// census of census.json when the history lost its own, as Check gives the
// whole history: the set checker's set-aside copies); then it reads the
// history whole for the other checkers, unless none is left to read it
// (readsWhole).
func (r *StoredRun) checkPartitions(ctx context.Context, checkers []checker.Checker, log *Log) ([]checker.Checker, error) {
	p := r.parts
	r.parts = nil
	load := spillSource(p)
	load.load = func(i int, keep *history.Filter) ([]history.Op, error) {
		ops, err := p.LoadWhere(i, keep)
		if err != nil {
			return nil, err
		}
		ops, _ = WithCensusFile(r.Run, ops)
		return ops, nil
	}
	// The census entry WithCensusFile adds to a partition's ops, after
	// them: its partition's next index and latest time (the census is
	// run-wide: the partition has one if the spill's run-wide entries do).
	hasCensus := history.CensusOf(p.RunWide) != nil
	load.scan = func(i int, keep *history.Filter, fn func(op *history.Op) error) error {
		var next, latest int64
		err := p.ScanWhere(i, keep, func(op *history.Op) error {
			next, latest = max(next, op.Index+1), max(latest, op.Time)
			return fn(op)
		})
		if err != nil || hasCensus {
			return err
		}
		if op, ok := censusFileOp(r.Run, next, latest); ok {
			return fn(&op)
		}
		return nil
	}
	checkers, attr, err := checkSpilled(ctx, p, load, r.Run.Dir, r.Run, checkers, log)
	if err != nil {
		return nil, err
	}
	r.attr = attr
	if p.Paired && p.IndexesIncrease && !readsWhole(checkers) {
		// r.History is the spill's reading: its entries and tear, no ops.
		log.Printf("every checker was judged on the partitions or in one pass: the history is not read whole")
		r.scanned = p
		return checkers, nil
	}
	r.attr.Close() // the whole history's attribution needs no pass
	r.attr = nil
	r.wholeReads++
	whole, err := history.ReadRun(r.Run.Dir)
	if err != nil {
		return nil, err
	}
	if whole.Entries != r.History.Entries || whole.TruncatedTail != r.History.TruncatedTail {
		return nil, fmt.Errorf("the history changed while it was checked: %d entries when spilled, %d read again", r.History.Entries, whole.Entries)
	}
	r.History = whole
	return checkers, nil
}

// readsWhole says whether a checker of checkers (after checkPartitionedFrom
// and checkStreamed) still reads the history whole: one judged neither on
// the partitions nor in the pass. The run-wide checks Check makes of
// every stored run do not: they read the spill's run-wide entries and
// scan the history file (checkScanned).
func readsWhole(checkers []checker.Checker) bool {
	for _, c := range checkers {
		if _, ok := c.(checked); !ok {
			return true
		}
	}
	return false
}

// checked is a checker whose result is already known (checkPartitions),
// so that it takes its place among the others in the summary.
type checked struct {
	name string
	res  checker.Result
}

func (c checked) Name() string                                           { return c.name }
func (c checked) Check(context.Context, *checker.History) checker.Result { return c.res }

// Check re-runs the checkers on the stored run, as `redline check` does:
// its config picks the checkers, census.json stands in for a census line
// the history lost, the run's files are cross-examined (RunFiles) and the
// verdict is attributed from the run's logs. A run the runner recorded
// (RecordedByRunner) that lacks the entries it writes at the end of every
// run did not finish: unknown, naming them (UnfinishedEntries). An error means the config
// names checkers that do not exist (an unknown workload). pr and log may
// be nil.
func (r *StoredRun) Check(ctx context.Context, pr *Progress, log *Log) (checker.Summary, error) {
	pick := CheckersFor
	if r.checkersFor != nil {
		pick = r.checkersFor
	}
	checkers, err := pick(r.Config)
	if err != nil {
		r.removeParts()
		return checker.Summary{}, err
	}
	if r.parts != nil {
		if checkers, err = r.checkPartitions(ctx, checkers, log); err != nil {
			return checker.Summary{}, err
		}
	}
	if r.scanned != nil {
		return r.checkScanned(ctx, checkers, pr, log)
	}
	if r.OnHistoryRead != nil {
		r.OnHistoryRead()
	}
	r.logTear(len(r.History.Ops), log)
	// What the history itself lacks of the runner's last entries, before
	// census.json stands in for a census line it lost.
	unfinished, recordedBy := UnfinishedEntries(r.Config, r.History.Ops)
	var censusFrom string
	if r.History.Ops, censusFrom = WithCensusFile(r.Run, r.History.Ops); censusFrom == history.CensusFile {
		log.Printf("the history carries no census (its line torn or missing): read %s", history.CensusFile)
	}
	if len(checkers) > 0 {
		// The files themselves are witnesses too: a torn history (a
		// prefix was checked), an index given twice, topology samples
		// out of order make the verdict unknown, in results.json and the
		// verdict line, not only on stderr.
		checkers = append(checkers, r.runWideCheckers(nil, unfinished, recordedBy)...)
	}
	s := Check(ctx, r.History.Ops, checkers, pr, log)
	Attribute(r.Run, r.History.Ops, &s)
	return s, nil
}

// runWideCheckers are the checkers Check adds to every stored run's: the
// run files (scanned: what a spill found of a history not read whole),
// the configEpochs of its topology samples and the servers' elections.
func (r *StoredRun) runWideCheckers(scanned *checker.ScannedHistory, unfinished []string, recordedBy string) []checker.Checker {
	rf := RunFilesOf(r.Run, &r.History)
	rf.Unfinished, rf.RecordedBy, rf.Scanned = unfinished, recordedBy, scanned
	return []checker.Checker{checker.RunFiles(rf), ConfigEpochChecker(rf.Topology, topologyExpected(r.Run, recordedBy)), ElectionsChecker(r.Run, "", electionNodeTimeout(r.Config))}
}

// checkScanned is the rest of Check when every checker was judged on the
// partitions or in the pass (r.scanned): the steps Check makes of every
// stored run read the spill's run-wide entries (the runner's last
// entries, the census) and what it counted (the entries, the tear), and
// the attribution scans the history file (checker.AttributeScanned), so
// that the history is never in memory whole. The results are Check's on
// the whole history, byte for byte.
func (r *StoredRun) checkScanned(ctx context.Context, checkers []checker.Checker, pr *Progress, log *Log) (checker.Summary, error) {
	p := r.scanned
	r.scanned = nil
	entries := r.History.Entries
	r.logTear(entries, log)
	unfinished, recordedBy := UnfinishedEntries(r.Config, p.RunWide)
	runWide, censusFrom := withCensusFileAt(r.Run, p.RunWide, p.NextIndex, p.Latest)
	if censusFrom == history.CensusFile {
		log.Printf("the history carries no census (its line torn or missing): read %s", history.CensusFile)
		entries++
	}
	if len(checkers) > 0 {
		// The run-wide checkers read the nemesis entries and the run's
		// end alone (the run files what the spill counted): one pass of
		// no client op judges them.
		extra := r.runWideCheckers(&checker.ScannedHistory{Entries: entries}, unfinished, recordedBy)
		checkers = append(slices.Clip(checkers), checkRunWide(ctx, extra, runWide, p.Latest)...)
	}
	s := CheckJudged(ctx, entries, checkers, pr, log)
	attr := r.attr
	r.attr = nil
	if err := attributeScanned(r.Run, p, runWide, attr, &s); err != nil {
		return checker.Summary{}, err
	}
	return s, nil
}

// checkRunWide judges checkers that read only the nemesis entries and the
// run's end (runWide, latest): the stream checkers among them in a pass of
// no client op, the others (the run files of a spill) on no op at all.
func checkRunWide(ctx context.Context, checkers []checker.Checker, runWide []history.Op, latest int64) []checker.Checker {
	var streams []checker.StreamChecker
	var at []int
	out := make([]checker.Checker, len(checkers))
	for i, c := range checkers {
		if sc, ok := c.(checker.StreamChecker); ok {
			streams = append(streams, sc)
			at = append(at, i)
			continue
		}
		out[i] = checked{c.Name(), c.Check(ctx, checker.NewHistory(nil))}
	}
	for j, res := range checker.NewStreamPass(streams, runWide, latest).Results(ctx) {
		out[at[j]] = checked{checkers[at[j]].Name(), res}
	}
	return out
}

// logTear says that the history is torn, with the entries before the tear.
func (r *StoredRun) logTear(entries int, log *Log) {
	switch h := &r.History; {
	case h.TruncatedTail && h.TornBytes > 0:
		log.Printf("the history is torn: its last %d bytes are a frame cut mid-write (the run crashed); the %d entries before it are checked, the verdict cannot be valid", h.TornBytes, entries)
	case h.TruncatedTail:
		log.Printf("the last line of the history was torn (the run crashed mid-write); it was left out")
	}
}

// removeParts deletes the partitions of a run Check will not check.
func (r *StoredRun) removeParts() {
	if r.parts != nil {
		r.parts.RemoveAll()
		r.parts = nil
	}
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
