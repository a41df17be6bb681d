package cluster

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

var flagNames = []struct {
	f    Flags
	name string
}{
	{FlagMyself, "myself"}, {FlagMaster, "master"}, {FlagSlave, "slave"}, {FlagPFail, "fail?"},
	{FlagFail, "fail"}, {FlagHandshake, "handshake"}, {FlagNoAddr, "noaddr"}, {FlagNoFailover, "nofailover"},
}

// FlagsString renders flags as CLUSTER NODES does.
func FlagsString(f Flags) string {
	var b []string
	for _, fn := range flagNames {
		if f&fn.f != 0 {
			b = append(b, fn.name)
		}
	}
	if len(b) == 0 {
		return "noflags"
	}
	return strings.Join(b, ",")
}

// slotRanges returns the ranges [start, end] of a bitmap in ascending order.
func slotRanges(b *SlotBitmap) [][2]int {
	// Whole bytes that are empty or full are taken in one step: a node's
	// line is written for every nodes.conf save and CLUSTER NODES, and a
	// bit-by-bit scan of 16384 slots per node made SETSLOT slow.
	var r [][2]int
	start := -1
	for s := 0; s < NumSlots; {
		if s&7 == 0 {
			switch byt := b[s>>3]; {
			case byt == 0:
				if start >= 0 {
					r = append(r, [2]int{start, s - 1})
					start = -1
				}
				s += 8
				continue
			case byt == 0xff:
				if start < 0 {
					start = s
				}
				s += 8
				continue
			}
		}
		in := b.Has(s)
		if in && start < 0 {
			start = s
		}
		if !in && start >= 0 {
			r = append(r, [2]int{start, s - 1})
			start = -1
		}
		s++
	}
	if start >= 0 {
		r = append(r, [2]int{start, NumSlots - 1})
	}
	return r
}

func (n *Node) epochOf(p *peer) uint64 {
	if p.isSlave() {
		if m := n.lookup(p.master); m != nil {
			return m.configEpoch
		}
	}
	return p.configEpoch
}

func (n *Node) nodeLine(b *strings.Builder, p *peer) {
	master := "-"
	if m := n.lookup(p.master); p.isSlave() && m != nil {
		master = m.id
	}
	link := "disconnected"
	if p.link != 0 || p == n.self {
		link = "connected"
	}
	host := ""
	if p.hostname != "" {
		host = "," + p.hostname
	}
	fmt.Fprintf(b, "%s %s:%d@%d%s %s %s %d %d %d %s", p.id, p.ip, p.port, p.cport, host, FlagsString(p.flags),
		master, p.pingSent, p.pongReceived, n.epochOf(p), link)
	for _, r := range slotRanges(&p.slots) {
		if r[0] == r[1] {
			fmt.Fprintf(b, " %d", r[0])
		} else {
			fmt.Fprintf(b, " %d-%d", r[0], r[1])
		}
	}
	if p == n.self {
		open := sortedKeys(n.migrating)
		for _, s := range sortedKeys(n.importing) {
			if n.migrating[s] == nil {
				open = append(open, s)
			}
		}
		sort.Ints(open)
		for _, s := range open {
			if t := n.migrating[s]; t != nil {
				fmt.Fprintf(b, " [%d->-%s]", s, t.id)
			} else {
				fmt.Fprintf(b, " [%d-<-%s]", s, n.importing[s].id)
			}
		}
	}
	b.WriteByte('\n')
}

