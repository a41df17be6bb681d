package lock

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

// The explanations of the lock checker's figures (checker.DescribeFigure).
var _ = checker.ExplainFigures(map[string]string{
	"double_holds":           "two clients held one lock at the same time, both acknowledged and neither expired nor released: the lock was handed out twice (after-failover-loss: the first was acknowledged by a primary a fault then struck, without a satisfied WAIT, and the second taken on another node, as Redis Cluster's asynchronous replication allows; after-clock-fault: a clock fault struck a node that granted them, whose clock the ttl runs on; unexplained: no such evidence)",
	"fence_regressions":      "a lock's fencing token did not rise between two acquisitions one after the other, or two acquisitions got the same one: a resource guarded by the fence could not tell the older holder from the newer",
	"lost_while_held":        "a lock's holder found it gone when it released it, before its ttl could have run out: the lock vanished under its holder (a failover, a restart, a clock jump); reported, not judged, as no second holder was seen",
	"released_anothers_lock": "a release deleted a lock after its own had certainly expired and another client had acquired it: compare-and-delete must prevent that",
})

type lockChecker struct{ o checker.Scope }

// lockExpirySlack widens a lock's expiry both ways: a server counts the
// ttl from its own clock in whole milliseconds (Redis: mstime() + ttl, up
// to 1 ms before the exact instant), so a hold is only certain until 5 ms
// before its invocation plus ttl, and an expiry only certain 5 ms after
// its completion plus ttl.
const lockExpirySlack = 5 * time.Millisecond

// Checker judges a history of the lock workload: clients take a lock with
// SET key token NX PX ttl and a fencing token (INCR of a fence key in the
// lock's slot, in one script), hold it, and release it by
// compare-and-delete. The lock service's promise is checked on holds that
// are certain: an acquire acknowledged (ok) holds the lock from its
// completion until the earlier of its expiry (its invocation plus the
// ttl, less lockExpirySlack: the server starts the ttl no earlier) and its holder's release
// (the release's invocation plus its recorded hold, no later than the
// release's completion). An indeterminate acquire proves no hold.
//
//   - double-hold: two certain holds of one lock overlap in real time.
//     Classified after-failover-loss when the history supports the
//     documented loss (Redis Cluster replicates asynchronously: a lock
//     acknowledged by a primary and not yet copied is lost when its
//     replica takes over): the first acquire's WAIT was not satisfied, the
//     second was acknowledged by another node, and a fault window (not a
//     clock fault) that names the first acquire's node overlaps the span
//     from the first acquisition to the second. Classified
//     after-clock-fault when a clock fault struck a node that granted
//     either acquire in that span: the ttl runs on the node's clock, and a
//     clock moved forward expires the lock early (documented; the Redlock
//     debate's point). Otherwise unexplained.
//     Both are invalid: the lock was handed out twice.
//   - fence-regression: an acquire that began after another had completed
//     got a fence not above it, or two acquires got the same fence.
//   - released-anothers-lock: a release that deleted (returned 1) although
//     its own lock had certainly expired (its acquire's completion plus
//     ttl plus lockExpirySlack before the release was invoked) and another client had certainly
//     acquired the lock since: compare-and-delete must prevent it.
//   - released-unacquired: a release that deleted although its token's
//     acquire certainly failed, or no acquire used that token: the server
//     deleted a value nobody wrote.
//   - lost_while_held (a figure, not judged): a holder's release found
//     another token or none before its lock could have expired: the lock
//     vanished (a failover, a restart, a clock jump), counted with those
//     after a fault on the node that granted it; no second holder is
//     proven, so it is no double-hold.
//   - a clear (f "clear", DEL of the lock once traffic has ended) ends
//     every hold of its lock; a lock op invoked after it is unknown.
//   - garbage: an acknowledged acquire whose fence is no positive integer
//     or names another token, a release's reply that is neither 1 nor 0.
//
// Invalid on any anomaly; unknown when invocations cannot be read (no
// token, a ttl not above 0, a negative hold, a token used by two
// acquires, an op of another kind), when an op completed before it was
// invoked or its index is used twice, or when no acquire was
// acknowledged.
func Checker(opts ...checker.Scope) checker.Checker {
	var o checker.Scope
	if len(opts) > 0 {
		o = opts[0]
	}
	return lockChecker{o.WithDefaults()}
}

