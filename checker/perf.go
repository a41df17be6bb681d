package checker

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/redline-dev/redline/history"
)

// PerfOptions tune the perf checker's time buckets.
type PerfOptions struct {
	Scope
	// Bucket is the width of a time bucket; 0 picks 1 s, or wider so that
	// a run has at most MaxBuckets buckets.
	Bucket time.Duration
	// MaxBuckets caps the number of buckets when Bucket is 0 [600].
	MaxBuckets int
}

type perf struct{ o PerfOptions }

// Perf measures throughput and latency per operation (f) over time buckets,
// with the fault windows alongside. Its verdict is valid (it measures, it
// does not judge), or not applicable when the history holds no client op.
func Perf(opts ...PerfOptions) Checker {
	o := optional(opts)
	o.Scope = o.Scope.withDefaults()
	if o.MaxBuckets <= 0 {
		o.MaxBuckets = 600
	}
	return perf{o}
}

func (p perf) Name() string { return p.o.name("perf") }

// niceBuckets are the widths an adaptive bucket is rounded up to.
var niceBuckets = []time.Duration{
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour,
}

// BucketWidth is the perf bucket for a run of the given length: 1 s, or the
// next round width that keeps the number of buckets at most maxBuckets.
func BucketWidth(run time.Duration, maxBuckets int) time.Duration {
	for _, w := range niceBuckets {
		if int64(run)/int64(w) < int64(maxBuckets) {
			return w
		}
	}
	hours := int64(run)/int64(maxBuckets)/int64(time.Hour) + 1
	return time.Duration(hours) * time.Hour
}

// newLatencyHist records latencies in microseconds, from 1 µs to 1 hour,
// with 3 significant digits.
func newLatencyHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
}

func histQuantilesMs(h *hdrhistogram.Histogram) Quantiles {
	if h.TotalCount() == 0 {
		return Quantiles{}
	}
	us := func(v int64) *float64 { return ptr(math.Round(float64(v)) / 1e3) }
	return Quantiles{Count: h.TotalCount(), P50: us(h.ValueAtQuantile(50)), P95: us(h.ValueAtQuantile(95)),
		P99: us(h.ValueAtQuantile(99)), Max: us(h.Max())}
}

func latencyUs(c *call) int64 {
	return max(1, (c.end-c.start)/int64(time.Microsecond))
}

// perfSample is 16 bytes: a perf checker holds one per completed op.
type perfSample struct {
	lat    int64 // µs, ok ops only
	bucket int32
	typ    history.Type
}

