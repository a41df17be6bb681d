package results

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/results/plot"
)

// Comparison puts the figures of several runs side by side: one row per
// checker figure that is a number, a boolean or a string in any run.
type Comparison struct {
	Runs  []*Run
	Valid []string  // per run
	Rows  []CompRow // sorted by name
	// Config are the settings (config.json) that differ between the runs.
	Config []CompRow
	// Headline are the runs' key figures (keyFiguresOf) with each run's
	// delta against the first.
	Headline []HeadlineRow
	sums     []checker.Summary
}

// HeadlineRow is one key figure across the runs; Deltas[i] compares run i
// with the first run ("" for the first), Worse[i] says the change is for
// the worse.
type HeadlineRow struct {
	Name   string
	Values []string
	Deltas []string
	Worse  []bool
	Better []bool
}

// ignoredConfig are config.json keys that differ between any two runs and
// say nothing about how they were set up.
var ignoredConfig = map[string]bool{"started": true, "key_prefix": true, "command": true, "results_dir": true, "test_index": true}

// CompRow is one figure across the runs; "-" where a run lacks it.
type CompRow struct {
	Name   string
	Values []string
	Differ bool
}

// LoadSummary opens a run directory and reads its results.json.
func LoadSummary(dir string) (checker.Summary, *Run, error) {
	run, err := Open(dir)
	if err != nil {
		return checker.Summary{}, nil, err
	}
	s, err := run.Summary()
	if err != nil {
		return s, nil, fmt.Errorf("run %s has no readable results.json (%v); 'redline check %s' can produce it", dir, err, dir)
	}
	return s, run, nil
}

// Compare loads the runs and lines up their figures.
func Compare(dirs []string) (*Comparison, error) {
	c := &Comparison{}
	rows := map[string]bool{}
	for _, d := range dirs {
		s, run, err := LoadSummary(d)
		if err != nil {
			return nil, err
		}
		c.Runs = append(c.Runs, run)
		c.sums = append(c.sums, s)
		c.Valid = append(c.Valid, s.Valid.String())
		for cn, r := range s.Checkers {
			rows[cn+".valid"] = true
			for k, v := range r.Values() {
				switch x := v.(type) {
				case float64, bool:
					rows[cn+"."+k] = true
				case string:
					if len(x) <= 40 { // longer strings are prose (notes, definitions), not figures
						rows[cn+"."+k] = true
					}
				}
			}
		}
	}
	c.Config = configDiff(c.Runs)
	c.Headline = headlineRows(c.sums)
	for _, k := range sortedKeys(rows) {
		cn, fig, _ := strings.Cut(k, ".")
		row := CompRow{Name: k}
		for _, s := range c.sums {
			r, ok := s.Checkers[cn]
			switch {
			case !ok:
				row.Values = append(row.Values, "-")
			case fig == "valid":
				row.Values = append(row.Values, r.Valid.String())
			default:
				if v, ok := r.Values()[fig]; ok {
					b, _ := json.Marshal(v)
					row.Values = append(row.Values, string(b))
				} else {
					row.Values = append(row.Values, "-")
				}
			}
		}
		for _, v := range row.Values[1:] {
			if v != row.Values[0] {
				row.Differ = true
			}
		}
		c.Rows = append(c.Rows, row)
	}
	return c, nil
}

// configDiff lists the settings whose values differ between the runs,
// flattened one level (versions.server becomes versions.server).
func configDiff(runs []*Run) []CompRow {
	flat := make([]map[string]string, len(runs))
	keys := map[string]bool{}
	for i, r := range runs {
		var cfg map[string]any
		_ = r.ReadJSON("config.json", &cfg)
		flat[i] = map[string]string{}
		for k, v := range cfg {
			if ignoredConfig[k] {
				continue
			}
			if m, ok := v.(map[string]any); ok {
				for k2, v2 := range m {
					flat[i][k+"."+k2] = clip(cell(v2), 80)
					keys[k+"."+k2] = true
				}
				continue
			}
			flat[i][k] = clip(cell(v), 80)
			keys[k] = true
		}
	}
	var out []CompRow
	for _, k := range sortedKeys(keys) {
		row := CompRow{Name: k}
		for i := range runs {
			v, ok := flat[i][k]
			if !ok {
				v = "-"
			}
			row.Values = append(row.Values, v)
			if v != row.Values[0] {
				row.Differ = true
			}
		}
		if row.Differ {
			out = append(out, row)
		}
	}
	return out
}

