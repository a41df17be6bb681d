package checker

import (
	"context"
	"maps"
	"math"
	"math/bits"
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

// Check is the stream's result on the whole history's calls: one
// implementation for both paths.
func (p perf) Check(ctx context.Context, in *History) Result {
	calls, err := p.o.calls(in)
	if err != nil {
		return invalidHistory(err)
	}
	s := p.newStream()
	for i := range calls {
		s.Call(&calls[i], i)
	}
	return s.result(in.runEndOf(), in.windowsOf())
}

// NewStream: perf streams (StreamChecker).
func (p perf) NewStream(t *Tail) Stream {
	s := p.newStream()
	s.t = t
	return s
}

func (p perf) newStream() *perfStream {
	s := &perfStream{o: p.o, open: map[string]int{}, redirects: map[string]int{}, byF: map[string]*perfOp{}, grain: int64(p.o.Bucket)}
	if s.grain <= 0 {
		s.width = int64(BucketWidth(0, p.o.MaxBuckets))
		s.grain = int64(perfGrain(time.Duration(s.width)))
	}
	return s
}

// perfStream is the perf checker's state over one pass: per op name, its
// completions and ok latencies per time bucket, the latencies as counts
// per HDR bin (the histogram's own equivalence classes, so that the
// quantiles are the histogram's, exactly). It grows with the op names,
// the buckets (at most about 2.5 MaxBuckets of them, see perfGrain) and
// the distinct bins, not with the ops.
type perfStream struct {
	o              PerfOptions
	t              *Tail
	ops            int
	totalRedirects int
	open           map[string]int
	// MOVED/ASK replies the client followed: how much a migration or a
	// failover made clients chase slots.
	redirects map[string]int
	byF       map[string]*perfOp
	// grain is the width of the buckets kept: the final width (p.o.Bucket,
	// else BucketWidth of the run's end, known only at the end) is a
	// multiple of it. latest is the latest time seen, which the run's end
	// is at least.
	grain, latest int64
	// width is BucketWidth of latest (when p.o.Bucket is 0).
	width int64
}

type perfOp struct {
	buckets map[int64]*perfBucket // by completion time / grain
	overall *hdrhistogram.Histogram
	ok      int
}

type perfBucket struct {
	ok, fail, info int
	lat            map[int64]int64 // lowest equivalent latency (µs) -> ok ops
}

func (b *perfBucket) merge(o *perfBucket) {
	b.ok, b.fail, b.info = b.ok+o.ok, b.fail+o.fail, b.info+o.info
	for v, n := range o.lat {
		b.lat[v] += n
	}
}

// perfGrain is the width of the buckets a pass keeps while the run's end
// is at least run: the greatest common divisor of every width BucketWidth
// can still pick (itself and every one after it), so that the buckets of
// the final width are unions of kept ones. It is a multiple of the grain
// of any shorter run, so that kept buckets merge as the run grows.
func perfGrain(w time.Duration) time.Duration {
	g := time.Duration(0)
	for _, n := range niceBuckets {
		if n >= w {
			g = gcdDuration(g, n)
		}
	}
	if g == 0 {
		// Past the last nice width, BucketWidth picks whole hours.
		g = time.Hour
	}
	return g
}

func gcdDuration(a, b time.Duration) time.Duration {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// hdrLowest is the lowest value newLatencyHist counts in the same bin as
// v (v >= 1): the top 11 bits of v (3 significant digits: 2048
// sub-buckets, lowest trackable value 1). Recording it stands for v
// exactly (TestHdrLowest holds it to the histogram's ValuesAreEquivalent).
func hdrLowest(v int64) int64 {
	shift := max(0, bits.Len64(uint64(v)|2047)-11)
	return v >> shift << shift
}

func (s *perfStream) Call(c *call, _ int) {
	s.latest = max(s.latest, c.start)
	if c.end != inf {
		s.latest = max(s.latest, c.end)
	}
	if !s.o.keep(c.inv) {
		return
	}
	s.ops++
	f := c.inv.F
	if c.comp == nil {
		s.open[f]++
		return
	}
	s.redirects[f] += c.comp.RedirectCount()
	s.totalRedirects += c.comp.RedirectCount()
	if s.o.Bucket <= 0 && s.latest/s.width >= int64(s.o.MaxBuckets) {
		// The run is too long for the width it had: BucketWidth picks a
		// wider one (and never a narrower one as the run grows).
		s.width = int64(BucketWidth(time.Duration(s.latest), s.o.MaxBuckets))
		s.regrain(perfGrain(time.Duration(s.width)))
	}
	po := s.byF[f]
	if po == nil {
		po = &perfOp{buckets: map[int64]*perfBucket{}}
		s.byF[f] = po
	}
	k := c.end / s.grain
	b := po.buckets[k]
	if b == nil {
		b = &perfBucket{lat: map[int64]int64{}}
		po.buckets[k] = b
	}
	switch c.comp.Type {
	case history.OK:
		b.ok++
		po.ok++
		lat := latencyUs(c)
		b.lat[hdrLowest(lat)]++
		if po.overall == nil {
			po.overall = newLatencyHist()
		}
		_ = po.overall.RecordValue(lat)
	case history.Fail:
		b.fail++
	default:
		b.info++
	}
}

// regrain merges the kept buckets into buckets of grain g, a multiple of
// the current grain (perfGrain). Go's division truncates, and truncating
// twice is truncating once: bucket (t/a)/k is t/(a*k).
func (s *perfStream) regrain(g time.Duration) {
	if int64(g) <= s.grain {
		return
	}
	k := int64(g) / s.grain
	for _, po := range s.byF {
		merged := make(map[int64]*perfBucket, len(po.buckets)/int(k)+1)
		for i, b := range po.buckets {
			if m := merged[i/k]; m != nil {
				m.merge(b)
			} else {
				merged[i/k] = b
			}
		}
		po.buckets = merged
	}
	s.grain = int64(g)
}

func (s *perfStream) End(context.Context) Result {
	if r, bad := s.t.pairErr(); bad {
		return r
	}
	return s.result(s.t.runEndOf(), s.t.windowsOf())
}

// result is the figures of the calls seen, in a run that ended at runEnd
// with the fault windows given.
func (s *perfStream) result(runEnd int64, windows []Window) Result {
	if s.ops == 0 {
		return NotApplicable("no client op in the history: no throughput or latency to measure")
	}
	width := s.o.Bucket
	if width <= 0 {
		width = BucketWidth(time.Duration(runEnd), s.o.MaxBuckets)
		s.regrain(perfGrain(width))
	}
	nb := int(runEnd/int64(width)) + 1
	k := int64(width) / s.grain

	h := newLatencyHist()
	series := map[string]PerfSeries{}
	totals := map[string]OpFigures{}
	seconds := float64(runEnd) / 1e9
	for f, po := range s.byF {
		// The kept buckets into the final ones, in time order.
		final := map[int64]*perfBucket{}
		for i, b := range po.buckets {
			if m := final[i/k]; m != nil {
				m.merge(b)
			} else {
				final[i/k] = b
			}
		}
		po.buckets = nil
		order := slices.Sorted(maps.Keys(final))
		t := make([]float64, nb)
		okN, failN, infoN := make([]int, nb), make([]int, nb), make([]int, nb)
		p50, p95, p99, pmax := make([]*float64, nb), make([]*float64, nb), make([]*float64, nb), make([]*float64, nb)
		for b := range nb {
			t[b] = sec(int64(b) * int64(width))
		}
		var tfail, tinfo int
		for _, b := range order {
			fb := final[b]
			okN[b] += fb.ok
			failN[b] += fb.fail
			infoN[b] += fb.info
			tfail += fb.fail
			tinfo += fb.info
			h.Reset()
			for v, n := range fb.lat {
				_ = h.RecordValues(v, n)
			}
			if h.TotalCount() > 0 {
				p50[b] = ptr(float64(h.ValueAtQuantile(50)) / 1e3)
				p95[b] = ptr(float64(h.ValueAtQuantile(95)) / 1e3)
				p99[b] = ptr(float64(h.ValueAtQuantile(99)) / 1e3)
				pmax[b] = ptr(float64(h.Max()) / 1e3)
			}
		}
		overall := po.overall
		if overall == nil {
			overall = newLatencyHist()
		}
		series[f] = PerfSeries{TS: t, OK: okN, Fail: failN, Info: infoN, P50Ms: p50, P95Ms: p95, P99Ms: p99, MaxMs: pmax}
		tot := OpFigures{OK: int64(po.ok), Fail: int64(tfail), Info: int64(tinfo), Open: s.open[f], Redirects: ptr(s.redirects[f]),
			Latency: ptr(histQuantilesMs(overall))}
		if seconds > 0 {
			tot.OKPerS = ptr(math.Round(float64(po.ok)/seconds*10) / 10)
		}
		totals[f] = tot
	}
	for f, n := range s.open {
		if _, ok := totals[f]; !ok {
			totals[f] = OpFigures{Open: n}
		}
	}
	faults := []PerfFault{}
	for _, w := range windows {
		faults = append(faults, PerfFault{Fault: w.Fault, StartS: sec(w.Start), EndS: sec(w.End), Open: w.Open, Nodes: nonNil(w.Nodes)})
	}
	return Result{Valid: Valid, Figures: &PerfFigures{
		Measurement: true,
		Ops:         s.ops,
		Redirects:   s.totalRedirects,
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
