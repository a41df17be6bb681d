package cluster

import (
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"sort"
	"strconv"
	"time"
)

// peer is one entry of the node table (Redis's clusterNode).
type peer struct {
	id           string
	flags        Flags
	ctime        int64
	ip           string
	port, cport  int
	master       string // id of the master when a replica
	pingSent     int64
	pongReceived int64
	dataReceived int64
	failTime     int64
	votedTime    int64
	orphanedTime int64
	configEpoch  uint64
	link         uint64 // outbound link id, 0 = none
	linkCtime    int64
	inLink       uint64 // the accepted connection this node last sent on, 0 = none
	inLinkCtime  int64
	slots        SlotBitmap
	numSlots     int
	reports      map[string]int64 // reporter id -> time of report
	replOffset   int64
	hostname     string // announced hostname, "" for none
}

func (p *peer) is(f Flags) bool    { return p.flags&f != 0 }
func (p *peer) isMaster() bool     { return p.flags&FlagMaster != 0 }
func (p *peer) isSlave() bool      { return p.flags&FlagSlave != 0 }
func (p *peer) failed() bool       { return p.flags&FlagFail != 0 }
func (p *peer) timedOut() bool     { return p.flags&FlagPFail != 0 }
func (p *peer) handshake() bool    { return p.flags&FlagHandshake != 0 }
func (p *peer) cantFailover() bool { return p.flags&FlagNoFailover != 0 }
func (p *peer) busAddr() string    { return net.JoinHostPort(p.ip, strconv.Itoa(p.cport)) }

type todo uint8

const (
	todoUpdateState todo = 1 << iota
	todoSaveConfig
	todoFsyncConfig
	todoHandleFailover
	todoHandleManualFailover
	todoView
)

// Node is the cluster state machine of one Redis Cluster node. It does no I/O,
// starts no goroutine and reads no clock: it changes only through Step, Tick
// and the admin methods, and hands its outputs out through Ready. It is not
// safe for concurrent use.
type Node struct {
	cfg Config
	nt  int64 // node timeout in ms
	rng *rand.Rand
	now int64 // ms, the latest time seen

	self  *peer
	peers map[string]*peer
	ids   []string // sorted ids of peers, rebuilt when dirty
	dirty bool

	currentEpoch  uint64
	lastVoteEpoch uint64

	slots     [NumSlots]*peer
	migrating map[int]*peer
	importing map[int]*peer

	stateOK           bool
	size              int
	amongMinorityTime int64
	firstCallTime     int64

	// replica election
	authTime  int64
	authCount int
	authSent  bool
	authRank  int
	authEpoch uint64

	// manual failover
	mfEnd          int64
	mfCanStart     bool
	mfSlave        string
	mfMasterOffset int64
	mfPaused       bool // master side: the engine confirmed the write pause

	// replication inputs
	myOffset      int64
	masterLinkUp  bool
	masterLastIO  int64
	replDownSince int64

	blacklist map[string]int64
	nextLink  uint64
	iteration uint64
	pfailSeen int
	todo      todo

	sent, received [msgTypeCount]uint64
	// dropType is DEBUG DROP-CLUSTER-PACKET-FILTER's message type plus
	// one (0: drop nothing).
	dropType int
	// linksOverLimit is total_cluster_links_buffer_limit_exceeded.
	linksOverLimit int64

	out Ready
}

// Self describes the local node to NewNode.
type Self struct {
	// ID is the 40-hex node id; empty means a random one.
	ID    string
	IP    string
	Port  int
	CPort int // 0 means Port+10000
}

// NewNode returns a fresh node (a master without slots that knows nobody), as
// Redis creates when there is no nodes.conf.
func NewNode(cfg Config, s Self, now time.Time) *Node {
	cfg.fill()
	n := newNode(cfg, s.ID, now)
	if s.ID == "" {
		n.renamePeer(n.self, n.randomID())
	}
	n.self.ip = cfg.AnnounceIP
	if n.self.ip == "" {
		n.self.ip = s.IP
	}
	n.self.port = s.Port
	n.self.cport = s.CPort
	if n.self.cport == 0 && s.Port != 0 {
		n.self.cport = s.Port + 10000
	}
	n.save(true)
	return n
}

