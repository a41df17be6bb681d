package bench

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// Table is a table of figures as one value, printed to a terminal and
// written into the report by the two methods below, so that the printed
// and the HTML table cannot drift apart (they had: different columns,
// different orders).
type Table struct {
	// Class is the HTML table's class ("" none).
	Class string
	Head  []string
	// Left marks the columns of words (names, verdicts), aligned left in
	// the HTML; figures are aligned right.
	Left []bool
	Rows [][]string
	// Notes follow the table: what a cell would make too wide.
	Notes []string
}

// Print writes the table in columns, its head in capitals.
func (t Table) Print(w io.Writer) {
	tw := newTable(w)
	fmt.Fprintln(tw, strings.ToUpper(strings.Join(t.Head, "\t"))+"\t")
	for _, r := range t.Rows {
		fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
	}
	tw.Flush()
	for _, n := range t.Notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
}

// HTML is the table as an HTML <table>.
func (t Table) HTML() string {
	var b strings.Builder
	b.WriteString("<table")
	if t.Class != "" {
		fmt.Fprintf(&b, ` class="%s"`, html.EscapeString(t.Class))
	}
	b.WriteString("><tr>")
	for i, h := range t.Head {
		fmt.Fprintf(&b, "<th%s>%s</th>", t.align(i), html.EscapeString(h))
	}
	b.WriteString("</tr>")
	for _, r := range t.Rows {
		b.WriteString("<tr>")
		for i, v := range r {
			fmt.Fprintf(&b, "<td%s>%s</td>", t.align(i), html.EscapeString(v))
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table>")
	for _, n := range t.Notes {
		fmt.Fprintf(&b, "<p class=note>%s</p>", html.EscapeString(n))
	}
	return b.String()
}

func (t Table) align(col int) string {
	if col < len(t.Left) && t.Left[col] {
		return " class=l"
	}
	return ""
}

// ShardTable is each shard by its primary's node name and address: ok/s,
// latency, the longest wait in its node's queue, the backlog and the
// longest time it served nothing.
func (r *Result) ShardTable() Table {
	t := Table{Class: "shards", Head: []string{"shard", "address", "ok/s", "p50 ms", "p99 ms", "p99.9 ms", "max ms", "queue wait max ms", "backlog", "longest gap s"},
		Left: []bool{true, true}}
	for _, sh := range r.Shards {
		c := sh.Corrected
		t.Rows = append(t.Rows, []string{sh.Shard, sh.Addr, Count(float64(sh.OK) / max(r.DurationS, 1e-9)), qNum(c, c.P50), qNum(c, c.P99), qNum(c, c.P999), qNum(c, c.Max),
			Num(sh.LagMaxMs), Count(float64(sh.Backlog)), Num(sh.MaxGapS)})
	}
	return t
}

// WindowTable is each fault or capacity change with the same length of
// time before and after it; what a change did (slots and keys moved)
// follows as notes.
func (r *Result) WindowTable() Table {
	t := Table{Head: []string{"fault", "window", "seconds", "ok/s", "errors/s", "MOVED", "ASK", "TRYAGAIN", "p50 ms", "p99 ms", "p99.9 ms", "p99 change"},
		Left: []bool{true, true}}
	unmeasured := false
	for _, w := range r.Windows {
		name := w.Fault
		if w.TookS > 0 {
			name += fmt.Sprintf(" (took %s s)", Num(w.TookS))
		}
		if w.Detail != "" {
			t.Notes = append(t.Notes, fmt.Sprintf("%s at %s s: %s", w.Fault, Num(w.StartS), w.Detail))
		}
		for i, f := range []WindowFigures{w.Before, w.During, w.After} {
			label := []string{"before", "during", "after"}[i]
			if f.Seconds == 0 {
				unmeasured = true
				t.Rows = append(t.Rows, []string{name, label, "-", "-", "-", "-", "-", "-", "-", "-", "-", "-"})
				name = ""
				continue
			}
			change := ""
			if i > 0 {
				change = pctChange(w.Before.P99Ms, f.P99Ms)
			}
			t.Rows = append(t.Rows, []string{name, label, Num(f.FromS) + "-" + Num(f.ToS), Count(f.OKPerS), Num(f.ErrorsPerS), Count(float64(f.Moved)), Count(float64(f.Ask)), Count(float64(f.TryAgain)),
				Num(f.P50Ms), Num(f.P99Ms), Num(f.P999Ms), change})
			name = ""
		}
	}
	if unmeasured {
		t.Notes = append(t.Notes, "a window of dashes was not measured: too short, or outside the traffic")
	}
	return t
}
