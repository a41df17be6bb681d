package cluster

import (
	"strings"
	"testing"
	"time"
)

var _ = time.Second

func TestFormSixNodes(t *testing.T) {
	nw := newNetwork(t, 6, 1)
	nw.form(3)
	sig := nw.nodes[0].signature()
	if got := strings.Count(sig, "\n") + 1; got != 6 {
		t.Fatalf("want 6 nodes in view, got %d:\n%s", got, sig)
	}
	for i, s := range nw.nodes {
		if i < 3 != s.n.IsMaster() {
			t.Fatalf("node %d master=%v", i, s.n.IsMaster())
		}
		info := s.n.InfoText()
		for _, want := range []string{"cluster_state:ok\r\n", "cluster_slots_assigned:16384\r\n", "cluster_known_nodes:6\r\n", "cluster_size:3\r\n"} {
			if !strings.Contains(info, want) {
				t.Fatalf("node %d CLUSTER INFO lacks %q:\n%s", i, want, info)
			}
		}
		slots := s.n.Slots()
		if len(slots) != 3 || slots[0].Start != 0 || slots[2].End != 16383 || len(slots[1].Nodes) != 2 {
			t.Fatalf("node %d CLUSTER SLOTS: %+v", i, slots)
		}
		if sh := s.n.Shards(); len(sh) != 3 || len(sh[0].Nodes) != 2 {
			t.Fatalf("node %d CLUSTER SHARDS: %+v", i, sh)
		}
	}
	// NODES format of the myself line of a master and of a replica.
	first := strings.SplitN(nw.nodes[0].n.NodesText(), "\n", 2)[0]
	want := nw.nodes[0].n.ID() + " 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460"
	if first != want {
		t.Fatalf("myself line\n got %q\nwant %q", first, want)
	}
	rl := strings.Fields(strings.SplitN(nw.nodes[4].n.NodesText(), "\n", 2)[0])
	if rl[2] != "myself,slave" || rl[3] != nw.nodes[1].n.ID() || rl[6] != "2" || len(rl) != 8 {
		t.Fatalf("replica myself line: %v", rl)
	}
	t.Logf("formed in %v simulated", nw.elapsed())
}
