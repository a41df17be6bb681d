package nemesis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/history"
)

// Options configure a Nemesis.
type Options struct {
	Interval         time.Duration // --nemesis-interval: time between fault starts; a fault lasts about one interval
	Seed             int64
	PartitionClients bool // --partition-clients
	NodeTimeout      time.Duration
	// Hooks are shell commands for targets that cannot cause a fault
	// themselves: fault name ("kill", "pause", "partition", "clock") ->
	// command, run with `sh -c` and the environment described in doc.go.
	Hooks map[string]string
	Log   func(format string, args ...any)
	// Credentials authenticate every admin connection the faults open
	// (and MIGRATE to the target node): the run's.
	Credentials cluster.Credentials
	// Journal records every topology change before it is made (nil: one
	// in memory). Each entry is also copied into the history as a
	// nemesis "journal" entry.
	Journal *clusteradmin.Journal
	// RestoreRoles has the end phase switch the roles of failovers it
	// caused back (--restore-roles).
	RestoreRoles bool
	// Guest: the cluster is not redline's (--addrs). A failover the seed
	// picks is then the coordinated kind (CLUSTER FAILOVER, the replica
	// catches up with its primary first): FORCE and TAKEOVER may drop what
	// the replica had not yet received, the user's keys a migration just
	// moved included (TestRunGuestOnExistingCluster lost 40 such keys to a
	// TAKEOVER one second after a storm). They run only when named
	// (failover:force, failover:takeover).
	Guest bool
	// Script, when not empty, is the schedule to follow instead of the
	// seed's plan: a stored run's steps at their slots (`run --replay`),
	// or fewer of them (`shrink`). Each step's targets are resolved as
	// ever, from its own seed over the live topology; a step that strikes
	// other nodes than it did when recorded says so (replay_nodes_differ).
	Script []ScheduledStep
}

// Nemesis runs a fault schedule against a cluster. The faults are values
// (fault.go, registry.go) that carry their own state; the Nemesis holds
// what they share (env), the schedule and the fault in force.
type Nemesis struct {
	*env
	faults  []string // the schedule's faults, in registry order
	order   []fault  // every fault the target can cause (env.bound), in registry order
	target  string
	planner *planner

	// plan, when set, replaces the schedule: changes at chosen times
	// (changes.go).
	plan []Change

	mu      sync.Mutex
	current string
	pending *action          // started and not yet stopped
	rec     history.Recorder // where journal entries go (the last Run, fire or Heal)

	// scriptDone is closed once every step of opts.Script has been fired
	// and, where it had something to undo, stopped; nil without a script.
	scriptDone chan struct{}
}

// ScriptDone is closed when a scripted run (a replay, a shrink try) has
// fired and stopped every step of its script; nil when the nemesis
// follows the seed's plan. The runner keeps traffic going past the time
// limit until then: a replay on a slower machine whose restarts took
// longer would otherwise end before its last recorded steps, and
// replay fewer faults than it says it replays.
func (n *Nemesis) ScriptDone() <-chan struct{} {
	if n == nil || n.scriptDone == nil {
		return nil
	}
	return n.scriptDone
}

