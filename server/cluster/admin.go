package cluster

import (
	"fmt"
	"net"

	"github.com/redline-dev/redline/server/internal/planted"
)

// The admin operations mirror CLUSTER subcommands. They use the time of the
// last Step or Tick and return errors worded as Redis replies them (without
// the leading '-').

// Meet starts a handshake with the node at ip:port (bus port cport, 0 means
// port+10000), as CLUSTER MEET.
func (n *Node) Meet(ip string, port, cport int) error {
	if cport == 0 {
		cport = port + 10000
	}
	parsed := net.ParseIP(ip)
	if parsed == nil || port <= 0 || port > 65535 || cport <= 0 || cport > 65535 {
		return fmt.Errorf("ERR Invalid node address specified: %s:%d", ip, port)
	}
	ip = parsed.String()
	for _, p := range n.peers {
		if p.handshake() && p.ip == ip && p.port == port && p.cport == cport {
			return nil
		}
	}
	p := &peer{id: n.randomID(), flags: FlagHandshake | FlagMeet, ctime: n.now, ip: ip, port: port, cport: cport}
	n.addPeer(p)
	return nil
}

func checkSlot(s int) error {
	if s < 0 || s >= NumSlots {
		return fmt.Errorf("ERR Invalid or out of range slot")
	}
	return nil
}

// AddSlots assigns slots to myself (CLUSTER ADDSLOTS / ADDSLOTSRANGE).
func (n *Node) AddSlots(slots ...int) error {
	seen := map[int]bool{}
	for _, s := range slots {
		if err := checkSlot(s); err != nil {
			return err
		}
		if n.slots[s] != nil {
			return fmt.Errorf("ERR Slot %d is already busy", s)
		}
		if seen[s] {
			return fmt.Errorf("ERR Slot %d specified multiple times", s)
		}
		seen[s] = true
	}
	for _, s := range slots {
		delete(n.importing, s)
		n.addSlot(n.self, s)
	}
	n.todo |= todoUpdateState | todoSaveConfig
	return nil
}

// DelSlots unassigns slots (CLUSTER DELSLOTS / DELSLOTSRANGE).
func (n *Node) DelSlots(slots ...int) error {
	seen := map[int]bool{}
	for _, s := range slots {
		if err := checkSlot(s); err != nil {
			return err
		}
		if n.slots[s] == nil {
			return fmt.Errorf("ERR Slot %d is already unassigned", s)
		}
		if seen[s] {
			return fmt.Errorf("ERR Slot %d specified multiple times", s)
		}
		seen[s] = true
	}
	for _, s := range slots {
		n.delSlot(s)
	}
	n.todo |= todoUpdateState | todoSaveConfig
	return nil
}

// SlotRangeList expands start..end (inclusive) into a slot list, for the *RANGE commands.
func SlotRangeList(start, end int) []int {
	var r []int
	for s := start; s <= end; s++ {
		r = append(r, s)
	}
	return r
}

// SlotAction is the sub-command of CLUSTER SETSLOT.
type SlotAction uint8

// SETSLOT actions.
const (
	SetSlotMigrating SlotAction = iota + 1
	SetSlotImporting
	SetSlotStable
	SetSlotNode
)

// SetSlot is CLUSTER SETSLOT. keysInSlot is the number of keys this node
// holds in slot (the engine counts them).
func (n *Node) SetSlot(slot int, action SlotAction, id string, keysInSlot int) error {
	if n.self.isSlave() {
		return fmt.Errorf("ERR Please use SETSLOT only with masters.")
	}
	if err := checkSlot(slot); err != nil {
		return err
	}
	switch action {
	case SetSlotMigrating:
		if n.slots[slot] != n.self {
			return fmt.Errorf("ERR I'm not the owner of hash slot %d", slot)
		}
		p := n.lookup(id)
		if p == nil {
			return fmt.Errorf("ERR I don't know about node %s", id)
		}
		if p.isSlave() {
			return fmt.Errorf("ERR Target node is not a master")
		}
		n.migrating[slot] = p
	case SetSlotImporting:
		if n.slots[slot] == n.self {
			return fmt.Errorf("ERR I'm already the owner of hash slot %d", slot)
		}
		p := n.lookup(id)
		if p == nil {
			return fmt.Errorf("ERR I don't know about node %s", id)
		}
		if p.isSlave() {
			return fmt.Errorf("ERR Target node is not a master")
		}
		n.importing[slot] = p
	case SetSlotStable:
		delete(n.migrating, slot)
		delete(n.importing, slot)
	case SetSlotNode:
		p := n.lookup(id)
		if p == nil {
			return fmt.Errorf("ERR Unknown node %s", id)
		}
		if p.isSlave() {
			return fmt.Errorf("ERR Target node is not a master")
		}
		if n.slots[slot] == n.self && p != n.self && keysInSlot != 0 {
			return fmt.Errorf("ERR Can't assign hashslot %d to a different node while I still hold keys for this hash slot.", slot)
		}
		if keysInSlot == 0 {
			delete(n.migrating, slot)
		}
		wasMine := n.slots[slot] == n.self
		n.delSlot(slot)
		n.addSlot(p, slot)
		if wasMine && p != n.self && n.self.numSlots == 0 && !n.cfg.NoReplicaMigration {
			n.logf("Configuration change detected. Reconfiguring myself as a replica of %s", p.id)
			n.setMaster(p)
		}
		if p == n.self && n.importing[slot] != nil {
			if bumped, _ := n.BumpEpoch(); bumped {
				n.logf("configEpoch updated after importing slot %d", slot)
			}
			if planted.On(planted.SetslotFlushImported) {
				n.event(Event{Kind: EventDeleteSlots, Slots: []int{slot}})
			}
			delete(n.importing, slot)
			n.broadcast(n.header(MsgPong))
		}
	default:
		return fmt.Errorf("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP")
	}
	n.todo |= todoSaveConfig | todoUpdateState | todoView
	return nil
}