// headlineRows are the key figures of every run with deltas against the
// first; figures no run has are left out.
func headlineRows(sums []checker.Summary) []HeadlineRow {
	per := make([][]keyFigure, len(sums))
	for i, s := range sums {
		per[i] = keyFiguresOf(s.Checkers)
	}
	if len(per) == 0 {
		return nil
	}
	var out []HeadlineRow
	for j := range per[0] {
		row := HeadlineRow{Name: per[0][j].Name}
		seen := false
		for i := range per {
			k := per[i][j]
			row.Values = append(row.Values, k.String())
			if !math.IsNaN(k.Value) {
				seen = true
			}
			d := ""
			worse, better := false, false
			if i > 0 {
				d = delta(per[0][j], k)
				c := plot.Compare(per[0][j].Value, k.Value, k.Bad)
				worse, better = c.Worse, c.Better
			}
			row.Deltas = append(row.Deltas, d)
			row.Worse = append(row.Worse, worse)
			row.Better = append(row.Better, better)
		}
		if seen {
			out = append(out, row)
		}
	}
	return out
}

// Name is how a run is headed in a comparison: test/HHMMSS.
func (r *Run) Name() string { return r.Test + "/" + r.Time.Format("150405") }

// WriteText prints the comparison as a table.
func (c *Comparison) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := []string{"FIGURE"}
	for _, r := range c.Runs {
		header = append(header, r.Name())
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	fmt.Fprintf(tw, "valid\t%s\n", strings.Join(c.Valid, "\t"))
	if len(c.Headline) > 0 {
		fmt.Fprintln(tw, "\t")
		for _, h := range c.Headline {
			cells := make([]string, len(h.Values))
			for i, v := range h.Values {
				cells[i] = v
				if h.Deltas[i] != "" && h.Deltas[i] != "=" {
					cells[i] += " (" + h.Deltas[i] + ")"
				}
			}
			fmt.Fprintf(tw, "%s\t%s\n", h.Name, strings.Join(cells, "\t"))
		}
	}
	if len(c.Config) > 0 {
		fmt.Fprintln(tw, "\t")
		for _, row := range c.Config {
			fmt.Fprintf(tw, "config %s\t%s\n", row.Name, strings.Join(clipAll(row.Values, 30), "\t"))
		}
	}
	fmt.Fprintln(tw, "\t")
	for _, row := range c.Rows {
		fmt.Fprintf(tw, "%s\t%s\n", row.Name, strings.Join(clipAll(row.Values, 30), "\t"))
	}
	return tw.Flush()
}

// WriteList prints runs as `redline results list` does.
func WriteList(w io.Writer, runs []Entry) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tTEST\tVERDICT\tTARGET\tFAULTS\tKEY FIGURES\tDIR")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Time.Format("2006-01-02 15:04:05"), r.Test, r.Verdict(), dash(r.Target), dash(r.Faults), dash(r.KeyFigures), r.Dir)
	}
	return tw.Flush()
}

func clipAll(vs []string, n int) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = clip(v, n)
	}
	return out
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// sortEntries orders runs by a column of the runs table.
func sortEntries(es []Entry, by string, desc bool) {
	key := func(e Entry) string {
		switch by {
		case "test":
			return e.Test
		case "target":
			return e.Target
		case "workloads":
			return e.Workloads
		case "faults":
			return e.Faults
		case "verdict":
			return e.Valid
		case "figures":
			return e.KeyFigures
		}
		return e.Time.Format(TimeLayout)
	}
	sort.SliceStable(es, func(i, j int) bool {
		if desc {
			return key(es[i]) > key(es[j])
		}
		return key(es[i]) < key(es[j])
	})
}
