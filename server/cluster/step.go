package cluster

import (
	"net"
	"time"

	"github.com/redline-dev/redline/server/internal/planted"
)

// Step processes one message from a peer (clusterProcessPacket). now is the
// time the message was received.
func (n *Node) Step(m Message, now time.Time) {
	n.setNow(now)
	if int(m.Type) >= len(n.received) || !validID(m.Sender) || (m.Master != "" && !validID(m.Master)) {
		return
	}
	n.received[m.Type]++
	if int(m.Type)+1 == n.dropType {
		return // DEBUG DROP-CLUSTER-PACKET-FILTER, counted as received as in Redis
	}
	if m.IP != "" && net.ParseIP(m.IP) == nil {
		m.IP = "" // use the socket's address
	}
	var linkPeer *peer
	if m.Link.Out != 0 {
		if linkPeer = n.peerByLink(m.Link.Out); linkPeer == nil {
			return // a link we already dropped
		}
	}
	var sender *peer
	if linkPeer != nil && !linkPeer.handshake() {
		sender = linkPeer
	} else {
		sender = n.lookup(m.Sender)
	}
	if sender == n.self {
		return
	}
	if sender != nil {
		sender.dataReceived = n.now
		if m.Link.In != 0 && !sender.handshake() && sender.inLink != m.Link.In {
			// setClusterNodeToInboundClusterLink: the connection this
			// node talks to us on (a newer one replaces the old).
			sender.inLink, sender.inLinkCtime = m.Link.In, n.now
		}
	}
	if sender != nil && !sender.handshake() {
		if m.CurrentEpoch > n.currentEpoch {
			n.currentEpoch = m.CurrentEpoch
		}
		if m.ConfigEpoch > sender.configEpoch {
			sender.configEpoch = m.ConfigEpoch
			n.save(true)
		}
		sender.replOffset = m.Offset
		if n.mfEnd != 0 && n.self.isSlave() && n.self.master == sender.id &&
			m.MFlags&MFlagPaused != 0 && n.mfMasterOffset == -1 {
			n.mfMasterOffset = m.Offset
			n.todo |= todoHandleManualFailover
			n.logf("Received replication offset for paused master manual failover: %d", m.Offset)
		}
	}

	switch m.Type {
	case MsgPing, MsgPong, MsgMeet:
		n.stepPing(m, sender, linkPeer)
	case MsgFail:
		if sender == nil {
			n.logf("Ignoring FAIL message from unknown node %s about %s", m.Sender, m.About)
			break
		}
		if f := n.lookup(m.About); f != nil && !f.is(FlagFail|FlagMyself) {
			n.logf("FAIL message received from %s about %s", m.Sender, m.About)
			f.flags |= FlagFail
			f.flags &^= FlagPFail
			f.failTime = n.now
			n.todo |= todoSaveConfig | todoUpdateState | todoView
		}
	case MsgPublish, MsgPublishShard:
		if sender != nil {
			n.event(Event{Kind: EventPublish, Channel: m.Channel, Payload: m.Payload, Shard: m.Type == MsgPublishShard})
		}
	case MsgAuthRequest:
		if sender != nil {
			n.sendAuthIfNeeded(sender, &m)
		}
	case MsgAuthAck:
		if sender != nil && sender.isMaster() && sender.numSlots > 0 && m.CurrentEpoch >= n.authEpoch {
			n.authCount++
			n.todo |= todoHandleFailover
		}
	case MsgMFStart:
		if sender == nil || sender.master != n.self.id || !sender.isSlave() {
			// Redis ignores it silently; the line is the evidence when a
			// manual failover times out (the replica's role had not
			// reached this primary yet).
			n.logf("Manual failover request from %s ignored: it is not known here as a replica of mine.", m.Sender)
			break
		}
		n.resetManualFailover()
		n.mfEnd = n.now + mfTimeout
		n.mfSlave = sender.id
		n.event(Event{Kind: EventPauseWrites, Until: time.UnixMilli(n.now + mfTimeout*mfPauseMult)})
		n.logf("Manual failover requested by replica %s.", sender.id)
		// Redis pauses and pings the replica right here with the offset at
		// which it paused. Here the engine pauses on EventPauseWrites and
		// confirms with WritesPaused(offset); from then on every Tick pings
		// the replica (as clusterCron does during a manual failover) with
		// the PAUSED flag and that offset.
	case MsgUpdate:
		if sender == nil {
			break
		}
		p := n.lookup(m.About)
		if p == nil || p == n.self || p.configEpoch >= m.UpdateConfigEpoch {
			break
		}
		if p.isSlave() {
			n.setAsMaster(p)
		}
		p.configEpoch = m.UpdateConfigEpoch
		n.updateSlotsConfigWith(p, p.configEpoch, &m.UpdateSlots)
	}
	n.beforeSleep0()
}

