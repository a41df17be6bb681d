package results

import (
	"fmt"
	"sort"
	"strings"

	"github.com/redline-dev/redline/checker"
)

// windowRow is one fault window of the report's recovery table: what the
// fault was, what it lost and how long each shard took to serve again,
// gathered from every workload's RPO and RTO checkers (they share the
// windows: checker.Windows).
type windowRow struct {
	Index     int
	Fault     string
	Mode      string
	Nodes     string
	When      string // "2.03-4.78 s"
	Lost      string // "3" or "3 (set 3, counter 0)"
	RPO       string // "0.12 s", "≤ 0.40 s" (a bound), "-" when nothing was lost
	RTO       string // per shard by node name: "n1 3.89 s, n2 not recovered"
	Coverage  string // keys on the touched nodes of the keys active then
	lostTotal float64
}

// windowRows builds the recovery table, one row per window index.
func (d *runData) windowRows(windows []faultWindow) []windowRow {
	rows := map[int]*windowRow{}
	row := func(i int, fault string, nodes []string, startS, endS float64) *windowRow {
		r := rows[i]
		if r == nil {
			r = &windowRow{Index: i, Fault: fault, Nodes: strings.Join(nodes, ","),
				When: fmt.Sprintf("%.2f–%.2f s", startS, endS)}
			if i < len(windows) {
				r.Mode = windows[i].Mode
			}
			rows[i] = r
		}
		return r
	}
	// Every fault window gets its row, whether or not a checker listed it.
	for i, w := range windows {
		rows[i] = &windowRow{Index: i, Fault: w.Fault, Mode: w.Mode, Nodes: strings.Join(w.Nodes, ","),
			When: fmt.Sprintf("%.2f–%.2f s", w.Start, w.End)}
	}
	lostBy := map[int][]string{}
	rpoBy := map[int][]string{}         // per workload: "set 0.01s", "counter ≤ 1.19s"
	rto := map[int]map[string]float64{} // window -> node -> worst rto ms
	unrecovered := map[int]map[string]bool{}
	coverage := map[int][2]float64{}
	for _, name := range d.checkerNames() {
		base := name[strings.LastIndexByte(name, '/')+1:]
		wl := strings.TrimSuffix(strings.TrimSuffix(name, base), "/")
		res := d.sum.Checkers[name]
		if f, ok := checker.FiguresAs[*checker.RPOFigures](res); ok {
			for _, w := range f.PerWindow {
				r := row(w.Window, w.Fault, w.Nodes, w.StartS, w.EndS)
				n := float64(w.Lost)
				r.lostTotal += n
				label := trimFloat(n)
				if wl != "" {
					label = wl + " " + label
				}
				lostBy[r.Index] = append(lostBy[r.Index], label)
				if n > 0 {
					rs := "-" // lost, but no span known for the window
					if v := w.RPOMs; v != nil {
						rs = seconds(*v / 1000)
					} else if v := w.BoundMs; v != nil {
						rs = "≤ " + seconds(*v/1000) // counters know amounts, not which writes
					}
					if wl != "" {
						rs = wl + " " + rs
					}
					rpoBy[r.Index] = append(rpoBy[r.Index], rs)
				}
				c := coverage[r.Index]
				if k := w.KeysOnTouchedNodes; k != nil {
					c[0] += float64(*k)
				}
				c[1] += float64(w.KeysActive)
				coverage[r.Index] = c
			}
		}
		if f, ok := checker.FiguresAs[*checker.RTOFigures](res); ok {
			for _, w := range f.PerWindow {
				r := row(w.Window, w.Fault, w.Nodes, w.StartS, w.EndS)
				if rto[r.Index] == nil {
					rto[r.Index] = map[string]float64{}
					unrecovered[r.Index] = map[string]bool{}
				}
				for addr, s := range w.Shards {
					node := d.name(addr)
					if s.RTOMs != nil && *s.RTOMs > rto[r.Index][node] {
						rto[r.Index][node] = *s.RTOMs
					}
				}
				for _, a := range w.UnrecoveredShards {
					unrecovered[r.Index][d.name(a)] = true
				}
			}
		}
	}
	out := make([]windowRow, 0, len(rows))
	for i, r := range rows {
		if ls := lostBy[i]; len(ls) > 1 && r.lostTotal > 0 {
			r.Lost = fmt.Sprintf("%s (%s)", trimFloat(r.lostTotal), strings.Join(ls, ", "))
		} else if len(ls) > 0 {
			r.Lost = trimFloat(r.lostTotal)
		} else {
			r.Lost = "-"
		}
		switch {
		case r.lostTotal == 0 && len(lostBy[i]) > 0:
			r.RPO = "0"
		case len(rpoBy[i]) > 0:
			r.RPO = strings.Join(rpoBy[i], ", ")
		default:
			r.RPO = "-"
		}
		var parts []string
		for _, n := range sortedKeys(rto[i]) {
			parts = append(parts, n+" "+seconds(rto[i][n]/1000))
		}
		for _, n := range sortedKeys(unrecovered[i]) {
			parts = append(parts, n+" not recovered")
		}
		if len(parts) == 0 && rto[i] != nil {
			parts = append(parts, "no shard stopped serving")
		}
		sort.Slice(parts, func(a, b int) bool { return naturalLess(parts[a], parts[b]) })
		r.RTO = strings.Join(parts, ", ")
		if c := coverage[i]; c[1] > 0 {
			r.Coverage = fmt.Sprintf("%s of %s", trimFloat(c[0]), trimFloat(c[1]))
		}
		out = append(out, *r)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Index < out[b].Index })
	return out
}

