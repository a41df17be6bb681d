package checker

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redline-dev/redline/history"
)

// The lock workload's op values and errors (workloads/lock.go writes
// them; the checker reads them).
const (
	// LockHeld: an acquire refused because the lock was taken (SET NX
	// answered nil): certainly not acquired.
	LockHeld = "lock-held"
	// LockNotOwner: a release whose compare-and-delete found another
	// token (or none): certainly deleted nothing.
	LockNotOwner = "not-owner"
	// LockNotSent: a release never sent, because the run ended during its
	// hold.
	LockNotSent = "not-sent"
)

// The lock workload's ops, by their "f" (workloads/lock.go writes them).
const (
	// LockAcquire takes the lock (SET NX PX) with a unique token.
	LockAcquire = "acquire"
	// LockRelease deletes the lock if it still holds the token.
	LockRelease = "release"
	// LockClear deletes the lock once traffic has ended.
	LockClear = "clear"
)

// LockValue is the value of a lock op: an acquire's invocation carries
// Token and TTLms, its ok completion also Fence; a release's invocation
// carries Token and HoldMs (the release is sent HoldMs after its
// invocation: the hold's end), its ok completion the same value.
type LockValue struct {
	Token  string          `json:"token"`
	TTLms  int64           `json:"ttl_ms,omitempty"`
	HoldMs int64           `json:"hold_ms,omitempty"`
	Fence  json.RawMessage `json:"fence,omitempty"`
}

type lockChecker struct{ o Scope }

// lockExpirySlack widens a lock's expiry both ways: a server counts the
// ttl from its own clock in whole milliseconds (Redis: mstime() + ttl, up
// to 1 ms before the exact instant), so a hold is only certain until 5 ms
// before its invocation plus ttl, and an expiry only certain 5 ms after
// its completion plus ttl.
const lockExpirySlack = 5 * time.Millisecond

// Lock judges a history of the lock workload: clients take a lock with
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
//     from the first acquisition to the second. Otherwise unexplained.
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
func Lock(opts ...Scope) Checker { return lockChecker{firstScope(opts)} }

func (l lockChecker) Name() string { return l.o.name("lock") }

// lockAcq is an acquire with its hold.
type lockAcq struct {
	c        *call
	v        LockValue
	fence    int64
	certain  bool // acknowledged with a readable fence
	from, to int64
	released bool // a release of its token ended the hold
}