func newNode(cfg Config, id string, now time.Time) *Node {
	n := &Node{
		cfg:            cfg,
		nt:             cfg.NodeTimeout.Milliseconds(),
		rng:            cfg.Rand,
		now:            now.UnixMilli(),
		peers:          map[string]*peer{},
		migrating:      map[int]*peer{},
		importing:      map[int]*peer{},
		blacklist:      map[string]int64{},
		mfMasterOffset: -1,
	}
	if n.rng == nil {
		h := fnv.New64a()
		h.Write([]byte(id))
		n.rng = rand.New(rand.NewPCG(h.Sum64(), uint64(now.UnixNano())))
	}
	n.self = &peer{id: id, flags: FlagMyself | FlagMaster, ctime: n.now}
	n.setNoFailoverFlag()
	n.addPeer(n.self)
	n.todo |= todoView
	return n
}

func (n *Node) randomID() string {
	var b [20]byte
	for i := range b {
		b[i] = byte(n.rng.Uint32())
	}
	return hex.EncodeToString(b[:])
}

// ---- table helpers ----

func (n *Node) addPeer(p *peer) {
	n.peers[p.id] = p
	n.dirty = true
}

func (n *Node) sortedIDs() []string {
	if n.dirty {
		n.ids = n.ids[:0]
		for id := range n.peers {
			n.ids = append(n.ids, id)
		}
		sort.Strings(n.ids)
		n.dirty = false
	}
	return n.ids
}

// each calls f for every peer in id order (f may delete peers).
func (n *Node) each(f func(p *peer)) {
	ids := append([]string(nil), n.sortedIDs()...)
	for _, id := range ids {
		if p := n.peers[id]; p != nil {
			f(p)
		}
	}
}

func (n *Node) lookup(id string) *peer {
	if id == "" {
		return nil
	}
	return n.peers[id]
}

func (n *Node) peerByLink(link uint64) *peer {
	if link == 0 {
		return nil
	}
	for _, id := range n.sortedIDs() {
		if p := n.peers[id]; p.link == link {
			return p
		}
	}
	return nil
}

func (n *Node) renamePeer(p *peer, id string) {
	old := p.id
	delete(n.peers, old)
	p.id = id
	n.peers[id] = p
	n.dirty = true
	for _, q := range n.peers {
		if q.master == old {
			q.master = id
		}
	}
}

func (n *Node) masterOf(p *peer) *peer {
	if p.isMaster() {
		return nil
	}
	return n.lookup(p.master)
}

// replicasOf lists the known replicas of m in id order.
func (n *Node) replicasOf(m *peer) []*peer {
	var r []*peer
	for _, id := range n.sortedIDs() {
		if p := n.peers[id]; p.isSlave() && p.master == m.id {
			r = append(r, p)
		}
	}
	return r
}

func (n *Node) countNonFailingReplicas(m *peer) int {
	c := 0
	for _, r := range n.replicasOf(m) {
		if !r.failed() {
			c++
		}
	}
	return c
}

func (n *Node) freeLink(p *peer) {
	if p.link != 0 {
		n.out.CloseLinks = append(n.out.CloseLinks, p.link)
		p.link = 0
	}
}

func (n *Node) delPeer(p *peer) {
	for s := 0; s < NumSlots; s++ {
		if n.importing[s] == p {
			delete(n.importing, s)
		}
		if n.migrating[s] == p {
			delete(n.migrating, s)
		}
		if n.slots[s] == p {
			n.delSlot(s)
		}
	}
	for _, q := range n.peers {
		delete(q.reports, p.id)
	}
	n.freeLink(p)
	delete(n.peers, p.id)
	n.dirty = true
	n.todo |= todoView
}

