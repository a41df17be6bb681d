package geohash

import "testing"

// BenchmarkDistance: one haversine (2 sin, 2 cos, 1 asin in double-double).
func BenchmarkDistance(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Distance(13.36138933897018433, 38.11555639549629859, 15.087267458438873, 37.50266842333162)
	}
}
