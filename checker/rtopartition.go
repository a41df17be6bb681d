package checker

import (
	"context"
	"slices"
	"sort"
	"strings"

	"github.com/redline-dev/redline/history"
)

// The RTO checker judges a history given as slot partitions in two loads
// of each (issue 42). What makes it hard is that its outages depend on one
// another across partitions and windows:
//
//   - a shard spans many slots, so many partitions: its outage ends at its
//     first op a primary served, on any of its slots, invoked at or after
//     its last failure on any of them;
//   - a slot's failures count only once it recovered from the previous
//     fault (busy), which is a shard's recovery in an earlier window.
//
// Two facts make it bounded. First, a slot's failures in a window all
// count or none does: the last of them in start order counts when any
// does, and is then the slot's contribution to its shard's last failure.
// So the first load keeps of each window and slot only its last failure
// and its last told one (and of each key the same and its recovery, a key
// being in one partition), whatever busy turns out to be. Second, the
// shard's last failure is then one of its slots' last failures: the
// second load finds, for each of those times, the shard's first served op
// from it on (rtoFirsts). judge then walks the windows in order on these
// few numbers a window and slot, as Check walked the history.

// rtoAt is an op of the history as the RTO checker keeps it: its place in
// the whole history's start order (start, then rank: the order of the
// invocations), its completion (its invocation when it never completed,
// for a failure) and its index.
type rtoAt struct {
	start, rank, end, idx int64
}

// after says a comes after b in start order.
func (a rtoAt) after(b rtoAt) bool {
	return a.start > b.start || a.start == b.start && a.rank > b.rank
}

// rtoSlotFail is a slot's failures in one window (from its start to the
// next fault's): the last failed or indeterminate op, and the last that
// completed (told, when hasTold).
type rtoSlotFail struct {
	last, told rtoAt
	hasTold    bool
}

// rtoKeyFail is a key's failures in one window: the last, and the
// completion of the key's first op a primary served invoked at or after
// it (inf: none).
type rtoKeyFail struct {
	slot      int
	last      rtoAt
	recovered int64
}

// rtoOutage is one shard's outage in one window (judge).
type rtoOutage struct {
	last, told rtoAt // told.start is -1 when no failure was told
	hasTold    bool
	recovered  int64
}

// rtoWindowPart is what the calls of a history, or of one slot partition
// of it, say of one fault window.
type rtoWindowPart struct {
	// view is the window's shard view, of the slots these calls hold.
	view  shardView
	fails map[int]*rtoSlotFail
	keys  []rtoKeyFail
	// served counts the ops a primary served in the window, by shard.
	served   map[string]int
	keyCount windowKeyCount
}

// rtoPartial is what the calls of a history, or of one slot partition of
// it, say of every fault window, apart from which failures count.
type rtoPartial struct {
	calls   int
	windows []rtoWindowPart
}

// shardName is the shard of a slot in the window's view, "unknown" when no
// op had been served on the slot before.
func (v *shardView) shardName(slot int) string {
	if s := v.slotNode.node(slot); s != "" {
		return s
	}
	return "unknown"
}

// scanRTO reads calls, sorted by start, rank(i) giving the place of
// calls[i] in the whole history's start order, for each window: its view,
// each slot's and key's failures, the keys' recoveries, the ops served.
func scanRTO(calls []call, rank func(int) int64, windows []Window, runEnd int64, addrs map[string]string) *rtoPartial {
	p := &rtoPartial{calls: len(calls), windows: make([]rtoWindowPart, len(windows))}
	starts := make([]int64, len(calls))
	slots := make([]uint16, len(calls))
	for i := range calls {
		starts[i] = calls[i].start
		slots[i] = uint16(history.Keyslot(calls[i].inv.Key))
	}
	views := shardViews(calls, windows, addrs)
	// servedAt[key]: the positions of the key's served calls, ascending. A
	// key's outage recovers at its first served call from a position on:
	// found by a search rather than a scan on to the end of the history
	// for a key that is never served again.
	var servedAt map[string][]int32
	for wi, w := range windows {
		// A window's failures are looked for until the next fault starts;
		// the first success may come later.
		until := runEnd + 1
		for _, x := range windows {
			if x.Start > w.Start && x.Start < until {
				until = x.Start
			}
		}
		lo := sort.Search(len(starts), func(i int) bool { return starts[i] >= w.Start })
		hi := sort.Search(len(starts), func(i int) bool { return starts[i] >= until })
		pw := &p.windows[wi]
		pw.view = views[wi]
		pw.fails, pw.served = map[int]*rtoSlotFail{}, map[string]int{}
		keyAt := map[string]int{}
		for i := lo; i < hi; i++ {
			c := &calls[i]
			slot := int(slots[i])
			if c.servedByPrimary() {
				pw.served[pw.view.shardName(slot)]++
			}
			if c.served() {
				continue
			}
			end := c.end
			if end == inf {
				end = c.start
			}
			at := rtoAt{start: c.start, rank: rank(i), end: end, idx: c.index}
			f := pw.fails[slot]
			if f == nil {
				f = &rtoSlotFail{}
				pw.fails[slot] = f
			}
			f.last = at // in start order: the latest is the last
			if c.comp != nil {
				f.told, f.hasTold = at, true
			}
			k, seen := keyAt[c.inv.Key]
			if !seen {
				k = len(pw.keys)
				keyAt[c.inv.Key] = k
				pw.keys = append(pw.keys, rtoKeyFail{slot: slot, recovered: inf})
			}
			pw.keys[k].last = at
		}
		if len(keyAt) > 0 && servedAt == nil {
			servedAt = map[string][]int32{}
			for i := range calls {
				if calls[i].servedByPrimary() {
					k := calls[i].inv.Key
					servedAt[k] = append(servedAt[k], int32(i))
				}
			}
		}
		// A key's outage recovers at its first served call from lo on
		// that was invoked at or after its last failure.
		for key, ki := range keyAt {
			o := &pw.keys[ki]
			from := max(lo, sort.Search(len(starts), func(i int) bool { return starts[i] >= o.last.start }))
			at := servedAt[key]
			if j := sort.Search(len(at), func(j int) bool { return int(at[j]) >= from }); j < len(at) {
				o.recovered = calls[at[j]].end
			}
		}
		pw.keyCount = countWindowKeys(calls, lo, hi, &pw.view)
	}
	return p
}