func (l lockChecker) Name() string { return l.o.NameOr("lock") }

// lockAcq is an acquire with its hold.
type lockAcq struct {
	c        *checker.Call
	v        Value
	fence    int64
	certain  bool // acknowledged with a readable fence
	from, to int64
	released bool // a release of its token ended the hold
}

func (l lockChecker) Check(_ context.Context, in *checker.History) checker.Result {
	p, err := l.analyze(in, lockNames{})
	if err != nil {
		return checker.InvalidHistory(err)
	}
	return l.verdict(p)
}

// CheckPartitions is Check on a history given as slot partitions
// (checker.PartitionChecker): a lock's ops are all in one partition and
// the fault windows are run-wide, so each partition is analysed as Check
// analyses the whole and the partials add up (merge). What is not a
// lock's own is its tokens: Check looks a token up across locks (a token
// two acquires used makes the later one unreadable; a release's token
// whose acquire could not be read is not judged). Tokens are unique in a
// run, so when no token is used in two partitions (checker.SharedNames, 8
// bytes an acquire) one pass is all; otherwise a second pass finds the
// acquires of the shared tokens and a third analyses every partition
// knowing them (lockNames). It holds one partition's lock ops and their
// analysis at a time.
func (l lockChecker) CheckPartitions(ctx context.Context, n int, load checker.PartitionLoader) (checker.Result, error) {
	var names checker.SharedNames
	m, err := l.partitions(ctx, n, load, lockNames{}, func(p *lockPartial) { names.Add(p.defined, p.wanted) })
	if err != nil {
		return checker.PartitionStopped(err)
	}
	shared := names.Shared()
	if shared == nil {
		return l.verdict(m), nil
	}
	defs := map[string]*lockToken{}
	if m, err = l.partitions(ctx, n, load, lockNames{shared: shared}, func(p *lockPartial) {
		for tok, d := range p.defs {
			if o := defs[tok]; o == nil {
				defs[tok] = d
			} else {
				o.join(d)
			}
		}
	}); err != nil {
		return checker.PartitionStopped(err)
	}
	m, err = l.partitions(ctx, n, load, lockNames{tokens: defs}, nil)
	if err != nil {
		return checker.PartitionStopped(err)
	}
	return l.verdict(m), nil
}

// partitions analyses each partition with names, gives each partial to
// each (if any) and merges them (checker.MergePartitions).
func (l lockChecker) partitions(ctx context.Context, n int, load checker.PartitionLoader, names lockNames, each func(*lockPartial)) (*lockPartial, error) {
	return checker.MergePartitions(ctx, n, load, l.o.Filter(),
		func(in *checker.History) (*lockPartial, error) { return l.analyze(in, names) },
		(*lockPartial).merge, l.newPartial, each)
}

// lockNames is what a partition's analysis is told of the tokens other
// partitions use: to note the acquires of shared ones (the second pass),
// or who holds each (the third).
type lockNames struct {
	shared map[uint64]bool
	tokens map[string]*lockToken
}

// lockToken is what Check knows of a token across locks: the first
// readable acquire that used it (owner, -1: none) and whether an acquire
// of it had a ttl not above 0 (its releases are not judged).
type lockToken struct {
	owner   int64
	skipped bool
}

func (t *lockToken) join(u *lockToken) {
	if u.owner >= 0 && (t.owner < 0 || u.owner < t.owner) {
		t.owner = u.owner
	}
	t.skipped = t.skipped || u.skipped
}