func (n *Node) addSlot(p *peer, s int) bool {
	if n.slots[s] != nil {
		return false
	}
	p.slots.Set(s)
	p.numSlots++
	n.slots[s] = p
	n.todo |= todoView
	return true
}

func (n *Node) delSlot(s int) bool {
	p := n.slots[s]
	if p == nil {
		return false
	}
	p.slots.Clear(s)
	p.numSlots--
	n.slots[s] = nil
	n.todo |= todoView
	return true
}

func (n *Node) delNodeSlots(p *peer) int {
	c := 0
	for s := 0; s < NumSlots; s++ {
		if n.slots[s] == p {
			n.delSlot(s)
			c++
		}
	}
	return c
}

// setAsMaster is clusterSetNodeAsMaster.
func (n *Node) setAsMaster(p *peer) {
	if p.isMaster() {
		return
	}
	if p.master != "" && p != n.self {
		p.flags |= FlagMigrateTo
	}
	p.flags &^= FlagSlave
	p.flags |= FlagMaster
	p.master = ""
	n.todo |= todoSaveConfig | todoUpdateState | todoView
}

func (n *Node) addReport(p *peer, reporter string) bool {
	if p.reports == nil {
		p.reports = map[string]int64{}
	}
	_, had := p.reports[reporter]
	p.reports[reporter] = n.now
	return !had
}

func (n *Node) cleanupReports(p *peer) {
	maxAge := n.nt * failReportValidityMult
	for id, t := range p.reports {
		if n.now-t > maxAge {
			delete(p.reports, id)
		}
	}
}

func (n *Node) countReports(p *peer) int {
	n.cleanupReports(p)
	return len(p.reports)
}

// ---- output helpers ----

func (n *Node) logf(format string, args ...any) {
	n.out.Logs = append(n.out.Logs, fmt.Sprintf(format, args...))
}

func (n *Node) save(fsync bool) {
	n.todo |= todoSaveConfig
	if fsync {
		n.todo |= todoFsyncConfig
	}
}

func (n *Node) event(e Event) { n.out.Events = append(n.out.Events, e) }

// header builds a message with the header fields filled (clusterBuildMessageHdr).
func (n *Node) header(t MsgType) Message {
	m := Message{Type: t, Sender: n.self.id, CurrentEpoch: n.currentEpoch, IP: n.self.ip,
		Port: uint16(n.self.port), CPort: uint16(n.self.cport), Flags: n.self.flags, StateOK: n.stateOK}
	master := n.masterOf(n.self)
	if n.self.isSlave() {
		m.Master = n.self.master
	}
	if master != nil {
		m.Slots = master.slots
		m.ConfigEpoch = master.configEpoch
	} else {
		m.Slots = n.self.slots
		m.ConfigEpoch = n.self.configEpoch
	}
	m.Offset = n.myOffset
	if t == MsgPing || t == MsgPong || t == MsgMeet {
		m.Hostname = n.self.hostname
	}
	if n.self.isMaster() && n.mfEnd != 0 && n.mfPaused {
		m.MFlags |= MFlagPaused
	}
	return m
}

// sendTo queues m on p's outbound link; nothing happens without a link.
func (n *Node) sendTo(p *peer, m Message) {
	if p.link == 0 {
		return
	}
	n.sent[m.Type]++
	n.out.Messages = append(n.out.Messages, Envelope{Link: p.link, Addr: p.busAddr(), To: p.id, Msg: m})
}

// reply queues m on the link l a message arrived on.
func (n *Node) reply(l Link, m Message) {
	if l.In != 0 {
		n.sent[m.Type]++
		n.out.Messages = append(n.out.Messages, Envelope{In: l.In, Msg: m})
		return
	}
	if p := n.peerByLink(l.Out); p != nil {
		n.sendTo(p, m)
	}
}