// merge adds o, a partition's partial, to p's (nil: none yet): the
// partitions' slots and keys are apart. What it keeps is copied out of
// the partition (names: one copy of each node's name).
func (p *rtoPartial) merge(o *rtoPartial, names map[string]string) *rtoPartial {
	name := func(s string) string {
		n, ok := names[s]
		if !ok {
			n = strings.Clone(s)
			names[n] = n
		}
		return n
	}
	if p == nil {
		p = &rtoPartial{windows: make([]rtoWindowPart, len(o.windows))}
		for wi := range p.windows {
			v := &o.windows[wi].view // touched and mapped are run-wide
			touched := map[string]bool{}
			for n, t := range v.touched {
				touched[name(n)] = t
			}
			p.windows[wi] = rtoWindowPart{
				view:  shardView{slotNode: newSlotMap(), touched: touched, mapped: v.mapped},
				fails: map[int]*rtoSlotFail{}, served: map[string]int{},
				keyCount: windowKeyCount{mapped: true},
			}
		}
	}
	p.calls += o.calls
	for wi := range p.windows {
		a, b := &p.windows[wi], &o.windows[wi]
		b.view.slotNode.each(func(slot int, n string) {
			a.view.slotNode.set(slot, name(n))
		})
		for slot, f := range b.fails {
			a.fails[slot] = f
		}
		a.keys = append(a.keys, b.keys...)
		for n, c := range b.served {
			a.served[name(n)] += c
		}
		a.keyCount = a.keyCount.add(b.keyCount)
	}
	return p
}

// rtoFirsts is, for one window and shard, the times its slots last failed
// in the window (ascending), and for each the shard's first op a primary
// served invoked at or after it and before the next (set): the shard's
// recovery from any of those times is the first of them from there on.
type rtoFirsts struct {
	times []int64
	first []rtoAt
	set   []bool
}

// rtoRecoveries are the rtoFirsts of every window (by shard).
type rtoRecoveries struct {
	windows []map[string]*rtoFirsts
	any     bool
}

// recoveries are the times p's shards may have last failed at in each
// window, their first served ops not found yet (scan).
func (p *rtoPartial) recoveries() *rtoRecoveries {
	rec := &rtoRecoveries{windows: make([]map[string]*rtoFirsts, len(p.windows))}
	for wi := range p.windows {
		pw := &p.windows[wi]
		shards := map[string]*rtoFirsts{}
		for slot, f := range pw.fails {
			s := pw.view.shardName(slot)
			if shards[s] == nil {
				shards[s] = &rtoFirsts{}
			}
			shards[s].times = append(shards[s].times, f.last.start)
		}
		for _, f := range shards {
			slices.Sort(f.times)
			f.times = slices.Compact(f.times)
			f.first, f.set = make([]rtoAt, len(f.times)), make([]bool, len(f.times))
			rec.any = true
		}
		rec.windows[wi] = shards
	}
	return rec
}