func listOf(v any) []string {
	xs, _ := v.([]any)
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, cell(x))
	}
	return out
}

// rpoWords says an RPO checker's figures as sentences a person reads ("3
// acknowledged writes lost, 0 of them outside any fault window, RPO 0.12 s
// over 2 fault windows") instead of raw field names, then what the RPO
// figure is (its definition, or the note of a bound).
func rpoWords(f *checker.RPOFigures) string {
	parts := []string{fmt.Sprintf("%d acknowledged writes lost", f.Lost),
		fmt.Sprintf("%d of them outside any fault window", f.Outside.Lost)}
	if v := f.RPOMs; v != nil {
		parts = append(parts, "RPO "+seconds(*v/1000))
	}
	if v := f.BoundMs; v != nil {
		parts = append(parts, "RPO at most "+seconds(*v/1000)+" (a bound)")
	}
	return sentence(append(parts, windowCountWords(f.Windows, f.WindowsWithoutKeys)...), f.Definition+f.Note)
}

// rtoSentence says an RTO checker's figures as sentences a person reads,
// then its definition.
func rtoSentence(f *checker.RTOFigures) string {
	var parts []string
	if q := f.RTOMs; q.Count > 0 && q.Max != nil && q.P50 != nil {
		parts = append(parts, fmt.Sprintf("RTO %s at worst, %s median over %d shard recoveries", seconds(*q.Max/1000), seconds(*q.P50/1000), q.Count))
	}
	parts = append(parts, fmt.Sprintf("%d shards stopped serving", f.Affected))
	if f.Unrecovered > 0 {
		parts = append(parts, fmt.Sprintf("%d never recovered", f.Unrecovered))
	}
	return sentence(append(parts, windowCountWords(f.Windows, f.WindowsWithoutKeys)...), f.Definition)
}

func windowCountWords(windows, withoutKeys int) []string {
	out := []string{fmt.Sprintf("over %d fault windows", windows)}
	if withoutKeys > 0 {
		out = append(out, fmt.Sprintf("%d windows touched no key of the workload", withoutKeys))
	}
	return out
}

// sentence joins parts into a sentence, then adds the explanation.
func sentence(parts []string, explanation string) string {
	s := strings.Join(parts, ", ")
	s = strings.ToUpper(s[:1]) + s[1:]
	if explanation != "" {
		s += ". " + explanation
	}
	return s
}

// humanTable is table() for people: headers in words with their unit
// ("acked from (s)"), milliseconds shown as seconds, latency-like
// summaries as "max 6.76 s, p50 6.76 s (n 1)".
func humanTable(name string, rows []any) (instanceTable, bool) {
	var ignored []int64
	t, ok := table(name, rows, &ignored)
	if !ok {
		return t, false
	}
	raw := t.Columns
	t.Columns = make([]string, len(raw))
	for j, c := range raw {
		t.Columns[j] = columnWords(c)
	}
	for i := range t.Rows {
		m, _ := rows[i].(map[string]any)
		for j, c := range raw {
			if !strings.HasSuffix(c, "_ms") {
				continue
			}
			switch v := m[c].(type) {
			case float64:
				t.Rows[i][j] = seconds(v / 1000)
			case map[string]any:
				t.Rows[i][j] = summaryWords(v)
			}
		}
	}
	return t, true
}

// columnWords turns a figure's field name into a column header.
func columnWords(c string) string {
	switch {
	case c == "rto_ms":
		return "RTO (s)"
	case c == "rpo_ms":
		return "RPO (s)"
	case c == "rpo_bound_ms":
		return "RPO bound (s)"
	case strings.HasSuffix(c, "_ms"):
		c = strings.TrimSuffix(c, "_ms") + " (s)"
	case strings.HasSuffix(c, "_s"):
		c = strings.TrimSuffix(c, "_s") + " (s)"
	}
	return strings.ReplaceAll(c, "_", " ")
}

// summaryWords renders a {count, p50, p95, p99, max} summary in ms as
// seconds: "max 6.76 s, p50 6.76 s (n 1)"; "none" when it counted nothing.
func summaryWords(m map[string]any) string {
	n := figure(m, "count")
	if n == 0 {
		return "none"
	}
	if n == 1 {
		return seconds(figure(m, "max") / 1000)
	}
	return fmt.Sprintf("max %s, p50 %s (n %s)", seconds(figure(m, "max")/1000), seconds(figure(m, "p50")/1000), trimFloat(n))
}
