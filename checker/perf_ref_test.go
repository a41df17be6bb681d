package checker

import (
	"math"
	"slices"
	"time"

	"github.com/redline-dev/redline/history"
)

// The perf checker as it was before it streamed (perf.go): the reference
// its streaming form is compared with (TestPerfStream*), kept verbatim.

// perfSample is 16 bytes: a perf checker holds one per completed op.
type perfSample struct {
	lat    int64 // µs, ok ops only
	bucket int32
	typ    history.Type
}

func perfReference(p perf, in *History) Result {
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