// beforeSleep0 runs the deferred election work right away, as Redis does in
// beforeSleep after processing input; saving and views wait for Ready.
func (n *Node) beforeSleep0() {
	t := n.todo
	if t&(todoHandleManualFailover|todoHandleFailover) == 0 && t&todoUpdateState == 0 {
		return
	}
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
}

func (n *Node) setNow(t time.Time) {
	if ms := t.UnixMilli(); ms > n.now {
		n.now = ms
	}
}

func (n *Node) stepPing(m Message, sender, linkPeer *peer) {
	if m.Type == MsgPing || m.Type == MsgMeet {
		if (m.Type == MsgMeet || n.self.ip == "") && n.cfg.AnnounceIP == "" &&
			m.Link.LocalIP != "" && m.Link.LocalIP != n.self.ip {
			n.self.ip = m.Link.LocalIP
			n.logf("IP address for this node updated to %s", n.self.ip)
			n.save(false)
			n.todo |= todoView
		}
		if sender == nil && m.Type == MsgMeet {
			ip := m.IP
			if ip == "" {
				ip = m.Link.RemoteIP
			}
			p := &peer{id: n.randomID(), flags: FlagHandshake, ctime: n.now, ip: ip, port: int(m.Port), cport: int(m.CPort)}
			n.addPeer(p)
			n.save(false)
			n.processGossip(&m, sender)
		}
		n.reply(m.Link, n.pingMessage(MsgPong))
	}

	if m.Link.Out != 0 {
		lp := linkPeer
		if lp.handshake() {
			if sender != nil {
				n.logf("Handshake: we already know node %s, updating the address if needed.", sender.id)
				if n.updateAddressIfNeeded(sender, m.Link, &m) {
					n.todo |= todoSaveConfig | todoUpdateState
				}
				n.delPeer(lp)
				return
			}
			n.renamePeer(lp, m.Sender)
			n.logf("Handshake with node %s completed.", lp.id)
			lp.flags &^= FlagHandshake
			lp.flags |= m.Flags & (FlagMaster | FlagSlave)
			n.save(false)
			n.todo |= todoView
			sender = lp
		} else if lp.id != m.Sender {
			lp.flags |= FlagNoAddr
			lp.ip, lp.port, lp.cport = "", 0, 0
			n.freeLink(lp)
			n.save(false)
			return
		}
	}

	if sender != nil {
		sender.flags = sender.flags&^FlagNoFailover | m.Flags&FlagNoFailover
	}
	if sender != nil && m.Type == MsgPing && !sender.handshake() && n.updateAddressIfNeeded(sender, m.Link, &m) {
		n.todo |= todoSaveConfig | todoUpdateState
	}
	if m.Link.Out != 0 && m.Type == MsgPong {
		lp := linkPeer
		lp.pongReceived = n.now
		lp.pingSent = 0
		if lp.timedOut() {
			lp.flags &^= FlagPFail
			n.todo |= todoSaveConfig | todoUpdateState
		} else if lp.failed() {
			n.clearFailureIfNeeded(lp)
		}
	}

	if sender == nil {
		return
	}
	// Role switch.
	if m.Master == "" {
		n.setAsMaster(sender)
	} else {
		master := n.lookup(m.Master)
		if sender.isMaster() {
			n.delNodeSlots(sender)
			sender.flags &^= FlagMaster | FlagMigrateTo
			sender.flags |= FlagSlave
			n.todo |= todoSaveConfig | todoUpdateState | todoView
		}
		if master != nil && sender.master != master.id {
			sender.master = master.id
			master.flags |= FlagMigrateTo
			n.save(false)
		}
	}

	// Slots.
	senderMaster := sender
	if !sender.isMaster() {
		senderMaster = n.masterOf(sender)
	}
	dirty := senderMaster != nil && senderMaster.slots != m.Slots
	if sender.isMaster() && dirty {
		n.updateSlotsConfigWith(sender, m.ConfigEpoch, &m.Slots)
	}
	if dirty {
		for s := 0; s < NumSlots; s++ {
			if !m.Slots.Has(s) {
				continue
			}
			owner := n.slots[s]
			if owner == sender || owner == nil {
				continue
			}
			if owner.configEpoch > m.ConfigEpoch {
				n.logf("Node %s has old slots configuration, sending an UPDATE message about %s", sender.id, owner.id)
				u := n.header(MsgUpdate)
				u.About = owner.id
				u.UpdateConfigEpoch = owner.configEpoch
				u.UpdateSlots = owner.slots
				n.sendTo(sender, u)
				break
			}
		}
	}
	if n.self.isMaster() && sender.isMaster() && m.ConfigEpoch == n.self.configEpoch {
		n.handleEpochCollision(sender)
	}
	n.processGossip(&m, sender)
	n.updateHostname(sender, m.Hostname)
}

