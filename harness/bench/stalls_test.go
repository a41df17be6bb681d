package bench

import (
	"strings"
	"testing"
)

// The stall diagnosis tells host contention (the schedule itself late,
// every shard at once, little CPU used) from a slow shard (only its ops
// waited) from the generator's own CPU, from every node busy at once.
func TestStallDiagnosis(t *testing.T) {
	shards := []ShardGap{{Shard: "n1"}, {Shard: "n2"}, {Shard: "n3"}}
	base := func(p Second) *Result {
		quiet := Second{T: 1, OKPerS: 1000, ShardLagMaxMs: []float64{0, 0, 0}}
		return &Result{Rate: 1000, Workers: 10, Pipeline: 1, Cores: 2, DurationS: 3, Shards: shards,
			Ops: map[string]*OpFigures{"total": {Raw: Quantiles{Mean: 0.5}}}, Seconds: []Second{quiet, p, quiet}}
	}
	cases := []struct {
		name    string
		p       Second
		want    string
		notWant []string
	}{
		{"host contention", Second{T: 2, LagMaxMs: 2400, DispatchLagMaxMs: 2400, CPUCores: 0.2, ShardLagMaxMs: []float64{2400, 2390, 2380}},
			"host contention in 1 of 3 seconds", []string{"raise --concurrency", "slow shard"}},
		{"generator CPU", Second{T: 2, LagMaxMs: 300, DispatchLagMaxMs: 300, CPUCores: 1.95, ShardLagMaxMs: []float64{300, 300, 300}},
			"the generator was its own limit", []string{"host contention", "slow shard"}},
		{"slow shard", Second{T: 2, LagMaxMs: 800, DispatchLagMaxMs: 0.2, CPUCores: 0.2, ShardLagMaxMs: []float64{0.1, 800, 0.3}},
			"slow shard: ops to some shards waited in their node's queue past their intended time, at worst (n2 800 ms in 1 s)", []string{"host contention", "n1 ", "n3 "}},
		{"every node busy", Second{T: 2, LagMaxMs: 50, DispatchLagMaxMs: 0.1, CPUCores: 0.2, ShardLagMaxMs: []float64{50, 48, 49}},
			"every shard at once in 1 of 3 seconds", []string{"host contention", "slow shard", "raise --concurrency"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := base(tc.p)
			got := strings.Join(r.stalls(), "\n")
			if !strings.Contains(got, tc.want) {
				t.Errorf("diagnosis %q, want %q", got, tc.want)
			}
			for _, nw := range tc.notWant {
				if strings.Contains(got, nw) {
					t.Errorf("diagnosis %q says %q", got, nw)
				}
			}
		})
	}
}
