package cluster

import (
	"flag"
	"testing"
	"time"
)

var chaosSeeds = flag.Int("chaos-seeds", 0, "number of seeds for TestChaos (default 6)")

// TestChaos applies random partitions, kills and restarts (seeded), then
// heals everything and checks that the cluster converges to one view in which
// every slot is served by a master that everybody agrees on.
func TestChaos(t *testing.T) {
	seeds := uint64(6)
	if *chaosSeeds > 0 {
		seeds = uint64(*chaosSeeds)
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		nw := newNetwork(t, 6, 100+seed)
		nw.form(3)
		dead := -1
		for step := 0; step < 12; step++ {
			switch nw.rng.IntN(4) {
			case 0:
				nw.isolate(nw.rng.IntN(6))
			case 1:
				nw.heal()
			case 2:
				if dead < 0 {
					dead = nw.rng.IntN(6)
					nw.nodes[dead].dead = true
				}
			case 3:
				if dead >= 0 {
					nw.restart(dead)
					dead = -1
				}
			}
			for d := 1 + nw.rng.IntN(8); d > 0; d-- {
				nw.run(time.Second)
				checkEpochSafety(t, nw)
			}
		}
		nw.heal()
		if dead >= 0 {
			nw.restart(dead)
		}
		nw.runUntil("convergence after chaos", 120*time.Second, func() bool {
			if !nw.converged() {
				return false
			}
			for _, a := range nw.nodes {
				for _, id := range a.n.NodeIDs() {
					if in, _ := a.n.Lookup(id); in.Flags&(FlagFail|FlagPFail|FlagHandshake) != 0 {
						return false
					}
				}
			}
			return true
		})
		n0 := nw.nodes[0].n
		masters := map[string]bool{}
		for s := 0; s < NumSlots; s++ {
			o := n0.SlotOwner(s)
			in, ok := n0.Lookup(o)
			if !ok || in.Flags&FlagMaster == 0 || in.Flags&(FlagFail|FlagPFail) != 0 {
				t.Fatalf("seed %d: slot %d owner %q not a healthy master\n%s", seed, s, o, n0.NodesText())
			}
			masters[o] = true
		}
		if len(masters) != 3 {
			t.Fatalf("seed %d: %d slot owners, want 3", seed, len(masters))
		}
		for _, s := range nw.nodes {
			if s.n.IsMaster() != masters[s.n.ID()] {
				t.Fatalf("seed %d: node %d master=%v but owns slots=%v\n%s", seed, s.idx, s.n.IsMaster(), masters[s.n.ID()], n0.NodesText())
			}
		}
		t.Logf("seed %d: converged at %v", seed, nw.elapsed())
	}
}

// checkEpochSafety: two masters may both claim a slot during a partition, but
// never with the same configEpoch (that is what makes the newer one win).
func checkEpochSafety(t *testing.T, nw *network) {
	t.Helper()
	for slot := 0; slot < NumSlots; slot += 61 {
		seen := map[uint64]string{}
		for _, s := range nw.alive() {
			if !s.n.IsMaster() || s.n.SlotOwner(slot) != s.n.ID() {
				continue
			}
			ep := s.n.ConfigEpoch()
			if other, ok := seen[ep]; ok {
				t.Fatalf("slot %d claimed by %s and %s with the same configEpoch %d", slot, other, s.n.ID(), ep)
			}
			seen[ep] = s.n.ID()
		}
	}
}