// New checks names against what c can do and prepares a schedule. An
// explicit fault the target cannot cause is an error naming both; "all"
// quietly keeps the faults the target supports.
func New(names []string, c cluster.Cluster, opts Options) (*Nemesis, error) {
	if opts.Log == nil {
		opts.Log = func(string, ...any) {}
	}
	if opts.NodeTimeout <= 0 {
		opts.NodeTimeout = 2 * time.Second
	}
	// What clusteradmin logs reads as the nemesis' own lines.
	logf := func(format string, args ...any) { opts.Log("nemesis: "+format, args...) }
	e := &env{c: c, opts: opts, journal: opts.Journal, admin: &clusteradmin.Admin{Log: logf, Creds: opts.Credentials}}
	e.bound = map[string]fault{}
	n := &Nemesis{env: e, target: targetName(c)}
	if len(opts.Script) > 0 {
		n.scriptDone = make(chan struct{})
	}
	e.note = func(f string, nodes []string, detail map[string]any) {
		n.mu.Lock()
		rec := n.rec
		n.mu.Unlock()
		n.record(rec, history.Info, f, nodes, detail)
	}
	if n.journal == nil {
		n.journal, _ = clusteradmin.OpenJournal("")
	}
	n.journal.OnEntry(n.recordJournal)
	e.mover = clusteradmin.NewSlotMover(c, e.admin, n.journal, logf)
	// On a cluster redline created, two different copies of a key (a
	// replica promoted before it had the move's DEL, or a promoted source
	// that served a write of a moved key) are both kept, one beside the
	// other, so the end phase can close the slot; on a user's, redline
	// stops and says so.
	e.mover.SetAsideConflicts = !opts.Guest
	hooks := hookNames()
	for k := range opts.Hooks {
		if !slices.Contains(hooks, k) {
			return nil, fmt.Errorf("--nemesis-hook %s: no such hook; hooks exist for %s", k, strings.Join(hooks, ", "))
		}
	}

	spec, err := Parse(names)
	if err != nil {
		return nil, err
	}
	want, all, only := spec.Want, spec.All, spec.Only
	// A fault's bind may ask what the user named of it (a mode that
	// needs more of the target than the fault's others).
	e.named = only
	why := map[string]error{}
	for _, mk := range registry {
		f := mk()
		var h *hook
		if cmd, ok := opts.Hooks[f.name()]; ok {
			h = &hook{fault: f.name(), cmd: cmd, c: c}
		}
		if err := f.bind(e, h, all || slices.Contains(want, f.name())); err != nil {
			why[f.name()] = err
			continue
		}
		n.bound[f.name()] = f
		n.order = append(n.order, f)
	}
	for _, name := range want {
		err, ok := why[name]
		if !ok {
			continue
		}
		f := lookup(name)
		hint := "drop it from --nemesis"
		if f.hookable() {
			hint = fmt.Sprintf("give --nemesis-hook %s='<command>' or drop it from --nemesis", name)
		}
		detail := ""
		if !errors.Is(err, errUnsupported) {
			detail = fmt.Sprintf(" (%v)", err)
		}
		return nil, fmt.Errorf("fault %s: target %s cannot %s%s; %s", name, n.target, needsWords(f), detail, hint)
	}
	if all {
		for _, f := range n.order {
			want = append(want, f.name())
		}
	}
	n.faults = canonical(want)
	if len(n.faults) > 0 && opts.Interval <= 0 {
		return nil, fmt.Errorf("--nemesis-interval must be positive, got %s", opts.Interval)
	}
	n.planner = newPlanner(n.faults, opts.Seed)
	if n.planner != nil {
		n.planner.only = only
	}
	return n, nil
}

// HealConverges says whether Heal ends by waiting for the cluster to
// converge (and records whether it did): it does whenever there is a
// fault to heal. The runner's end phase then does not wait again.
func (n *Nemesis) HealConverges() bool { return len(n.faults) > 0 }

// Faults returns the faults this nemesis schedules, in canonical order.
func (n *Nemesis) Faults() []string { return slices.Clone(n.faults) }

// Current returns the fault in force now ("" if none), for the progress bar.
func (n *Nemesis) Current() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.current
}

func (n *Nemesis) setCurrent(s string) {
	n.mu.Lock()
	n.current = s
	n.mu.Unlock()
}

// action is a resolved step: what it hits and how to start and stop it.
type action struct {
	step    Step
	nodes   []string
	detail  map[string]any
	start   func(ctx context.Context) (map[string]any, error)
	stop    func(ctx context.Context) (map[string]any, error) // nil: nothing to undo
	minHold time.Duration
	// opensSlot: stopping it closes a slot migration, which must wait
	// while the cluster holds an open slot redline cannot account for.
	opensSlot bool
}