// updateAddressIfNeeded is nodeUpdateAddressIfNeeded.
func (n *Node) updateAddressIfNeeded(p *peer, l Link, m *Message) bool {
	if p == n.self || (l.Out != 0 && l.Out == p.link) {
		return false
	}
	ip := m.IP
	if ip == "" {
		ip = l.RemoteIP
	}
	if ip == "" || (ip == p.ip && int(m.Port) == p.port && int(m.CPort) == p.cport) {
		return false
	}
	p.ip, p.port, p.cport = ip, int(m.Port), int(m.CPort)
	n.freeLink(p)
	p.flags &^= FlagNoAddr
	n.logf("Address updated for node %s, now %s:%d", p.id, ip, p.port)
	n.todo |= todoView
	if n.self.isSlave() && n.self.master == p.id {
		n.event(Event{Kind: EventReplicate, NodeID: p.id, IP: p.ip, Port: p.port})
	}
	return true
}

func (n *Node) clearFailureIfNeeded(p *peer) {
	if p.isSlave() || p.numSlots == 0 {
		n.logf("Clear FAIL state for node %s: is reachable again.", p.id)
		p.flags &^= FlagFail
		n.todo |= todoSaveConfig | todoUpdateState | todoView
	}
	if p.isMaster() && p.numSlots > 0 && n.now-p.failTime > n.nt*failUndoTimeMult {
		n.logf("Clear FAIL state for node %s: is reachable again and nobody is serving its slots after some time.", p.id)
		p.flags &^= FlagFail
		n.todo |= todoSaveConfig | todoUpdateState | todoView
	}
}

func (n *Node) markFailingIfNeeded(p *peer) {
	if !p.timedOut() || p.failed() {
		return
	}
	failures := n.countReports(p)
	if n.self.isMaster() {
		failures++
	}
	if failures < n.size/2+1 {
		return
	}
	n.logf("Marking node %s as failing (quorum reached).", p.id)
	p.flags &^= FlagPFail
	p.flags |= FlagFail
	p.failTime = n.now
	f := n.header(MsgFail)
	f.About = p.id
	n.broadcast(f)
	n.todo |= todoUpdateState | todoSaveConfig | todoView
}

func (n *Node) processGossip(m *Message, sender *peer) {
	for i := range m.Gossip {
		g := &m.Gossip[i]
		if !validID(g.ID) || (g.IP != "" && net.ParseIP(g.IP) == nil) {
			continue
		}
		p := n.lookup(g.ID)
		if p != nil {
			if sender != nil && sender.isMaster() && p != n.self {
				if g.Flags&(FlagFail|FlagPFail) != 0 {
					if n.addReport(p, sender.id) {
						n.logf("Node %s reported node %s as not reachable.", sender.id, p.id)
					}
					n.markFailingIfNeeded(p)
				} else if _, ok := p.reports[sender.id]; ok {
					delete(p.reports, sender.id)
					n.logf("Node %s reported node %s is back online.", sender.id, p.id)
				}
			}
			if g.Flags&(FlagFail|FlagPFail) == 0 && p.pingSent == 0 && n.countReports(p) == 0 {
				pong := int64(g.PongReceived) * 1000
				if pong <= n.now+500 && pong > p.pongReceived {
					p.pongReceived = pong
				}
			}
			if p.is(FlagFail|FlagPFail) && g.Flags&FlagNoAddr == 0 && g.Flags&(FlagFail|FlagPFail) == 0 &&
				(p.ip != g.IP || p.port != int(g.Port) || p.cport != int(g.CPort)) {
				n.freeLink(p)
				p.ip, p.port, p.cport = g.IP, int(g.Port), int(g.CPort)
				p.flags &^= FlagNoAddr
				n.todo |= todoView
			}
			continue
		}
		if sender != nil && g.Flags&FlagNoAddr == 0 && n.blacklist[g.ID] <= n.now && validID(g.ID) {
			// Redis adds the node with the gossiped flags but no role
			// pointers; the handshake PONG fixes the rest.
			n.addPeer(&peer{id: g.ID, flags: g.Flags &^ (FlagMyself | FlagPFail | FlagFail | FlagHandshake | FlagMeet),
				ctime: n.now, ip: g.IP, port: int(g.Port), cport: int(g.CPort)})
			if n.peers[g.ID].flags&(FlagMaster|FlagSlave) == 0 {
				n.peers[g.ID].flags |= FlagMaster
			}
			n.save(false)
			n.todo |= todoView
		}
	}
}

