package checker

// BenchName is the load driver's entry in results.json (redline bench):
// its outcome is a result as a checker's is, with typed figures.
const BenchName = "bench"

// BenchFigures are the load driver's headline figures (harness/bench): the
// throughput and latency it measured and what may make them not the load
// asked for.
type BenchFigures struct {
	// Throughput is in ok ops per second; the latencies (ms) are from the
	// intended send time (corrected for coordinated omission), Raw from
	// the actual send.
	Throughput float64 `json:"throughput"`
	P50Ms      float64 `json:"p50_ms"`
	P99Ms      float64 `json:"p99_ms"`
	P999Ms     float64 `json:"p99_9_ms"`
	RawP99Ms   float64 `json:"raw_p99_ms"`
	RawP999Ms  float64 `json:"raw_p99_9_ms"`
	Failed     int64   `json:"failed"`
	Moved      int64   `json:"moved"`
	Ask        int64   `json:"ask"`
	// LagMaxMs, Backlog and MaxGapS say how far the driver fell behind its
	// schedule; GeneratorCores the CPU it took.
	LagMaxMs       float64 `json:"lag_max_ms"`
	Backlog        int64   `json:"backlog"`
	MaxGapS        float64 `json:"max_gap_s"`
	GeneratorCores float64 `json:"generator_cores"`
	// Thresholds and ThresholdsFailed count the bounds the user set (nil:
	// none), FailedThresholds names the ones missed.
	Thresholds       *int     `json:"thresholds,omitempty"`
	ThresholdsFailed *int     `json:"thresholds_failed,omitempty"`
	FailedThresholds []string `json:"failed_thresholds,omitempty"`
	// Generators of a distributed run (nil: one generator), how many of
	// them failed, and the rate asked of them all.
	Generators       *int     `json:"generators,omitempty"`
	GeneratorsFailed *int     `json:"generators_failed,omitempty"`
	RequestedRate    *float64 `json:"requested_rate,omitempty"`
	// Reason says why the run is not valid ("" when it is).
	Reason string `json:"why,omitempty"`
}

// Why says why the run is not valid.
func (f *BenchFigures) Why() string { return f.Reason }
