package checker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/redline-dev/redline/history"
)

// DefaultFailover judges lost acknowledged writes by the mode of the
// failover that lost them. The failover nemesis mixes CLUSTER FAILOVER's
// three modes, and only one promises no loss: in the default mode the
// primary pauses its clients, the replica catches up to the primary's
// offset, and only then switches (Redis, and the reference by design);
// FORCE and TAKEOVER do not wait and may lose what the replica lacked. So
// a loss that a FORCE or a TAKEOVER explains is the set, counter or
// list-append checker's figure, expected of those modes, while a loss that
// only a default failover explains is a broken promise, invalid on its
// own, even in a run whose other failovers lost writes by design.
//
// A loss is charged to a default failover F when the write was
// acknowledged (or, for a counter, the read before the one revealing the
// loss began) before F's switch plus a grace (the old primary may answer
// until it learns of its successor), F started before the read that
// revealed the loss, F touched the shard holding the key (its primary at
// F's start), and no other fault touching that shard (a kill, a partition,
// a FORCE or TAKEOVER failover, any fault that is not a default failover)
// overlaps the span from the acknowledgement to that read: a FORCE or
// TAKEOVER counts up to its switch plus the grace, any other fault up to
// its stop. A key whose shard is unknown is touched by every fault.
//
// Kinds as RPOOptions.Kind: set (each lost element), list-append (each
// lost append), counter (each rise of a key's deficit, by amount). A run
// with no default failover is not applicable.
func DefaultFailover(opts ...RPOOptions) Checker {
	o := optional(opts)
	o.Scope = o.Scope.withDefaults()
	if partitionedKind(o.Kind) {
		return defaultFailoverParts{defaultFailover{o}}
	}
	return defaultFailover{o}
}

type defaultFailover struct{ o RPOOptions }

func (d defaultFailover) Name() string { return d.o.name("default-failover") }

// failoverGrace is how long after a failover's switch (its recorded
// completion, once the replica reports itself primary) the old primary
// may still acknowledge writes as a primary: until the new configEpoch
// reaches it, within milliseconds on a healthy bus; 2 s covers a slow
// one and the nemesis's polling (100 ms).
const failoverGrace = 2 * time.Second

// failoverEvent is one failover the nemesis recorded: its start's
// invocation and completion, the mode it ran in.
type failoverEvent struct {
	start, switched int64 // invocation; completion (inf: none recorded)
	mode            string
	promoted        bool
	index           int64 // the invocation's op index
	nodes           []string
}

// failoverEvents reads the failover nemesis's start entries: each
// invocation paired with the next completion. A completion of type fail
// or one that says "skipped" or carries an error is no failover. A guest
// run's failover the seed picked as FORCE or TAKEOVER ran coordinated
// ("guest_coordinated"): its mode is default.
func failoverEvents(ops []history.Op) []failoverEvent {
	var out []failoverEvent
	open := -1
	start := history.StartOf("failover")
	for i := range ops {
		op := &ops[i]
		if op.Process != history.Nemesis || op.F != start {
			continue
		}
		var d struct {
			Mode     string `json:"mode"`
			Promoted *bool  `json:"promoted"`
			Guest    string `json:"guest_coordinated"`
		}
		_ = json.Unmarshal(op.DetailRaw(), &d)
		if op.Type == history.Invoke {
			out = append(out, failoverEvent{start: op.Time, switched: inf, mode: d.Mode, index: op.Index, nodes: op.NodeList()})
			open = len(out) - 1
			continue
		}
		if open < 0 {
			continue
		}
		ev := &out[open]
		open = -1
		if op.Type == history.Fail || skippedDetail(op.DetailRaw()) {
			out = out[:len(out)-1]
			continue
		}
		ev.switched = op.Time
		if d.Mode != "" {
			ev.mode = d.Mode
		}
		if d.Guest != "" {
			ev.mode = "default"
		}
		ev.promoted = d.Promoted == nil || *d.Promoted
		if len(op.NodeList()) > 0 {
			ev.nodes = op.NodeList()
		}
	}
	return out
}

// lossItem is one loss to judge: a lost write's (or a counter deficit's)
// key, the earliest time the lost writes could still have been held
// (from), the read revealing the loss (seen), how much, and an op index
// to name it by.
type lossItem struct {
	key         string
	from, seen  int64
	amount      int64
	index       int64
	description string
}