// lockPartial is what the lock checker found in a history or in one
// partition of it: counts, and the first findings of each list by where a
// check of the whole history finds them (checker.Pos).
type lockPartial struct {
	an          *checker.Findings
	malformed   *checker.Firsts[string]
	lostSamples *checker.Firsts[map[string]any]
	counts      map[string]int
	fences      map[string]int

	locks, holds, dh, afterLoss, afterClock, afterPower, unexplained, inFault, waitSat int
	regressions, anothers, lost, lostAfterFault, faults                                int

	// defined are the tokens its acquires used, wanted those its releases
	// looked up without an acquire here (checker.SharedNames); defs the
	// acquires of shared tokens (lockNames.shared).
	defined, wanted map[string]bool
	defs            map[string]*lockToken
}

func (l lockChecker) newPartial() *lockPartial {
	return &lockPartial{an: checker.NewFindings(l.o.MaxExamples), malformed: checker.NewFirsts[string](l.o.MaxExamples),
		lostSamples: checker.NewFirsts[map[string]any](l.o.MaxExamples), counts: map[string]int{}, fences: map[string]int{},
		defined: map[string]bool{}, wanted: map[string]bool{}, defs: map[string]*lockToken{}}
}

// merge adds q, a partial of other locks, to p.
func (p *lockPartial) merge(q *lockPartial) {
	p.an.Merge(q.an)
	p.malformed.Merge(q.malformed)
	p.lostSamples.Merge(q.lostSamples)
	for k, n := range q.counts {
		p.counts[k] += n
	}
	for k, n := range q.fences {
		p.fences[k] += n
	}
	p.locks += q.locks
	p.holds += q.holds
	p.dh += q.dh
	p.afterLoss += q.afterLoss
	p.afterClock += q.afterClock
	p.afterPower += q.afterPower
	p.unexplained += q.unexplained
	p.inFault += q.inFault
	p.waitSat += q.waitSat
	p.regressions += q.regressions
	p.anothers += q.anothers
	p.lost += q.lost
	p.lostAfterFault += q.lostAfterFault
	// The fault windows are run-wide: every partition has them all.
	p.faults = q.faults
	p.defined, p.wanted, p.defs = nil, nil, nil
}

// The passes of the lock checker over a history, in the order it makes
// them (checker.Pos.Phase).
const (
	lockScan      = iota // the calls, by index
	lockReleases         // the releases, by invocation time (then index)
	lockClearAcqs        // the cleared locks by name, their acquires by index
	lockClearRels        // the releases, by invocation time
	lockLocks            // the locks, by name
	lockAnothers         // the releases, by invocation time
	lockLostHolds        // the releases, by invocation time
)

