package results

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/redline-dev/redline/checker"
)

// keyFigure is one headline number of a run: what the runs table, the
// run page and the compare page show of every run kind, valid runs and
// benches included.
type keyFigure struct {
	Name  string  // in words: "lost", "throughput"
	Value float64 // NaN when the run does not have it
	Unit  string  // "", "ops/s", "ms", "s"
	// Bad says a larger value is worse (lost writes, latency); a delta of
	// such a figure upwards is a regression.
	Bad bool
}

// anomalyFigures are summed over the checkers (the RPO checkers repeat
// their workload checker's losses and are left out), by their names in
// results.json.
var anomalyFigures = []struct {
	name string
	of   func(checker.Counts) *checker.Figure
}{
	{"lost", func(c checker.Counts) *checker.Figure { return c.Lost }},
	{"stale_reads", func(c checker.Counts) *checker.Figure { return c.StaleReads }},
	{"anomalous_keys", func(c checker.Counts) *checker.Figure { return c.AnomalousKeys }},
	{"unexpected", func(c checker.Counts) *checker.Figure { return c.Unexpected }},
	{"wrong_total", func(c checker.Counts) *checker.Figure { return c.WrongTotal }},
	{"anomaly_types", func(c checker.Counts) *checker.Figure { return c.AnomalyTypes }},
	{"unknown_keys", func(c checker.Counts) *checker.Figure { return c.UnknownKeys }},
}

// keyFiguresOf computes a run's headline numbers from its checkers'
// results, always in the same order: anomalies, then what was measured.
func keyFiguresOf(checkers map[string]checker.Result) []keyFigure {
	var out []keyFigure
	for _, k := range anomalyFigures {
		total, seen := 0.0, false
		for _, r := range checkers {
			if _, rpo := checker.FiguresAs[*checker.RPOFigures](r); rpo {
				continue
			}
			if f := k.of(r.Counts()); f != nil {
				total, seen = total+f.Value, true
			}
		}
		if !seen {
			total = math.NaN()
		}
		out = append(out, keyFigure{Name: strings.ReplaceAll(k.name, "_", " "), Value: total, Bad: true})
	}
	ops, okPerS, rto, rpo, p99 := math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
	add := func(acc *float64, v float64) {
		if math.IsNaN(*acc) {
			*acc = 0
		}
		*acc += v
	}
	maxOf := func(acc *float64, v float64) {
		if math.IsNaN(*acc) || v > *acc {
			*acc = v
		}
	}
	for _, r := range checkers {
		if f, ok := checker.FiguresAs[*checker.BenchFigures](r); ok { // the kv load driver (harness/bench)
			add(&okPerS, f.Throughput)
			maxOf(&p99, f.P99Ms)
		}
		if f, ok := checker.FiguresAs[*checker.PerfFigures](r); ok {
			add(&ops, float64(f.Ops))
			for _, op := range r.Ops() {
				if op.OKPerS != nil {
					add(&okPerS, *op.OKPerS)
				}
				if op.Latency != nil && op.Latency.P99 != nil {
					maxOf(&p99, *op.Latency.P99) // the worst op type's p99
				}
			}
		}
		if f, ok := checker.FiguresAs[*checker.RTOFigures](r); ok && f.RTOMs.Max != nil {
			maxOf(&rto, *f.RTOMs.Max/1000)
		}
		if f, ok := checker.FiguresAs[*checker.RPOFigures](r); ok {
			for _, v := range []*float64{f.RPOMs, f.BoundMs} {
				if v != nil {
					maxOf(&rpo, *v/1000)
				}
			}
		}
	}
	return append(out,
		keyFigure{Name: "ops", Value: ops},
		keyFigure{Name: "throughput", Value: okPerS, Unit: "ops/s"},
		keyFigure{Name: "p99 latency", Value: p99, Unit: "ms", Bad: true},
		keyFigure{Name: "RTO max", Value: rto, Unit: "s", Bad: true},
		keyFigure{Name: "RPO", Value: rpo, Unit: "s", Bad: true})
}

func (k keyFigure) String() string {
	if math.IsNaN(k.Value) {
		return "-"
	}
	switch k.Unit {
	case "s":
		return seconds(k.Value)
	case "ms":
		return fmt.Sprintf("%.3g ms", k.Value)
	case "ops/s":
		return fmt.Sprintf("%.0f ops/s", k.Value)
	}
	return trimFloat(k.Value)
}

// keyFigures is the runs table's one line: the anomalies found, else "no
// anomaly", then throughput and recovery; a bench says its throughput.
func keyFigures(checkers map[string]checker.Result) string {
	var parts []string
	figs := keyFiguresOf(checkers)
	for _, k := range figs {
		if k.Bad && k.Unit == "" && k.Value > 0 {
			parts = append(parts, k.Name+" "+trimFloat(k.Value))
		}
	}
	if _, bench := checkers[checker.BenchName]; !bench && len(parts) == 0 && len(checkers) > 0 {
		parts = append(parts, "no anomaly")
	}
	for _, k := range figs {
		switch {
		case math.IsNaN(k.Value) || (k.Bad && k.Unit == "") || (k.Name == "RPO" && k.Value == 0):
		case k.Name == "ops":
			parts = append(parts, k.String()+" ops")
		default:
			parts = append(parts, k.Name+" "+k.String())
		}
	}
	return strings.Join(parts, ", ")
}

// delta says how b differs from a: "+12 (+5%)", "=" when equal.
func delta(a, b keyFigure) string {
	if math.IsNaN(a.Value) || math.IsNaN(b.Value) {
		return ""
	}
	d := b.Value - a.Value
	if d == 0 {
		return "="
	}
	s := fmt.Sprintf("%+.4g", d)
	if a.Value != 0 {
		s += fmt.Sprintf(" (%+.0f%%)", 100*d/math.Abs(a.Value))
	}
	return s
}

// NotApplicableLine folds the not-applicable checkers into one line,
// checkers with the same reason together: "handoff of counter, set (no
// slot moved ...); rto (no fault window ...)".
func NotApplicableLine(na map[string]string) string {
	type group struct {
		base, reason string
		workloads    []string
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, n := range sortedKeys(na) {
		wl, base, ok := strings.Cut(n, "/")
		if !ok {
			wl, base = "", n
		}
		k := base + "\x00" + na[n]
		g := byKey[k]
		if g == nil {
			g = &group{base: base, reason: na[n]}
			byKey[k] = g
			groups = append(groups, g)
		}
		if wl != "" {
			g.workloads = append(g.workloads, wl)
		}
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].base < groups[j].base })
	parts := make([]string, 0, len(groups))
	for _, g := range groups {
		name := g.base
		if len(g.workloads) > 0 {
			name += " of " + strings.Join(g.workloads, ", ")
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", name, g.reason))
	}
	return strings.Join(parts, "; ")
}
