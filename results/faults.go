package results

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/redline-dev/redline/history"
)

// faultWindow is a fault's time span in seconds, as the plots shade it.
type faultWindow struct {
	Fault      string
	Mode       string // the nemesis start entry's mode ("primary", "halves"), "" when none was recorded
	Start, End float64
	Open       bool
	Nodes      []string
}

// label is what a plot writes on the window's band: fault, mode and nodes
// ("kill primary n3"), so that a kill of all nodes reads apart from a
// kill of one.
func (w faultWindow) label() string {
	s := w.Fault
	if w.Mode != "" {
		s += " " + w.Mode
	}
	if len(w.Nodes) > 0 {
		s += " " + compactNodes(w.Nodes)
	}
	return s
}

// compactNodes writes n1,n2,n3,n4 as n1-n4 where the names run on.
func compactNodes(nodes []string) string {
	if len(nodes) > 3 {
		return fmt.Sprintf("%s…%s (%d)", nodes[0], nodes[len(nodes)-1], len(nodes))
	}
	return strings.Join(nodes, ",")
}

func (w faultWindow) title() string {
	s := fmt.Sprintf("%s %s %.1f-%.1f s", strings.TrimSpace(w.Fault+" "+w.Mode), strings.Join(w.Nodes, ","), w.Start, w.End)
	if w.Open {
		s += " (no stop recorded)"
	}
	return s
}

// windows are the checker's own fault windows, so that plots and the RPO
// and RTO figures agree on when a fault was in force.
func (d *runData) windows() []faultWindow {
	var out []faultWindow
	for _, w := range d.checkerWindows() {
		out = append(out, faultWindow{Fault: w.Fault, Mode: d.modeAt(w.Fault, w.Start), Start: float64(w.Start) / 1e9, End: float64(w.End) / 1e9, Open: w.Open, Nodes: w.Nodes})
	}
	return out
}

// modeAt is the mode the nemesis recorded for the start of fault that is
// nearest to t (ns): the window and its start entries share that time.
func (d *runData) modeAt(fault string, t int64) string {
	best, mode := int64(-1), ""
	for i := range d.ops {
		op := &d.ops[i]
		if !op.NemesisOp() || op.F != history.StartOf(fault) {
			continue
		}
		m, ok := detailMap(op.DetailRaw())["mode"].(string)
		if !ok {
			continue
		}
		dist := op.Time - t
		if dist < 0 {
			dist = -dist
		}
		if best < 0 || dist < best {
			best, mode = dist, m
		}
	}
	return mode
}

// faultRow is one fault in the faults table: its start and stop entries
// (invocations and completions) folded into one line.
type faultRow struct {
	Fault    string
	Start    string
	Stop     string
	Duration string
	Nodes    string
	Mode     string
	Effect   string
	Error    string
	Impact   string // what clients saw while the fault was in force
	startT   float64
	stopT    float64       // 0 while no stop is recorded
	before   []clusterNode // CLUSTER NODES when the fault started
}