// unpromotedFailover is a default CLUSTER FAILOVER that ended with its
// replica still a replica, and what the nemesis saw then.
type unpromotedFailover struct {
	index, start, end int64
	nodes             []string
	// explained names what explains it: a window of Redis's own rules the
	// nemesis recorded as open, the primary not knowing its replica, or
	// another fault overlapping; "" when nothing does.
	explained string
	// unjudged says why an unexplained one could not even be looked at:
	// its record does not decode, or the nemesis recorded no promotion or
	// no evidence. No evidence is unknown, never a promotion that happened.
	unjudged string
}

// manualFailoverGiveUp: Redis's manual failover times out after 5 s
// (CLUSTER_MF_TIMEOUT); a replica not promoted 6 s after the command never
// will be by that request.
const manualFailoverGiveUp = 6 * time.Second

// unpromotedFailovers lists the default failovers whose completion says
// promoted false with the nemesis's evidence (unpromoted_evidence). Redis
// drops a coordinated failover only for known reasons (docs/findings/F011:
// the primary does not list the replica yet, the replica's last election
// or the voters' last vote about that primary too recent) or when the
// cluster cannot hold an election (another fault: a partition, a kill, a
// pause). One with none of those is unexplained: the replica never reached
// the offset the paused primary announced, or the election failed, which
// is a server defect or an unknown cause, never a pass. Completions
// without the evidence (runs before it was recorded) are not judged.
// failoverMode is the mode a failover's invocation names ("default" when
// a guest run turned the seed's pick into a coordinated one).
func failoverMode(inv history.Op) string {
	var d struct {
		Mode  string `json:"mode"`
		Guest string `json:"guest_coordinated"`
	}
	_ = json.Unmarshal(inv.DetailRaw(), &d)
	if d.Guest != "" {
		return "default"
	}
	return d.Mode
}

func unpromotedFailovers(ops []history.Op, windows []Window) []unpromotedFailover {
	var out []unpromotedFailover
	switched := map[int64]int64{} // a failover's start -> its switch
	for _, e := range failoverEvents(ops) {
		if e.switched != inf {
			switched[e.start] = e.switched
		}
	}
	start := history.StartOf("failover")
	var open *history.Op
	for i := range ops {
		op := &ops[i]
		if op.Process != history.Nemesis || op.F != start {
			continue
		}
		if op.Type == history.Invoke {
			open = op
			continue
		}
		if open == nil {
			continue
		}
		began := *open
		open = nil
		if op.Type == history.Fail || bytes.Contains(op.DetailRaw(), []byte(`"skipped"`)) {
			continue // not sent: nothing was promised
		}
		var d struct {
			Mode     string `json:"mode"`
			Error    string `json:"error"`
			Promoted *bool  `json:"promoted"`
			WaitedMs int64  `json:"waited_ms"`
			Evidence *struct {
				KnowsReplica   *bool `json:"primary_knows_replica"`
				ElectionWindow bool  `json:"in_election_window"`
				VoteWindow     bool  `json:"in_vote_window"`
			} `json:"unpromoted_evidence"`
		}
		u := unpromotedFailover{index: began.Index, start: began.Time, end: op.Time, nodes: began.NodeList()}
		if err := json.Unmarshal(op.DetailRaw(), &d); err != nil {
			// Garbage where a failover's record should be: whether it was a
			// default one, and whether it promoted, are not known.
			u.unjudged = fmt.Sprintf("its record does not decode (%v)", err)
			out = append(out, u)
			continue
		}
		if d.Mode == "" {
			d.Mode = failoverMode(began)
		}
		if d.Mode != "default" || (d.Promoted != nil && *d.Promoted) {
			continue
		}
		switch {
		case d.Promoted == nil && d.Error != "":
			// The nemesis records the promotion only once CLUSTER
			// FAILOVER was answered OK: an error there means the replica
			// may never have received it.
			u.explained = fmt.Sprintf("CLUSTER FAILOVER got no OK (%s): nothing was promised", d.Error)
		case d.Promoted == nil:
			u.unjudged = "the nemesis recorded no promotion for it"
		case d.WaitedMs < manualFailoverGiveUp.Milliseconds():
			u.explained = fmt.Sprintf("the wait for the promotion ended after %d ms, before Redis's manual failover gives up (5 s): it may still have happened", d.WaitedMs)
		case d.Evidence == nil:
			u.unjudged = "the nemesis recorded no evidence of why it did not happen (its primary was not in the topology, or no role could be asked)"
		}
		if u.unjudged != "" {
			out = append(out, u)
			continue
		}
		switch {
		case u.explained != "":
			// The wait ended too early to judge (above).
		case d.Evidence.KnowsReplica == nil || !*d.Evidence.KnowsReplica:
			u.explained = "its primary did not list the replica as its own (Redis drops the replica's request then)"
		case d.Evidence.ElectionWindow:
			u.explained = "the replica's last election was within auth_retry_time"
		case d.Evidence.VoteWindow:
			u.explained = "the voters had voted about that primary within two node timeouts"
		}
		for _, w := range windows {
			if u.explained != "" {
				break
			}
			if w.Start == began.Time && w.Fault == "failover" {
				continue
			}
			end := w.End
			if sw, ok := switched[w.Start]; ok && w.Fault == "failover" {
				// A failover has no stop: its window lasts until its
				// switch (plus the grace the old primary may still
				// answer), not to the end of the run.
				end = min(end, sw+int64(failoverGrace))
			}
			if w.Start <= u.end && end >= u.start {
				u.explained = fmt.Sprintf("another fault (%s at %.3fs) overlapped it", w.Fault, sec(w.Start))
			}
		}
		out = append(out, u)
	}
	return out
}