// Replicate makes this node a replica of id (CLUSTER REPLICATE). dbEmpty
// says whether this node holds no keys.
func (n *Node) Replicate(id string, dbEmpty bool) error {
	p := n.lookup(id)
	if p == nil {
		return fmt.Errorf("ERR Unknown node %s", id)
	}
	if p == n.self {
		return fmt.Errorf("ERR Can't replicate myself")
	}
	if p.isSlave() {
		return fmt.Errorf("ERR I can only replicate a master, not a replica.")
	}
	if n.self.isMaster() && (n.self.numSlots != 0 || !dbEmpty) {
		return fmt.Errorf("ERR To set a master the node must be empty and without assigned slots.")
	}
	n.setMaster(p)
	n.todo |= todoUpdateState | todoSaveConfig
	return nil
}

// Forget removes a node and bans it for 60 s (CLUSTER FORGET).
func (n *Node) Forget(id string) error {
	p := n.lookup(id)
	if p == nil {
		return fmt.Errorf("ERR Unknown node %s", id)
	}
	if p == n.self {
		return fmt.Errorf("ERR I tried hard but I can't forget myself...")
	}
	if n.self.isSlave() && n.self.master == p.id {
		return fmt.Errorf("ERR Can't forget my master!")
	}
	n.blacklist[id] = n.now + blacklistTTL
	n.delPeer(p)
	n.todo |= todoUpdateState | todoSaveConfig
	return nil
}

// Reset is CLUSTER RESET SOFT (hard=false) or HARD. dbEmpty says whether
// this node holds no keys.
func (n *Node) Reset(hard bool, dbEmpty bool) error {
	if n.self.isMaster() && !dbEmpty {
		return fmt.Errorf("ERR CLUSTER RESET can't be called with master nodes containing keys")
	}
	if n.self.isSlave() {
		n.setAsMaster(n.self)
		n.event(Event{Kind: EventBecomeMaster})
	}
	n.delNodeSlots(n.self)
	n.migrating = map[int]*peer{}
	n.importing = map[int]*peer{}
	n.each(func(p *peer) {
		if p != n.self {
			n.delPeer(p)
		}
	})
	n.resetManualFailover()
	if hard {
		n.currentEpoch, n.lastVoteEpoch, n.self.configEpoch = 0, 0, 0
		n.renamePeer(n.self, n.randomID())
		n.logf("Node hard reset, now I'm %s", n.self.id)
	}
	n.save(true)
	n.todo |= todoUpdateState | todoView
	return nil
}

// FailoverMode is the option of CLUSTER FAILOVER.
type FailoverMode uint8

// Failover modes.
const (
	FailoverDefault FailoverMode = iota
	FailoverForce
	FailoverTakeover
)

// Failover starts a manual failover on a replica (CLUSTER FAILOVER).
func (n *Node) Failover(mode FailoverMode) error {
	if n.self.isMaster() {
		return fmt.Errorf("ERR You should send CLUSTER FAILOVER to a replica")
	}
	m := n.masterOf(n.self)
	if m == nil {
		return fmt.Errorf("ERR I'm a replica but my master is unknown to me")
	}
	if mode == FailoverDefault && (m.failed() || m.link == 0) {
		return fmt.Errorf("ERR Master is down or failed, please use CLUSTER FAILOVER FORCE")
	}
	n.resetManualFailover()
	n.mfEnd = n.now + mfTimeout
	switch mode {
	case FailoverTakeover:
		n.logf("Taking over the master (user request).")
		n.BumpEpoch()
		n.replaceMaster()
	case FailoverForce:
		n.logf("Forced failover user request accepted.")
		n.mfCanStart = true
		n.todo |= todoHandleFailover
	default:
		n.logf("Manual failover user request accepted.")
		n.sendTo(m, n.header(MsgMFStart))
	}
	return nil
}