// broadcast sends m to every connected node that finished the handshake.
func (n *Node) broadcast(m Message) {
	for _, id := range n.sortedIDs() {
		p := n.peers[id]
		if p == n.self || p.handshake() || p.link == 0 {
			continue
		}
		n.sendTo(p, m)
	}
}

// ---- public read side ----

// ID returns this node's id.
func (n *Node) ID() string { return n.self.id }

// Myself returns the address this node announces.
func (n *Node) Myself() (ip string, port, cport int) { return n.self.ip, n.self.port, n.self.cport }

// IsMaster reports whether this node is a master.
func (n *Node) IsMaster() bool { return n.self.isMaster() }

// MasterID returns the id of the master this node replicates, or "".
func (n *Node) MasterID() string {
	if n.self.isMaster() {
		return ""
	}
	return n.self.master
}

// StateOK reports cluster_state:ok.
func (n *Node) StateOK() bool { return n.stateOK }

// CurrentEpoch returns currentEpoch.
func (n *Node) CurrentEpoch() uint64 { return n.currentEpoch }

// ConfigEpoch returns this node's configEpoch.
func (n *Node) ConfigEpoch() uint64 { return n.self.configEpoch }

// LastVoteEpoch returns lastVoteEpoch.
func (n *Node) LastVoteEpoch() uint64 { return n.lastVoteEpoch }

// SlotOwner returns the id of the node serving slot, or "".
func (n *Node) SlotOwner(slot int) string {
	if p := n.slots[slot]; p != nil {
		return p.id
	}
	return ""
}

// NodeIDs returns the ids of all known nodes, sorted.
func (n *Node) NodeIDs() []string { return append([]string(nil), n.sortedIDs()...) }

// NodeInfo is a read-only description of a known node.
type NodeInfo struct {
	ID                     string
	IP                     string
	Port, CPort            int
	Flags                  Flags
	MasterID               string
	PingSent, PongReceived int64 // unix ms
	ConfigEpoch            uint64
	Connected              bool
	NumSlots               int
	FailureReports         int
	ReplOffset             int64
}

// Lookup describes the node with the given id.
func (n *Node) Lookup(id string) (NodeInfo, bool) {
	p := n.lookup(id)
	if p == nil {
		return NodeInfo{}, false
	}
	return n.info(p), true
}

func (n *Node) info(p *peer) NodeInfo {
	off := p.replOffset
	if p == n.self {
		off = n.myOffset
	}
	return NodeInfo{ID: p.id, IP: p.ip, Port: p.port, CPort: p.cport, Flags: p.flags, MasterID: p.master,
		PingSent: p.pingSent, PongReceived: p.pongReceived, ConfigEpoch: p.configEpoch,
		Connected: p.link != 0 || p == n.self, NumSlots: p.numSlots, FailureReports: len(p.reports), ReplOffset: off}
}

// Replicas returns the ids of the known replicas of the master id.
func (n *Node) Replicas(id string) []string {
	m := n.lookup(id)
	if m == nil {
		return nil
	}
	var r []string
	for _, p := range n.replicasOf(m) {
		r = append(r, p.id)
	}
	return r
}

// View builds the routing snapshot.
func (n *Node) View() *SlotView {
	v := &SlotView{Migrating: map[int]int16{}, Importing: map[int]int16{}, Master: -1,
		StateOK: n.stateOK, AllowReadsWhenDown: n.cfg.AllowReadsWhenDown, Endpoints: true}
	idx := map[*peer]int16{}
	get := func(p *peer) int16 {
		if i, ok := idx[p]; ok {
			return i
		}
		i := int16(len(v.Nodes))
		idx[p] = i
		v.Nodes = append(v.Nodes, ViewNode{ID: p.id, IP: p.ip, Port: p.port, Endpoint: n.cfg.endpoint(p.ip, p.hostname)})
		return i
	}
	v.Self = get(n.self)
	if m := n.masterOf(n.self); m != nil {
		v.Master = get(m)
	}
	// Runs of slots share an owner: look the index up once per run.
	var last *peer
	lastIdx := int16(-1)
	for s := 0; s < NumSlots; s++ {
		if p := n.slots[s]; p != last {
			last = p
			if p != nil {
				lastIdx = get(p)
			} else {
				lastIdx = -1
			}
		}
		v.Owner[s] = lastIdx
	}
	for _, s := range sortedKeys(n.migrating) {
		v.Migrating[s] = get(n.migrating[s])
	}
	for _, s := range sortedKeys(n.importing) {
		v.Importing[s] = get(n.importing[s])
	}
	return v
}

