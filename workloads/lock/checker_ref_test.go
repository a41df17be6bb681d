package lock

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/redline-dev/redline/checker"
)

// refCheck is the lock checker's Check as it was before it judged slot
// partitions (commit 414be9f), kept to show that Check's results did not
// change: TestCheckAsBefore.
func (l lockChecker) refCheck(_ context.Context, in *checker.History) checker.Result {
	calls, err := l.o.Calls(in)
	if err != nil {
		return checker.InvalidHistory(err)
	}
	an := checker.NewAnomalyRecorder(l.o.MaxExamples)
	fig := &Figures{}
	var malformed []string
	bad := func(c *checker.Call, what string) {
		if len(malformed) < l.o.MaxExamples {
			malformed = append(malformed, fmt.Sprintf("op %d (%s %s): %s", c.Inv.Index, c.Inv.F, c.Inv.Key, what))
		}
		fig.SkippedMalformed++
	}
	readValue := checker.DecodeJSON[Value]
	counts := map[string]int{}
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
				bad(c, fmt.Sprintf("ttl %d ms is not above 0", v.TTLms))
				skippedToken[v.Token] = true
				continue
			case byToken[v.Token] != nil:
				bad(c, fmt.Sprintf("token %q was used by op %d too: tokens are unique per acquisition", v.Token, byToken[v.Token].c.Inv.Index))
				continue
			}
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
				an.Garbage(c, "an acknowledged acquire's fence must be an integer above 0")
			case out.Token != "" && out.Token != v.Token:
				an.Garbage(c, fmt.Sprintf("the acquire of token %q was acknowledged for token %q", v.Token, out.Token))
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
					an.Garbage(c, "a release's reply must be 1 (deleted) or 0 (not the owner)")
					garbageRelease[c] = true // it still ends its hold
				}
			}
			releases = append(releases, c)
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
		if skippedToken[v.Token] {
			continue
		}
		if a != nil && a.c.Inv.Key == r.Inv.Key && r.Start < a.c.End {
			// Its worker sends a release only once the acquire has
			// completed: this history contradicts itself.
			bad(r, fmt.Sprintf("released before its acquire (op %d) completed", a.c.Inv.Index))
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
				an.Add("released-unacquired", map[string]any{"index": r.Inv.Index, "key": r.Inv.Key, "token": v.Token,
					"why": "no acquire of this lock used the token"})
			}
			continue
		}
		if r.OK() && a.c.Failed() {
			an.Add("released-unacquired", map[string]any{"index": r.Inv.Index, "key": r.Inv.Key, "token": v.Token, "acquire": a.c.Inv.Index,
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
				bad(a.c, fmt.Sprintf("acquired after the lock was cleared (op %d) at the end", cl.Inv.Index))
				a.certain = false
			} else if a.certain {
				a.to = min(a.to, cl.Start)
			}
		}
	}
	for _, r := range releases {
		if cl := clears[r.Inv.Key]; cl != nil && r.Start > cl.Start {
			bad(r, fmt.Sprintf("released after the lock was cleared (op %d) at the end", cl.Inv.Index))
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
				an.Add("double-hold", ex)
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
				an.Add("fence-regression", fenceClass(map[string]any{"index": b.c.Inv.Index, "key": k, "first": a.c.Inv.Index, "second": b.c.Inv.Index,
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
				an.Add("fence-regression", fenceClass(map[string]any{"index": b.c.Inv.Index, "key": k, "first": top.c.Inv.Index, "second": b.c.Inv.Index,
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
				an.Add("released-anothers-lock", map[string]any{"index": r.Inv.Index, "key": r.Inv.Key, "token": v.Token,
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
	var lostSamples []map[string]any
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
		if len(lostSamples) < l.o.MaxExamples {
			lostSamples = append(lostSamples, ex)
		}
	}
	fig.LostWhileHeld, fig.LostWhileHeldAfterFault = lost, lostAfterFault
	if lost > 0 {
		fig.LostWhileHeldSamples = lostSamples
	}
	fig.Acquires, fig.AcquiresOK, fig.AcquiresFail, fig.AcquiresInfo = counts["acquires"], counts["acquires_ok"], counts["acquires_fail"], counts["acquires_info"]
	fig.Releases, fig.ReleasesOK, fig.ReleasesNotOwner = counts["releases"], counts["releases_ok"], counts["releases_not_owner"]
	fig.ReleasesFail, fig.ReleasesInfo, fig.Clears = counts["releases_fail"], counts["releases_info"], counts["clears"]
	fig.Locks, fig.Holds = len(keys), holds
	fig.DoubleHolds, fig.DoubleHoldsAfterFailoverLoss, fig.DoubleHoldsUnexplained = dh, afterLoss, unexplained
	fig.DoubleHoldsAfterClockFault, fig.DoubleHoldsAfterPowerLoss = afterClock, afterPower
	fig.DoubleHoldsInFaultWindow, fig.DoubleHoldsWaitSatisfied = inFault, waitSat
	fig.FenceRegressions, fig.ReleasedAnothersLock = regressions, anothers
	fig.FenceRegressionsAfterFailoverLoss = fenceClasses["after-failover-loss"]
	fig.FenceRegressionsAfterPowerLoss = fenceClasses["after-power-loss"]
	fig.FenceRegressionsUnexplained = fenceClasses["unexplained"]
	fig.Faults = len(windows)
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
	fig.Reason = fmt.Sprintf("%d certain holds of %d locks, none overlapping; fences rose; no release deleted another's lock", holds, len(keys))
	if lost > 0 {
		fig.Reason = fmt.Sprintf("%s; %d locks were gone before their ttl while held (%d after a fault on the node that granted them; reported, not judged: no second holder was seen)",
			fig.Reason, lost, lostAfterFault)
	}
	return checker.Result{Valid: checker.Valid, Figures: fig}
}