func (a *action) label() string {
	s := a.step.Fault + " " + a.step.Mode
	if len(a.nodes) > 0 {
		s += " " + strings.Join(a.nodes, ",")
	}
	return s
}

// Run fires the schedule until ctx is done, on a fixed timeline from the
// moment it is called (the traffic start): fault k starts at
// (k+1/2) intervals and is held for Step.Hold of an interval from that
// slot (longer when its mode needs it), so the same seed puts faults at the
// same offsets on any build, however long a build takes to restart. A
// fault whose slot passed while the previous one was still being undone
// starts at once, and its start records how late it was (late_ms). A fault
// still in force when ctx ends is left for Heal.
func (n *Nemesis) Run(ctx context.Context, rec history.Recorder) error {
	if n.plan != nil {
		n.mu.Lock()
		n.rec = rec
		n.mu.Unlock()
		return n.runPlan(ctx, rec)
	}
	if len(n.faults) == 0 {
		<-ctx.Done()
		return nil
	}
	n.mu.Lock()
	n.rec = rec
	n.mu.Unlock()
	tl := timeline{t0: time.Now(), interval: n.opts.Interval}
	for i := 0; ; i++ {
		ss := ScheduledStep{K: i}
		if len(n.opts.Script) > 0 {
			if i >= len(n.opts.Script) {
				select {
				case <-n.scriptDone: // a second Run of the same script
				default:
					close(n.scriptDone)
				}
				<-ctx.Done() // the script is done: no more faults
				return nil
			}
			ss = n.opts.Script[i]
		}
		k := ss.K
		slot := tl.slot(k)
		if !sleepUntil(ctx, slot) {
			return nil
		}
		if len(n.opts.Script) == 0 {
			ss.Step = n.planner.next()
		}
		st := ss.Step
		late := tl.late(k, time.Now())
		if late > 0 {
			n.opts.Log("nemesis: %s %s starts %s late (the previous fault took that long to undo)", st.Fault, st.Mode, late.Round(time.Millisecond))
		}
		began := time.Now()
		a := n.fireScheduled(ctx, rec, ss, late)
		if a != nil && a.stop != nil {
			stopAt := slot.Add(time.Duration(st.Hold * float64(n.opts.Interval)))
			if minEnd := began.Add(a.minHold); minEnd.After(stopAt) {
				stopAt = minEnd
			}
			if !sleepUntil(ctx, stopAt) {
				return nil
			}
			n.finish(ctx, rec, a)
		}
	}
}

// timeline places fault k at t0 + (k+1/2) intervals.
type timeline struct {
	t0       time.Time
	interval time.Duration
}

func (tl timeline) slot(k int) time.Time {
	return tl.t0.Add(tl.interval/2 + time.Duration(k)*tl.interval)
}

// late is how far past its slot fault k starts at now; a few
// milliseconds of timer slack do not count.
func (tl timeline) late(k int, now time.Time) time.Duration {
	if d := now.Sub(tl.slot(k)); d > 20*time.Millisecond {
		return d
	}
	return 0
}

// fire resolves a step against the live topology, records its start and
// starts it. It returns the action when there is something to stop.
func (n *Nemesis) fire(ctx context.Context, rec history.Recorder, st Step) *action {
	return n.fireLate(ctx, rec, st, 0)
}

// fireLate is fire for a step that starts late past its slot on the
// timeline; the lateness goes into the start's record.
func (n *Nemesis) fireLate(ctx context.Context, rec history.Recorder, st Step, late time.Duration) *action {
	return n.fireScheduled(ctx, rec, ScheduledStep{Step: st, K: -1}, late)
}