func (d defaultFailover) Check(_ context.Context, in *History) Result {
	calls, err := d.o.calls(in)
	if err != nil {
		return invalidHistory(err)
	}
	evs := failoverEvents(in.Ops)
	defaults := 0
	for _, e := range evs {
		if e.mode == "default" {
			defaults++
		}
	}
	if defaults == 0 {
		return noDefaultFailover(evs)
	}
	kind := d.o.Kind
	if kind == "" {
		kind = detectKind(calls)
	}
	if kind == "" {
		if len(calls) == 0 {
			return NotApplicable("no op on the workload's keys: no loss to judge")
		}
		return Result{Valid: Unknown, Figures: &Verdict{Reason: fmt.Sprintf("%d default failovers, but no successful read among %d ops: whether they lost an acknowledged write cannot be said", defaults, len(calls))}}
	}
	judged, err := d.judgeLosses(in, kind, calls, evs, in.windowsOf(), in.runEndOf())
	if err != nil {
		return Result{Valid: Unknown, Figures: &Verdict{Error: err.Error()}}
	}
	return d.result(kind, evs, defaults, judged)
}

// noDefaultFailover is the result of a run whose failovers (evs) were
// none of the default mode.
func noDefaultFailover(evs []failoverEvent) Result {
	return NotApplicable(fmt.Sprintf("no default CLUSTER FAILOVER in the run (%d failovers of other modes): only the default mode promises no loss", len(evs)))
}

// judgedLoss is a loss and what explains it: culprit is the default
// failover (its index in the events) charged with it, or lossByOther or
// lossByNoFault.
type judgedLoss struct {
	lossItem
	culprit int
}

const (
	lossByOther   = -1 // another fault touching its shard explains it
	lossByNoFault = -2 // no fault touching its shard does
)

// judgeLosses lists the losses of calls, of kind, by index, each with
// what explains it among the fault windows; end is the history's latest
// time (a partition's may be earlier).
func (d defaultFailover) judgeLosses(in *History, kind string, calls []call, evs []failoverEvent, windows []Window, end int64) ([]judgedLoss, error) {
	views := shardViews(sortedByStart(calls), windows, in.nodeAddrsOf())
	items, err := d.losses(in, kind, calls, end)
	if err != nil {
		return nil, err
	}
	// Each window's failover event, by its start.
	evAt := map[int64]int{}
	for i, e := range evs {
		evAt[e.start] = i
	}
	touches := func(wi int, key string) bool {
		v := &views[wi]
		if len(windows[wi].Nodes) == 0 || !v.mapped {
			return true
		}
		s := v.shardOf(key)
		return s == "" || v.touched[s]
	}
	grace := int64(failoverGrace)
	out := make([]judgedLoss, 0, len(items))
	for _, it := range items {
		var culprits []int
		other := ""
		for wi, w := range windows {
			ei, isFailover := evAt[w.Start]
			isFailover = isFailover && w.Fault == "failover"
			end := w.End
			if isFailover && evs[ei].switched != inf {
				end = min(end, evs[ei].switched+grace)
			}
			if w.Start > it.seen || end < it.from || !touches(wi, it.key) {
				continue
			}
			if isFailover && evs[ei].mode == "default" {
				culprits = append(culprits, ei)
				continue
			}
			if other == "" {
				mode := ""
				if isFailover {
					mode = " " + evs[ei].mode
				}
				other = fmt.Sprintf("%s%s at %.3fs", w.Fault, mode, sec(w.Start))
			}
		}
		j := judgedLoss{lossItem: it, culprit: lossByOther}
		switch {
		case other != "":
		case len(culprits) == 0:
			j.culprit = lossByNoFault
		default:
			j.culprit = culprits[0]
		}
		out = append(out, j)
	}
	return out, nil
}

