package checker

import (
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/redline-dev/redline/history"
)

// TestSlotMapIsAMap: whatever is set, in any order, a slotMap holds what a
// Go map given the same sets holds, sparse, dense, and past a slot no key
// has (which keeps it sparse), "" nodes included.
func TestSlotMapIsAMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 40 {
		m, want := newSlotMap(), map[int]string{}
		sets := r.IntN(3 * denseAbove)
		if round%4 == 0 {
			sets = history.Slots + 100 // every slot
		}
		nodes := []string{"", "10.0.0.1:6379", "10.0.0.2:6379", "n3"}
		for i := range sets {
			slot := r.IntN(history.Slots)
			if round%4 == 0 && i < history.Slots {
				slot = i
			}
			if round%5 == 1 && i == sets/2 {
				slot = history.Slots + 7 // a lie: no key has it
			}
			node := nodes[r.IntN(len(nodes))]
			m.set(slot, node)
			want[slot] = node
		}
		got := map[int]string{}
		m.each(func(slot int, node string) {
			if _, twice := got[slot]; twice {
				t.Fatalf("round %d: slot %d given twice", round, slot)
			}
			got[slot] = node
		})
		if !maps.Equal(got, want) || m.len() != len(want) {
			t.Fatalf("round %d: %d slots, want %d (len %d)", round, len(got), len(want), m.len())
		}
		for slot := -2; slot < history.Slots+10; slot++ {
			n, ok := m.get(slot)
			w, wok := want[slot]
			if n != w || ok != wok || m.node(slot) != w {
				t.Fatalf("round %d: slot %d is %q %v, want %q %v", round, slot, n, ok, w, wok)
			}
		}
	}
	var none *slotMap
	if n, ok := none.get(3); n != "" || ok || none.len() != 0 {
		t.Fatal("a nil slotMap holds something")
	}
	none.each(func(int, string) { t.Fatal("a nil slotMap gives a slot") })
}