// faultRows folds the nemesis entries into one row per fault. A start is
// matched with the next stop of the same fault on the same nodes (else the
// latest open start of that fault); entries that are neither (heal, final
// reads, one-shot faults) are rows of their own without a stop.
func (d *runData) faultRows() []faultRow {
	var rows []*faultRow
	open := map[string][]*faultRow{} // fault -> rows awaiting their stop
	var lastStart, lastStop, lastOther *faultRow
	for i := range d.ops {
		op := &d.ops[i]
		if !op.NemesisOp() {
			continue
		}
		t := float64(op.Time) / 1e9
		det := detailMap(op.DetailRaw())
		started, isStart := history.StartedFault(op.F)
		stopped, isStop := history.StoppedFault(op.F)
		switch {
		case isStart:
			fault := started
			if op.Type != history.Invoke && lastStart != nil && lastStart.Fault == fault {
				d.completeRow(lastStart, op, det, t)
				lastStart = nil
				continue
			}
			r := &faultRow{Fault: fault, Start: fmt.Sprintf("%.2f s", t), startT: t, Nodes: strings.Join(op.NodeList(), ",")}
			d.completeRow(r, op, det, t)
			rows = append(rows, r)
			open[fault] = append(open[fault], r)
			lastStart = nil
			if op.Type == history.Invoke {
				lastStart = r
			}
		case isStop:
			fault := stopped
			if op.Type != history.Invoke && lastStop != nil && lastStop.Fault == fault {
				lastStop.Stop = fmt.Sprintf("%.2f s", t)
				lastStop.Duration = fmt.Sprintf("%.2f s", t-lastStop.startT)
				lastStop.stopT = t
				d.completeRow(lastStop, op, det, t)
				lastStop = nil
				continue
			}
			rs := open[fault]
			if len(rs) == 0 {
				r := &faultRow{Fault: fault, Stop: fmt.Sprintf("%.2f s", t), Nodes: strings.Join(op.NodeList(), ","), startT: t, Error: "stop without a recorded start"}
				rows = append(rows, r)
				continue
			}
			k := len(rs) - 1
			for j := len(rs) - 1; j >= 0; j-- {
				if rs[j].Nodes == strings.Join(op.NodeList(), ",") {
					k = j
					break
				}
			}
			r := rs[k]
			open[fault] = append(rs[:k], rs[k+1:]...)
			r.Stop = fmt.Sprintf("%.2f s", t)
			r.Duration = fmt.Sprintf("%.2f s", t-r.startT)
			r.stopT = t
			d.completeRow(r, op, det, t)
			lastStop = nil
			if op.Type == history.Invoke {
				lastStop = r
			}
		default:
			if op.Type != history.Invoke && lastOther != nil && lastOther.Fault == op.F {
				lastOther.Stop = fmt.Sprintf("%.2f s", t)
				lastOther.Duration = fmt.Sprintf("%.2f s", t-lastOther.startT)
				lastOther.stopT = t
				d.completeRow(lastOther, op, det, t)
				lastOther = nil
				continue
			}
			r := &faultRow{Fault: op.F, Start: fmt.Sprintf("%.2f s", t), startT: t, Nodes: strings.Join(op.NodeList(), ",")}
			d.completeRow(r, op, det, t)
			rows = append(rows, r)
			lastOther = nil
			if op.Type == history.Invoke {
				lastOther = r // an action (heal ...) whose completion follows
			}
		}
	}
	out := make([]faultRow, 0, len(rows))
	for _, r := range rows {
		if r.Duration == "" {
			r.Duration = "-"
		}
		out = append(out, *r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].startT < out[j].startT })
	return out
}

