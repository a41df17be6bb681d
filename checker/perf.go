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

func histQuantilesMs(h *hdrhistogram.Histogram) map[string]any {
	if h.TotalCount() == 0 {
		return map[string]any{"count": 0}
	}
	us := func(v int64) float64 { return math.Round(float64(v)) / 1e3 }
	return map[string]any{
		"count": h.TotalCount(),
		"p50":   us(h.ValueAtQuantile(50)),
		"p95":   us(h.ValueAtQuantile(95)),
		"p99":   us(h.ValueAtQuantile(99)),
		"max":   us(h.Max()),
	}
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
	series := map[string]any{}
	totals := map[string]any{}
	seconds := float64(runEnd) / 1e9
	for f, samples := range byF {
		slices.SortStableFunc(samples, func(a, b perfSample) int { return int(a.bucket) - int(b.bucket) })
		t := make([]float64, nb)
		okN, failN, infoN := make([]int, nb), make([]int, nb), make([]int, nb)
		p50, p95, p99, pmax := make([]any, nb), make([]any, nb), make([]any, nb), make([]any, nb)
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
				p50[b] = float64(h.ValueAtQuantile(50)) / 1e3
				p95[b] = float64(h.ValueAtQuantile(95)) / 1e3
				p99[b] = float64(h.ValueAtQuantile(99)) / 1e3
				pmax[b] = float64(h.Max()) / 1e3
			}
		}
		series[f] = map[string]any{
			"t_s": t, "ok": okN, "fail": failN, "info": infoN,
			"p50_ms": p50, "p95_ms": p95, "p99_ms": p99, "max_ms": pmax,
		}
		tot := map[string]any{
			"ok": tok, "fail": tfail, "info": tinfo, "open": open[f], "redirects": redirects[f],
			"latency_ms": histQuantilesMs(overall),
		}
		if seconds > 0 {
			tot["ok_per_s"] = math.Round(float64(tok)/seconds*10) / 10
		}
		totals[f] = tot
	}
	for f, n := range open {
		if _, ok := totals[f]; !ok {
			totals[f] = map[string]any{"ok": 0, "fail": 0, "info": 0, "open": n}
		}
	}
	faults := []map[string]any{}
	for _, w := range in.windowsOf() {
		faults = append(faults, map[string]any{
			"fault": w.Fault, "start_s": sec(w.Start), "end_s": sec(w.End), "open": w.Open, "nodes": nonNil(w.Nodes),
		})
	}
	return Result{Valid: Valid, Figures: Map{
		"measurement": true,
		"ops":         len(calls),
		"redirects":   totalRedirects,
		"run_s":       sec(runEnd),
		"bucket_s":    time.Duration(width).Seconds(),
		"by_f":        totals,
		"series":      series,
		"faults":      faults,
	}}
}
