package checker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// A checker's figures are a typed value of its own from the moment it
// writes them (RTOFigures, RPOFigures, PerfFigures, CoverageFigures, ...),
// read by the report, the CLI and the suite through their fields, never by
// a name in a map; each explains itself (Why, DescribeFigure). A checker
// whose figures are not typed yet writes a Map.
//
// results.json does not change with the type: a result is written as its
// figures' JSON object with "valid" beside, canonically (keys sorted at
// every level, numbers as the figure wrote them), which is what a
// map[string]any of the same figures wrote before they were typed. A
// struct's field order therefore does not matter; which keys it writes
// (omitempty where a figure is conditional) does, and the stored-run test
// (harness/adversary TestResultsJSONBytesUnchanged) holds every checker
// to it.

// Figures are one checker's figures.
type Figures interface {
	// Why says in words what made a verdict that is not valid ("" when
	// there is nothing to say).
	Why() string
}

// Map is the figures of a checker whose figures are not typed yet, by
// their names in results.json; also what a stored result of a checker
// with no typed figures reads back as.
type Map map[string]any

// Why is the "why" figure.
func (m Map) Why() string {
	why, _ := m["why"].(string)
	return why
}

// Measurer is figures that say their checker measures (rto, rpo, perf,
// coverage): valid only means it judged nothing wrong.
type Measurer interface {
	Measures() bool
}

// Measures says a Map's checker measures (its "measurement" figure).
func (m Map) Measures() bool {
	b, _ := m["measurement"].(bool)
	return b
}

// Values is the figures as results.json holds them, by name: for the
// readers that show every figure alike (the report's "all figures", the
// compare page), never to pick one out by its name.
func (r Result) Values() map[string]any {
	switch f := r.Figures.(type) {
	case Map:
		return f
	case storedFigures:
		return f.stored
	}
	out := map[string]any{}
	if r.Figures == nil {
		return out
	}
	b, err := json.Marshal(r.Figures)
	if err != nil {
		return map[string]any{"error": "figures cannot be written: " + err.Error()}
	}
	_ = json.Unmarshal(b, &out)
	return out
}

// canonicalJSON writes v as a map[string]any of the same content writes
// it: objects' keys sorted at every level, numbers as v wrote them.
func canonicalJSON(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var x any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&x); err != nil {
		return nil, err
	}
	return json.Marshal(x)
}

// figureObject is figures as a JSON object's members, canonical.
func figureObject(f Figures) (map[string]json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if f == nil {
		return m, nil
	}
	b, err := canonicalJSON(f)
	if err != nil {
		return nil, err
	}
	if string(b) == "null" {
		return m, nil
	}
	return m, json.Unmarshal(b, &m)
}

// typedFigures are the checkers whose figures have a type, by the
// checker's name (the part after a workload's "<workload>/" prefix), with
// the figures a stored result must have to be read as that type: the one
// place a stored result's figures are read back into their type.
var typedFigures = map[string]struct {
	make  func() Figures
	needs []string
}{
	"rto":                {func() Figures { return new(RTOFigures) }, []string{"rto_ms", "per_window"}},
	"rpo":                {func() Figures { return new(RPOFigures) }, []string{"per_window", "outside_windows"}},
	"perf":               {func() Figures { return new(PerfFigures) }, []string{"by_f"}},
	BenchName:            {func() Figures { return new(BenchFigures) }, []string{"throughput"}},
	CoverageName:         {func() Figures { return new(CoverageFigures) }, []string{"per_kind"}},
	"end-phase":          {func() Figures { return new(EndPhaseFigures) }, []string{"slots_checked"}},
	"config-epoch":       {func() Figures { return new(EpochFigures) }, []string{"samples"}},
	"replica-census":     {func() Figures { return new(ReplicaCensusFigures) }, []string{"replicas"}},
	"census":             {func() Figures { return new(CensusFigures) }, []string{"copies_judged"}},
	"wait-probe":         {func() Figures { return new(WaitProbeFigures) }, []string{"probed_writes"}},
	"write-pause":        {func() Figures { return new(WritePauseFigures) }, []string{"migrations"}},
	"bank":               {func() Figures { return new(BankFigures) }, []string{"transfers_ok"}},
	"handoff":            {func() Figures { return new(HandoffFigures) }, []string{"handoffs"}},
	"elections":          {func() Figures { return new(ElectionFigures) }, []string{"logs"}},
	"default-failover":   {func() Figures { return new(DefaultFailoverFigures) }, []string{"rule"}},
	"failover-promotion": {func() Figures { return new(FailoverPromotionFigures) }, []string{"promoted"}},
	"cross-slot":         {func() Figures { return new(CrossSlotFigures) }, []string{"attempted"}},
	"script":             {func() Figures { return new(ScriptFigures) }, []string{"evalsha"}},
	"run-files":          {func() Figures { return new(RunFilesFigures) }, []string{"caveat"}},
	"counter":            {func() Figures { return new(CounterFigures) }, []string{"wait_split_note"}},
	"set":                {func() Figures { return new(SetFigures) }, []string{"lost_elements"}},
	"linearizable":       {func() Figures { return new(LinearizableFigures) }, []string{"timeout_s"}},
	"list-append":        {func() Figures { return new(ListAppendFigures) }, []string{"detects"}},
}