func sortedKeys(m map[int]*peer) []int {
	k := make([]int, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Ints(k)
	return k
}

// NodesText is the reply of CLUSTER NODES (myself first, then by id).
func (n *Node) NodesText() string {
	var b strings.Builder
	n.nodeLine(&b, n.self)
	for _, id := range n.sortedIDs() {
		if p := n.peers[id]; p != n.self {
			n.nodeLine(&b, p)
		}
	}
	return b.String()
}

// NodesConf is the content of nodes.conf: CLUSTER NODES without handshake
// nodes, plus the vars line.
func (n *Node) NodesConf() string {
	var b strings.Builder
	n.nodeLine(&b, n.self)
	for _, id := range n.sortedIDs() {
		if p := n.peers[id]; p != n.self && !p.handshake() {
			n.nodeLine(&b, p)
		}
	}
	fmt.Fprintf(&b, "vars currentEpoch %d lastVoteEpoch %d\n", n.currentEpoch, n.lastVoteEpoch)
	return b.String()
}

// LoadNode rebuilds a node from nodes.conf text (clusterLoadConfig). The
// announced address in s, when set, replaces the saved one of myself.
func LoadNode(cfg Config, text string, s Self, now time.Time) (*Node, error) {
	cfg.fill()
	var n *Node
	type pending struct {
		p     *peer
		f     []string
		lineN int
	}
	var lines []pending
	var cur, vote uint64
	for i, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if f[0] == "vars" {
			for j := 1; j+1 < len(f); j += 2 {
				v, err := strconv.ParseUint(f[j+1], 10, 64)
				if err != nil {
					return nil, fmt.Errorf("nodes.conf line %d: bad %s value %q", i+1, f[j], f[j+1])
				}
				switch f[j] {
				case "currentEpoch":
					cur = v
				case "lastVoteEpoch":
					vote = v
				}
			}
			continue
		}
		if len(f) < 8 {
			return nil, fmt.Errorf("nodes.conf line %d: want at least 8 fields, got %d", i+1, len(f))
		}
		if !validID(f[0]) {
			return nil, fmt.Errorf("nodes.conf line %d: bad node id %q", i+1, f[0])
		}
		p := &peer{id: f[0]}
		addr := f[1]
		if c := strings.IndexByte(addr, ','); c >= 0 {
			addr, p.hostname = addr[:c], addr[c+1:]
		}
		at := strings.LastIndexByte(addr, '@')
		colon := strings.LastIndexByte(addr, ':')
		if at < 0 || colon < 0 || colon > at {
			return nil, fmt.Errorf("nodes.conf line %d: bad address %q", i+1, f[1])
		}
		p.ip = addr[:colon]
		var err1, err2 error
		p.port, err1 = strconv.Atoi(addr[colon+1 : at])
		p.cport, err2 = strconv.Atoi(addr[at+1:])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("nodes.conf line %d: bad address %q", i+1, f[1])
		}
		for _, fl := range strings.Split(f[2], ",") {
			switch fl {
			case "myself":
				p.flags |= FlagMyself
			case "master":
				p.flags |= FlagMaster
			case "slave":
				p.flags |= FlagSlave
			case "fail?":
				p.flags |= FlagPFail
			case "fail":
				p.flags |= FlagFail
			case "handshake":
				p.flags |= FlagHandshake
			case "noaddr":
				p.flags |= FlagNoAddr
			case "nofailover":
				p.flags |= FlagNoFailover
			case "noflags":
			default:
				return nil, fmt.Errorf("nodes.conf line %d: unknown flag %q", i+1, fl)
			}
		}
		if f[3] != "-" {
			if !validID(f[3]) {
				return nil, fmt.Errorf("nodes.conf line %d: bad master id %q", i+1, f[3])
			}
			p.master = f[3]
		}
		ping, _ := strconv.ParseInt(f[4], 10, 64)
		pong, _ := strconv.ParseInt(f[5], 10, 64)
		if ping != 0 {
			p.pingSent = now.UnixMilli()
		}
		if pong != 0 {
			p.pongReceived = now.UnixMilli()
		}
		ep, err := strconv.ParseUint(f[6], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("nodes.conf line %d: bad configEpoch %q", i+1, f[6])
		}
		p.configEpoch = ep
		if p.flags&FlagMyself != 0 {
			if n != nil {
				return nil, fmt.Errorf("nodes.conf line %d: second myself line", i+1)
			}
			n = newNode(cfg, p.id, now)
			flags := p.flags
			*n.self = *p
			n.self.flags = flags
			n.setNoFailoverFlag()
			n.self.ctime = n.now
			p = n.self
		}
		lines = append(lines, pending{p, f, i + 1})
	}
	if n == nil {
		return nil, fmt.Errorf("nodes.conf has no myself line")
	}
	n.currentEpoch, n.lastVoteEpoch = cur, vote
	for _, l := range lines {
		if l.p != n.self {
			l.p.ctime = n.now
			n.addPeer(l.p)
		}
	}
	for _, l := range lines {
		p := l.p
		if p.master != "" && n.lookup(p.master) == nil {
			n.addPeer(&peer{id: p.master, flags: FlagMaster, ctime: n.now})
		}
		if p.master != "" {
			n.lookup(p.master).flags |= FlagMigrateTo
		}
		for _, tok := range l.f[8:] {
			if strings.HasPrefix(tok, "[") {
				tok = strings.Trim(tok, "[]")
				if k := strings.Index(tok, "->-"); k >= 0 {
					s, err := strconv.Atoi(tok[:k])
					t := n.lookup(tok[k+3:])
					if err != nil || s < 0 || s >= NumSlots || t == nil {
						return nil, fmt.Errorf("nodes.conf line %d: bad open slot %q", l.lineN, tok)
					}
					n.migrating[s] = t
				} else if k := strings.Index(tok, "-<-"); k >= 0 {
					s, err := strconv.Atoi(tok[:k])
					t := n.lookup(tok[k+3:])
					if err != nil || s < 0 || s >= NumSlots || t == nil {
						return nil, fmt.Errorf("nodes.conf line %d: bad open slot %q", l.lineN, tok)
					}
					n.importing[s] = t
				} else {
					return nil, fmt.Errorf("nodes.conf line %d: bad open slot %q", l.lineN, tok)
				}
				continue
			}
			a, b, ok := strings.Cut(tok, "-")
			lo, err1 := strconv.Atoi(a)
			hi := lo
			var err2 error
			if ok {
				hi, err2 = strconv.Atoi(b)
			}
			if err1 != nil || err2 != nil || lo < 0 || hi >= NumSlots || lo > hi {
				return nil, fmt.Errorf("nodes.conf line %d: bad slot range %q", l.lineN, tok)
			}
			for s := lo; s <= hi; s++ {
				n.delSlot(s)
				n.addSlot(p, s)
			}
		}
	}
	if s.IP != "" {
		n.self.ip = s.IP
	}
	if cfg.AnnounceIP != "" {
		n.self.ip = cfg.AnnounceIP
	}
	if s.Port != 0 {
		n.self.port = s.Port
		n.self.cport = s.CPort
		if n.self.cport == 0 {
			n.self.cport = s.Port + 10000
		}
	}
	n.todo |= todoView
	if m := n.masterOf(n.self); n.self.isSlave() && m != nil {
		// Redis's cron starts replication of a loaded replica's master.
		n.event(Event{Kind: EventReplicate, NodeID: m.id, IP: m.ip, Port: m.port})
	}
	return n, nil
}

