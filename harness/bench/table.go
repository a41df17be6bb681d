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
}

// Print writes the table in columns, its head in capitals.
func (t Table) Print(w io.Writer) {
	tw := newTable(w)
	fmt.Fprintln(tw, strings.ToUpper(strings.Join(t.Head, "\t"))+"\t")
	for _, r := range t.Rows {
		fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
	}
	tw.Flush()
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
	return b.String()
}

func (t Table) align(col int) string {
	if col < len(t.Left) && t.Left[col] {
		return " class=l"
	}
	return ""
}
