package results

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/redline-dev/redline/checker"
)

// Comparison puts the figures of several runs side by side: one row per
// checker figure that is a number, a boolean or a string in any run.
type Comparison struct {
	Runs  []*Run
	Valid []string  // per run
	Rows  []CompRow // sorted by name
	sums  []checker.Summary
}

// CompRow is one figure across the runs; "-" where a run lacks it.
type CompRow struct {
	Name   string
	Values []string
	Differ bool
}

// LoadSummary opens a run directory and reads its results.json.
func LoadSummary(dir string) (checker.Summary, *Run, error) {
	var s checker.Summary
	run, err := Open(dir)
	if err != nil {
		return s, nil, err
	}
	if err := run.ReadJSON("results.json", &s); err != nil {
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
			for k, v := range r.Figures {
				switch v.(type) {
				case float64, bool, string:
					rows[cn+"."+k] = true
				}
			}
		}
	}
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
				if v, ok := r.Figures[fig]; ok {
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
	for _, row := range c.Rows {
		fmt.Fprintf(tw, "%s\t%s\n", row.Name, strings.Join(row.Values, "\t"))
	}
	return tw.Flush()
}

// WriteList prints runs as `redline results list` does.
func WriteList(w io.Writer, runs []Entry) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tTEST\tVALID\tTARGET\tFAULTS\tKEY FIGURES\tDIR")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Time.Format("2006-01-02 15:04:05"), r.Test, r.Valid, dash(r.Target), dash(r.Faults), dash(r.KeyFigures), r.Dir)
	}
	return tw.Flush()
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
