package cluster

import (
	"time"

	"github.com/redline-dev/redline/server/internal/planted"
)

// rank is clusterGetSlaveRank: siblings that can fail over with a larger offset.
func (n *Node) rank() int {
	m := n.masterOf(n.self)
	if m == nil {
		return 0
	}
	r := 0
	for _, s := range n.replicasOf(m) {
		if s != n.self && !s.cantFailover() && s.replOffset > n.myOffset {
			r++
		}
	}
	return r
}

// handleReplicaFailover is clusterHandleSlaveFailover.
func (n *Node) handleReplicaFailover() {
	n.todo &^= todoHandleFailover
	authAge := n.now - n.authTime
	quorum := n.size/2 + 1
	manual := n.mfEnd != 0 && n.mfCanStart
	authTimeout := max(n.nt*2, 2000)
	authRetry := authTimeout * 2
	m := n.masterOf(n.self)
	if n.self.isMaster() || m == nil || (!m.failed() && !manual) ||
		(n.cfg.ReplicaNoFailover && !manual) || m.numSlots == 0 {
		return
	}
	var dataAge int64
	if n.masterLinkUp {
		dataAge = n.now - n.masterLastIO
	} else {
		// replDownSince 0 is "since ever" (never synced since start or
		// since it was a master): Redis's unixtime - 0, an age no
		// validity factor allows.
		dataAge = n.now - n.replDownSince
	}
	if dataAge > n.nt {
		dataAge -= n.nt
	}
	if n.cfg.ReplicaValidityFactor > 0 &&
		dataAge > n.cfg.ReplPingPeriod.Milliseconds()+n.nt*int64(n.cfg.ReplicaValidityFactor) && !manual {
		return
	}
	if authAge > authRetry {
		n.authTime = n.now + 500 + int64(n.rng.IntN(500))
		n.authCount = 0
		n.authSent = false
		n.authRank = n.rank()
		n.authTime += int64(n.authRank) * 1000
		if n.mfEnd != 0 {
			n.authTime = n.now
			n.authRank = 0
			n.todo |= todoHandleFailover
		}
		n.logf("Start of election delayed for %d milliseconds (rank #%d, offset %d).", n.authTime-n.now, n.authRank, n.myOffset)
		pong := n.header(MsgPong)
		for _, s := range n.replicasOf(m) {
			if s != n.self {
				n.sendTo(s, pong)
			}
		}
		return
	}
	if !n.authSent && n.mfEnd == 0 {
		if r := n.rank(); r > n.authRank {
			n.authTime += int64(r-n.authRank) * 1000
			n.authRank = r
			n.logf("Replica rank updated to #%d", r)
		}
	}
	if n.now < n.authTime || authAge > authTimeout {
		return
	}
	if !n.authSent {
		n.currentEpoch++
		n.authEpoch = n.currentEpoch
		n.logf("Starting a failover election for epoch %d.", n.currentEpoch)
		req := n.header(MsgAuthRequest)
		if n.mfEnd != 0 {
			req.MFlags |= MFlagForceAck
		}
		n.broadcast(req)
		n.authSent = true
		n.todo |= todoSaveConfig | todoUpdateState | todoFsyncConfig
		return
	}
	if n.authCount >= quorum {
		n.logf("Failover election won: I'm the new master.")
		if n.self.configEpoch < n.authEpoch && !planted.On(planted.PromoteNoEpoch) {
			n.self.configEpoch = n.authEpoch
			n.logf("configEpoch set to %d after successful failover", n.self.configEpoch)
		}
		n.replaceMaster()
	}
}

// replaceMaster is clusterFailoverReplaceYourMaster.
func (n *Node) replaceMaster() {
	old := n.masterOf(n.self)
	if n.self.isMaster() || old == nil {
		return
	}
	n.setAsMaster(n.self)
	n.event(Event{Kind: EventBecomeMaster})
	for s := 0; s < NumSlots; s++ {
		if n.slots[s] == old {
			n.delSlot(s)
			n.addSlot(n.self, s)
		}
	}
	n.updateState()
	n.save(true)
	n.todo |= todoView
	n.broadcast(n.header(MsgPong))
	n.resetManualFailover()
}

