package bench

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The run's latency histograms are kept whole (HdrHistogram's compressed
// V2 encoding, base64 in bench.json, a few KB each), so the percentile
// spectrum can be drawn and exported after the run, and compared or
// merged by other HdrHistogram tools: `.hgrm` files are HdrHistogram's
// percentile-distribution text (what HistogramLogProcessor and the
// online plotter read), histograms.json the same in JSON.

// histKey names a stored histogram: "get.corrected", "set.raw", ...
func histKey(op, kind int) string { return opNames[op] + "." + kindNames[kind] }

// encodeHists stores the measured part's histograms in the Result.
func (r *Result) encodeHists(h hists) {
	r.Histograms = map[string][]byte{}
	for o := range h {
		for k := range h[o] {
			if h[o][k] == nil || h[o][k].TotalCount() == 0 {
				continue
			}
			if enc, err := h[o][k].Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
				r.Histograms[histKey(o, k)] = enc
			}
		}
	}
}

// Hist is the measured latency histogram (µs) of op ("get", "set" or
// "total") and kind ("corrected" or "raw"); nil when none was stored.
func (r *Result) Hist(op, kind string) *hdrhistogram.Histogram {
	var out *hdrhistogram.Histogram
	for o := range opNames {
		if op != "total" && op != opNames[o] {
			continue
		}
		enc, ok := r.Histograms[opNames[o]+"."+kind]
		if !ok {
			continue
		}
		h, err := hdrhistogram.Decode(enc)
		if err != nil {
			continue
		}
		if out == nil {
			out = newHist()
		}
		out.Merge(h)
	}
	return out
}

// SpectrumPoint is one point of a percentile spectrum.
type SpectrumPoint struct {
	Percentile float64 `json:"percentile"`
	Ms         float64 `json:"ms"`
	Count      int64   `json:"count"` // ops at or below
}

// Spectrum is HdrHistogram's percentile distribution (5 ticks per half
// distance: 0, 50, 75, 87.5, ... up to 100).
func Spectrum(h *hdrhistogram.Histogram) []SpectrumPoint {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	var out []SpectrumPoint
	for _, b := range h.CumulativeDistributionWithTicks(5) {
		out = append(out, SpectrumPoint{Percentile: b.Quantile, Ms: float64(b.ValueAt) / 1000, Count: b.Count})
	}
	return out
}

// histExport is one histogram in histograms.json.
type histExport struct {
	Op       string          `json:"op"`
	Kind     string          `json:"kind"`
	Unit     string          `json:"unit"` // of Encoded's values
	Count    int64           `json:"count"`
	MeanMs   float64         `json:"mean_ms"`
	MaxMs    float64         `json:"max_ms"`
	Encoded  []byte          `json:"hdr_v2_compressed"` // base64 in JSON
	Spectrum []SpectrumPoint `json:"spectrum"`
}

// HistogramFiles are the export files Save writes beside bench.json.
func HistogramFiles() []string {
	var out []string
	for _, op := range []string{"total", "get", "set"} {
		for _, k := range kindNames {
			out = append(out, fmt.Sprintf("latency-%s-%s.hgrm", op, k))
		}
	}
	return append(out, "histograms.json")
}

// saveHistograms writes the .hgrm files and histograms.json.
func saveHistograms(run Store, r *Result) error {
	var all []histExport
	for _, op := range []string{"total", "get", "set"} {
		for _, k := range kindNames {
			h := r.Hist(op, k)
			if h == nil {
				continue
			}
			var b bytes.Buffer
			// Values are µs; the file is in ms, as HdrHistogram's tools show it.
			if _, err := h.PercentilesPrint(&b, 5, 1000); err != nil {
				return err
			}
			if err := run.WriteFile(fmt.Sprintf("latency-%s-%s.hgrm", op, k), b.Bytes()); err != nil {
				return err
			}
			enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
			if err != nil {
				return err
			}
			all = append(all, histExport{Op: op, Kind: k, Unit: "us", Count: h.TotalCount(), MeanMs: h.Mean() / 1000,
				MaxMs: float64(h.Max()) / 1000, Encoded: enc, Spectrum: Spectrum(h)})
		}
	}
	b, err := json.MarshalIndent(map[string]any{"histograms": all}, "", "  ")
	if err != nil {
		return err
	}
	return run.WriteFile("histograms.json", b)
}