// fireScheduled is fireLate for a step at its slot on the timeline: its
// start records the step (fault, mode, seed, hold, slot) so that a replay
// can follow the same schedule, and, for a scripted step, whether it
// struck the nodes it struck when recorded.
func (n *Nemesis) fireScheduled(ctx context.Context, rec history.Recorder, ss ScheduledStep, late time.Duration) *action {
	st := ss.Step
	f := history.StartOf(st.Fault)
	stepDetail := ScheduledStep{Step: st, K: ss.K}
	n.mu.Lock()
	n.rec = rec
	n.mu.Unlock()
	n.mover.NewStep()
	t, err := n.topology(ctx)
	var a *action
	if err == nil {
		a, err = n.resolve(ctx, st, t)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		n.opts.Log("nemesis: %s %s skipped: %v", st.Fault, st.Mode, err)
		skip := map[string]any{"mode": st.Mode, "skipped": err.Error(), "step": stepDetail}
		if late > 0 {
			skip["late_ms"] = late.Milliseconds()
		}
		n.record(rec, history.Info, f, nil, skip)
		return nil
	}
	a.step = st
	a.detail["mode"] = st.Mode
	a.detail["step"] = stepDetail
	if len(ss.Nodes) > 0 && !slices.Equal(ss.Nodes, a.nodes) {
		a.detail["replay_nodes_differ"] = map[string]any{"recorded": ss.Nodes, "now": a.nodes}
		n.opts.Log("nemesis: replayed %s %s strikes %v; the recorded run struck %v (the topology differs at this point)", st.Fault, st.Mode, a.nodes, ss.Nodes)
	}
	if st.Evidence {
		// The kind's first step: its targets were narrowed to hold keys.
		a.detail["evidence"] = true
	}
	if late > 0 {
		a.detail["late_ms"] = late.Milliseconds()
	}
	a.detail["cluster_nodes_before"] = t.View
	a.detail["cluster_nodes_of"] = t.ViewOf
	n.record(rec, history.Invoke, f, a.nodes, a.detail)
	n.setCurrent(a.label())
	n.opts.Log("nemesis: start %s", a.label())
	began := time.Now()
	res, err := a.start(ctx)
	if res == nil {
		res = map[string]any{}
	}
	res["mode"] = st.Mode
	res["took_ms"] = time.Since(began).Milliseconds()
	if err != nil {
		res["error"] = err.Error()
		n.opts.Log("nemesis: %s: %v", a.label(), err)
	}
	n.record(rec, history.Info, f, a.nodes, res)
	if a.stop == nil {
		n.setCurrent("")
		return nil
	}
	n.mu.Lock()
	n.pending = a
	n.mu.Unlock()
	return a
}

// finish stops an action and records it.
func (n *Nemesis) finish(ctx context.Context, rec history.Recorder, a *action) error {
	f := history.StopOf(a.step.Fault)
	n.record(rec, history.Invoke, f, a.nodes, map[string]any{"mode": a.step.Mode})
	began := time.Now()
	res, err := a.stop(ctx)
	if res == nil {
		res = map[string]any{}
	}
	res["mode"] = a.step.Mode
	res["took_ms"] = time.Since(began).Milliseconds()
	if err != nil {
		res["error"] = err.Error()
		n.opts.Log("nemesis: stop %s: %v", a.label(), err)
	} else {
		n.opts.Log("nemesis: stop %s", a.label())
	}
	if t, terr := n.topology(ctx); terr == nil {
		res["cluster_nodes_after"] = t.View
		res["cluster_nodes_of"] = t.ViewOf
	}
	n.record(rec, history.Info, f, a.nodes, res)
	n.mu.Lock()
	if n.pending == a {
		n.pending = nil
	}
	n.mu.Unlock()
	n.setCurrent("")
	return err
}

// resolve turns a step into an action on the topology t.
func (n *Nemesis) resolve(ctx context.Context, st Step, t *clusteradmin.Topology) (*action, error) {
	if n.plan != nil {
		return n.resolveChange(ctx, st, t)
	}
	f, ok := n.bound[st.Fault]
	if !ok {
		if lookup(st.Fault) != nil {
			return nil, fmt.Errorf("target %s cannot cause fault %q", n.target, st.Fault)
		}
		return nil, fmt.Errorf("unknown fault %q", st.Fault)
	}
	return f.resolve(ctx, st, t, stepRand(st))
}