func (p perf) Check(ctx context.Context, in *History) Result {
	calls, err := p.o.calls(in)
	if err != nil {
		return invalidHistory(err)
	}
	if len(calls) == 0 {
		return NotApplicable("no client op in the history: no throughput or latency to measure")
	}
	runEnd := in.runEndOf()
	width := p.o.Bucket
	if width <= 0 {
		width = BucketWidth(time.Duration(runEnd), p.o.MaxBuckets)
	}
	nb := int(runEnd/int64(width)) + 1

	// Each op name's samples are made once at their size (grown by append,
	// a long history's samples were copied over and over).
	size := map[string]int{}
	for i := range calls {
		if calls[i].comp != nil {
			size[calls[i].inv.F]++
		}
	}
	byF := make(map[string][]perfSample, len(size))
	for f, n := range size {
		byF[f] = make([]perfSample, 0, n)
	}
	open := map[string]int{}
	// MOVED/ASK replies the client followed: how much a migration or a
	// failover made clients chase slots.
	redirects := map[string]int{}
	totalRedirects := 0
	for i := range calls {
		c := &calls[i]
		if c.comp == nil {
			open[c.inv.F]++
			continue
		}
		redirects[c.inv.F] += c.comp.RedirectCount()
		totalRedirects += c.comp.RedirectCount()
		s := perfSample{bucket: int32(c.end / int64(width)), typ: c.comp.Type}
		if s.typ == history.OK {
			s.lat = latencyUs(c)
		}
		byF[c.inv.F] = append(byF[c.inv.F], s)
	}

	h := newLatencyHist()
	overall := newLatencyHist()
	series := map[string]PerfSeries{}
	totals := map[string]OpFigures{}
	seconds := float64(runEnd) / 1e9
	for f, samples := range byF {
		slices.SortStableFunc(samples, func(a, b perfSample) int { return int(a.bucket) - int(b.bucket) })
		t := make([]float64, nb)
		okN, failN, infoN := make([]int, nb), make([]int, nb), make([]int, nb)
		p50, p95, p99, pmax := make([]*float64, nb), make([]*float64, nb), make([]*float64, nb), make([]*float64, nb)
		for b := range nb {
			t[b] = sec(int64(b) * int64(width))
		}
		overall.Reset()
		var tok, tfail, tinfo int
		for i := 0; i < len(samples); {
			b := samples[i].bucket
			h.Reset()
			for ; i < len(samples) && samples[i].bucket == b; i++ {
				switch samples[i].typ {
				case history.OK:
					okN[b]++
					tok++
					_ = h.RecordValue(samples[i].lat)
					_ = overall.RecordValue(samples[i].lat)
				case history.Fail:
					failN[b]++
					tfail++
				default:
					infoN[b]++
					tinfo++
				}
			}
			if h.TotalCount() > 0 {
				p50[b] = ptr(float64(h.ValueAtQuantile(50)) / 1e3)
				p95[b] = ptr(float64(h.ValueAtQuantile(95)) / 1e3)
				p99[b] = ptr(float64(h.ValueAtQuantile(99)) / 1e3)
				pmax[b] = ptr(float64(h.Max()) / 1e3)
			}
		}
		series[f] = PerfSeries{TS: t, OK: okN, Fail: failN, Info: infoN, P50Ms: p50, P95Ms: p95, P99Ms: p99, MaxMs: pmax}
		tot := OpFigures{OK: int64(tok), Fail: int64(tfail), Info: int64(tinfo), Open: open[f], Redirects: ptr(redirects[f]),
			Latency: ptr(histQuantilesMs(overall))}
		if seconds > 0 {
			tot.OKPerS = ptr(math.Round(float64(tok)/seconds*10) / 10)
		}
		totals[f] = tot
	}
	for f, n := range open {
		if _, ok := totals[f]; !ok {
			totals[f] = OpFigures{Open: n}
		}
	}
	faults := []PerfFault{}
	for _, w := range in.windowsOf() {
		faults = append(faults, PerfFault{Fault: w.Fault, StartS: sec(w.Start), EndS: sec(w.End), Open: w.Open, Nodes: nonNil(w.Nodes)})
	}
	return Result{Valid: Valid, Figures: &PerfFigures{
		Measurement: true,
		Ops:         len(calls),
		Redirects:   totalRedirects,
		RunS:        sec(runEnd),
		BucketS:     time.Duration(width).Seconds(),
		ByF:         totals,
		Series:      series,
		Faults:      faults,
	}}
}

// PerfFigures are the perf checker's figures: throughput and latency per
// operation, in total and per time bucket, with the fault windows.
type PerfFigures struct {
	Measurement bool `json:"measurement"`
	// Ops counts the client ops; Redirects the MOVED/ASK replies they
	// followed.
	Ops       int     `json:"ops"`
	Redirects int     `json:"redirects"`
	RunS      float64 `json:"run_s"`
	BucketS   float64 `json:"bucket_s"`
	// ByF are the totals per operation, Series its buckets, by op name.
	ByF    map[string]OpFigures  `json:"by_f"`
	Series map[string]PerfSeries `json:"series"`
	Faults []PerfFault           `json:"faults"`
}

// Why: the perf checker measures; it has no verdict to explain.
func (f *PerfFigures) Why() string { return "" }

// Measures: the perf checker measures.
func (f *PerfFigures) Measures() bool { return true }

// PerfSeries is one operation's time buckets: completions by outcome and
// the ok ops' latency quantiles (nil in a bucket with none).
type PerfSeries struct {
	TS    []float64  `json:"t_s"`
	OK    []int      `json:"ok"`
	Fail  []int      `json:"fail"`
	Info  []int      `json:"info"`
	P50Ms []*float64 `json:"p50_ms"`
	P95Ms []*float64 `json:"p95_ms"`
	P99Ms []*float64 `json:"p99_ms"`
	MaxMs []*float64 `json:"max_ms"`
}

// PerfFault is a fault window as the perf plots draw it.
type PerfFault struct {
	Fault  string   `json:"fault"`
	StartS float64  `json:"start_s"`
	EndS   float64  `json:"end_s"`
	Open   bool     `json:"open"`
	Nodes  []string `json:"nodes"`
}