// Ready returns the outputs accumulated since the last call and clears them.
func (n *Node) Ready() Ready {
	n.beforeSleep()
	r := n.out
	n.out = Ready{}
	return r
}

// beforeSleep performs deferred work (clusterBeforeSleep).
func (n *Node) beforeSleep() {
	t := n.todo
	n.todo &^= todoHandleManualFailover | todoHandleFailover
	if t&todoHandleManualFailover != 0 {
		if n.self.isSlave() {
			n.handleManualFailover()
			n.handleReplicaFailover()
		}
	} else if t&todoHandleFailover != 0 {
		n.handleReplicaFailover()
	}
	if n.todo&todoUpdateState != 0 {
		n.updateState()
	}
	if n.todo&todoSaveConfig != 0 {
		n.out.SaveConfig = true
		n.out.Fsync = n.out.Fsync || n.todo&todoFsyncConfig != 0
		n.out.NodesConf = n.NodesConf()
	}
	if n.todo&todoView != 0 {
		n.out.View = n.View()
	}
	n.todo = 0
}

// ---- replication inputs ----

// SetReplOffset sets this node's replication offset (master_repl_offset for a
// master, the processed offset for a replica).
func (n *Node) SetReplOffset(off int64) {
	n.myOffset = off
	if n.mfEnd != 0 && n.self.isSlave() {
		n.todo |= todoHandleManualFailover
	}
}

// WritesPaused confirms, on a master, that client writes are paused for a
// manual failover (EventPauseWrites) and gives the final replication offset.
// Only then does the master tell its replica (PAUSED flag) the offset to
// catch up with, so the default manual failover loses no acknowledged write.
func (n *Node) WritesPaused(offset int64) {
	n.myOffset = offset
	if n.self.isMaster() && n.mfEnd != 0 {
		n.mfPaused = true
	}
}

// SetMasterLinkStatus tells a replica whether its replication link is up; at
// is the last interaction with the master when up, or when it went down.
// A zero at with up false is a link that was never up since the node
// started or last was a master: down "since ever", as Redis's
// repl_down_since 0, which makes the data's age unbounded for the
// failover rule (handleReplicaFailover).
func (n *Node) SetMasterLinkStatus(up bool, at time.Time) {
	ms := at.UnixMilli()
	if up {
		n.masterLinkUp = true
		n.masterLastIO = ms
		return
	}
	if at.IsZero() {
		n.replDownSince = 0
	} else if n.masterLinkUp || n.replDownSince == 0 {
		n.replDownSince = ms
	}
	n.masterLinkUp = false
}

// MasterLinkDownSince is what SetMasterLinkStatus last said of a down
// link: when it went down, or the zero time for "since ever"; ok is false
// while the link is up.
func (n *Node) MasterLinkDownSince() (since time.Time, ok bool) {
	if n.masterLinkUp {
		return time.Time{}, false
	}
	if n.replDownSince == 0 {
		return time.Time{}, true
	}
	return time.UnixMilli(n.replDownSince), true
}

// setNoFailoverFlag mirrors cluster-replica-no-failover in myself's flags
// (clusterUpdateMyselfFlags): siblings leave such a replica out of their rank.
func (n *Node) setNoFailoverFlag() {
	n.self.hostname = n.cfg.Hostname
	if n.cfg.ReplicaNoFailover {
		n.self.flags |= FlagNoFailover
	} else {
		n.self.flags &^= FlagNoFailover
	}
}