// result is the verdict and figures of the losses judged.
func (d defaultFailover) result(kind string, evs []failoverEvent, defaults int, judged []judgedLoss) Result {
	var charged, explained, unexplained, amount int64
	perFailover := map[int]int64{}
	var examples []map[string]any
	first := ""
	for _, it := range judged {
		switch it.culprit {
		case lossByOther:
			explained += it.amount
			continue
		case lossByNoFault:
			unexplained += it.amount
			continue
		}
		charged++
		amount += it.amount
		ev := evs[it.culprit]
		perFailover[it.culprit] += it.amount
		if first == "" {
			first = fmt.Sprintf("%s on key %s (op %d) was lost across the default CLUSTER FAILOVER of %v at %.3fs (op %d), with no other fault on that shard in between: a default failover waits for the replica to catch up and must lose nothing",
				it.description, it.key, it.index, ev.nodes, sec(ev.start), ev.index)
		}
		if len(examples) < d.o.MaxExamples {
			examples = append(examples, map[string]any{"key": it.key, "index": it.index, "lost": it.amount, "what": it.description,
				"failover_index": ev.index, "failover_nodes": ev.nodes, "failover_start_s": sec(ev.start)})
		}
	}
	fig := &DefaultFailoverFigures{
		Kind:                   kind,
		Failovers:              len(evs),
		DefaultFailovers:       defaults,
		LostByDefaultFailover:  amount,
		LostExplainedByOthers:  explained,
		LostExplainedByNoFault: unexplained,
		Rule:                   fmt.Sprintf("a loss only a default failover explains (the write acknowledged before its switch + %s, revealed after its start, no other fault on the key's shard in between) is invalid: the default mode waits for the replica", failoverGrace),
	}
	if charged > 0 {
		per := []map[string]any{}
		idx := make([]int, 0, len(perFailover))
		for i := range perFailover {
			idx = append(idx, i)
		}
		slices.Sort(idx)
		for _, i := range idx {
			per = append(per, map[string]any{"index": evs[i].index, "nodes": evs[i].nodes, "start_s": sec(evs[i].start), "lost": perFailover[i]})
		}
		fig.PerFailover = per
		fig.Examples = examples
		fig.Reason, fig.First = first, first
		return Result{Valid: Invalid, Figures: fig}
	}
	return Result{Valid: Valid, Figures: fig}
}

// DefaultFailoverFigures are the default-failover checker's figures: the
// losses only a default CLUSTER FAILOVER explains.
type DefaultFailoverFigures struct {
	Kind                   string           `json:"kind"`
	Failovers              int              `json:"failovers"`
	DefaultFailovers       int              `json:"default_failovers"`
	LostByDefaultFailover  int64            `json:"lost_by_default_failover"`
	LostExplainedByOthers  int64            `json:"lost_explained_by_others"`
	LostExplainedByNoFault int64            `json:"lost_explained_by_no_fault"`
	Rule                   string           `json:"rule"`
	PerFailover            []map[string]any `json:"per_failover,omitempty"`
	Examples               []map[string]any `json:"examples,omitempty"`
	Verdict
}

// losses lists the losses of the workload's kind, each with the span it
// happened in; an append is revealed lost at the history's end.
func (d defaultFailover) losses(in *History, kind string, calls []call, end int64) ([]lossItem, error) {
	var out []lossItem
	switch kind {
	case "set":
		a := analyzeSet(calls, 1, asidesOf(in.censusOf()))
		for _, sk := range a.keys {
			if sk.last == nil {
				continue
			}
			for _, e := range sk.elems {
				if !e.lost {
					continue
				}
				out = append(out, lossItem{key: sk.key, from: max(e.add.end, e.lastSeenInv), seen: sk.last.c.end, amount: 1,
					index: e.add.index, description: fmt.Sprintf("the acknowledged add of %d", e.v)})
			}
		}
	case "list-append":
		lcalls, _ := listAppendCalls(calls)
		an := &anomalyLog{max: 1, count: map[string]int{}, examples: map[string][]any{}}
		txns, _ := parseListAppend(lcalls, an)
		_, _, lost := lostAppends(txns, an, func(int) map[string]any { return nil })
		for _, lw := range lost {
			out = append(out, lossItem{key: lw.key, from: lw.c.end, seen: end, amount: 1,
				index: lw.c.index, description: "an acknowledged append"})
		}
	case "counter":
		a := in.counterAnalysisOf(d.o.Scope, calls)
		for _, ck := range a.keys {
			ends := make([]call, 0, len(ck.reads))
			for _, r := range ck.reads {
				ends = append(ends, r.c)
			}
			slices.SortStableFunc(ends, func(x, y call) int { return cmpInt(x.end, y.end) })
			for _, rise := range ck.rises {
				from := int64(-1 << 62)
				for _, r := range ends {
					if r.end < rise.read.start {
						from = r.start
					}
				}
				out = append(out, lossItem{key: ck.key, from: from, seen: rise.read.end, amount: rise.amount,
					index: rise.read.index, description: fmt.Sprintf("%d acknowledged increments, revealed by the read", rise.amount)})
			}
		}
	default:
		return nil, fmt.Errorf("default-failover: unknown kind %q (want set, list-append or counter)", kind)
	}
	slices.SortStableFunc(out, func(x, y lossItem) int { return cmpInt(x.index, y.index) })
	return out, nil
}

