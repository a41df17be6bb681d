package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/redline-dev/redline/results/plot"
)

// Load reads a run directory's bench.json; ok is false when the run is
// not a kv bench (no bench.json).
func Load(dir string) (r *Result, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, "bench.json"))
	if os.IsNotExist(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	r = &Result{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, true, fmt.Errorf("%s/bench.json: %w", dir, err)
	}
	return r, true, nil
}

// figure is one compared number; lowerIsBetter says which way is good.
type figure struct {
	name          string
	get           func(*Result) float64
	lowerIsBetter bool
}

var compared = []figure{
	{"throughput ops/s", func(r *Result) float64 { return r.Throughput }, false},
	{"get ops/s", func(r *Result) float64 { return r.Ops["get"].OKPerS }, false},
	{"set ops/s", func(r *Result) float64 { return r.Ops["set"].OKPerS }, false},
	{"p50 ms", func(r *Result) float64 { return r.Ops["total"].Corrected.P50 }, true},
	{"p90 ms", func(r *Result) float64 { return r.Ops["total"].Corrected.P90 }, true},
	{"p99 ms", func(r *Result) float64 { return r.Ops["total"].Corrected.P99 }, true},
	{"p99.9 ms", func(r *Result) float64 { return r.Ops["total"].Corrected.P999 }, true},
	{"max ms", func(r *Result) float64 { return r.Ops["total"].Corrected.Max }, true},
	{"raw p50 ms", func(r *Result) float64 { return r.Ops["total"].Raw.P50 }, true},
	{"raw p99 ms", func(r *Result) float64 { return r.Ops["total"].Raw.P99 }, true},
	{"raw p99.9 ms", func(r *Result) float64 { return r.Ops["total"].Raw.P999 }, true},
	{"failed ops", func(r *Result) float64 { return float64(r.Ops["total"].Failed) }, true},
	{"MOVED", func(r *Result) float64 { return float64(r.Counts.Moved) }, true},
	{"ASK", func(r *Result) float64 { return float64(r.Counts.Ask) }, true},
	{"TRYAGAIN", func(r *Result) float64 { return float64(r.Counts.TryAgain) }, true},
	{"CLUSTERDOWN", func(r *Result) float64 { return float64(r.Counts.ClusterDown) }, true},
	{"reconnects", func(r *Result) float64 { return float64(r.Counts.Reconnects) }, true},
	{"unsent ops", func(r *Result) float64 { return float64(r.Unsent) }, true},
	{"backlog ops (full queue)", func(r *Result) float64 { return float64(r.Backlog) }, true},
	{"longest shard gap s", maxGap, true},
	{"generator lag max ms", func(r *Result) float64 { return r.LagMaxMs }, true},
	{"generator cores max", func(r *Result) float64 { return r.CPUMaxCores }, true},
}

// Compare prints every figure of a and b and its change from a to b.
func Compare(w io.Writer, nameA, nameB string, a, b *Result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "FIGURE\t%s\t%s\tCHANGE\t\n", nameA, nameB)
	figs := compared
	if a.Capacity != nil || b.Capacity != nil {
		capOf := func(r *Result) float64 {
			if r.Capacity == nil {
				return 0
			}
			return r.Capacity.Rate
		}
		figs = append([]figure{{"capacity ops/s (--slo)", capOf, false}}, figs...)
	}
	for _, f := range figs {
		va, vb := f.get(a), f.get(b)
		verdict := ""
		switch c := plot.Compare(va, vb, f.lowerIsBetter); {
		case c.Better:
			verdict = "better"
		case c.Worse:
			verdict = "worse"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f.name, trimFloat(va), trimFloat(vb), pctChange(va, vb), verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if a.Capacity != nil && b.Capacity != nil && a.Capacity.SLO.Text != b.Capacity.SLO.Text {
		fmt.Fprintf(w, "note: the capacities were searched for different objectives: %s vs %s\n", a.Capacity.SLO.Text, b.Capacity.SLO.Text)
	}
	if a.Rate != b.Rate || a.Workers != b.Workers || a.Pipeline != b.Pipeline {
		fmt.Fprintf(w, "note: the runs differ in load: rate %g vs %g, workers %d vs %d, pipeline %d vs %d\n", a.Rate, b.Rate, a.Workers, b.Workers, a.Pipeline, b.Pipeline)
	}
	return nil
}