// InfoText is the reply of CLUSTER INFO (lines end with \r\n).
func (n *Node) InfoText() string {
	assigned, ok, pfail, fail := 0, 0, 0, 0
	for s := 0; s < NumSlots; s++ {
		p := n.slots[s]
		if p == nil {
			continue
		}
		assigned++
		switch {
		case p.failed():
			fail++
		case p.timedOut():
			pfail++
		default:
			ok++
		}
	}
	state := "fail"
	if n.stateOK {
		state = "ok"
	}
	var b strings.Builder
	w := func(k string, v any) { fmt.Fprintf(&b, "%s:%v\r\n", k, v) }
	w("cluster_state", state)
	w("cluster_slots_assigned", assigned)
	w("cluster_slots_ok", ok)
	w("cluster_slots_pfail", pfail)
	w("cluster_slots_fail", fail)
	w("cluster_known_nodes", len(n.peers))
	w("cluster_size", n.size)
	w("cluster_current_epoch", n.currentEpoch)
	w("cluster_my_epoch", n.epochOf(n.self))
	var tot uint64
	for t, c := range n.sent {
		if c > 0 {
			w("cluster_stats_messages_"+MsgType(t).String()+"_sent", c)
			tot += c
		}
	}
	w("cluster_stats_messages_sent", tot)
	tot = 0
	for t, c := range n.received {
		if c > 0 {
			w("cluster_stats_messages_"+MsgType(t).String()+"_received", c)
			tot += c
		}
	}
	w("cluster_stats_messages_received", tot)
	w("total_cluster_links_buffer_limit_exceeded", n.linksOverLimit)
	return b.String()
}

