package checker

import (
	"encoding/json"
	"maps"
	"slices"
)

// A result's headline counts (lost, stale reads, the WAIT split ...),
// typed and explained, read alike from every checker that writes them, for
// the readers of a result (the report, the CLI, bench). The checkers whose
// figures are typed (figures.go) are read through their fields; the counts
// are still read by their names from the Values of checkers whose figures
// are a Map, the last such reading until every checker's figures are typed.

// Figure is one headline count of a result: its name in results.json, its
// value and what it means (DescribeFigure).
type Figure struct {
	Name  string
	Value float64
	Why   string
}

// N is the figure's value, 0 for a figure the result does not have.
func (f *Figure) N() float64 {
	if f == nil {
		return 0
	}
	return f.Value
}

// Counts are a result's headline counts, the figures DESIGN.md names for
// results.json; nil where the result has no such figure.
type Counts struct {
	Lost, Unexpected, Recovered, StaleReads, AnomalousKeys *Figure
	// The WAIT split of the lost writes.
	WaitSatisfied, WaitUnsatisfied, NoWait *Figure
}

// List is the counts the result has, in DESIGN.md's order.
func (c Counts) List() []Figure {
	var out []Figure
	for _, f := range []*Figure{c.Lost, c.Unexpected, c.Recovered, c.StaleReads, c.AnomalousKeys,
		c.WaitSatisfied, c.WaitUnsatisfied, c.NoWait} {
		if f != nil {
			out = append(out, *f)
		}
	}
	return out
}

// Counts reads the result's headline counts, each with its explanation. A
// figure that lists its instances (anomalous_keys) counts them.
func (r Result) Counts() Counts {
	count := func(name string) *Figure {
		var raw json.RawMessage
		if !decodeFigure(r.Values(), name, &raw) {
			return nil
		}
		var v float64
		var list []json.RawMessage
		switch {
		case json.Unmarshal(raw, &v) == nil:
		case json.Unmarshal(raw, &list) == nil:
			v = float64(len(list))
		default:
			return nil
		}
		return &Figure{Name: name, Value: v, Why: DescribeFigure(name)}
	}
	return Counts{Lost: count("lost"), Unexpected: count("unexpected"), Recovered: count("recovered"),
		StaleReads: count("stale_reads"), AnomalousKeys: count("anomalous_keys"),
		WaitSatisfied: count("wait_satisfied"), WaitUnsatisfied: count("wait_unsatisfied"), NoWait: count("no_wait")}
}

// Quantiles are a latency or duration summary in milliseconds; nil
// quantiles (not written) when Count is 0.
type Quantiles struct {
	Count int64    `json:"count"`
	P50   *float64 `json:"p50,omitempty"`
	P95   *float64 `json:"p95,omitempty"`
	P99   *float64 `json:"p99,omitempty"`
	Max   *float64 `json:"max,omitempty"`
}

// OpFigures are the perf checker's totals of one operation (by_f).
type OpFigures struct {
	F    string `json:"-"`
	OK   int64  `json:"ok"`
	Fail int64  `json:"fail"`
	Info int64  `json:"info"`
	// Open counts the ops of F the history left without a completion.
	Open int `json:"open"`
	// Redirects, OKPerS and Latency (of the ok ops) are nil for an
	// operation none of whose ops completed.
	Redirects *int       `json:"redirects,omitempty"`
	OKPerS    *float64   `json:"ok_per_s,omitempty"`
	Latency   *Quantiles `json:"latency_ms,omitempty"`
}

// Ops is the perf checker's totals per operation, sorted by name; nil for
// a result of another checker.
func (r Result) Ops() []OpFigures {
	f, ok := FiguresAs[*PerfFigures](r)
	if !ok {
		return nil
	}
	out := make([]OpFigures, 0, len(f.ByF))
	for _, name := range slices.Sorted(maps.Keys(f.ByF)) {
		o := f.ByF[name]
		o.F = name
		out = append(out, o)
	}
	return out
}

// Coverage is the coverage checker's figures per requested fault kind,
// sorted by kind; nil for a result of another checker.
func (r Result) Coverage() []KindCoverage {
	f, ok := FiguresAs[*CoverageFigures](r)
	if !ok {
		return nil
	}
	out := make([]KindCoverage, 0, len(f.PerKind))
	for _, k := range slices.Sorted(maps.Keys(f.PerKind)) {
		c := f.PerKind[k]
		c.Kind = k
		out = append(out, c)
	}
	return out
}

// decodeFigure reads the figure name into v through its JSON, the same
// for a fresh result and one read back; false when the result has no such
// figure or it is not of v's shape.
func decodeFigure(fig map[string]any, name string, v any) bool {
	x, ok := fig[name]
	if !ok || x == nil {
		return false
	}
	b, err := json.Marshal(x)
	return err == nil && json.Unmarshal(b, v) == nil
}

// decodeInto reads figures into the fields of v that name them.
func decodeInto(fig map[string]any, v any) bool {
	b, err := json.Marshal(fig)
	return err == nil && json.Unmarshal(b, v) == nil
}