// completeRow adds what an entry says about its fault: mode, errors, the
// effect in words (detail fields other than the bulky snapshots, and the
// topology change between the snapshots before and after).
func (d *runData) completeRow(r *faultRow, op *history.Op, det map[string]any, t float64) {
	if m, ok := det["mode"].(string); ok && r.Mode == "" {
		r.Mode = m
	}
	if len(op.NodeList()) > 0 && r.Nodes == "" {
		r.Nodes = strings.Join(op.NodeList(), ",")
	}
	var errs []string
	if r.Error != "" {
		errs = append(errs, r.Error)
	}
	if op.ErrorText() != "" {
		errs = append(errs, op.ErrorText())
	}
	if op.Type == history.Fail {
		errs = append(errs, op.F+" failed")
	}
	if e, ok := det["error"].(string); ok {
		errs = append(errs, e)
	}
	if s, ok := det["skipped"]; ok {
		errs = append(errs, "skipped: "+words(s))
	}
	r.Error = strings.Join(errs, "; ")
	var eff []string
	if r.Effect != "" {
		eff = append(eff, r.Effect)
	}
	keys := make([]string, 0, len(det))
	for k := range det {
		switch {
		case strings.HasPrefix(k, "cluster_nodes"), k == "mode", k == "error", k == "skipped", k == "cuts":
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	phase := "start"
	if _, isStop := history.StoppedFault(op.F); isStop {
		phase = "stop"
	}
	for _, k := range keys {
		if k == "took_ms" {
			eff = append(eff, fmt.Sprintf("%s took %s ms", phase, words(det[k])))
			continue
		}
		if w := detailWords(k, det[k]); w != "" {
			eff = append(eff, w)
		}
	}
	if s, ok := det["cluster_nodes_before"].(string); ok {
		r.before = parseClusterNodes(s)
	}
	if s, ok := det["cluster_nodes_after"].(string); ok && r.before != nil {
		from, to := d.primaries(r.before), d.primaries(parseClusterNodes(s))
		if from != to {
			eff = append(eff, "primaries: "+from+" → "+to)
		} else {
			eff = append(eff, "primaries unchanged")
		}
	}
	r.Effect = strings.Join(eff, "; ")
}

// detailWords says one field of a fault entry's detail in words ("n2 cut
// off (the minority side)"), not as the field's name and raw value; a
// field it does not know reads as its name in words and its value.
func detailWords(k string, v any) string {
	w := clip(words(v), 80)
	switch k {
	case "groups":
		gs, _ := v.([]any)
		var sides []string
		for _, g := range gs {
			sides = append(sides, "{"+words(g)+"}")
		}
		return "sides " + strings.Join(sides, " and ")
	case "minority":
		if w == "" {
			return ""
		}
		return w + " cut off (the minority side)"
	case "clients":
		if b, _ := v.(bool); b {
			return "clients cut from the minority side too"
		}
		return "clients still reach every node"
	case "roles":
		return "struck " + w
	case "effective":
		return "in effect: " + w
	case "killed":
		return "killed " + w
	case "takeover":
		return "taking over: " + w
	case "from", "to":
		return k + " " + w
	case "slots", "slots_moved":
		return "slots " + w
	case "keys_moved", "keys":
		return w + " keys moved"
	case "loss_percent":
		return "drops " + w + "% of packets"
	case "rate_kbit":
		return "links limited to " + w + " kbit/s"
	case "cpu_share":
		return "CPU share " + w
	case "time_before":
		return "server clock before " + w
	case "time_after":
		return "server clock after " + w
	case "drops":
		return "one-way drops " + w
	}
	return strings.ReplaceAll(k, "_", " ") + " " + w
}

// primaries lists the slot-serving primaries of a snapshot: "n1 0-5460, n2 ...".
func (d *runData) primaries(nodes []clusterNode) string {
	var ps []string
	for _, n := range nodes {
		if n.primary && len(n.slots) > 0 && !n.failed {
			ps = append(ps, d.name(n.addr)+" "+strings.Join(n.slots, " "))
		}
	}
	sort.Slice(ps, func(i, j int) bool { return naturalLess(ps[i], ps[j]) })
	return strings.Join(ps, ", ")
}

func detailMap(raw json.RawMessage) map[string]any {
	var m map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return map[string]any{}
	}
	return m
}

// addImpact says, for each fault, what the clients saw from its start to
// its stop (a fault without a stop: to the next fault's start): ops failed
// or left unknown, and the p99 latency of the ok ones.
func addImpact(rows []faultRow, ss []sample, end float64) {
	for i := range rows {
		r := &rows[i]
		if strings.HasPrefix(r.Fault, "final-") {
			continue
		}
		to := r.stopT
		if to == 0 {
			to = end
			for _, o := range rows[i+1:] {
				if o.startT > r.startT {
					to = o.startT
					break
				}
			}
		}
		var lat []float64
		n, fail, info := 0, 0, 0
		for _, s := range ss {
			if s.t < r.startT || s.t > to {
				continue
			}
			n++
			switch s.outcome {
			case history.OK:
				lat = append(lat, s.latMs)
			case history.Fail:
				fail++
			case history.Info:
				info++
			}
		}
		if n == 0 {
			continue
		}
		r.Impact = fmt.Sprintf("%d ops, %d failed, %d unknown", n, fail, info)
		if len(lat) > 0 {
			sort.Float64s(lat)
			r.Impact += fmt.Sprintf("; ok p99 %.1f ms", lat[min(len(lat)-1, int(0.99*float64(len(lat))))])
		}
	}
}
