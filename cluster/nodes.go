package cluster

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
)

// SlotCount is the number of hash slots in a Redis Cluster.
const SlotCount = 16384

// SlotRange is an inclusive range of hash slots.
type SlotRange struct {
	Start, End int
}

// OpenSlot is a slot being migrated, as shown on the myself line of
// CLUSTER NODES: "[s->-<id>]" (Migrating to Peer) or "[s-<-<id>]" (importing
// from Peer).
type OpenSlot struct {
	Slot      int
	Migrating bool // true: migrating to Peer; false: importing from Peer
	Peer      string
}

// NodeInfo is one line of CLUSTER NODES.
type NodeInfo struct {
	ID          string
	Addr        string // "ip:port" clients dial (ip may be empty for noaddr)
	BusPort     int
	Hostname    string // announced hostname, if any ("ip:port@cport,hostname")
	Flags       []string
	Master      string // primary's id for a replica, "" otherwise
	PingSent    int64  // ms since epoch, 0 if none pending
	PongRecv    int64
	ConfigEpoch uint64
	Connected   bool // link-state "connected"
	Ranges      []SlotRange
	Open        []OpenSlot
}

// HasFlag says whether the node carries flag f ("myself", "master", "fail?", ...).
func (n NodeInfo) HasFlag(f string) bool {
	for _, g := range n.Flags {
		if g == f {
			return true
		}
	}
	return false
}

// Myself says whether this line describes the node that printed it.
func (n NodeInfo) Myself() bool { return n.HasFlag("myself") }

// IsPrimary says whether the node is a master.
func (n NodeInfo) IsPrimary() bool { return n.HasFlag("master") }

// IsReplica says whether the node is a replica.
func (n NodeInfo) IsReplica() bool { return n.HasFlag("slave") }

// Failed says whether the node is flagged fail or pfail ("fail?").
func (n NodeInfo) Failed() bool { return n.HasFlag("fail") || n.HasFlag("fail?") }

// NumSlots is the number of slots the node serves.
func (n NodeInfo) NumSlots() int {
	c := 0
	for _, r := range n.Ranges {
		c += r.End - r.Start + 1
	}
	return c
}

// Slots lists every slot the node serves, ascending.
func (n NodeInfo) Slots() []int {
	out := make([]int, 0, n.NumSlots())
	for _, r := range n.Ranges {
		for s := r.Start; s <= r.End; s++ {
			out = append(out, s)
		}
	}
	return out
}

// Host is the IP part of Addr.
func (n NodeInfo) Host() string {
	i := strings.LastIndexByte(n.Addr, ':')
	if i < 0 {
		return n.Addr
	}
	return n.Addr[:i]
}

// RangesString renders the slot ranges the way CLUSTER NODES does ("0-5460 5462").
func (n NodeInfo) RangesString() string {
	parts := make([]string, 0, len(n.Ranges))
	for _, r := range n.Ranges {
		if r.Start == r.End {
			parts = append(parts, strconv.Itoa(r.Start))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", r.Start, r.End))
		}
	}
	return strings.Join(parts, " ")
}

// ParseNodes parses the text of CLUSTER NODES (or a nodes.conf without its
// "vars" line). Blank lines and "vars" lines are ignored.
func ParseNodes(text string) ([]NodeInfo, error) {
	var out []NodeInfo
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "vars ") {
			continue
		}
		n, err := parseNodeLine(line)
		if err != nil {
			return nil, fmt.Errorf("CLUSTER NODES line %d %q: %w", i+1, line, err)
		}
		out = append(out, n)
	}
	return out, nil
}

func parseNodeLine(line string) (NodeInfo, error) {
	f := strings.Fields(line)
	if len(f) < 8 {
		return NodeInfo{}, fmt.Errorf("want at least 8 fields, got %d", len(f))
	}
	var n NodeInfo
	n.ID = f[0]
	if len(n.ID) != 40 {
		return NodeInfo{}, fmt.Errorf("node id %q is not 40 characters", n.ID)
	}
	addr := f[1]
	if i := strings.IndexByte(addr, ','); i >= 0 {
		n.Hostname = addr[i+1:]
		addr = addr[:i]
	}
	if i := strings.IndexByte(addr, '@'); i >= 0 {
		bp, err := strconv.Atoi(addr[i+1:])
		if err != nil {
			return NodeInfo{}, fmt.Errorf("bad bus port in %q", f[1])
		}
		n.BusPort = bp
		addr = addr[:i]
	}
	if strings.LastIndexByte(addr, ':') < 0 {
		return NodeInfo{}, fmt.Errorf("address %q has no port", f[1])
	}
	n.Addr = addr
	if f[2] != "noflags" {
		n.Flags = strings.Split(f[2], ",")
	}
	if f[3] != "-" {
		n.Master = f[3]
	}
	var err error
	if n.PingSent, err = strconv.ParseInt(f[4], 10, 64); err != nil {
		return NodeInfo{}, fmt.Errorf("bad ping_sent %q", f[4])
	}
	if n.PongRecv, err = strconv.ParseInt(f[5], 10, 64); err != nil {
		return NodeInfo{}, fmt.Errorf("bad pong_recv %q", f[5])
	}
	if n.ConfigEpoch, err = strconv.ParseUint(f[6], 10, 64); err != nil {
		return NodeInfo{}, fmt.Errorf("bad config epoch %q", f[6])
	}
	switch f[7] {
	case "connected":
		n.Connected = true
	case "disconnected":
	default:
		return NodeInfo{}, fmt.Errorf("bad link state %q", f[7])
	}
	for _, s := range f[8:] {
		if strings.HasPrefix(s, "[") {
			o, err := parseOpenSlot(s)
			if err != nil {
				return NodeInfo{}, err
			}
			n.Open = append(n.Open, o)
			continue
		}
		r, err := parseRange(s)
		if err != nil {
			return NodeInfo{}, err
		}
		n.Ranges = append(n.Ranges, r)
	}
	return n, nil
}

