package cluster

import (
	"net"
	"strconv"
)

// SlotView is an immutable snapshot of what a node knows about slot ownership,
// made for the command path: the engine keeps the latest one (Ready.View) in an
// atomic pointer and calls Route on every keyed command without locking.
type SlotView struct {
	// Nodes are the nodes referenced by Owner, Migrating and Importing.
	Nodes []ViewNode
	// Owner[slot] is an index into Nodes, or -1 when the slot is unassigned.
	Owner [NumSlots]int16
	// Migrating and Importing map an open slot to the index of the target
	// (migrating) or source (importing) node.
	Migrating map[int]int16
	Importing map[int]int16
	// Self is the index of this node; Master the index of the node it
	// replicates, or -1 when it is a master.
	Self   int16
	Master int16
	// StateOK is cluster_state:ok.
	StateOK bool
	// AllowReadsWhenDown is cluster-allow-reads-when-down.
	AllowReadsWhenDown bool
	// Endpoints: the nodes' Endpoint is what redirects name (a view made
	// by View); false names the IP (a view made by hand).
	Endpoints bool
}

// ViewNode is a node as clients see it.
type ViewNode struct {
	ID   string
	IP   string
	Port int
	// Endpoint is the node as redirects name it (cluster-preferred-
	// endpoint-type): its IP, its hostname ("?" without one) or "".
	Endpoint string
}

// Addr is "ip:port" of the node's client port.
func (v ViewNode) Addr() string { return net.JoinHostPort(v.IP, strconv.Itoa(v.Port)) }

// redirectAddr is "endpoint:port" of node i for MOVED and ASK.
func (v *SlotView) redirectAddr(i int16) string {
	n := v.Nodes[i]
	if !v.Endpoints || n.Endpoint == n.IP {
		return n.Addr()
	}
	return n.Endpoint + ":" + strconv.Itoa(n.Port)
}

// OwnerOf returns the node serving slot and true, or false when it is unassigned.
func (v *SlotView) OwnerOf(slot int) (ViewNode, bool) {
	i := v.Owner[slot]
	if i < 0 {
		return ViewNode{}, false
	}
	return v.Nodes[i], true
}

// Request describes a command for Route.
type Request struct {
	// Slots holds the slot of every key of the command in order (distinct
	// keys; pass a key once even if the command names it twice). A command
	// without keys is always served.
	Slots []int
	// KeyExists reports whether key i (index into Slots) exists locally. It
	// is only called when the first slot is open (migrating or importing).
	KeyExists func(i int) bool
	// Write is true for commands with the write flag.
	Write bool
	// Asking is true when the client sent ASKING just before (or the command
	// is RESTORE-ASKING).
	Asking bool
	// ReadOnly is true when the client sent READONLY.
	ReadOnly bool
	// Migrate is true for the MIGRATE command.
	Migrate bool
}

// Verdict is the kind of a routing decision.
type Verdict uint8

// Verdicts in the order of the redirect rules.
const (
	Serve Verdict = iota
	Unbound
	CrossSlot
	Down
	DownReadOnly
	Ask
	TryAgain
	Moved
)

// Decision is the outcome of Route.
type Decision struct {
	Verdict Verdict
	Slot    int
	// Addr is "ip:port" for Moved and Ask.
	Addr string
}

// Error returns the exact Redis error string (without the leading '-') or ""
// for Serve.
func (d Decision) Error() string {
	switch d.Verdict {
	case Unbound:
		return "CLUSTERDOWN Hash slot not served"
	case CrossSlot:
		return "CROSSSLOT Keys in request don't hash to the same slot"
	case Down:
		return "CLUSTERDOWN The cluster is down"
	case DownReadOnly:
		return "CLUSTERDOWN The cluster is down and only accepts read commands"
	case TryAgain:
		return "TRYAGAIN Multiple keys request during rehashing of slot"
	case Ask:
		return "ASK " + strconv.Itoa(d.Slot) + " " + d.Addr
	case Moved:
		return "MOVED " + strconv.Itoa(d.Slot) + " " + d.Addr
	}
	return ""
}

// Route decides whether this node serves a keyed command, following Redis 7's
// getNodeByQuery: unassigned first slot, CROSSSLOT, cluster down, MIGRATE on an
// open slot, ASK/TRYAGAIN on a migrating slot, ASKING on an importing slot,
// READONLY replica reads, else MOVED to the owner.
func (v *SlotView) Route(r Request) Decision {
	if len(r.Slots) == 0 {
		return Decision{Verdict: Serve}
	}
	slot := r.Slots[0]
	owner := v.Owner[slot]
	if owner < 0 {
		return Decision{Verdict: Unbound, Slot: slot}
	}
	for _, s := range r.Slots[1:] {
		if s != slot {
			return Decision{Verdict: CrossSlot, Slot: slot}
		}
	}
	migTo, migrating := v.Migrating[slot]
	migrating = migrating && owner == v.Self
	_, importing := v.Importing[slot]
	missing, existing := 0, 0
	if (migrating || importing) && r.KeyExists != nil {
		for i := range r.Slots {
			if r.KeyExists(i) {
				existing++
			} else {
				missing++
			}
		}
	}
	if !v.StateOK {
		if !v.AllowReadsWhenDown {
			return Decision{Verdict: Down, Slot: slot}
		}
		if r.Write {
			return Decision{Verdict: DownReadOnly, Slot: slot}
		}
	}
	if (migrating || importing) && r.Migrate {
		return Decision{Verdict: Serve, Slot: slot}
	}
	if migrating && missing > 0 {
		if existing > 0 {
			return Decision{Verdict: TryAgain, Slot: slot}
		}
		return Decision{Verdict: Ask, Slot: slot, Addr: v.redirectAddr(migTo)}
	}
	if importing && r.Asking {
		if len(r.Slots) > 1 && missing > 0 {
			return Decision{Verdict: TryAgain, Slot: slot}
		}
		return Decision{Verdict: Serve, Slot: slot}
	}
	if r.ReadOnly && !r.Write && v.Master >= 0 && v.Master == owner {
		return Decision{Verdict: Serve, Slot: slot}
	}
	if owner == v.Self {
		return Decision{Verdict: Serve, Slot: slot}
	}
	return Decision{Verdict: Moved, Slot: slot, Addr: v.redirectAddr(owner)}
}