func (l lockChecker) Check(_ context.Context, in *History) Result {
	calls, err := l.o.calls(in)
	if err != nil {
		return invalidHistory(err)
	}
	an := newAnomalies(l.o.MaxExamples)
	fig := map[string]any{}
	var malformed []string
	bad := func(c *call, what string) {
		if len(malformed) < l.o.MaxExamples {
			malformed = append(malformed, fmt.Sprintf("op %d (%s %s): %s", c.inv.Index, c.inv.F, c.inv.Key, what))
		}
		fig["skipped_malformed"] = toInt(fig["skipped_malformed"]) + 1
	}
	readValue := decodeJSON[LockValue]
	counts := map[string]int{}
	byToken := map[string]*lockAcq{}
	acqs := map[string][]*lockAcq{} // by key
	var releases []*call
	clears := map[string]*call{} // the earliest clear of each lock
	garbageRelease := map[*call]bool{}
	skippedToken := map[string]bool{} // tokens of acquires that could not be read
	indexes := map[int64]bool{}
	for i := range calls {
		c := &calls[i]
		if why := misordered(c, indexes); why != "" {
			bad(c, why)
			continue
		}
		v, ok := readValue(c.inv.Value)
		switch c.inv.F {
		case LockClear:
			counts["clears"]++
			if k := clears[c.inv.Key]; k == nil || c.start < k.start {
				clears[c.inv.Key] = c
			}
			continue
		case LockAcquire:
			counts["acquires"]++
			counts["acquires_"+c.outcome().String()]++
			switch {
			case !ok || v.Token == "":
				bad(c, "no token")
				continue
			case v.TTLms <= 0:
				bad(c, fmt.Sprintf("ttl %d ms is not above 0", v.TTLms))
				skippedToken[v.Token] = true
				continue
			case byToken[v.Token] != nil:
				bad(c, fmt.Sprintf("token %q was used by op %d too: tokens are unique per acquisition", v.Token, byToken[v.Token].c.inv.Index))
				continue
			}
			a := &lockAcq{c: c, v: v}
			byToken[v.Token] = a
			acqs[c.inv.Key] = append(acqs[c.inv.Key], a)
			if !c.ok() {
				continue
			}
			out, ok := readValue(c.comp.Value)
			var fence int64
			if ok {
				fence, ok = strictInt(out.Fence)
			}
			switch {
			case !ok || fence < 1:
				an.garbage(c, "an acknowledged acquire's fence must be an integer above 0")
			case out.Token != "" && out.Token != v.Token:
				an.garbage(c, fmt.Sprintf("the acquire of token %q was acknowledged for token %q", v.Token, out.Token))
			default:
				a.fence, a.certain = fence, true
				a.from, a.to = c.end, c.start+v.TTLms*1e6-int64(lockExpirySlack)
			}
		case LockRelease:
			counts["releases"]++
			switch {
			case c.ok():
				counts["releases_ok"]++
			case c.failed() && c.comp.ErrorText() == LockNotOwner:
				counts["releases_not_owner"]++
			case c.failed():
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
			if c.ok() {
				if out, ok := readValue(c.comp.Value); !ok || out.Token != v.Token {
					an.garbage(c, "a release's reply must be 1 (deleted) or 0 (not the owner)")
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
	slices.SortStableFunc(releases, func(a, b *call) int { return cmp.Compare(a.start, b.start) })
	for _, r := range releases {
		v, _ := readValue(r.inv.Value)
		a := byToken[v.Token]
		if skippedToken[v.Token] {
			continue
		}
		if a != nil && a.c.inv.Key == r.inv.Key && r.start < a.c.end {
			// Its worker sends a release only once the acquire has
			// completed: this history contradicts itself.
			bad(r, fmt.Sprintf("released before its acquire (op %d) completed", a.c.inv.Index))
			garbageRelease[r] = true // judged no further
			continue
		}
		if garbageRelease[r] {
			if a != nil && !a.released && a.c.inv.Key == r.inv.Key {
				a.released = true
				a.to = min(a.to, min(r.start+v.HoldMs*1e6, r.end))
			}
			continue
		}
		if a == nil || a.c.inv.Key != r.inv.Key {
			if r.ok() {
				an.add("released-unacquired", map[string]any{"index": r.inv.Index, "key": r.inv.Key, "token": v.Token,
					"why": "no acquire of this lock used the token"})
			}
			continue
		}
		if r.ok() && a.c.failed() {
			an.add("released-unacquired", map[string]any{"index": r.inv.Index, "key": r.inv.Key, "token": v.Token, "acquire": a.c.inv.Index,
				"why": "the token's acquire certainly failed"})
		}
		if a.released {
			continue
		}
		a.released = true
		end := r.start
		if r.comp == nil || r.comp.ErrorText() != LockNotSent {
			end = min(r.start+v.HoldMs*1e6, r.end)
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
			if a.c.start > cl.start {
				bad(a.c, fmt.Sprintf("acquired after the lock was cleared (op %d) at the end", cl.inv.Index))
				a.certain = false
			} else if a.certain {
				a.to = min(a.to, cl.start)
			}
		}
	}
	for _, r := range releases {
		if cl := clears[r.inv.Key]; cl != nil && r.start > cl.start {
			bad(r, fmt.Sprintf("released after the lock was cleared (op %d) at the end", cl.inv.Index))
			garbageRelease[r] = true
		}
	}
	windows := in.windowsOf()
	addrs := in.nodeAddrsOf()
	keys := make([]string, 0, len(acqs))
	for k := range acqs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	holds, dh, afterLoss, unexplained, inFault, waitSat := 0, 0, 0, 0, 0, 0
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
				w := ClassifyWait(a.c.wait())
				if w == WaitSatisfied {
					waitSat++
				}
				fault := faultOver(windows, a.from, min(a.to, b.to))
				if fault != "" {
					inFault++
				}
				demoted := lockNodeStruck(windows, addrs, a.c.comp.Node, a.from, b.c.end)
				if w != WaitSatisfied && demoted != "" && b.c.comp.Node != "" && b.c.comp.Node != a.c.comp.Node {
					class = "after-failover-loss"
					afterLoss++
				} else {
					unexplained++
				}
				ex := map[string]any{"index": b.c.inv.Index, "key": k, "first": a.c.inv.Index, "second": b.c.inv.Index,
					"first_token": a.v.Token, "second_token": b.v.Token, "first_node": a.c.comp.Node, "second_node": b.c.comp.Node,
					"overlap_ms": ms(min(a.to, b.to) - b.from), "classification": class, "first_wait": w.String()}
				if fault != "" {
					ex["fault"] = fault
				}
				if demoted != "" {
					ex["first_node_fault"] = demoted
				}
				an.add("double-hold", ex)
			}
			active = append(active, b)
		}
		// Fencing: in acquisition order (one completed before the other
		// began) fences rise; no two acquires share one.
		seen := map[int64]*lockAcq{}
		for _, b := range hs {
			if a := seen[b.fence]; a != nil {
				regressions++
				an.add("fence-regression", map[string]any{"index": b.c.inv.Index, "key": k, "first": a.c.inv.Index, "second": b.c.inv.Index,
					"first_fence": a.fence, "second_fence": b.fence, "why": "two acquires got the same fence"})
				continue
			}
			seen[b.fence] = b
		}
		byEnd := slices.Clone(hs)
		slices.SortStableFunc(byEnd, func(a, b *lockAcq) int { return cmp.Compare(a.c.end, b.c.end) })
		byStart := slices.Clone(hs)
		slices.SortStableFunc(byStart, func(a, b *lockAcq) int { return cmp.Compare(a.c.start, b.c.start) })
		var top *lockAcq
		p := 0
		for _, b := range byStart {
			for p < len(byEnd) && byEnd[p].c.end < b.c.start {
				if top == nil || byEnd[p].fence > top.fence {
					top = byEnd[p]
				}
				p++
			}
			if top != nil && b.fence < top.fence {
				regressions++
				an.add("fence-regression", map[string]any{"index": b.c.inv.Index, "key": k, "first": top.c.inv.Index, "second": b.c.inv.Index,
					"first_fence": top.fence, "second_fence": b.fence, "why": "an acquire begun after another completed got a lower fence"})
			}
		}
	}
	// Releases that deleted a lock that was certainly no longer theirs.
	anothers := 0
	for _, r := range releases {
		v, _ := readValue(r.inv.Value)
		a := byToken[v.Token]
		if !r.ok() || garbageRelease[r] || a == nil || !a.certain || a.c.inv.Key != r.inv.Key || a.c.end+a.v.TTLms*1e6+int64(lockExpirySlack) >= r.start {
			continue
		}
		for _, b := range acqs[r.inv.Key] {
			if b != a && b.certain && b.c.start > a.c.end && b.c.end < r.start {
				anothers++
				an.add("released-anothers-lock", map[string]any{"index": r.inv.Index, "key": r.inv.Key, "token": v.Token,
					"acquire": a.c.inv.Index, "other_acquire": b.c.inv.Index,
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
		v, _ := readValue(r.inv.Value)
		a := byToken[v.Token]
		if garbageRelease[r] || a == nil || a.c.inv.Key != r.inv.Key || firstRelease[v.Token] {
			continue
		}
		firstRelease[v.Token] = true
		if !a.certain || !r.failed() || r.comp.ErrorText() != LockNotOwner || r.end >= a.c.start+a.v.TTLms*1e6-int64(lockExpirySlack) {
			continue
		}
		lost++
		ex := map[string]any{"index": r.inv.Index, "key": r.inv.Key, "token": v.Token, "acquire": a.c.inv.Index, "node": a.c.comp.Node,
			"ttl_left_ms": ms(a.c.start + a.v.TTLms*1e6 - r.end)}
		if f := lockNodeStruck(windows, addrs, a.c.comp.Node, a.from, r.end); f != "" {
			lostAfterFault++
			ex["fault"] = f
		}
		if len(lostSamples) < l.o.MaxExamples {
			lostSamples = append(lostSamples, ex)
		}
	}
	fig["lost_while_held"] = lost
	fig["lost_while_held_after_fault"] = lostAfterFault
	if lost > 0 {
		fig["lost_while_held_samples"] = lostSamples
	}
	for _, n := range []string{"acquires", "acquires_ok", "acquires_fail", "acquires_info", "releases", "releases_ok",
		"releases_not_owner", "releases_fail", "releases_info", "clears"} {
		fig[n] = counts[n]
	}
	fig["locks"] = len(keys)
	fig["holds"] = holds
	fig["double_holds"] = dh
	fig["double_holds_after_failover_loss"] = afterLoss
	fig["double_holds_unexplained"] = unexplained
	fig["double_holds_in_fault_window"] = inFault
	fig["double_holds_wait_satisfied"] = waitSat
	fig["fence_regressions"] = regressions
	fig["released_anothers_lock"] = anothers
	fig["faults"] = len(windows)
	an.into(fig)
	if n := an.total(); n > 0 {
		fig["anomaly_types"] = slices.Clone(an.order)
		w := an.describe()
		if dh > 0 {
			w = fmt.Sprintf("the lock was handed out twice: %d double-holds (%d after-failover-loss: acknowledged by a primary a fault then struck, "+
				"WAIT not satisfied, taken again on another node, as Redis Cluster's asynchronous replication allows; %d unexplained; "+
				"%d within a fault window; %d whose first acquire had a satisfied WAIT); ", dh, afterLoss, unexplained, inFault, waitSat) + w
		}
		if len(malformed) > 0 {
			fig["malformed"] = malformed
		}
		fig["why"] = w
		return Result{Valid: Invalid, Figures: Map(fig)}
	}
	if len(malformed) > 0 {
		fig["malformed"] = malformed
		w := fmt.Sprintf("%d lock ops cannot be judged (first: %s): what they held is unknown", toInt(fig["skipped_malformed"]), malformed[0])
		fig["why"], fig["error"] = w, w
		return Result{Valid: Unknown, Figures: Map(fig)}
	}
	if counts["acquires_ok"] == 0 {
		w := "no acquire was acknowledged: no hold to judge"
		if counts["acquires"] == 0 {
			w = "no acquire was sent: no hold to judge"
		}
		fig["why"], fig["error"] = w, w
		return Result{Valid: Unknown, Figures: Map(fig)}
	}
	fig["why"] = fmt.Sprintf("%d certain holds of %d locks, none overlapping; fences rose; no release deleted another's lock", holds, len(keys))
	if lost > 0 {
		fig["why"] = fmt.Sprintf("%s; %d locks were gone before their ttl while held (%d after a fault on the node that granted them; reported, not judged: no second holder was seen)",
			fig["why"], lost, lostAfterFault)
	}
	return Result{Valid: Valid, Figures: Map(fig)}
}

// faultOver names the first fault window overlapping [from, to], "" when
// none does.
func faultOver(ws []Window, from, to int64) string {
	for _, w := range ws {
		if w.Start <= to && w.End >= from {
			return fmt.Sprintf("%s %ss-%ss", w.Fault, trimS(sec(w.Start)), trimS(sec(w.End)))
		}
	}
	return ""
}

// lockNodeStruck names the first fault window, not a clock fault, that
// overlaps [from, to] and names node (by address, or by a name whose
// address is node): what may have demoted the primary that acknowledged
// a lock. "" when none does, or node is unknown.
func lockNodeStruck(ws []Window, addrs map[string]string, node string, from, to int64) string {
	if node == "" {
		return ""
	}
	for _, w := range ws {
		if strings.HasPrefix(w.Fault, "clock") || w.Start > to || w.End < from {
			continue
		}
		for _, n := range w.Nodes {
			if n == node || addrs[n] == node {
				return fmt.Sprintf("%s %ss-%ss on %s", w.Fault, trimS(sec(w.Start)), trimS(sec(w.End)), n)
			}
		}
	}
	return ""
}

// strictInt reads a JSON integer (no float, no string).
func strictInt(raw json.RawMessage) (int64, bool) { return history.ParseInt(raw) }

func toInt(v any) int {
	n, _ := v.(int)
	return n
}