// scan finds in calls (sorted by start, ranked as scanRTO's) the shards'
// first served ops of rec, keeping the earlier of each found before (in
// another partition). A shard's op a primary served counts from the
// earliest time of its window and shard on, and only until this
// partition's last served op on that shard's slots, or its op from the
// latest time on: later ones cannot come first. So each op is looked at
// by the outages in progress at its start.
func (rec *rtoRecoveries) scan(calls []call, rank func(int) int64, p *rtoPartial) {
	if !rec.any {
		return
	}
	// recovers says the call can end a shard's outage: a primary served
	// it, and it completed (an outage whose first served op never
	// completed waits for the next: Check read inf as not recovered).
	recovers := func(c *call) bool { return c.servedByPrimary() && c.end != inf }
	lastServed := map[int]int64{}
	for i := range calls {
		if c := &calls[i]; recovers(c) {
			s := history.Keyslot(c.inv.Key)
			if t, ok := lastServed[s]; !ok || c.start > t {
				lastServed[s] = c.start
			}
		}
	}
	type live struct {
		wi    int
		shard string
		f     *rtoFirsts
		until int64 // the last start of an op served on the shard's slots here
	}
	var pending []*live
	for wi, shards := range rec.windows {
		if len(shards) == 0 {
			continue
		}
		v := &p.windows[wi].view
		until := map[string]int64{}
		for slot, t := range lastServed {
			s := v.shardName(slot)
			if shards[s] == nil {
				continue
			}
			if u, ok := until[s]; !ok || t > u {
				until[s] = t
			}
		}
		for s, u := range until {
			if f := shards[s]; u >= f.times[0] {
				pending = append(pending, &live{wi, s, f, u})
			}
		}
	}
	slices.SortFunc(pending, func(a, b *live) int { return cmpInt(a.f.times[0], b.f.times[0]) })
	var active []*live
	next := 0
	for i := range calls {
		c := &calls[i]
		if !recovers(c) {
			continue
		}
		for next < len(pending) && pending[next].f.times[0] <= c.start {
			active = append(active, pending[next])
			next++
		}
		if len(active) == 0 {
			if next == len(pending) {
				return
			}
			continue
		}
		slot := history.Keyslot(c.inv.Key)
		kept := active[:0]
		for _, a := range active {
			if c.start > a.until {
				continue // no op of the shard's served here any more
			}
			if p.windows[a.wi].view.shardName(slot) != a.shard {
				kept = append(kept, a)
				continue
			}
			f := a.f
			j := sort.Search(len(f.times), func(j int) bool { return f.times[j] > c.start }) - 1
			at := rtoAt{start: c.start, rank: rank(i), end: c.end, idx: c.index}
			if !f.set[j] || f.first[j].after(at) {
				f.first[j], f.set[j] = at, true
			}
			if j < len(f.times)-1 {
				kept = append(kept, a) // the later times still wait
			}
		}
		active = kept
	}
}

// recovered is when the shard s of window wi served again after its last
// failure at from (one of its times): the completion of its first served
// op invoked at or after from, inf when none.
func (rec *rtoRecoveries) recovered(wi int, s string, from int64) int64 {
	f := rec.windows[wi][s]
	j, _ := slices.BinarySearch(f.times, from)
	for ; j < len(f.times); j++ {
		if f.set[j] {
			return f.first[j].end
		}
	}
	return inf
}

// CheckPartitions is Check on a history given as slot partitions
// (PartitionChecker), loading each partition twice. The first load reads
// each window's failures, served ops and keys (scanRTO), merged over the
// partitions (a slot, a key are in one); the second finds each shard's
// first served op after each time it may have last failed (its slots are
// in several), and judge makes the result of them. It holds one
// partition's ops at a time, and a few numbers a window and slot, and a
// window and failed key.
func (r rto) CheckPartitions(ctx context.Context, n int, load PartitionLoader) (Result, error) {
	var whole *rtoPartial
	var windows []Window
	var end int64
	names := map[string]string{}
	for i := range n {
		in, err := PartitionCalls(ctx, load, i, r.o)
		if err != nil {
			return Result{}, err
		}
		calls, err := r.o.calls(in)
		if err != nil {
			// The caller checks such a history whole; if not, the first
			// partition's word.
			return invalidHistory(err), nil
		}
		if windows, err = partitionWindowsOf(ctx, in); err != nil {
			return Result{}, err
		}
		if len(windows) == 0 {
			return r.noWindow(), nil
		}
		end = max(ctx.Value(historyEndKey{}).(int64), in.runEndOf())
		calls = sortedByStart(calls)
		whole = whole.merge(scanRTO(calls, byIndex(calls), windows, end, in.nodeAddrsOf()), names)
	}
	if whole == nil || whole.calls == 0 {
		return r.noCall(), nil
	}
	windows = detachWindows(windows)
	rec := whole.recoveries()
	for i := 0; i < n && rec.any; i++ {
		in, err := PartitionCalls(ctx, load, i, r.o)
		if err != nil {
			return Result{}, err
		}
		calls, err := r.o.calls(in)
		if err != nil {
			return invalidHistory(err), nil
		}
		calls = sortedByStart(calls)
		rec.scan(calls, byIndex(calls), whole)
	}
	return r.judge(windows, whole, rec), nil
}

// byIndex ranks a partition's calls, sorted by start, by their
// invocations' indexes: in a history whose indexes increase, the order of
// the whole history's invocations, which its calls are sorted by start
// from (stably).
func byIndex(calls []call) func(int) int64 {
	return func(i int) int64 { return calls[i].index }
}

// detachWindows copies windows out of the partition they were read from.
func detachWindows(ws []Window) []Window {
	out := slices.Clone(ws)
	for i := range out {
		out[i].Fault = strings.Clone(out[i].Fault)
		out[i].Nodes = slices.Clone(out[i].Nodes)
		for j := range out[i].Nodes {
			out[i].Nodes[j] = strings.Clone(out[i].Nodes[j])
		}
	}
	return out
}
