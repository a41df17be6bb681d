//go:build plantedbugs

package cluster

import (
	"testing"
	"time"

	"github.com/redline-dev/redline/server/internal/planted"
)

// The cluster state machine's planted defects (go test -tags plantedbugs
// ./server/cluster -run Planted), each run off and on.

func plant(t *testing.T, b planted.Bug, on bool) {
	planted.Set(b, on)
	t.Cleanup(func() { planted.Set(b, false) })
}

func TestPlantedPromoteNoEpoch(t *testing.T) {
	for _, on := range []bool{false, true} {
		plant(t, planted.PromoteNoEpoch, on)
		nw := newNetwork(t, 6, 1)
		nw.form(3)
		nw.run(3 * time.Second)
		before := nw.nodes[3].n.ConfigEpoch()
		nw.nodes[0].dead = true
		nw.runUntil("replica promoted", 20*time.Second, func() bool { return nw.nodes[3].n.IsMaster() })
		after := nw.nodes[3].n.ConfigEpoch()
		if on != (after == before) {
			t.Fatalf("defect %v: the promoted replica's configEpoch went %d -> %d", on, before, after)
		}
	}
}

func TestPlantedPrimaryIgnoresUpdate(t *testing.T) {
	for _, on := range []bool{false, true} {
		plant(t, planted.PrimaryIgnoresUpdate, on)
		nw := newNetwork(t, 6, 17)
		nw.form(3)
		nw.run(2 * time.Second)
		nw.isolate(0)
		nw.runUntil("replica 3 promoted", 15*time.Second, func() bool {
			return nw.nodes[3].n.IsMaster() && nw.nodes[1].n.SlotOwner(0) == nw.nodes[3].n.ID()
		})
		nw.heal()
		nw.run(10 * time.Second)
		twoPrimaries := nw.nodes[0].n.IsMaster() && nw.nodes[0].n.SlotOwner(0) == nw.nodes[0].n.ID()
		if on != twoPrimaries {
			t.Fatalf("defect %v: 10 s after the partition healed the old primary is master %v and owns slot 0 in its view: %v",
				on, nw.nodes[0].n.IsMaster(), nw.nodes[0].n.SlotOwner(0) == nw.nodes[0].n.ID())
		}
	}
}

func TestPlantedSetslotFlushImported(t *testing.T) {
	for _, on := range []bool{false, true} {
		plant(t, planted.SetslotFlushImported, on)
		nw := newNetwork(t, 6, 5)
		nw.form(3)
		src, dst := nw.nodes[0], nw.nodes[1]
		nw.must(dst.n.SetSlot(100, SetSlotImporting, src.n.ID(), 0))
		nw.must(src.n.SetSlot(100, SetSlotMigrating, dst.n.ID(), 3))
		nw.must(dst.n.SetSlot(100, SetSlotNode, dst.n.ID(), 3))
		nw.deliver()
		e := dst.hasEvent(EventDeleteSlots)
		if on != (e != nil) {
			t.Fatalf("defect %v: finalizing the import emitted %+v", on, e)
		}
	}
}

func TestPlantedVoteTwice(t *testing.T) {
	for _, on := range []bool{false, true} {
		plant(t, planted.VoteTwice, on)
		nw := newNetwork(t, 9, 3)
		nw.form(3)
		nw.run(3 * time.Second)
		// Two replicas of master 0 ask master 1 for its vote in one epoch.
		voter := nw.nodes[1].n
		m := voter.lookup(nw.nodes[0].n.ID())
		cands := voter.replicasOf(m)
		if len(cands) < 2 {
			t.Fatalf("master 0 has %d replicas", len(cands))
		}
		m.flags |= FlagFail
		voter.currentEpoch++
		before := voter.sent[MsgAuthAck]
		for _, p := range cands[:2] {
			req := nw.nodes[0].n.header(MsgAuthRequest)
			req.CurrentEpoch = voter.currentEpoch
			req.ConfigEpoch = m.configEpoch
			voter.sendAuthIfNeeded(p, &req)
		}
		if votes := voter.sent[MsgAuthAck] - before; votes != map[bool]uint64{false: 1, true: 2}[on] {
			t.Fatalf("defect %v: %d votes in one epoch", on, votes)
		}
	}
}
