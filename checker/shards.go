package checker

import (
	"encoding/json"
	"slices"
	"sort"

	"github.com/redline-dev/redline/history"
)

// nodeAddrs reads the name -> address map of the history.NodesEvent
// entries: fault events name nodes, client ops record addresses.
func nodeAddrs(ops []history.Op) map[string]string {
	out := map[string]string{}
	for i := range ops {
		op := &ops[i]
		if op.Process != history.Nemesis || op.F != history.NodesEvent || len(op.DetailRaw()) == 0 {
			continue
		}
		var d history.NodesDetail
		if json.Unmarshal(op.DetailRaw(), &d) == nil {
			for n, a := range d.Addrs {
				out[n] = a
			}
		}
	}
	return out
}

// shardView is what is known at a fault's start of where keys live: the
// primary (address) that served each slot last before the start.
type shardView struct {
	slotNode *slotMap
	touched  map[string]bool // addresses of the nodes the fault touched
	mapped   bool            // every touched node has a known address
}

// shardOf names the shard of a key at the fault's start: the address of its
// slot's primary then, or "" when no op had been served on that slot.
func (v *shardView) shardOf(key string) string { return v.slotNode.node(history.Keyslot(key)) }

// servedByPrimary reports whether the op was served by its slot's primary:
// served, and not a read a replica served (history "replica"). A replica
// neither holds the slot's writes nor falls with its primary: its node is
// not the shard's, and its answer does not end the shard's outage.
func (c *call) servedByPrimary() bool { return c.served() && !c.comp.FromReplica() }

// shardViews computes, for each window, the slot -> primary map at its
// start from the ops a primary served before it (the node recorded on an
// ok or served completion, replica reads left out), and the addresses of
// the nodes it touched.
func shardViews(calls []call, windows []Window, addrs map[string]string) []shardView {
	served := make([]*call, 0, len(calls))
	for i := range calls {
		if calls[i].servedByPrimary() && calls[i].comp.Node != "" {
			served = append(served, &calls[i])
		}
	}
	slices.SortStableFunc(served, func(a, b *call) int { return cmpInt(a.end, b.end) })
	order := make([]int, len(windows))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return windows[order[a]].Start < windows[order[b]].Start })
	views := make([]shardView, len(windows))
	cur := map[int]string{}
	j := 0
	for _, wi := range order {
		w := windows[wi]
		for ; j < len(served) && served[j].end < w.Start; j++ {
			cur[history.Keyslot(served[j].inv.Key)] = served[j].comp.Node
		}
		v := shardView{slotNode: newSlotMap(), touched: map[string]bool{}, mapped: true}
		for s, n := range cur {
			v.slotNode.set(s, n)
		}
		for _, n := range w.Nodes {
			switch a, ok := addrs[n]; {
			case ok:
				v.touched[a] = true
			default:
				v.touched[n] = true // already an address, or unknown
				v.mapped = v.mapped && looksLikeAddr(n)
			}
		}
		views[wi] = v
	}
	return views
}

func looksLikeAddr(s string) bool {
	i := len(s) - 1
	for i >= 0 && s[i] >= '0' && s[i] <= '9' {
		i--
	}
	return i > 0 && i < len(s)-1 && s[i] == ':'
}

// windowKeys reports how many keys in use during a window (an op invoked
// between its start and until) lived, at its start, on the nodes it
// touched: a fault that touched none of them is no evidence either way.
func windowKeys(calls []call, lo, hi int, v *shardView, into *WindowKeys) (onTouched int) {
	return countWindowKeys(calls, lo, hi, v).into(into)
}

// windowKeyCount is what windowKeys counts of a window's keys, apart from
// the figures, so that the counts of a history's slot partitions (whose
// keys are apart) add up (add).
type windowKeyCount struct {
	active, onTouched, unplaced int
	mapped                      bool // run-wide: the same in every partition
}

func countWindowKeys(calls []call, lo, hi int, v *shardView) windowKeyCount {
	active := map[string]bool{}
	n := windowKeyCount{mapped: v.mapped}
	for i := lo; i < hi; i++ {
		k := calls[i].inv.Key
		if active[k] {
			continue
		}
		active[k] = true
		switch s := v.shardOf(k); {
		case s == "":
			n.unplaced++
		case v.touched[s]:
			n.onTouched++
		}
	}
	n.active = len(active)
	return n
}

func (n windowKeyCount) add(o windowKeyCount) windowKeyCount {
	return windowKeyCount{active: n.active + o.active, onTouched: n.onTouched + o.onTouched, unplaced: n.unplaced + o.unplaced, mapped: n.mapped && o.mapped}
}

// into writes the figures of the count (windowKeys).
func (n windowKeyCount) into(into *WindowKeys) (onTouched int) {
	onTouched = n.onTouched
	into.KeysActive = n.active
	if !n.mapped {
		into.KeysOnTouchedNodes = nil
		into.KeysNote = "the touched nodes' addresses are not in the history (no \"nodes\" event): where the keys lived is unknown"
		return -1
	}
	into.KeysOnTouchedNodes = ptr(onTouched)
	into.KeysUnplaced = n.unplaced
	if onTouched == 0 {
		into.KeysNote = "no key of this workload lived on the nodes this fault touched: the window is no evidence of loss or unavailability"
	}
	return onTouched
}

// WindowKeys are a fault window's keys: how many were in use during it and
// how many of them lived on the nodes it touched (rto, rpo).
type WindowKeys struct {
	KeysActive int `json:"keys_active"`
	// KeysOnTouchedNodes is nil when where the keys lived is unknown (no
	// "nodes" event).
	KeysOnTouchedNodes *int   `json:"keys_on_touched_nodes"`
	KeysUnplaced       int    `json:"keys_unplaced,omitempty"`
	KeysNote           string `json:"keys_note,omitempty"`
}
