package checker

import (
	"fmt"
	"slices"
	"sort"

	"github.com/redline-dev/redline/history"
)

// A read's replica flag is a witness like any other: a client (or a
// recorder) that says a replica served a read the slot's primary served
// would have its staleness excused. The flag is cross-examined against
// the ops primaries served: only a primary acknowledges a write (a
// replica answers MOVED), and a read not flagged is a primary's (the
// judge's final reads always are), as the slot-to-primary view takes
// them (shards.go). A node that served such an op on the read's slot
// before the read began and another after it ended, with no other node
// serving one on that slot in between, was the slot's primary throughout
// the read: its read is a primary's read, and its staleness is judged.

// primaryWrite is an op a primary served on a slot (an acknowledged
// write, or a read not flagged as a replica's): its node and interval.
type primaryWrite struct {
	node       string
	start, end int64
}

// slotWrites are a slot's acknowledged writes sorted by end and by start,
// with the longest one's duration.
type slotWrites struct {
	byEnd, byStart []primaryWrite
	longest        int64
}

// contradictedReplicaFlags lists the positions in calls of the ok reads
// flagged as served by a replica whose node, by the writes it
// acknowledged on the read's slot around the read, was the slot's primary.
func contradictedReplicaFlags(calls []call) []int {
	var flagged []int
	for i := range calls {
		if c := &calls[i]; c.inv.Name() == OpRead && c.ok() && c.comp.FromReplica() && nodeOf(*c) != "" {
			flagged = append(flagged, i)
		}
	}
	if len(flagged) == 0 {
		return nil
	}
	bySlot := map[int]*slotWrites{}
	for i := range calls {
		c := &calls[i]
		if !c.ok() || c.comp.FromReplica() || nodeOf(*c) == "" {
			continue
		}
		switch c.inv.Name() {
		case OpWrite, OpCAS, OpAdd, OpRead:
		default:
			continue
		}
		s := history.Keyslot(c.inv.Key)
		sw := bySlot[s]
		if sw == nil {
			sw = &slotWrites{}
			bySlot[s] = sw
		}
		w := primaryWrite{node: nodeOf(*c), start: c.start, end: c.end}
		sw.byEnd = append(sw.byEnd, w)
		sw.longest = max(sw.longest, w.end-w.start)
	}
	for _, sw := range bySlot {
		sw.byStart = slices.Clone(sw.byEnd)
		sort.Slice(sw.byEnd, func(i, j int) bool { return sw.byEnd[i].end < sw.byEnd[j].end })
		sort.Slice(sw.byStart, func(i, j int) bool { return sw.byStart[i].start < sw.byStart[j].start })
	}
	var out []int
	for _, i := range flagged {
		c := &calls[i]
		if sw := bySlot[history.Keyslot(c.inv.Key)]; sw != nil && sw.primaryThroughout(nodeOf(*c), c.start, c.end) {
			out = append(out, i)
		}
	}
	return out
}

// primaryThroughout says node acknowledged the last write of the slot
// that ended before start and the first that began after end, and every
// write of the slot overlapping the span between those two was its own.
func (sw *slotWrites) primaryThroughout(node string, start, end int64) bool {
	k := sort.Search(len(sw.byEnd), func(i int) bool { return sw.byEnd[i].end >= start })
	if k == 0 || sw.byEnd[k-1].node != node {
		return false
	}
	from := sw.byEnd[k-1].end
	a := sort.Search(len(sw.byStart), func(i int) bool { return sw.byStart[i].start >= end })
	if a == len(sw.byStart) || sw.byStart[a].node != node {
		return false
	}
	// The writes that began before the one after the read and ended
	// after the one before it overlap the span: each must be node's.
	// None began before from-longest and ended after from.
	for j := a - 1; j >= 0 && sw.byStart[j].start >= from-sw.longest; j-- {
		if w := sw.byStart[j]; w.end > from && w.node != node {
			return false
		}
	}
	return true
}

// withoutContradictedFlags returns calls with the replica flag of the
// reads at pos cleared (their completions copied; calls shared with
// other checkers are left as they are).
func withoutContradictedFlags(calls []call, pos []int) []call {
	out := slices.Clone(calls)
	for _, i := range pos {
		comp := *out[i].comp
		comp.SetReplica(false)
		out[i].comp = &comp
	}
	return out
}

// describeContradictedFlag says in words why the read at calls[i] is
// taken for its primary's.
func describeContradictedFlag(c call) string {
	return fmt.Sprintf("read op %d of %s says a replica served it, but %s served ops as the primary of the key's slot %d (acknowledged writes, unflagged reads) just before and just after it and no other node did in between: it was the slot's primary, so the read is judged as the primary's",
		c.index, c.inv.Key, nodeOf(c), history.Keyslot(c.inv.Key))
}
