package results

import (
	"fmt"
	"sort"
	"strings"
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
	row := func(w map[string]any) *windowRow {
		i := int(figure(w, "window"))
		r := rows[i]
		if r == nil {
			r = &windowRow{Index: i, Fault: cell(w["fault"]), Nodes: words(w["nodes"]),
				When: fmt.Sprintf("%.2f–%.2f s", figure(w, "start_s"), figure(w, "end_s"))}
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
		f := d.sum.Checkers[name].Values()
		switch base {
		case "rpo":
			for _, w := range listOfMaps(f["per_window"]) {
				r := row(w)
				n := figure(w, "lost")
				r.lostTotal += n
				label := trimFloat(n)
				if wl != "" {
					label = wl + " " + label
				}
				lostBy[r.Index] = append(lostBy[r.Index], label)
				if n > 0 {
					rs := "-" // lost, but no span known for the window
					if v, ok := num(w["rpo_ms"]); ok {
						rs = seconds(v / 1000)
					} else if v, ok := num(w["rpo_bound_ms"]); ok {
						rs = "≤ " + seconds(v/1000) // counters know amounts, not which writes
					}
					if wl != "" {
						rs = wl + " " + rs
					}
					rpoBy[r.Index] = append(rpoBy[r.Index], rs)
				}
				c := coverage[r.Index]
				c[0] += figure(w, "keys_on_touched_nodes")
				c[1] += figure(w, "keys_active")
				coverage[r.Index] = c
			}
		case "rto":
			for _, w := range listOfMaps(f["per_window"]) {
				r := row(w)
				if rto[r.Index] == nil {
					rto[r.Index] = map[string]float64{}
					unrecovered[r.Index] = map[string]bool{}
				}
				shards, _ := w["shards"].(map[string]any)
				for addr, v := range shards {
					m, _ := v.(map[string]any)
					node := d.name(addr)
					if ms, ok := num(m["rto_ms"]); ok && ms > rto[r.Index][node] {
						rto[r.Index][node] = ms
					}
				}
				for _, a := range listOf(w["unrecovered_shards"]) {
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

// figureWords renders a checker's scalar figures as a sentence a person
// reads ("3 lost, 0 lost outside fault windows, RPO 0.12 s over 2 windows")
// instead of raw field names.
func figureWords(f map[string]any) string {
	var parts []string
	if v, ok := num(f["lost"]); ok {
		parts = append(parts, trimFloat(v)+" acknowledged writes lost")
	}
	if o, ok := f["outside_windows"].(map[string]any); ok {
		parts = append(parts, trimFloat(figure(o, "lost"))+" of them outside any fault window")
	}
	if v, ok := num(f["rpo_ms"]); ok {
		parts = append(parts, "RPO "+seconds(v/1000))
	}
	if v, ok := num(f["rpo_bound_ms"]); ok {
		parts = append(parts, "RPO at most "+seconds(v/1000)+" (a bound)")
	}
	if m, ok := f["rto_ms"].(map[string]any); ok && figure(m, "count") > 0 {
		parts = append(parts, fmt.Sprintf("RTO %s at worst, %s median over %s shard recoveries", seconds(figure(m, "max")/1000), seconds(figure(m, "p50")/1000), trimFloat(figure(m, "count"))))
	}
	if v, ok := num(f["affected"]); ok {
		parts = append(parts, trimFloat(v)+" shards stopped serving")
	}
	if v, ok := num(f["unrecovered"]); ok && v > 0 {
		parts = append(parts, trimFloat(v)+" never recovered")
	}
	if v, ok := num(f["windows"]); ok {
		parts = append(parts, fmt.Sprintf("over %s fault windows", trimFloat(v)))
	}
	if v, ok := num(f["windows_without_keys"]); ok && v > 0 {
		parts = append(parts, fmt.Sprintf("%s windows touched no key of the workload", trimFloat(v)))
	}
	if len(parts) == 0 {
		return ""
	}
	s := strings.Join(parts, ", ")
	return strings.ToUpper(s[:1]) + s[1:]
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