// sendAuthIfNeeded is clusterSendFailoverAuthIfNeeded: the voter side.
func (n *Node) sendAuthIfNeeded(p *peer, req *Message) {
	if n.self.isSlave() || n.self.numSlots == 0 {
		return
	}
	if req.CurrentEpoch < n.currentEpoch {
		n.logf("Failover auth denied to %s: reqEpoch (%d) < curEpoch(%d)", p.id, req.CurrentEpoch, n.currentEpoch)
		return
	}
	if n.lastVoteEpoch == n.currentEpoch {
		n.logf("Failover auth denied to %s: already voted for epoch %d", p.id, n.currentEpoch)
		return
	}
	m := n.masterOf(p)
	force := req.MFlags&MFlagForceAck != 0
	if p.isMaster() || m == nil || (!m.failed() && !force) {
		n.logf("Failover auth denied to %s: its master is up or unknown", p.id)
		return
	}
	if n.now-m.votedTime < n.nt*2 {
		n.logf("Failover auth denied to %s: can't vote about this master before %d milliseconds", p.id, n.nt*2-(n.now-m.votedTime))
		return
	}
	for s := 0; s < NumSlots; s++ {
		if !req.Slots.Has(s) {
			continue
		}
		if o := n.slots[s]; o == nil || o.configEpoch <= req.ConfigEpoch {
			continue
		}
		n.logf("Failover auth denied to %s: slot %d epoch (%d) > reqEpoch (%d)", p.id, s, n.slots[s].configEpoch, req.ConfigEpoch)
		return
	}
	if !planted.On(planted.VoteTwice) { // the vote is granted but never recorded
		n.lastVoteEpoch = n.currentEpoch
		m.votedTime = n.now
	}
	n.save(true)
	n.sendTo(p, n.header(MsgAuthAck))
	n.logf("Failover auth granted to %s for epoch %d", p.id, n.currentEpoch)
}

func (n *Node) resetManualFailover() {
	if n.mfSlave != "" {
		n.event(Event{Kind: EventUnpauseWrites})
	}
	n.mfEnd = 0
	n.mfPaused = false
	n.mfCanStart = false
	n.mfSlave = ""
	n.mfMasterOffset = -1
}

// handleManualFailover is clusterHandleManualFailover (replica side).
func (n *Node) handleManualFailover() {
	n.todo &^= todoHandleManualFailover
	if n.mfEnd == 0 || n.mfCanStart || n.mfMasterOffset == -1 {
		return
	}
	if n.mfMasterOffset == n.myOffset {
		n.mfCanStart = true
		n.logf("All master replication stream processed, manual failover can start.")
		n.todo |= todoHandleFailover
	}
}

// handleReplicaMigration is clusterHandleSlaveMigration.
func (n *Node) handleReplicaMigration(maxReplicas int) {
	if !n.stateOK {
		return
	}
	my := n.masterOf(n.self)
	if my == nil {
		return
	}
	ok := 0
	for _, r := range n.replicasOf(my) {
		if !r.failed() && !r.timedOut() {
			ok++
		}
	}
	if ok <= n.cfg.MigrationBarrier {
		return
	}
	candidate := n.self
	var target *peer
	for _, id := range n.sortedIDs() {
		p := n.peers[id]
		okr := 0
		orphaned := true
		if p.isSlave() || p.failed() || !p.is(FlagMigrateTo) {
			orphaned = false
		}
		if p.isMaster() {
			okr = n.countNonFailingReplicas(p)
		}
		if okr > 0 {
			orphaned = false
		}
		if orphaned {
			if target == nil && p.numSlots > 0 {
				target = p
			}
			if p.orphanedTime == 0 {
				p.orphanedTime = n.now
			}
		} else {
			p.orphanedTime = 0
		}
		if okr == maxReplicas {
			for _, r := range n.replicasOf(p) {
				if r.id < candidate.id {
					candidate = r
				}
			}
		}
	}
	if target != nil && candidate == n.self && n.now-target.orphanedTime > replicaMigrationDelay {
		n.logf("Migrating to orphaned master %s", target.id)
		n.setMaster(target)
		n.save(true)
	}
}

// ManualFailoverDeadline returns when the running manual failover times out
// (zero time if none).
func (n *Node) ManualFailoverDeadline() time.Time {
	if n.mfEnd == 0 {
		return time.Time{}
	}
	return time.UnixMilli(n.mfEnd)
}