// analyze is the lock checker's pass over the calls of in; an error is a
// history that cannot be paired.
func (l lockChecker) analyze(in *checker.History, names lockNames) (*lockPartial, error) {
	calls, err := l.o.Calls(in)
	if err != nil {
		return nil, err
	}
	part := l.newPartial()
	var seq int64 // the order of the findings: the whole's within a lock
	scanAt := func(c *checker.Call) checker.Pos { return checker.Pos{Phase: lockScan, At: c.Inv.Index} }
	// A release's place: by invocation time, then index (releases are
	// taken sorted by start, stably).
	relAt := func(phase int, r *checker.Call) checker.Pos {
		return checker.Pos{Phase: phase, At: r.Start, Seq: r.Inv.Index}
	}
	lockAt := func(k string) checker.Pos { seq++; return checker.Pos{Phase: lockLocks, Key: k, Seq: seq} }
	an := part.an
	badAt := func(p checker.Pos, c *checker.Call, what string) {
		part.malformed.Add(p, fmt.Sprintf("op %d (%s %s): %s", c.Inv.Index, c.Inv.F, c.Inv.Key, what))
	}
	bad := func(c *checker.Call, what string) { badAt(scanAt(c), c, what) }
	readValue := checker.DecodeJSON[Value]
	counts := part.counts
	// token is what the other partitions know of a token, nil: nothing.
	token := func(tok string) *lockToken { return names.tokens[tok] }
	define := func(tok string, index int64, readable bool) {
		part.defined[tok] = true
		if names.shared[checker.NameHash(tok)] {
			d := &lockToken{owner: -1, skipped: !readable}
			if readable {
				d.owner = index
			}
			if o := part.defs[tok]; o == nil {
				part.defs[tok] = d
			} else {
				o.join(d)
			}
		}
	}
	byToken := map[string]*lockAcq{}
	acqs := map[string][]*lockAcq{} // by key
	var releases []*checker.Call
	clears := map[string]*checker.Call{} // the earliest clear of each lock
	garbageRelease := map[*checker.Call]bool{}
	skippedToken := map[string]bool{} // tokens of acquires that could not be read
	indexes := map[int64]bool{}
	for i := range calls {
		c := &calls[i]
		if why := c.Misordered(indexes); why != "" {
			bad(c, why)
			continue
		}
		v, ok := readValue(c.Inv.Value)
		switch c.Inv.Name() {
		case Clear:
			counts["clears"]++
			if k := clears[c.Inv.Key]; k == nil || c.Start < k.Start {
				clears[c.Inv.Key] = c
			}
			continue
		case Acquire:
			counts["acquires"]++
			counts["acquires_"+c.Outcome().String()]++
			switch {
			case !ok || v.Token == "":
				bad(c, "no token")
				continue
			case v.TTLms <= 0:
				define(v.Token, c.Inv.Index, false)
				bad(c, fmt.Sprintf("ttl %d ms is not above 0", v.TTLms))
				skippedToken[v.Token] = true
				continue
			case byToken[v.Token] != nil:
				bad(c, fmt.Sprintf("token %q was used by op %d too: tokens are unique per acquisition", v.Token, byToken[v.Token].c.Inv.Index))
				continue
			case token(v.Token) != nil && token(v.Token).owner != c.Inv.Index:
				// Another partition's acquire used it first.
				bad(c, fmt.Sprintf("token %q was used by op %d too: tokens are unique per acquisition", v.Token, token(v.Token).owner))
				continue
			}
			define(v.Token, c.Inv.Index, true)
			a := &lockAcq{c: c, v: v}
			byToken[v.Token] = a
			acqs[c.Inv.Key] = append(acqs[c.Inv.Key], a)
			if !c.OK() {
				continue
			}
			out, ok := readValue(c.Comp.Value)
			var fence int64
			if ok {
				fence, ok = strictInt(out.Fence)
			}
			switch {
			case !ok || fence < 1:
				an.Garbage(scanAt(c), c, "an acknowledged acquire's fence must be an integer above 0")
			case out.Token != "" && out.Token != v.Token:
				an.Garbage(scanAt(c), c, fmt.Sprintf("the acquire of token %q was acknowledged for token %q", v.Token, out.Token))
			default:
				a.fence, a.certain = fence, true
				a.from, a.to = c.End, c.Start+v.TTLms*1e6-int64(lockExpirySlack)
			}
		case Release:
			counts["releases"]++
			switch {
			case c.OK():
				counts["releases_ok"]++
			case c.Failed() && c.Comp.ErrorText() == NotOwner:
				counts["releases_not_owner"]++
			case c.Failed():
				counts["releases_fail"]++
			default:
				counts["releases_info"]++
			}
			switch {
			case !ok || v.Token == "":
				bad(c, "no token")
				continue
			case v.HoldMs < 0:
				bad(c, fmt.Sprintf("hold %d ms is below 0", v.HoldMs))
				continue
			}
			if c.OK() {
				if out, ok := readValue(c.Comp.Value); !ok || out.Token != v.Token {
					an.Garbage(scanAt(c), c, "a release's reply must be 1 (deleted) or 0 (not the owner)")
					garbageRelease[c] = true // it still ends its hold
				}
			}
			releases = append(releases, c)
			part.wanted[v.Token] = true
		default:
			bad(c, "not an op of the lock workload")
		}
	}
	// Releases end their token's hold: sent no earlier than invocation
	// plus hold (and no later than the completion); a release never sent
	// ends it at its invocation (the run ended during the hold).
	slices.SortStableFunc(releases, func(a, b *checker.Call) int { return cmp.Compare(a.Start, b.Start) })
	for _, r := range releases {
		v, _ := readValue(r.Inv.Value)
		a := byToken[v.Token]
		if skippedToken[v.Token] || token(v.Token) != nil && token(v.Token).skipped {
			continue
		}
		if a != nil && a.c.Inv.Key == r.Inv.Key && r.Start < a.c.End {
			// Its worker sends a release only once the acquire has
			// completed: this history contradicts itself.
			badAt(relAt(lockReleases, r), r, fmt.Sprintf("released before its acquire (op %d) completed", a.c.Inv.Index))
			garbageRelease[r] = true // judged no further
			continue
		}
		if garbageRelease[r] {
			if a != nil && !a.released && a.c.Inv.Key == r.Inv.Key {
				a.released = true
				a.to = min(a.to, min(r.Start+v.HoldMs*1e6, r.End))
			}
			continue
		}
		if a == nil || a.c.Inv.Key != r.Inv.Key {
			if r.OK() {
				an.Add(relAt(lockReleases, r), "released-unacquired", map[string]any{"index": r.Inv.Index, "key": r.Inv.Key, "token": v.Token,
					"why": "no acquire of this lock used the token"})
			}
			continue
		}
		if r.OK() && a.c.Failed() {
			an.Add(relAt(lockReleases, r), "released-unacquired", map[string]any{"index": r.Inv.Index, "key": r.Inv.Key, "token": v.Token, "acquire": a.c.Inv.Index,
				"why": "the token's acquire certainly failed"})
		}
		if a.released {
			continue
		}
		a.released = true
		end := r.Start
		if r.Comp == nil || r.Comp.ErrorText() != NotSent {
			end = min(r.Start+v.HoldMs*1e6, r.End)
		}
		if a.certain {
			a.to = min(a.to, end)
		}
	}
	// A clear (DEL of the lock once traffic has ended) ends every hold of
	// its lock; a lock op invoked after it contradicts the workload (and
	// an early clear would hide holds): unknown.
	clearedKeys := make([]string, 0, len(clears))
	for k := range clears {
		clearedKeys = append(clearedKeys, k)
	}
	slices.Sort(clearedKeys) // malformed lists the same way every time
	for _, k := range clearedKeys {
		cl := clears[k]
		for _, a := range acqs[k] {
			if a.c.Start > cl.Start {
				badAt(checker.Pos{Phase: lockClearAcqs, Key: k, At: a.c.Inv.Index}, a.c, fmt.Sprintf("acquired after the lock was cleared (op %d) at the end", cl.Inv.Index))
				a.certain = false
			} else if a.certain {
				a.to = min(a.to, cl.Start)
			}
		}
	}
	for _, r := range releases {
		if cl := clears[r.Inv.Key]; cl != nil && r.Start > cl.Start {
			badAt(relAt(lockClearRels, r), r, fmt.Sprintf("released after the lock was cleared (op %d) at the end", cl.Inv.Index))
			garbageRelease[r] = true
		}
	}
	windows := in.Windows()
	addrs := in.NodeAddrs()
	keys := make([]string, 0, len(acqs))
	for k := range acqs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	holds, dh, afterLoss, afterClock, afterPower, unexplained, inFault, waitSat := 0, 0, 0, 0, 0, 0, 0, 0
	fenceClasses := map[string]int{}
	regressions := 0
	for _, k := range keys {
		var hs []*lockAcq
		for _, a := range acqs[k] {
			if a.certain {
				hs = append(hs, a)
			}
		}
		slices.SortStableFunc(hs, func(a, b *lockAcq) int { return cmp.Compare(a.from, b.from) })
		// Mutual exclusion: each hold against the earlier ones still held.
		var active []*lockAcq
		for _, b := range hs {
			if b.to <= b.from {
				continue // no certain hold: expired or released before it was known
			}
			holds++
			active = slices.DeleteFunc(active, func(a *lockAcq) bool { return a.to <= b.from })
			for _, a := range active {
				dh++
				class := "unexplained"
				w := checker.ClassifyWait(a.c.Wait())
				if w == checker.WaitSatisfied {
					waitSat++
				}
				fault := checker.FaultOver(windows, a.from, min(a.to, b.to))
				if fault != "" {
					inFault++
				}
				demoted := checker.FaultOnNode(windows, addrs, a.c.Comp.Node, a.from, b.c.End)
				clock := checker.ClockFaultOnNode(windows, addrs, a.from, b.c.End, a.c.Comp.Node, b.c.Comp.Node)
				power := checker.PowerFaultOnNode(windows, addrs, a.from, b.c.End, a.c.Comp.Node)
				switch {
				case w != checker.WaitSatisfied && demoted != "" && b.c.Comp.Node != "" && b.c.Comp.Node != a.c.Comp.Node:
					class = "after-failover-loss"
					afterLoss++
				case power != "":
					// The node that granted the first lost it on restart:
					// it had not fsynced it (documented).
					class = "after-power-loss"
					afterPower++
				case clock != "":
					// The lock's ttl runs on the clock of the node that
					// holds it: moved forward, it expires the lock early.
					class = "after-clock-fault"
					afterClock++
				default:
					unexplained++
				}
				ex := map[string]any{"index": b.c.Inv.Index, "key": k, "first": a.c.Inv.Index, "second": b.c.Inv.Index,
					"first_token": a.v.Token, "second_token": b.v.Token, "first_node": a.c.Comp.Node, "second_node": b.c.Comp.Node,
					"overlap_ms": checker.Ms(min(a.to, b.to) - b.from), "classification": class, "first_wait": w.String()}
				if fault != "" {
					ex["fault"] = fault
				}
				if demoted != "" {
					ex["first_node_fault"] = demoted
				}
				if clock != "" {
					ex["clock_fault"] = clock
				}
				an.Add(lockAt(k), "double-hold", ex)
			}
			active = append(active, b)
		}
		// Fencing: in acquisition order (one completed before the other
		// began) fences rise; no two acquires share one. A regression is
		// classified as a double hold is: the fence's INCR lost with the
		// node that acknowledged the first (a failover without a satisfied
		// WAIT, to another node; or a power cut of it), else unexplained.
		fenceClass := func(ex map[string]any, a, b *lockAcq) map[string]any {
			class := "unexplained"
			demoted := checker.FaultOnNode(windows, addrs, a.c.Comp.Node, a.c.End, b.c.End)
			switch {
			case checker.ClassifyWait(a.c.Wait()) != checker.WaitSatisfied && demoted != "" && b.c.Comp.Node != "" && b.c.Comp.Node != a.c.Comp.Node:
				class = "after-failover-loss"
			case checker.PowerFaultOnNode(windows, addrs, a.c.End, b.c.End, a.c.Comp.Node) != "":
				class = "after-power-loss"
			}
			fenceClasses[class]++
			ex["classification"] = class
			return ex
		}
		seen := map[int64]*lockAcq{}
		for _, b := range hs {
			if a := seen[b.fence]; a != nil {
				regressions++
				an.Add(lockAt(k), "fence-regression", fenceClass(map[string]any{"index": b.c.Inv.Index, "key": k, "first": a.c.Inv.Index, "second": b.c.Inv.Index,
					"first_fence": a.fence, "second_fence": b.fence, "why": "two acquires got the same fence"}, a, b))
				continue
			}
			seen[b.fence] = b
		}
		byEnd := slices.Clone(hs)
		slices.SortStableFunc(byEnd, func(a, b *lockAcq) int { return cmp.Compare(a.c.End, b.c.End) })
		byStart := slices.Clone(hs)
		slices.SortStableFunc(byStart, func(a, b *lockAcq) int { return cmp.Compare(a.c.Start, b.c.Start) })
		var top *lockAcq
		p := 0
		for _, b := range byStart {
			for p < len(byEnd) && byEnd[p].c.End < b.c.Start {
				if top == nil || byEnd[p].fence > top.fence {
					top = byEnd[p]
				}
				p++
			}
			if top != nil && b.fence < top.fence {
				regressions++
				an.Add(lockAt(k), "fence-regression", fenceClass(map[string]any{"index": b.c.Inv.Index, "key": k, "first": top.c.Inv.Index, "second": b.c.Inv.Index,
					"first_fence": top.fence, "second_fence": b.fence, "why": "an acquire begun after another completed got a lower fence"}, top, b))
			}
		}
	}
	// Releases that deleted a lock that was certainly no longer theirs.
	anothers := 0
	for _, r := range releases {
		v, _ := readValue(r.Inv.Value)
		a := byToken[v.Token]
		if !r.OK() || garbageRelease[r] || a == nil || !a.certain || a.c.Inv.Key != r.Inv.Key || a.c.End+a.v.TTLms*1e6+int64(lockExpirySlack) >= r.Start {
			continue
		}
		for _, b := range acqs[r.Inv.Key] {
			if b != a && b.certain && b.c.Start > a.c.End && b.c.End < r.Start {
				anothers++
				an.Add(relAt(lockAnothers, r), "released-anothers-lock", map[string]any{"index": r.Inv.Index, "key": r.Inv.Key, "token": v.Token,
					"acquire": a.c.Inv.Index, "other_acquire": b.c.Inv.Index,
					"why": "the release deleted after its lock had expired and another client had acquired it"})
				break
			}
		}
	}
	// Locks gone while still certainly held: the holder's release found
	// another token or none before the ttl could have run out (reported,
	// not judged: no second holder is proven; a double-hold is).
	lost, lostAfterFault := 0, 0
	firstRelease := map[string]bool{}
	for _, r := range releases {
		v, _ := readValue(r.Inv.Value)
		a := byToken[v.Token]
		if garbageRelease[r] || a == nil || a.c.Inv.Key != r.Inv.Key || firstRelease[v.Token] {
			continue
		}
		firstRelease[v.Token] = true
		if !a.certain || !r.Failed() || r.Comp.ErrorText() != NotOwner || r.End >= a.c.Start+a.v.TTLms*1e6-int64(lockExpirySlack) {
			continue
		}
		lost++
		ex := map[string]any{"index": r.Inv.Index, "key": r.Inv.Key, "token": v.Token, "acquire": a.c.Inv.Index, "node": a.c.Comp.Node,
			"ttl_left_ms": checker.Ms(a.c.Start + a.v.TTLms*1e6 - r.End)}
		if f := checker.FaultOnNode(windows, addrs, a.c.Comp.Node, a.from, r.End); f != "" {
			lostAfterFault++
			ex["fault"] = f
		}
		part.lostSamples.Add(relAt(lockLostHolds, r), ex)
	}
	part.locks, part.holds, part.dh, part.afterLoss, part.afterClock, part.afterPower = len(keys), holds, dh, afterLoss, afterClock, afterPower
	part.unexplained, part.inFault, part.waitSat, part.fences = unexplained, inFault, waitSat, fenceClasses
	part.regressions, part.anothers, part.lost, part.lostAfterFault, part.faults = regressions, anothers, lost, lostAfterFault, len(windows)
	return part, nil
}

