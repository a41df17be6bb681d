package server

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestGeoPartialSort: with COUNT below the number of results, Redis's
// pqsort (ported step for step) leaves the first n in distance order, the
// same distances a full sort gives, ascending and descending.
func TestGeoPartialSort(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 2))
	for round := 0; round < 500; round++ {
		n := 1 + r.IntN(150)
		pts := make([]geoPoint, n)
		for i := range pts {
			pts[i] = geoPoint{dist: float64(r.IntN(30)), member: string(rune('a' + i%26))}
		}
		k := 1 + r.IntN(n)
		desc := r.IntN(2) == 1
		want := slices.Clone(pts)
		slices.SortStableFunc(want, func(a, b geoPoint) int {
			if desc {
				a, b = b, a
			}
			switch {
			case a.dist < b.dist:
				return -1
			case a.dist > b.dist:
				return 1
			}
			return 0
		})
		got := slices.Clone(pts)
		geoSortPoints(got, k, desc)
		for i := 0; i < k; i++ {
			if got[i].dist != want[i].dist {
				t.Fatalf("round %d (n %d, count %d, desc %v): position %d has %v, want %v", round, n, k, desc, i, got[i].dist, want[i].dist)
			}
		}
	}
}

// TestGeoDistanceFormat: distances as fixedpoint_d2string(d, 4).
func TestGeoDistanceFormat(t *testing.T) {
	for d, want := range map[float64]string{0: "0.0000", 0.775: "0.7750", 166274.15156960033: "166274.1516",
		0.00004: "0.0000", 0.00005: "0.0000", 12.5: "12.5000", 1e-300: "0.0000"} {
		if got := geoDistance(d); got != want {
			t.Errorf("geoDistance(%v) = %q, want %q", d, got, want)
		}
	}
}