// SlotNode is a node in a CLUSTER SLOTS entry: [ip, port, id, {}].
type SlotNode struct {
	IP       string
	Port     int
	ID       string
	Hostname string
}

// SlotRange is one CLUSTER SLOTS entry; Nodes[0] is the master.
type SlotRange struct {
	Start, End int
	Nodes      []SlotNode
}

// Slots is the reply of CLUSTER SLOTS, ordered by start slot. Replicas that
// are FAIL or at replication offset 0 are left out.
func (n *Node) Slots() []SlotRange {
	var out []SlotRange
	for _, id := range n.sortedIDs() {
		p := n.peers[id]
		if !p.isMaster() || p.numSlots == 0 {
			continue
		}
		nodes := []SlotNode{{p.ip, p.port, p.id, p.hostname}}
		for _, r := range n.replicasOf(p) {
			off := r.replOffset
			if r == n.self {
				off = n.myOffset
			}
			if r.failed() || off == 0 {
				continue
			}
			nodes = append(nodes, SlotNode{r.ip, r.port, r.id, r.hostname})
		}
		for _, r := range slotRanges(&p.slots) {
			out = append(out, SlotRange{Start: r[0], End: r[1], Nodes: nodes})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// ShardNode is a node of a CLUSTER SHARDS entry.
type ShardNode struct {
	ID         string
	Port       int
	IP         string
	Endpoint   string
	Hostname   string // "" for none
	Role       string // "master" or "replica"
	ReplOffset int64
	Health     string // "online", "fail" or "loading"
}

// Shard is one CLUSTER SHARDS entry: Slots holds start,end pairs.
type Shard struct {
	Slots []int
	Nodes []ShardNode
}

// Shards is the reply of CLUSTER SHARDS: one entry per master, also slotless.
func (n *Node) Shards() []Shard {
	var out []Shard
	sn := func(p *peer, role string) ShardNode {
		off := p.replOffset
		if p == n.self {
			off = n.myOffset
		}
		h := "online"
		if p.failed() {
			h = "fail"
		} else if role == "replica" && off == 0 {
			h = "loading"
		}
		return ShardNode{ID: p.id, Port: p.port, IP: p.ip, Endpoint: n.cfg.endpoint(p.ip, p.hostname), Hostname: p.hostname,
			Role: role, ReplOffset: off, Health: h}
	}
	for _, id := range n.sortedIDs() {
		p := n.peers[id]
		if !p.isMaster() || p.handshake() {
			continue
		}
		var sh Shard
		for _, r := range slotRanges(&p.slots) {
			sh.Slots = append(sh.Slots, r[0], r[1])
		}
		sh.Nodes = append(sh.Nodes, sn(p, "master"))
		for _, r := range n.replicasOf(p) {
			sh.Nodes = append(sh.Nodes, sn(r, "replica"))
		}
		out = append(out, sh)
	}
	return out
}

// LinkInfo describes a bus link (CLUSTER LINKS).
type LinkInfo struct {
	Direction  string // "to"
	Node       string
	CreateTime int64 // unix ms
}

// Links lists the links, per node its outbound link ("to") then the inbound
// one it last sent on ("from"), as Redis's CLUSTER LINKS.
func (n *Node) Links() []LinkInfo {
	var out []LinkInfo
	for _, id := range n.sortedIDs() {
		p := n.peers[id]
		if p.link != 0 {
			out = append(out, LinkInfo{Direction: "to", Node: p.id, CreateTime: p.linkCtime})
		}
		if p.inLink != 0 {
			out = append(out, LinkInfo{Direction: "from", Node: p.id, CreateTime: p.inLinkCtime})
		}
	}
	return out
}

// ReplicasText is the reply of CLUSTER REPLICAS <id>: the CLUSTER NODES
// lines (with their trailing \n) of the master's replicas.
func (n *Node) ReplicasText(id string) ([]string, error) {
	m := n.lookup(id)
	if m == nil {
		return nil, fmt.Errorf("ERR Unknown node %s", id)
	}
	if !m.isMaster() {
		return nil, fmt.Errorf("ERR The specified node is not a master")
	}
	var out []string
	for _, r := range n.replicasOf(m) {
		var b strings.Builder
		n.nodeLine(&b, r)
		out = append(out, b.String())
	}
	return out, nil
}
