package history

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
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
	// ReplicaSync is the end phase's wait, before the census, for every
	// replica to be in sync with its primary (nil: a census of a redline
	// before the replica census, whose nodes carry no Repl either).
	ReplicaSync *ReplicaSync `json:"replica_sync,omitempty"`
}

// ReplicaSync is the end phase's wait for every replica to report the
// same replication history (master_replid) and offset as its primary,
// its link up, before the census reads their keys: only then must a
// replica hold exactly its primary's keys.
type ReplicaSync struct {
	InSync   bool  `json:"in_sync"`
	WaitedMS int64 `json:"waited_ms"`
	// Attempts counts the censuses taken: one more is taken when some
	// pair's offsets moved while the census read its keys.
	Attempts int `json:"attempts,omitempty"`
	// Why says, when not InSync, which replicas were not in sync when the
	// wait gave up, and how.
	Why string `json:"why,omitempty"`
}

// CensusRepl is a node's replication state (INFO replication) before and
// after the census read its keys. Offset is a primary's
// master_repl_offset, a replica's slave_repl_offset: a replica whose
// Replid and offsets (before and after) equal its primary's had applied
// every write its primary had while both were read.
type CensusRepl struct {
	Replid      string `json:"replid,omitempty"`
	Offset      int64  `json:"offset"`
	OffsetAfter int64  `json:"offset_after"`
	// Link is a replica's master_link_status, "sync" while a full sync
	// is in progress; "" for a primary.
	Link  string `json:"link,omitempty"`
	Error string `json:"error,omitempty"`
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
	// Keys are the run's keys the node holds (SCAN MATCH prefix*),
	// under their own names; set-aside copies are not among them.
	Keys map[string]CensusKey `json:"keys,omitempty"`
	// Asides are the set-aside copies the node holds (AsideName), by the
	// run's key they are a copy of: a write kept only there is set aside,
	// not lost.
	Asides map[string][]CensusAside `json:"asides,omitempty"`
	// Repl is the node's replication state around the census (nil: not
	// read, a census of an older redline).
	Repl  *CensusRepl `json:"repl,omitempty"`
	Error string      `json:"error,omitempty"`
}

// CensusAside is one set-aside copy of a key on one node: its name, the
// node its copy came from, and its value as for a key.
type CensusAside struct {
	Name string `json:"name"`
	From string `json:"from"` // node name
	CensusKey
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

// AsideMarker is what a set-aside copy's name carries before the name of
// the node the copy came from.
const AsideMarker = ":redline-conflict-from-"

// AsideName is the name a set-aside copy of key from node gets. On a
// cluster redline created, a key with a different copy on each side of a
// move keeps the destination's copy under its name, and the source's is
// restored beside it on the destination under this name (clusteradmin's
// journalled "set-aside" step): in key's slot (key's hash tag kept, or
// key itself as the tag) and saying where it came from. A key without a
// hash tag that contains '}' (or is empty) has no such name: the
// set-aside step checks the slot with CLUSTER KEYSLOT.
func AsideName(key, node string) string {
	suffix := AsideMarker + node
	if i := strings.IndexByte(key, '{'); i >= 0 && strings.IndexByte(key[i+1:], '}') > 0 {
		return key + suffix
	}
	return "{" + key + "}" + suffix
}

// AsideOf is AsideName's inverse for a run whose keys start with prefix:
// the key name is a set-aside copy of, and the node the copy came from
// (ok false: name is not a set-aside name of such a key). A key with a
// hash tag and "{key}" without one can give the same name ("{a}" and
// "a"); the one of the run (prefix) is taken.
func AsideOf(name, prefix string) (key, from string, ok bool) {
	i := strings.LastIndex(name, AsideMarker)
	if i < 0 {
		return "", "", false
	}
	s, from := name[:i], name[i+len(AsideMarker):]
	if from == "" {
		return "", "", false
	}
	cands := []string{s}
	if len(s) >= 2 && s[0] == '{' && s[len(s)-1] == '}' {
		cands = append(cands, s[1:len(s)-1])
	}
	for _, k := range cands {
		if strings.HasPrefix(k, prefix) && AsideName(k, from) == name {
			return k, from, true
		}
	}
	return "", "", false
}

// AttachAsides moves every set-aside copy among the nodes' Keys to
// Asides, under the key it is a copy of (a copy set aside twice, under
// the name of a set-aside copy, goes under the first key). A census taken
// before set-aside copies were told apart (a history of an older run)
// reads the same once attached; attaching twice changes nothing.
func (c *Census) AttachAsides() {
	for i := range c.Nodes {
		n := &c.Nodes[i]
		for name, k := range n.Keys {
			key, from, ok := AsideOf(name, c.Prefix)
			if !ok {
				continue
			}
			for {
				root, _, ok := AsideOf(key, c.Prefix)
				if !ok {
					break
				}
				key = root
			}
			if n.Asides == nil {
				n.Asides = map[string][]CensusAside{}
			}
			n.Asides[key] = append(n.Asides[key], CensusAside{Name: name, From: from, CensusKey: k})
			delete(n.Keys, name)
		}
		for _, as := range n.Asides {
			slices.SortFunc(as, func(a, b CensusAside) int { return strings.Compare(a.Name, b.Name) })
		}
	}
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
		c.AttachAsides()
		return &c
	}
	return nil
}