// Heal ends every fault: it stops the fault in force, lets every fault
// undo what it still holds (heal partitions, resume paused nodes, restart
// killed ones, reset clocks), finishes or repairs the slot mover's open
// migrations and re-asserts its moves (never while someone else's slot is
// open), lets every fault settle (restore roles), and waits for the cluster
// to agree on one slot map. It records a "heal" invoke/info pair.
func (n *Nemesis) Heal(ctx context.Context, rec history.Recorder) error {
	if len(n.faults) == 0 {
		return nil
	}
	defer n.admin.Close()
	n.mu.Lock()
	n.rec = rec
	a := n.pending
	n.mu.Unlock()
	h := &healing{res: map[string]any{}, scheduled: map[string]bool{}}
	for _, f := range n.faults {
		h.scheduled[f] = true
	}
	if a != nil && a.opensSlot {
		// Stopping it closes its slot: not while the cluster is in a
		// state redline cannot account for (checked again below, once
		// every node answers).
		if found, _, err := n.mover.Unaccounted(ctx); err == nil && len(found) > 0 {
			n.mu.Lock()
			n.pending = nil
			n.mu.Unlock()
			a = nil
		}
	}
	if a != nil {
		h.fail(n.finish(ctx, rec, a))
	}
	n.setCurrent("heal")
	defer n.setCurrent("")
	n.record(rec, history.Invoke, history.Heal, nil, map[string]any{})
	for _, f := range n.order {
		f.heal(ctx, h)
	}
	res := h.res
	found, would, err := n.mover.Unaccounted(ctx)
	if err != nil {
		h.fail(fmt.Errorf("reading the topology before repairs: %w", err))
	} else if len(found) > 0 {
		// Someone else's open slot, or one of redline's slots in a state
		// its journal does not explain: repairing could move keys that are
		// not redline's to decide about. Say what and stop.
		n.opts.Log("end phase: the cluster is in a state redline cannot account for:")
		for _, f := range found {
			n.opts.Log("  found: %s", f)
		}
		for _, w := range would {
			n.opts.Log("  redline would have: %s", w)
		}
		n.opts.Log("end phase: changing no slot; fix the above by hand (redis-cli --cluster fix) once you know whose it is")
		res["unaccounted"], res["would_have"] = found, would
		h.fail(fmt.Errorf("cluster in a state redline cannot account for (%s); no slot repaired", strings.Join(found, "; ")))
	} else {
		// Per slot: what was decided (where its keys were), what was
		// sent, how many keys moved.
		repaired, err := n.mover.RepairSlots(ctx)
		h.fail(err)
		if len(repaired) > 0 {
			res["repaired_slots"], res["repairs"] = fixedSlots(repaired), repaired
		}
		reasserted, err := n.mover.ReassertMoves(ctx)
		h.fail(err)
		if len(reasserted) > 0 {
			res["reasserted_slots"], res["reassertions"] = fixedSlots(reasserted), reasserted
		}
		for _, f := range n.order {
			f.settle(ctx, h)
		}
	}
	wait := max(30*time.Second, 15*n.opts.NodeTimeout)
	if len(found) > 0 {
		res["converged"] = false // slots stay open until their owner closes them
	} else if err := n.waitConverged(ctx, wait); err != nil {
		h.fail(err)
		res["converged"] = false
	} else {
		res["converged"] = true
	}
	res["end_phase"] = n.endPhase(ctx, h, found, res["converged"] == true)
	if t, terr := n.topology(ctx); terr == nil {
		res["cluster_nodes_after"] = t.View
		res["cluster_nodes_of"] = t.ViewOf
	}
	err = errors.Join(h.errs...)
	if err != nil {
		res["error"] = err.Error()
		n.opts.Log("nemesis: heal: %v", err)
	}
	touched := h.touched
	slices.SortFunc(touched, cluster.CompareNames)
	n.record(rec, history.Info, history.Heal, slices.Compact(touched), res)
	return err
}