// verdict is the result of the lock checker on what it found, of the
// whole history or merged from its partitions.
func (l lockChecker) verdict(p *lockPartial) checker.Result {
	an := p.an.Recorder()
	fig := &Figures{SkippedMalformed: p.malformed.Count()}
	malformed := p.malformed.Items()
	counts, fenceClasses := p.counts, p.fences
	lost, lostAfterFault, dh, afterLoss, afterClock, afterPower := p.lost, p.lostAfterFault, p.dh, p.afterLoss, p.afterClock, p.afterPower
	unexplained, inFault, waitSat, holds, nlocks := p.unexplained, p.inFault, p.waitSat, p.holds, p.locks
	fig.LostWhileHeld, fig.LostWhileHeldAfterFault = lost, lostAfterFault
	if lost > 0 {
		fig.LostWhileHeldSamples = p.lostSamples.Items()
	}
	fig.Acquires, fig.AcquiresOK, fig.AcquiresFail, fig.AcquiresInfo = counts["acquires"], counts["acquires_ok"], counts["acquires_fail"], counts["acquires_info"]
	fig.Releases, fig.ReleasesOK, fig.ReleasesNotOwner = counts["releases"], counts["releases_ok"], counts["releases_not_owner"]
	fig.ReleasesFail, fig.ReleasesInfo, fig.Clears = counts["releases_fail"], counts["releases_info"], counts["clears"]
	fig.Locks, fig.Holds = nlocks, holds
	fig.DoubleHolds, fig.DoubleHoldsAfterFailoverLoss, fig.DoubleHoldsUnexplained = dh, afterLoss, unexplained
	fig.DoubleHoldsAfterClockFault, fig.DoubleHoldsAfterPowerLoss = afterClock, afterPower
	fig.DoubleHoldsInFaultWindow, fig.DoubleHoldsWaitSatisfied = inFault, waitSat
	fig.FenceRegressions, fig.ReleasedAnothersLock = p.regressions, p.anothers
	fig.FenceRegressionsAfterFailoverLoss = fenceClasses["after-failover-loss"]
	fig.FenceRegressionsAfterPowerLoss = fenceClasses["after-power-loss"]
	fig.FenceRegressionsUnexplained = fenceClasses["unexplained"]
	fig.Faults = p.faults
	fig.Anomalies = an.Figure()
	if n := an.Total(); n > 0 {
		fig.AnomalyTypes = slices.Clone(an.Classes())
		w := an.Describe()
		if dh > 0 {
			w = fmt.Sprintf("the lock was handed out twice: %d double-holds (%d after-failover-loss: acknowledged by a primary a fault then struck, "+
				"WAIT not satisfied, taken again on another node, as Redis Cluster's asynchronous replication allows; %s%d unexplained; "+
				"%d within a fault window; %d whose first acquire had a satisfied WAIT); ", dh, afterLoss, clockWords(afterClock)+powerWords(afterPower), unexplained, inFault, waitSat) + w
		}
		fig.Malformed = malformed
		fig.Reason = w
		return checker.Result{Valid: checker.Invalid, Figures: fig}
	}
	if len(malformed) > 0 {
		fig.Malformed = malformed
		w := fmt.Sprintf("%d lock ops cannot be judged (first: %s): what they held is unknown", fig.SkippedMalformed, malformed[0])
		fig.Reason, fig.Error = w, w
		return checker.Result{Valid: checker.Unknown, Figures: fig}
	}
	if counts["acquires_ok"] == 0 {
		w := "no acquire was acknowledged: no hold to judge"
		if counts["acquires"] == 0 {
			w = "no acquire was sent: no hold to judge"
		}
		fig.Reason, fig.Error = w, w
		return checker.Result{Valid: checker.Unknown, Figures: fig}
	}
	fig.Reason = fmt.Sprintf("%d certain holds of %d locks, none overlapping; fences rose; no release deleted another's lock", holds, nlocks)
	if lost > 0 {
		fig.Reason = fmt.Sprintf("%s; %d locks were gone before their ttl while held (%d after a fault on the node that granted them; reported, not judged: no second holder was seen)",
			fig.Reason, lost, lostAfterFault)
	}
	return checker.Result{Valid: checker.Valid, Figures: fig}
}

// strictInt reads a JSON integer (no float, no string).
func strictInt(raw json.RawMessage) (int64, bool) { return history.ParseInt(raw) }

// clockWords says how many double holds a clock fault explains, "" for
// none (the words of runs without one stay as they were).
func clockWords(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d after-clock-fault: a clock fault struck the node that held the lock, whose ttl runs on that node's clock (documented); ", n)
}

// powerWords says how many double holds a power cut explains, "" for none.
func powerWords(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d after-power-loss: the node that granted the first lost the lock when its power was cut, as it had not fsynced it (documented); ", n)
}