// ReplicaOutOfSync says why the census cannot hold replica n to its
// primary's keys ("" when it can): its primary (n.Primary) is in the
// census as a primary, both answered in full, both carry their
// replication state, and the replica's link was up with the primary's
// replication id and offset, the same before and after the keys of both
// were read. An offset below 0 is no offset.
func (c *Census) ReplicaOutOfSync(n CensusNode) string {
	p, ok := c.Node(n.Primary)
	switch {
	case n.Role != "replica":
		return fmt.Sprintf("%s is no replica (role %q)", n.Name, n.Role)
	case n.Primary == "" || !ok:
		return fmt.Sprintf("%s replicates %q, which the census does not have", n.Name, n.Primary)
	case p.Role != "primary":
		return fmt.Sprintf("%s replicates %s, whose role is %q", n.Name, p.Name, p.Role)
	case n.Error != "":
		return fmt.Sprintf("%s did not answer the census in full: %s", n.Name, n.Error)
	case p.Error != "":
		return fmt.Sprintf("%s's primary %s did not answer the census in full: %s", n.Name, p.Name, p.Error)
	case n.Repl == nil || p.Repl == nil:
		return fmt.Sprintf("the census carries no replication state of %s or of its primary %s", n.Name, p.Name)
	case n.Repl.Error != "" || p.Repl.Error != "":
		return fmt.Sprintf("the replication state of %s or of %s could not be read: %s", n.Name, p.Name, n.Repl.Error+p.Repl.Error)
	case n.Repl.Offset < 0 || n.Repl.OffsetAfter < 0 || p.Repl.Offset < 0 || p.Repl.OffsetAfter < 0:
		return fmt.Sprintf("the census gives %s or its primary %s a negative offset (%d, %d; %d, %d)", n.Name, p.Name, n.Repl.Offset, n.Repl.OffsetAfter, p.Repl.Offset, p.Repl.OffsetAfter)
	case n.Repl.Link != "up":
		return fmt.Sprintf("%s's link to %s was %q", n.Name, p.Name, n.Repl.Link)
	case n.Repl.Replid == "" || n.Repl.Replid != p.Repl.Replid:
		return fmt.Sprintf("%s follows replication id %q, its primary %s has %q", n.Name, n.Repl.Replid, p.Name, p.Repl.Replid)
	case n.Repl.Offset != n.Repl.OffsetAfter || p.Repl.Offset != p.Repl.OffsetAfter:
		return fmt.Sprintf("the offsets moved while the census read the keys (%s %d to %d, %s %d to %d)", n.Name, n.Repl.Offset, n.Repl.OffsetAfter, p.Name, p.Repl.Offset, p.Repl.OffsetAfter)
	case n.Repl.Offset != p.Repl.Offset:
		return fmt.Sprintf("%s is at offset %d, its primary %s at %d", n.Name, n.Repl.Offset, p.Name, p.Repl.Offset)
	}
	return ""
}
