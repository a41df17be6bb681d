package checker

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// The tree finds what a loop over every index finds, through random sets
// (reach only falls in the recovery pass, but the tree does not rely on
// it), on sizes around powers of two.
func TestMaxTreeIsALoop(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 7, 8, 9, 100, 1134} {
		vals := make([]int64, n)
		for i := range vals {
			vals[i] = r.Int64N(1000)
		}
		m := newMaxTree(vals)
		for range 2000 {
			if n > 0 && r.IntN(3) == 0 {
				i := r.IntN(n)
				vals[i] = r.Int64N(1000)
				if r.IntN(10) == 0 {
					vals[i] = inf
				}
				m.set(i, vals[i])
			}
			hi, v := r.IntN(n+2), r.Int64N(1100)
			var want []int
			for i := 0; i < min(hi, n); i++ {
				if vals[i] >= v {
					want = append(want, i)
				}
			}
			if got := m.atLeast(hi, v, nil); !slices.Equal(got, want) {
				t.Fatalf("n %d: below %d at least %d: %v, want %v", n, hi, v, got, want)
			}
		}
	}
}
