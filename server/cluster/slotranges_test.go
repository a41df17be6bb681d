package cluster

import (
	"math/rand"
	"reflect"
	"testing"
)

// naiveRanges is the obvious bit-by-bit scan slotRanges must agree with.
func naiveRanges(b *SlotBitmap) [][2]int {
	var r [][2]int
	start := -1
	for s := 0; s <= NumSlots; s++ {
		in := s < NumSlots && b.Has(s)
		if in && start < 0 {
			start = s
		}
		if !in && start >= 0 {
			r = append(r, [2]int{start, s - 1})
			start = -1
		}
	}
	return r
}

func TestSlotRangesMatchesBitScan(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var cases []*SlotBitmap
	empty, full, edges := &SlotBitmap{}, &SlotBitmap{}, &SlotBitmap{}
	for s := 0; s < NumSlots; s++ {
		full.Set(s)
	}
	for _, s := range []int{0, 7, 8, 15, 16383, 16376, 5460, 5461} {
		edges.Set(s)
	}
	cases = append(cases, empty, full, edges)
	for i := 0; i < 200; i++ {
		b := &SlotBitmap{}
		// Random runs of random lengths, like real slot maps, plus noise.
		for s := 0; s < NumSlots; {
			n := 1 + rng.Intn(600)
			if rng.Intn(2) == 0 {
				for j := s; j < s+n && j < NumSlots; j++ {
					b.Set(j)
				}
			}
			s += n
		}
		for j := 0; j < rng.Intn(20); j++ {
			b.Set(rng.Intn(NumSlots))
		}
		cases = append(cases, b)
	}
	for i, b := range cases {
		if got, want := slotRanges(b), naiveRanges(b); !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: slotRanges %v, want %v", i, got, want)
		}
	}
}