func validID(id string) bool {
	if len(id) != 40 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// updateSlotsConfigWith is clusterUpdateSlotsConfigWith.
func (n *Node) updateSlotsConfigWith(sender *peer, epoch uint64, slots *SlotBitmap) {
	if sender == n.self {
		n.logf("Discarding UPDATE message about myself.")
		return
	}
	cur := n.self
	if !n.self.isMaster() {
		cur = n.masterOf(n.self)
	}
	var newMaster *peer
	var dirty []int
	senderSlots, migratedOurs := 0, 0
	for s := 0; s < NumSlots; s++ {
		if !slots.Has(s) {
			continue
		}
		senderSlots++
		owner := n.slots[s]
		if owner == sender {
			continue
		}
		if n.importing[s] != nil {
			continue
		}
		if owner == n.self && planted.On(planted.PrimaryIgnoresUpdate) {
			continue // keeps serving a slot the cluster gave to a newer epoch
		}
		if owner == nil || owner.configEpoch < epoch {
			if owner == n.self {
				dirty = append(dirty, s)
			}
			if owner != nil && owner == cur {
				newMaster = sender
				migratedOurs++
			}
			n.delSlot(s)
			n.addSlot(sender, s)
			n.todo |= todoSaveConfig | todoUpdateState | todoFsyncConfig
		}
	}
	if newMaster != nil && cur.numSlots == 0 && (!n.cfg.NoReplicaMigration || senderSlots == migratedOurs) {
		n.logf("Configuration change detected. Reconfiguring myself as a replica of %s", sender.id)
		n.setMaster(sender)
		n.todo |= todoSaveConfig | todoUpdateState | todoFsyncConfig
	} else if m := n.masterOf(n.self); m != nil && m.isSlave() && m.master != n.self.id && n.lookup(m.master) != nil {
		n.logf("I'm a sub-replica! Reconfiguring myself as a replica of grandmaster %s", m.master)
		n.setMaster(n.lookup(m.master))
		n.todo |= todoSaveConfig | todoUpdateState | todoFsyncConfig
	} else if len(dirty) > 0 {
		n.event(Event{Kind: EventDeleteSlots, Slots: dirty})
	}
}

// setMaster makes myself a replica of m (clusterSetMaster).
func (n *Node) setMaster(m *peer) {
	if n.self.isMaster() {
		n.self.flags &^= FlagMaster | FlagMigrateTo
		n.self.flags |= FlagSlave
		n.delNodeSlots(n.self)
		n.migrating = map[int]*peer{}
		n.importing = map[int]*peer{}
	}
	n.self.master = m.id
	n.event(Event{Kind: EventReplicate, NodeID: m.id, IP: m.ip, Port: m.port})
	n.resetManualFailover()
	n.todo |= todoView | todoUpdateState
}

func (n *Node) handleEpochCollision(sender *peer) {
	if sender.configEpoch != n.self.configEpoch || !sender.isMaster() || !n.self.isMaster() {
		return
	}
	if sender.id <= n.self.id {
		return
	}
	n.currentEpoch++
	n.self.configEpoch = n.currentEpoch
	n.save(true)
	n.logf("WARNING: configEpoch collision with node %s. configEpoch set to %d", sender.id, n.self.configEpoch)
}
