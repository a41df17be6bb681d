package history

import (
	"encoding/json"
	"slices"
	"time"
)

// The census is the detail of the nemesis info entry CensusEvent. The
// runner takes it after the final reads; `redline check` re-attributes
// anomalies from it.

// CensusFile is the census' name in a run directory (the same JSON as the
// history entry's detail).
const CensusFile = "census.json"

// Census is where the run's keys are at the end of a run: every node,
// primaries and replicas, asked which of the run's keys it holds (with
// their values where they fit) and who it thinks serves which slots. It
// is data, taken by the runner and judged by the checker's attribution.
type Census struct {
	Prefix string `json:"prefix"`
	// WallStart is the wall clock at the history's time zero, to place
	// the servers' own log lines (wall clock) on the history's timeline.
	WallStart time.Time    `json:"wall_start"`
	Nodes     []CensusNode `json:"nodes"`
	// Truncated says some node held more of the run's keys than the
	// census records (MaxCensusKeys): a key missing from it is unknown.
	Truncated bool `json:"truncated,omitempty"`
}

// MaxCensusKeys bounds the keys recorded per node.
const MaxCensusKeys = 20000

// CensusNode is one node's answer to the census.
type CensusNode struct {
	Name string `json:"name"`
	Addr string `json:"addr"`
	ID   string `json:"id,omitempty"`
	// Role is "primary" or "replica" as the node says of itself; ""
	// when it did not answer (Error says why).
	Role    string `json:"role,omitempty"`
	Primary string `json:"primary,omitempty"` // a replica's primary (id)
	// View is the node's CLUSTER NODES: who it thinks serves which slots.
	View []CensusPeer `json:"view,omitempty"`
	// Open lists the slots the node has MIGRATING/IMPORTING, in words;
	// Migrating and Importing the same slots as numbers.
	Open      []string `json:"open,omitempty"`
	Migrating []int    `json:"migrating,omitempty"`
	Importing []int    `json:"importing,omitempty"`
	// Keys are the run's keys the node holds (SCAN MATCH prefix*).
	Keys  map[string]CensusKey `json:"keys,omitempty"`
	Error string               `json:"error,omitempty"`
}

// CensusPeer is one line of a node's CLUSTER NODES.
type CensusPeer struct {
	ID      string   `json:"id"`
	Addr    string   `json:"addr"`
	Primary bool     `json:"primary,omitempty"`
	Master  string   `json:"master,omitempty"`
	Failed  bool     `json:"failed,omitempty"`
	Ranges  [][2]int `json:"ranges,omitempty"` // inclusive slot ranges it serves
	Myself  bool     `json:"myself,omitempty"`
	Epoch   uint64   `json:"epoch,omitempty"`
	Flags   []string `json:"flags,omitempty"`
}

// CensusKey is one key on one node: its type and value (a string's value,
// a set's members) or size, or why its value could not be read there (a
// node answers MOVED for a key in a slot it does not serve, which is
// itself the evidence: the key is there, stranded).
type CensusKey struct {
	Type    string   `json:"type,omitempty"`
	Value   *string  `json:"value,omitempty"`
	Members []string `json:"members,omitempty"`
	Len     int64    `json:"len,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// Serves reports whether p serves slot.
func (p CensusPeer) Serves(slot int) bool {
	for _, r := range p.Ranges {
		if slot >= r[0] && slot <= r[1] {
			return true
		}
	}
	return false
}

// OwnerOf is who the node thinks serves slot: the peer's id ("" when
// none, or the node did not answer).
func (n CensusNode) OwnerOf(slot int) string {
	for _, p := range n.View {
		if p.Primary && p.Serves(slot) {
			return p.ID
		}
	}
	return ""
}

// OpenSlot reports whether the node, or for a replica its primary (the
// states a server replicates), has slot MIGRATING or IMPORTING.
func (c *Census) OpenSlot(n CensusNode, slot int) bool {
	if slices.Contains(n.Migrating, slot) || slices.Contains(n.Importing, slot) {
		return true
	}
	if n.Role == "replica" && n.Primary != "" {
		if p, ok := c.Node(n.Primary); ok && p.ID != n.ID {
			return slices.Contains(p.Migrating, slot) || slices.Contains(p.Importing, slot)
		}
	}
	return false
}

// Node returns the census entry of the node with id or address s.
func (c *Census) Node(s string) (CensusNode, bool) {
	i := slices.IndexFunc(c.Nodes, func(n CensusNode) bool { return s != "" && (n.ID == s || n.Addr == s || n.Name == s) })
	if i < 0 {
		return CensusNode{}, false
	}
	return c.Nodes[i], true
}

// CensusOf returns the census a history carries (the last census entry's
// detail), or nil when it carries none or it does not decode.
func CensusOf(ops []Op) *Census {
	for i := len(ops) - 1; i >= 0; i-- {
		op := &ops[i]
		if op.Process != Nemesis || op.F != CensusEvent {
			continue
		}
		var c Census
		if json.Unmarshal(op.DetailRaw(), &c) != nil {
			return nil
		}
		return &c
	}
	return nil
}
