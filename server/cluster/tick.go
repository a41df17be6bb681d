package cluster

import "time"

// Tick advances the node's clock and runs the periodic work of clusterCron:
// handshake timeouts, (re)connecting links, pings, PFAIL detection, the
// replica's failover and migration logic and the cluster state. Call it about
// every 100 ms.
func (n *Node) Tick(now time.Time) {
	n.setNow(now)
	n.iteration++
	handshakeTimeout := max(n.nt, 1000)
	n.pfailSeen = 0
	for k, t := range n.blacklist {
		if t <= n.now {
			delete(n.blacklist, k)
		}
	}

	n.each(func(p *peer) {
		if p.is(FlagMyself | FlagNoAddr) {
			return
		}
		if p.timedOut() {
			n.pfailSeen++
		}
		if p.handshake() && n.now-p.ctime > handshakeTimeout {
			n.delPeer(p)
			return
		}
		if p.link == 0 {
			n.nextLink++
			p.link = n.nextLink
			p.linkCtime = n.now
			old := p.pingSent
			t := MsgPing
			if p.is(FlagMeet) {
				t = MsgMeet
			}
			n.sendPing(p, t)
			if old != 0 {
				p.pingSent = old
			}
			p.flags &^= FlagMeet
		}
	})

	// Every 10 iterations ping the node, among 5 random ones, whose pong is oldest.
	if n.iteration%10 == 0 {
		ids := n.sortedIDs()
		var minNode *peer
		for j := 0; j < 5 && len(ids) > 0; j++ {
			p := n.peers[ids[n.rng.IntN(len(ids))]]
			if p.link == 0 || p.pingSent != 0 || p.is(FlagMyself|FlagHandshake) {
				continue
			}
			if minNode == nil || p.pongReceived < minNode.pongReceived {
				minNode = p
			}
		}
		if minNode != nil {
			n.sendPing(minNode, MsgPing)
		}
	}

	orphaned, maxReplicas, myReplicas := 0, 0, 0
	updateState := false
	myMaster := n.masterOf(n.self)
	n.each(func(p *peer) {
		if p.is(FlagMyself | FlagNoAddr | FlagHandshake) {
			return
		}
		if n.self.isSlave() && p.isMaster() && !p.failed() {
			ok := n.countNonFailingReplicas(p)
			if ok == 0 && p.numSlots > 0 && p.is(FlagMigrateTo) {
				orphaned++
			}
			maxReplicas = max(maxReplicas, ok)
			if myMaster == p {
				myReplicas = ok
			}
		}
		pingDelay := n.now - p.pingSent
		dataDelay := n.now - p.dataReceived
		if p.link != 0 && n.now-p.linkCtime > n.nt && p.pingSent != 0 &&
			pingDelay > n.nt/2 && dataDelay > n.nt/2 {
			n.freeLink(p)
		}
		if p.link != 0 && p.pingSent == 0 && n.now-p.pongReceived > n.nt/2 {
			n.sendPing(p, MsgPing)
			return
		}
		if n.mfEnd != 0 && n.self.isMaster() && n.mfSlave == p.id && p.link != 0 {
			n.sendPing(p, MsgPing)
			return
		}
		if p.pingSent == 0 {
			return
		}
		if min(pingDelay, dataDelay) > n.nt && !p.is(FlagPFail|FlagFail) {
			n.logf("*** NODE %s possibly failing", p.id)
			p.flags |= FlagPFail
			updateState = true
			n.todo |= todoView
		}
	})

	if n.mfEnd != 0 && n.mfEnd < n.now {
		// Redis logs the first sentence only; the offsets say whether the
		// replica never caught up (or overshot) the paused master's offset.
		if n.self.isSlave() {
			n.logf("Manual failover timed out. (master offset %d, mine %d, can start %v, election sent %v, votes %d)",
				n.mfMasterOffset, n.myOffset, n.mfCanStart, n.authSent, n.authCount)
		} else {
			n.logf("Manual failover timed out.")
		}
		n.resetManualFailover()
	}
	if n.self.isSlave() {
		n.handleManualFailover()
		n.handleReplicaFailover()
		if orphaned > 0 && maxReplicas >= 2 && myReplicas == maxReplicas && !n.cfg.NoReplicaMigration {
			n.handleReplicaMigration(maxReplicas)
		}
	}
	if updateState || !n.stateOK {
		n.updateState()
	}
}

// sendPing sends a PING, PONG or MEET with gossip about ~1/10 of the nodes
// (at least 3) plus every node in PFAIL.
func (n *Node) sendPing(p *peer, t MsgType) {
	if t == MsgPing {
		p.pingSent = n.now
	}
	n.sendTo(p, n.pingMessage(t))
}

// pingMessage is a PING, PONG or MEET with its gossip section, as Redis's
// clusterSendPing builds all three (a PONG answering a PING gossips too).
func (n *Node) pingMessage(t MsgType) Message {
	m := n.header(t)
	ids := n.sortedIDs()
	fresh := len(ids) - 2
	wanted := max(len(ids)/10, 3)
	wanted = min(wanted, fresh)
	chosen := map[string]bool{}
	for iter := wanted * 3; iter > 0 && len(m.Gossip) < wanted; iter-- {
		q := n.peers[ids[n.rng.IntN(len(ids))]]
		if q == n.self || q.is(FlagPFail) || q.is(FlagHandshake|FlagNoAddr) || (q.link == 0 && q.numSlots == 0) || chosen[q.id] {
			continue
		}
		chosen[q.id] = true
		m.Gossip = append(m.Gossip, gossipOf(q))
	}
	for _, id := range ids {
		q := n.peers[id]
		if q.is(FlagPFail) && !q.is(FlagHandshake|FlagNoAddr) && q != n.self {
			m.Gossip = append(m.Gossip, gossipOf(q))
		}
	}
	return m
}

func gossipOf(q *peer) Gossip {
	return Gossip{ID: q.id, PingSent: uint32(q.pingSent / 1000), PongReceived: uint32(q.pongReceived / 1000),
		IP: q.ip, Port: uint16(q.port), CPort: uint16(q.cport), Flags: q.flags}
}

// updateState is clusterUpdateState.
func (n *Node) updateState() {
	n.todo &^= todoUpdateState
	if n.firstCallTime == 0 {
		n.firstCallTime = n.now
	}
	if n.self.isMaster() && !n.stateOK && n.now-n.firstCallTime < writableDelay {
		return
	}
	ok := true
	if !n.cfg.NoFullCoverage {
		for s := 0; s < NumSlots; s++ {
			if p := n.slots[s]; p == nil || p.failed() {
				ok = false
				break
			}
		}
	}
	n.size = 0
	reachable := 0
	for _, p := range n.peers {
		if p.isMaster() && p.numSlots > 0 {
			n.size++
			if !p.is(FlagFail | FlagPFail) {
				reachable++
			}
		}
	}
	if reachable < n.size/2+1 {
		ok = false
		n.amongMinorityTime = n.now
	}
	if ok != n.stateOK {
		delay := min(max(n.nt, minRejoinDelay), maxRejoinDelay)
		if ok && n.self.isMaster() && n.now-n.amongMinorityTime < delay {
			return
		}
		if ok {
			n.logf("Cluster state changed: ok")
		} else {
			n.logf("Cluster state changed: fail")
		}
		n.stateOK = ok
		n.todo |= todoView
		n.event(Event{Kind: EventStateChanged, OK: ok})
	}
}