// endPhase is the end phase's own verdict on itself (checker.EndPhase
// reads it from the heal entry): every slot redline moved or opened is
// counted again on every primary, and each one left open, unowned, claimed
// twice or with keys on a primary that does not own it is a problem; so
// is a fault that could not be undone, a cluster that did not converge,
// a replica that replicates a replica once it converged, and a state
// redline could not account for. healed is true only when
// there is none.
func (n *Nemesis) endPhase(ctx context.Context, h *healing, found []string, converged bool) map[string]any {
	checked, problems, err := n.mover.EndCensus(ctx)
	if err != nil {
		problems = append(problems, clusteradmin.SlotProblem{Kind: "uncounted",
			What: "the slots redline moved could not be counted on every primary: " + err.Error()})
	}
	for _, f := range found {
		problems = append(problems, clusteradmin.SlotProblem{Kind: "unaccounted", What: f + " (left alone)"})
	}
	for _, e := range h.errs {
		problems = append(problems, clusteradmin.SlotProblem{Kind: "heal-error", What: e.Error()})
	}
	if !converged {
		problems = append(problems, clusteradmin.SlotProblem{Kind: "not-converged", What: "the nodes did not agree on one slot map by the end of the end phase"})
	} else {
		// The roles, once converged: no replica may replicate a replica.
		// A replica follows its demoted primary's successor a moment
		// after the demotion: only a chain that lasts counts.
		for _, what := range n.lastingChains(ctx, max(5*time.Second, 3*n.opts.NodeTimeout)) {
			problems = append(problems, clusteradmin.SlotProblem{Kind: "replica-of-replica", What: what})
		}
	}
	for _, p := range problems {
		n.opts.Log("end phase: not healed: %s", p.What)
	}
	if problems == nil {
		problems = []clusteradmin.SlotProblem{}
	}
	return map[string]any{"healed": len(problems) == 0, "slots_checked": checked, "problems": problems}
}

// lastingChains is the cluster's replicas of replicas that are still
// there after limit (nil as soon as a look finds none).
func (n *Nemesis) lastingChains(ctx context.Context, limit time.Duration) []string {
	deadline := time.Now().Add(limit)
	for {
		t, err := n.topology(ctx)
		if err != nil {
			return nil
		}
		chains := t.ReplicasOfReplicas()
		if len(chains) == 0 || time.Now().After(deadline) || !sleepUntil(ctx, time.Now().Add(500*time.Millisecond)) {
			return chains
		}
	}
}

// fixedSlots lists the slots of repair results.
func fixedSlots(rs []clusteradmin.FixResult) []int {
	out := make([]int, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.Slot)
	}
	return out
}

func (n *Nemesis) record(rec history.Recorder, typ history.Type, f string, nodes []string, detail map[string]any) {
	if rec == nil {
		return
	}
	op := history.Op{Process: history.Nemesis, Type: typ, F: f}
	op.SetNodes(nodes)
	if len(detail) > 0 {
		b, err := json.Marshal(detail)
		if err != nil {
			b, _ = json.Marshal(map[string]string{"error": "detail does not marshal: " + err.Error()})
		}
		op.SetDetail(b)
	}
	rec.Record(op)
}

// recordJournal copies a journal entry into the history.
func (n *Nemesis) recordJournal(s clusteradmin.Step) {
	n.mu.Lock()
	rec := n.rec
	n.mu.Unlock()
	b, _ := json.Marshal(s)
	var detail map[string]any
	_ = json.Unmarshal(b, &detail)
	n.record(rec, history.Info, history.Journal, nil, detail)
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-tm.C:
		return true
	}
}

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return cluster.CompareNames(ks[i], ks[j]) < 0 })
	return ks
}

// targetName describes the cluster for error messages.
func targetName(c cluster.Cluster) string {
	if d, ok := c.(cluster.Describer); ok {
		m := d.Describe()
		for _, k := range []string{"target", "runtime"} {
			if v := m[k]; v != "" {
				return v
			}
		}
	}
	return fmt.Sprintf("%T", c)
}