func parseRange(s string) (SlotRange, error) {
	a, b, isRange := strings.Cut(s, "-")
	start, err := strconv.Atoi(a)
	if err != nil || start < 0 || start >= SlotCount {
		return SlotRange{}, fmt.Errorf("bad slot %q", s)
	}
	end := start
	if isRange {
		end, err = strconv.Atoi(b)
		if err != nil || end < start || end >= SlotCount {
			return SlotRange{}, fmt.Errorf("bad slot range %q", s)
		}
	}
	return SlotRange{start, end}, nil
}

func parseOpenSlot(s string) (OpenSlot, error) {
	if !strings.HasSuffix(s, "]") {
		return OpenSlot{}, fmt.Errorf("bad open slot %q", s)
	}
	body := s[1 : len(s)-1]
	var o OpenSlot
	var slot, peer string
	var ok bool
	if slot, peer, ok = strings.Cut(body, "->-"); ok {
		o.Migrating = true
	} else if slot, peer, ok = strings.Cut(body, "-<-"); !ok {
		return OpenSlot{}, fmt.Errorf("bad open slot %q", s)
	}
	n, err := strconv.Atoi(slot)
	if err != nil || n < 0 || n >= SlotCount {
		return OpenSlot{}, fmt.Errorf("bad open slot %q", s)
	}
	o.Slot, o.Peer = n, peer
	return o, nil
}

// SlotMap renders who serves which slots as one comparable string: the
// primaries with slots, sorted by id, each as "id:ranges". Two nodes that
// print the same SlotMap agree on slot ownership (as redis-cli's consistency
// check does).
func SlotMap(nodes []NodeInfo) string {
	var parts []string
	for _, n := range nodes {
		if len(n.Ranges) == 0 {
			continue
		}
		parts = append(parts, n.ID+":"+n.RangesString())
	}
	sort.Strings(parts)
	return strings.Join(parts, "|")
}

// Covered counts the distinct slots some node in nodes claims.
func Covered(nodes []NodeInfo) int {
	var seen [SlotCount]bool
	c := 0
	for _, n := range nodes {
		for _, r := range n.Ranges {
			for s := r.Start; s <= r.End; s++ {
				if !seen[s] {
					seen[s] = true
					c++
				}
			}
		}
	}
	return c
}

// Self returns the "myself" entry, if any.
func Self(nodes []NodeInfo) (NodeInfo, bool) {
	for _, n := range nodes {
		if n.Myself() {
			return n, true
		}
	}
	return NodeInfo{}, false
}

// OwnerOf returns the id of the first primary in nodes that serves slot
// ("" when none does): who owns it in this view.
func OwnerOf(nodes []NodeInfo, slot int) string {
	for _, n := range nodes {
		if !n.IsPrimary() {
			continue
		}
		for _, r := range n.Ranges {
			if slot >= r.Start && slot <= r.End {
				return n.ID
			}
		}
	}
	return ""
}

// SplitAddr splits a node address "host:port", checking that the host is
// not empty and the port is 1-65535.
func SplitAddr(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("address %q is not host:port: %v", addr, err)
	}
	if host == "" {
		return "", 0, fmt.Errorf("address %q has no host (want host:port, e.g. 10.0.0.5:6379)", addr)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("address %q has a bad port %q (want 1-65535)", addr, p)
	}
	return host, port, nil
}

// ExternalNodes describes the nodes of an existing cluster at addrs
// (host:port each), named n1, n2, ... in the order given: the check of
// --addrs. An address that is not host:port or is given twice is an error.
func ExternalNodes(addrs []string) ([]Node, error) {
	if len(addrs) == 0 {
		return nil, errors.New("external cluster: no addresses given (want --addrs host:port,...)")
	}
	seen := map[string]bool{}
	nodes := make([]Node, 0, len(addrs))
	for i, a := range addrs {
		a = strings.TrimSpace(a)
		host, _, err := SplitAddr(a)
		if err != nil {
			return nil, fmt.Errorf("external cluster: %w", err)
		}
		if seen[a] {
			return nil, fmt.Errorf("external cluster: address %s given twice", a)
		}
		seen[a] = true
		nodes = append(nodes, Node{Name: fmt.Sprintf("n%d", i+1), Addr: a, Host: host})
	}
	return nodes, nil
}