type failoverPromotion struct{}

// FailoverPromotions judges whether the default CLUSTER FAILOVERs the
// nemesis sent happened: a coordinated failover that ended with its
// replica still a replica, after Redis's manual failover gave up, with
// nothing that explains it (unpromotedFailovers: the primary knew its
// replica, no election or vote window of Redis's was open, no other
// fault overlapped it) is a broken promise the run cannot pass: unknown,
// never valid (planted failover-no-pause: the primary announces its
// paused offset and keeps writing, the replica never reaches exactly
// that offset, and the failover times out). Not applicable without a
// default failover whose completion the nemesis recorded.
func FailoverPromotions() Checker { return failoverPromotion{} }

func (failoverPromotion) Name() string { return "failover-promotion" }

func (failoverPromotion) Check(_ context.Context, in *History) Result {
	defaults, promoted := 0, 0
	for _, e := range failoverEvents(in.Ops) {
		if e.mode == "default" {
			defaults++
			if e.promoted {
				promoted++
			}
		}
	}
	var unexplained []unpromotedFailover
	var explained []string
	for _, u := range unpromotedFailovers(in.Ops, in.windowsOf()) {
		defaults++
		if u.explained == "" {
			unexplained = append(unexplained, u)
		} else {
			explained = append(explained, fmt.Sprintf("op %d: %s", u.index, u.explained))
		}
	}
	if defaults == 0 {
		return NotApplicable("no default CLUSTER FAILOVER completed in the run: no promotion to judge")
	}
	fig := &FailoverPromotionFigures{DefaultFailovers: defaults, Promoted: promoted, UnpromotedExplained: len(explained), UnpromotedUnexplained: len(unexplained)}
	if len(explained) > 0 {
		fig.Explained = explained
	}
	if len(unexplained) == 0 {
		return Result{Valid: Valid, Figures: fig}
	}
	u := unexplained[0]
	if u.unjudged != "" {
		fig.Reason = fmt.Sprintf("%d default CLUSTER FAILOVER(s) did not happen or cannot be judged: the first, on %v at %.3fs (op %d): %s", len(unexplained), u.nodes, sec(u.start), u.index, u.unjudged)
		return Result{Valid: Unknown, Figures: fig}
	}
	fig.Reason = fmt.Sprintf("%d default CLUSTER FAILOVER(s) did not happen and nothing explains it: the first, on %v at %.3fs (op %d), ended with the replica still a replica although its primary listed it, no election or vote window of Redis's was open and no other fault overlapped it (a primary that keeps writing after announcing its paused offset, or a failed election: the coordinated failover's promise broken)",
		len(unexplained), u.nodes, sec(u.start), u.index)
	return Result{Valid: Unknown, Figures: fig}
}

// FailoverPromotionFigures are the failover-promotion checker's figures.
type FailoverPromotionFigures struct {
	DefaultFailovers      int      `json:"default_failovers"`
	Promoted              int      `json:"promoted"`
	UnpromotedExplained   int      `json:"unpromoted_explained"`
	UnpromotedUnexplained int      `json:"unpromoted_unexplained"`
	Explained             []string `json:"explained,omitempty"`
	Verdict
}

// The figures this checker explains (describe.go).
var _ = ExplainFigures(map[string]string{
	"lost_by_default_failover": "acknowledged writes lost across a default CLUSTER FAILOVER with no other fault on their shard in between: the default mode pauses the primary until its replica has caught up, so it must lose nothing (a FORCE or TAKEOVER may)",
})
