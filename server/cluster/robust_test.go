package cluster

import (
	"testing"
	"time"
)

// TestStepRandomMessages feeds a formed node random (but decodable) messages
// on random links: it must not panic and its slot table must stay consistent.
func TestStepRandomMessages(t *testing.T) {
	nw := newNetwork(t, 6, 41)
	nw.form(3)
	rng := nw.rng
	target := nw.nodes[0].n
	ids := target.NodeIDs()
	pick := func() string {
		switch rng.IntN(3) {
		case 0:
			return ids[rng.IntN(len(ids))]
		case 1:
			return target.randomID()
		}
		return ""
	}
	now := nw.now
	for i := 0; i < 10000; i++ {
		m := Message{Type: MsgType(rng.IntN(int(msgTypeCount))), Sender: pick(), Master: pick(),
			CurrentEpoch: uint64(rng.IntN(20)), ConfigEpoch: uint64(rng.IntN(20)), Offset: int64(rng.IntN(1000)),
			IP: []string{"127.0.0.1", "", "bad ip", "::1"}[rng.IntN(4)], Port: uint16(7000 + rng.IntN(8)), CPort: uint16(17000 + rng.IntN(8)),
			Flags: Flags(rng.Uint32()), MFlags: uint8(rng.Uint32()), About: pick(), UpdateConfigEpoch: uint64(rng.IntN(20))}
		for j := 0; j < rng.IntN(40); j++ {
			s := rng.IntN(NumSlots)
			for k := s; k < min(NumSlots, s+rng.IntN(600)); k++ {
				m.Slots.Set(k)
				m.UpdateSlots.Set(NumSlots - 1 - k)
			}
		}
		for j := 0; j < rng.IntN(5); j++ {
			m.Gossip = append(m.Gossip, Gossip{ID: pick(), IP: []string{"127.0.0.1", "x y", "10.1.1.1"}[rng.IntN(3)], Port: uint16(7000 + rng.IntN(8)),
				CPort: uint16(17000 + rng.IntN(8)), Flags: Flags(rng.Uint32()), PongReceived: uint32(now.Unix())})
		}
		switch rng.IntN(3) {
		case 0:
			m.Link = Link{Out: uint64(rng.IntN(40))}
		default:
			m.Link = Link{In: uint64(1 + rng.IntN(40)), RemoteIP: "127.0.0.1", LocalIP: "127.0.0.1"}
		}
		target.Step(m, now)
		if i%50 == 0 {
			now = now.Add(100 * time.Millisecond)
			target.Tick(now)
		}
		if i%100 == 0 {
			target.Ready()
			ids = target.NodeIDs()
		}
	}
	target.Ready()
	// The slot table agrees with each node's bitmap and count.
	counts := map[*peer]int{}
	for s := 0; s < NumSlots; s++ {
		if p := target.slots[s]; p != nil {
			counts[p]++
			if !p.slots.Has(s) {
				t.Fatalf("slot %d owner bitmap lacks it", s)
			}
			if target.peers[p.id] != p {
				t.Fatalf("slot %d owned by a node not in the table", s)
			}
		}
	}
	for _, p := range target.peers {
		if p.numSlots != counts[p] {
			t.Fatalf("node %s numSlots %d, table says %d", p.id, p.numSlots, counts[p])
		}
	}
	if _, err := LoadNode(Config{}, target.NodesConf(), Self{}, now); err != nil {
		t.Fatalf("nodes.conf after random input does not load: %v", err)
	}
}