// RegisterFigures adds a checker outside this package (a workload's own
// folder, as workloads/lock) to typedFigures, at init, so that a stored
// result of it reads back as its type:
//
//	var _ = checker.RegisterFigures("lock", func() checker.Figures { return new(Figures) }, "acquires")
//
// needs are figures every result of that type has. A name registered twice
// is a programming error, and panics at start.
func RegisterFigures(name string, make func() Figures, needs ...string) struct{} {
	if _, ok := typedFigures[name]; ok {
		panic("checker: figures of " + name + " registered twice")
	}
	typedFigures[name] = struct {
		make  func() Figures
		needs []string
	}{make, needs}
	return struct{}{}
}

// decodeFigures reads the stored figures of checker name (without
// "valid") into the type that checker writes; a Map when it has none or
// they lack a figure the type needs (an error result: reading it as the
// type would say figures nobody measured, lost 0). Old runs keep every
// figure they stored: when the typed value would not write back the very
// bytes it was read from (a results.json from before a figure was added,
// or with one the type does not know), readers get the typed value and
// writers the stored figures (storedFigures).
func decodeFigures(name string, raw []byte) (Figures, error) {
	var m Map
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	t, ok := typedFigures[name[strings.LastIndexByte(name, '/')+1:]]
	if !ok {
		return m, nil
	}
	for _, k := range t.needs {
		if m[k] == nil {
			return m, nil
		}
	}
	f := t.make()
	if json.Unmarshal(raw, f) != nil {
		return m, nil
	}
	want, err1 := canonicalJSON(json.RawMessage(raw))
	got, err2 := canonicalJSON(f)
	if err1 == nil && err2 == nil && bytes.Equal(want, got) {
		return f, nil
	}
	return storedFigures{Figures: f, stored: m}, nil
}

// storedFigures are typed figures read back from a results.json they
// would not write the same: stored is what it holds, written back as is.
type storedFigures struct {
	Figures
	stored Map
}

func (s storedFigures) MarshalJSON() ([]byte, error) { return json.Marshal(s.stored) }

// FiguresAs is r's figures as the type T its checker writes; false when
// they are of another checker (or of a stored result whose figures could
// not be read as T).
func FiguresAs[T Figures](r Result) (T, bool) {
	f := r.Figures
	if s, ok := f.(storedFigures); ok {
		f = s.Figures
	}
	t, ok := f.(T)
	return t, ok
}

// Verdict are the figures that say in words what made a verdict: most
// checkers' figures embed it, and a result that judged nothing (a panic,
// a history that cannot be paired) is it alone.
type Verdict struct {
	// Reason ("why") says what made a verdict that is not valid, naming
	// the first keys or ops; Error that the checker could not judge; First
	// the first anomaly in words.
	Reason string `json:"why,omitempty"`
	Error  string `json:"error,omitempty"`
	First  string `json:"first,omitempty"`
}

// Why is the "why" figure.
func (v *Verdict) Why() string { return v.Reason }

// Err is the "error" figure: why the checker could not judge.
func (v *Verdict) Err() string { return v.Error }

func (v *Verdict) verdict() *Verdict { return v }

// because adds a sentence to the "why" figure.
func (v *Verdict) because(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if v.Reason != "" {
		s = v.Reason + "; " + s
	}
	v.Reason = s
}

// Err is what a Map says of why its checker could not judge: its
// "reason" (or first of "reasons", as a checker of another tool or an
// older redline writes them), else its "error" figure.
func (m Map) Err() string {
	if r, _ := m["reason"].(string); r != "" {
		return r
	}
	if rs, _ := m["reasons"].([]any); len(rs) > 0 {
		if r, _ := rs[0].(string); r != "" {
			return r
		}
	}
	e, _ := m["error"].(string)
	return e
}

// ReadResult reads one stored result of checker name (its figures with
// "valid" beside, as results.json holds it), its figures typed where its
// checker's are: for the readers that keep results in a form of their own
// (a suite's summary).
func ReadResult(name string, b []byte) (Result, error) {
	var r Result
	err := r.decode(name, b)
	return r, err
}

// Erring is figures that can say their checker could not judge.
type Erring interface {
	Err() string
}

// Err is the result's "error" figure: why its checker could not judge
// ("" when it could).
func (r Result) Err() string {
	f := r.Figures
	if s, ok := f.(storedFigures); ok {
		f = s.Figures
	}
	if e, ok := f.(Erring); ok {
		return e.Err()
	}
	return ""
}

// AnomalyClass is one class of anomaly a checker flags: how many, and the
// first few instances (each with its op "index" and "key" where they
// apply).
type AnomalyClass struct {
	Count    int              `json:"count"`
	Examples []map[string]any `json:"examples"`
}

// Anomalies are the instances a checker flags, by class ("anomalies").
type Anomalies map[string]AnomalyClass
