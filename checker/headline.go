package checker

import (
	"encoding/json"
	"maps"
	"slices"
)

// A result's headline counts (lost, stale reads, the WAIT split ...),
// typed and explained, read alike from every checker that writes them, for
// the readers of a result (the report, the CLI, bench). Typed figures say
// their own counts (counts()); only a Map (the lock, queue and ttl
// checkers', and a stored result no type could read) is read by its names.

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
	// The other anomalies a checker counts (bank, cross-slot, counter,
	// linearizable, list-append), and the increments a client library
	// sent again (resent_adds): not in List.
	WrongTotal, NegativeBalances, BadReads, Executed, UnknownKeys, AnomalyTypes, ResentAdds *Figure
	// ReplicaReads counts the reads replicas served (counter,
	// linearizable): not in List.
	ReplicaReads *Figure
}

// counted is typed figures that say their headline counts.
type counted interface {
	counts() Counts
}

// count is a headline count of the given name.
func count[N int | int64](name string, v N) *Figure {
	return &Figure{Name: name, Value: float64(v), Why: DescribeFigure(name)}
}

// countOf is an optional count, nil when absent.
func countOf[N int | int64](name string, v *N) *Figure {
	if v == nil {
		return nil
	}
	return count(name, *v)
}

func (s WaitSplit) counts(c *Counts) {
	c.WaitSatisfied = count("wait_satisfied", s.WaitSatisfied)
	c.WaitUnsatisfied = count("wait_unsatisfied", s.WaitUnsatisfied)
	c.NoWait = count("no_wait", s.NoWait)
}

func (f *SetFigures) counts() Counts {
	c := Counts{Lost: count("lost", f.Lost), Unexpected: count("unexpected", f.Unexpected),
		Recovered: count("recovered", f.Recovered), StaleReads: count("stale_reads", f.StaleReads)}
	f.WaitSplit.counts(&c)
	return c
}

func (f *CounterFigures) counts() Counts {
	c := Counts{Lost: count("lost", f.Lost), Unexpected: count("unexpected", f.Unexpected),
		StaleReads: countOf("stale_reads", f.StaleReads), BadReads: count("bad_reads", f.BadReads)}
	if f.ResentAdds != 0 {
		c.ResentAdds = count("resent_adds", f.ResentAdds)
	}
	if f.ReplicaReads != 0 {
		c.ReplicaReads = count("replica_reads", f.ReplicaReads)
	}
	f.WaitSplit.counts(&c)
	return c
}

func (f *LinearizableFigures) counts() Counts {
	c := Counts{AnomalousKeys: count("anomalous_keys", len(f.AnomalousKeys)), StaleReads: count("stale_reads", f.StaleReads),
		UnknownKeys: count("unknown_keys", len(f.UnknownKeys))}
	if f.ReplicaReads != 0 {
		c.ReplicaReads = count("replica_reads", f.ReplicaReads)
	}
	return c
}

func (f *HandoffFigures) counts() Counts {
	return Counts{AnomalousKeys: count("anomalous_keys", f.AnomalousKeys)}
}

func (f *BankFigures) counts() Counts {
	return Counts{WrongTotal: count("wrong_total", f.WrongTotal), NegativeBalances: count("negative_balances", f.NegativeBalances)}
}

func (f *CrossSlotFigures) counts() Counts { return Counts{Executed: count("executed", f.Executed)} }

func (f *ListAppendFigures) counts() Counts {
	return Counts{AnomalyTypes: count("anomaly_types", len(f.AnomalyTypes))}
}

func (o *OneClass) counts() Counts {
	if o.AnomalyTypes == nil {
		return Counts{}
	}
	return Counts{AnomalyTypes: count("anomaly_types", len(o.AnomalyTypes))}
}

func (f *RPOFigures) counts() Counts {
	c := Counts{Lost: count("lost", f.Lost)}
	return c
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
	f := r.Figures
	if s, ok := f.(storedFigures); ok {
		f = s.Figures
	}
	if c, ok := f.(counted); ok {
		return c.counts()
	}
	m, ok := f.(Map)
	if !ok {
		// Typed figures of a checker outside this package (a workload's
		// own folder): the headline counts by the same names a Map of
		// them gives.
		m = Map(r.Values())
	}
	count := func(name string) *Figure {
		var raw json.RawMessage
		if !decodeFigure(m, name, &raw) {
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
		WaitSatisfied: count("wait_satisfied"), WaitUnsatisfied: count("wait_unsatisfied"), NoWait: count("no_wait"),
		WrongTotal: count("wrong_total"), NegativeBalances: count("negative_balances"), BadReads: count("bad_reads"),
		Executed: count("executed"), UnknownKeys: count("unknown_keys"), AnomalyTypes: count("anomaly_types"),
		ResentAdds: count("resent_adds"), ReplicaReads: count("replica_reads")}
}

// AnomalyClasses are the classes of anomaly the result's checker found
// ("anomalies"), sorted; nil for none.
func (r Result) AnomalyClasses() []string {
	f := r.Figures
	if s, ok := f.(storedFigures); ok {
		f = s.Figures
	}
	var classes []string
	switch f := f.(type) {
	case interface{ anomalyClasses() []string }:
		classes = f.anomalyClasses()
	case AnomalyFigures:
		classes = f.FlaggedAnomalies().classes()
	case Map:
		m, _ := f["anomalies"].(map[string]any)
		for c := range m {
			classes = append(classes, c)
		}
	}
	slices.Sort(classes)
	return classes
}

func (a Anomalies) classes() []string { return slices.Collect(maps.Keys(a)) }

// AnomalyFigures are figures that flag anomalies by class, of a checker
// outside this package (a workload's own folder, as workloads/lock): the
// report, the attribution and the adversary read its classes and
// instances through this, as they read this package's figures.
type AnomalyFigures interface {
	Figures
	FlaggedAnomalies() Anomalies
}

func (o *OneClass) anomalyClasses() []string            { return o.Anomalies.classes() }
func (f *BankFigures) anomalyClasses() []string         { return f.Anomalies.classes() }
func (f *CounterFigures) anomalyClasses() []string      { return f.Anomalies.classes() }
func (f *SetFigures) anomalyClasses() []string          { return f.Anomalies.classes() }
func (f *LinearizableFigures) anomalyClasses() []string { return f.Anomalies.classes() }
func (f *WaitProbeFigures) anomalyClasses() []string    { return f.Anomalies.classes() }
func (f *ListAppendFigures) anomalyClasses() []string {
	return slices.Collect(maps.Keys(f.Anomalies))
}

// LostElements are the set checker's lost acknowledged adds, one row
// each (element, key, node, ack_s, wait ...), as results.json holds them;
// nil for a result of another checker.
func (r Result) LostElements() []map[string]any {
	f, ok := FiguresAs[*SetFigures](r)
	if !ok || len(f.LostElements) == 0 {
		return nil
	}
	var rows []map[string]any
	if !decodeInto(map[string]any{"rows": f.LostElements}, &struct {
		Rows *[]map[string]any `json:"rows"`
	}{&rows}) {
		return nil
	}
	return rows
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