// BumpEpoch is CLUSTER BUMPEPOCH (clusterBumpConfigEpochWithoutConsensus): it
// reports whether the epoch was bumped (BUMPED) or not (STILL) and the
// resulting configEpoch.
func (n *Node) BumpEpoch() (bool, uint64) {
	var maxEpoch uint64
	for _, p := range n.peers {
		maxEpoch = max(maxEpoch, p.configEpoch)
	}
	if n.self.configEpoch == 0 || n.self.configEpoch != maxEpoch {
		n.currentEpoch++
		n.self.configEpoch = n.currentEpoch
		n.save(true)
		n.logf("New configEpoch set to %d", n.self.configEpoch)
		return true, n.self.configEpoch
	}
	return false, n.self.configEpoch
}

// SetConfigEpoch is CLUSTER SET-CONFIG-EPOCH.
func (n *Node) SetConfigEpoch(epoch int64) error {
	if epoch < 0 {
		return fmt.Errorf("ERR Invalid config epoch specified: %d", epoch)
	}
	if len(n.peers) > 1 {
		return fmt.Errorf("ERR The user can assign a config epoch only when the node does not know any other node.")
	}
	if n.self.configEpoch != 0 {
		return fmt.Errorf("ERR Node config epoch is already non-zero")
	}
	n.self.configEpoch = uint64(epoch)
	if n.currentEpoch < uint64(epoch) {
		n.currentEpoch = uint64(epoch)
	}
	n.save(true)
	n.todo |= todoUpdateState
	return nil
}

// FlushSlots unassigns all my slots (CLUSTER FLUSHSLOTS).
func (n *Node) FlushSlots(dbEmpty bool) error {
	if !dbEmpty {
		return fmt.Errorf("ERR DB must be empty to perform CLUSTER FLUSHSLOTS.")
	}
	n.delNodeSlots(n.self)
	n.todo |= todoUpdateState | todoSaveConfig
	return nil
}

// CountFailureReports is CLUSTER COUNT-FAILURE-REPORTS.
func (n *Node) CountFailureReports(id string) (int, error) {
	p := n.lookup(id)
	if p == nil {
		return 0, fmt.Errorf("ERR Unknown node %s", id)
	}
	return n.countReports(p), nil
}

// SaveConfig asks for nodes.conf to be written and fsynced (CLUSTER SAVECONFIG).
func (n *Node) SaveConfig() { n.save(true) }

// LinkFailed tells the node that the transport lost (or could not open) the
// outbound link; a new one is opened on the next Tick.
func (n *Node) LinkFailed(link uint64) {
	if p := n.peerByLink(link); p != nil {
		p.link = 0
		if p.pingSent == 0 {
			p.pingSent = n.now
		}
	}
}

// InboundClosed tells the node that the transport lost the accepted
// connection in: the node it belonged to has no inbound link any more.
func (n *Node) InboundClosed(in uint64) {
	for _, p := range n.peers {
		if p.inLink == in {
			p.inLink, p.inLinkCtime = 0, 0
		}
	}
}

// LinkBufferLimitExceeded counts a link the transport closed because its
// send buffer outgrew cluster-link-sendbuf-limit (CLUSTER INFO's
// total_cluster_links_buffer_limit_exceeded).
func (n *Node) LinkBufferLimitExceeded() { n.linksOverLimit++ }

// Publish broadcasts a PUBLISH to every connected node.
func (n *Node) Publish(channel, payload []byte) {
	m := n.header(MsgPublish)
	m.Channel, m.Payload = channel, payload
	n.broadcast(m)
}

// Reconfigure applies a changed configuration at runtime (CONFIG SET of a
// cluster-* directive: Redis reads them live), keeping the node's source of
// randomness.
func (n *Node) Reconfigure(c Config) {
	c.fill()
	c.Rand = n.cfg.Rand
	n.cfg = c
	n.nt = c.NodeTimeout.Milliseconds()
	n.setNoFailoverFlag()
	n.todo |= todoView | todoSaveConfig
}

// PublishShard sends a PUBLISHSHARD to the other nodes of this node's shard
// (its master and the master's replicas), as Redis propagates SPUBLISH.
func (n *Node) PublishShard(channel, payload []byte) {
	m := n.header(MsgPublishShard)
	m.Channel, m.Payload = channel, payload
	master := n.self.id
	if n.self.isSlave() {
		master = n.self.master
	}
	for _, id := range n.sortedIDs() {
		p := n.peers[id]
		if p == n.self || p.handshake() || p.link == 0 {
			continue
		}
		if p.id == master || p.master == master {
			n.sendTo(p, m)
		}
	}
}

// DropPackets makes Step ignore every incoming message of type t (counted as
// received), as Redis's DEBUG DROP-CLUSTER-PACKET-FILTER does; a negative t
// stops dropping.
func (n *Node) DropPackets(t int) {
	if t < 0 {
		n.dropType = 0
		return
	}
	n.dropType = t + 1
}
