package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/redline-dev/redline/results/plot"
)

// clusterNode is one line of CLUSTER NODES.
type clusterNode struct {
	id, addr string
	myself   bool
	primary  bool
	failed   bool // fail or fail? flag
	master   string
	slots    []string // ranges as printed: "0-5460", "[93->-id]" left out
}

// parseClusterNodes reads CLUSTER NODES output; unreadable lines are skipped
// (a snapshot is an illustration, not evidence a checker relies on).
func parseClusterNodes(s string) []clusterNode {
	var out []clusterNode
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		n := clusterNode{id: f[0], addr: f[1], master: f[3]}
		if i := strings.IndexByte(n.addr, '@'); i >= 0 {
			n.addr = n.addr[:i]
		}
		if i := strings.IndexByte(n.addr, ','); i >= 0 {
			n.addr = n.addr[:i]
		}
		for _, fl := range strings.Split(f[2], ",") {
			switch fl {
			case "myself":
				n.myself = true
			case "master":
				n.primary = true
			case "fail", "fail?":
				n.failed = true
			}
		}
		for _, sl := range f[8:] {
			if !strings.HasPrefix(sl, "[") {
				n.slots = append(n.slots, sl)
			}
		}
		out = append(out, n)
	}
	return out
}

// snapshot is the cluster as one node saw it at a time.
type snapshot struct {
	t     float64 // seconds since start
	label string  // what was happening
	nodes []clusterNode
}

// snapshots gathers CLUSTER NODES views: the run's start and end (nodes/*/
// cluster-nodes-{before,after}.txt) and those the nemesis recorded around
// each fault (detail.cluster_nodes_before / cluster_nodes_after).
func (d *runData) snapshots() []snapshot {
	var out []snapshot
	if s, ok := d.fileSnapshot("cluster-nodes-before.txt"); ok {
		out = append(out, snapshot{t: 0, label: "at the start", nodes: s})
	}
	for i := range d.ops {
		op := &d.ops[i]
		if !op.NemesisOp() || len(op.DetailRaw()) == 0 {
			continue
		}
		var det map[string]any
		if json.Unmarshal(op.DetailRaw(), &det) != nil {
			continue
		}
		for _, k := range []string{"cluster_nodes_before", "cluster_nodes_after"} {
			if s, ok := det[k].(string); ok {
				if nodes := parseClusterNodes(s); len(nodes) > 0 {
					out = append(out, snapshot{t: float64(op.Time) / 1e9, label: strings.TrimPrefix(k, "cluster_nodes_") + " " + op.F, nodes: nodes})
				}
			}
		}
	}
	out = append(out, d.sampledSnapshots()...)
	if s, ok := d.fileSnapshot("cluster-nodes-after.txt"); ok {
		out = append(out, snapshot{t: d.duration(), label: "at the end", nodes: s})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].t < out[j].t })
	return out
}

// sampledSnapshots reads topology.jsonl: the roles and slots the runner
// sampled every 500 ms while they changed (harness.TopologyFile), each
// node's line as that node saw itself.
func (d *runData) sampledSnapshots() []snapshot {
	b, err := os.ReadFile(d.run.Path("topology.jsonl"))
	if err != nil {
		return nil
	}
	var out []snapshot
	for _, line := range bytes.Split(b, []byte("\n")) {
		var s struct {
			Time         int64  `json:"time"`
			ClusterNodes string `json:"cluster_nodes"`
		}
		if len(line) == 0 || json.Unmarshal(line, &s) != nil {
			continue // a torn last line of a crashed run
		}
		if nodes := parseClusterNodes(s.ClusterNodes); len(nodes) > 0 {
			out = append(out, snapshot{t: float64(s.Time) / 1e9, label: fmt.Sprintf("sampled at %.1f s", float64(s.Time)/1e9), nodes: nodes})
		}
	}
	return out
}

// fileSnapshot reads the most complete of the nodes' snapshot files: the
// one naming the most slots-serving primaries with replicas attached.
func (d *runData) fileSnapshot(name string) ([]clusterNode, bool) {
	files, _ := filepath.Glob(d.run.Path("nodes", "*", name))
	var best []clusterNode
	bestScore := -1
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		nodes := parseClusterNodes(string(b))
		score := 0
		for _, n := range nodes {
			if !n.failed && (len(n.slots) > 0 || !n.primary) {
				score++
			}
		}
		if score > bestScore {
			best, bestScore = nodes, score
		}
	}
	return best, bestScore >= 0
}

// roleOf summarises one node in a snapshot: "primary 0-5460", "replica of
// n1", "failed", or "" when the snapshot does not list it.
func (d *runData) roleOf(s snapshot, name string) (role string, slots string, failed bool) {
	for _, n := range s.nodes {
		if d.name(n.addr) != name {
			continue
		}
		if n.primary {
			return "primary", strings.Join(n.slots, " "), n.failed
		}
		return "replica of " + d.name(n.master), "", n.failed
	}
	return "", "", false
}

// topologySVG draws one row per node: a bar while it was a primary serving
// slots (labelled with its ranges), a thin line while a replica, red while
// flagged failed, and a tick at every snapshot where something changed.
func (d *runData) topologySVG(windows []faultWindow) (template.HTML, []string) {
	snaps := d.snapshots()
	if len(snaps) == 0 {
		return "", nil
	}
	names := map[string]bool{}
	for _, s := range snaps {
		for _, n := range s.nodes {
			names[d.name(n.addr)] = true
		}
	}
	rows := make([]string, 0, len(names))
	for n := range names {
		rows = append(rows, n)
	}
	sort.Slice(rows, func(i, j int) bool { return naturalLess(rows[i], rows[j]) })
	end := max(d.duration(), snaps[len(snaps)-1].t)
	p := newPlot("topology", end, 0, 1, false, "node: role over time (bars = primary with its slots)")
	p.Top = 24
	p.H = p.Top + p.Bottom + 24*float64(len(rows)) + 8
	shadeFaults(p, windows)
	rowY := func(i int) float64 { return p.Top + 6 + 24*float64(i) }
	for i, name := range rows {
		fmt.Fprintf(p, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`, p.Left-4, rowY(i)+13, template.HTMLEscapeString(name))
	}
	var changes []string
	prev := map[string]string{}
	faults := d.faultRows()
	for si, s := range snaps {
		// A change shows in the first snapshot after it: say which faults
		// happened since the previous snapshot.
		since := ""
		if si > 0 {
			var between []string
			for _, f := range faults {
				if f.startT >= snaps[si-1].t && f.startT < s.t {
					between = append(between, fmt.Sprintf("%s %s at %.1f s", f.Fault, f.Nodes, f.startT))
				}
			}
			since = fmt.Sprintf("between %.1f and %.1f s", snaps[si-1].t, s.t)
			if len(between) > 0 {
				since += ", after " + strings.Join(between, ", ")
			}
		}
		t1 := end
		if si+1 < len(snaps) {
			t1 = snaps[si+1].t
		}
		for i, name := range rows {
			role, slots, failed := d.roleOf(s, name)
			key := role + "|" + slots + "|" + fmt.Sprint(failed)
			if old, ok := prev[name]; ok && old != key {
				oldRole, oldSlots, oldFailed := splitKey(old)
				what := "became " + describeRole(role, slots, failed)
				if role == "primary" && oldRole == "primary" && failed == oldFailed {
					what = slotChange(oldSlots, slots) // a migration
				}
				changes = append(changes, fmt.Sprintf("%s %s (%s; seen in the snapshot %s)", name, what, since, s.label))
				fmt.Fprintf(p, `<line class="change" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#000" stroke-width="2"><title>%s</title></line>`,
					p.XPos(s.t), p.XPos(s.t), rowY(i), rowY(i)+18, template.HTMLEscapeString(changes[len(changes)-1]))
			}
			prev[name] = key
			if role == "" || t1 <= s.t {
				continue
			}
			x0, x1 := p.XPos(s.t), p.XPos(t1)
			title := fmt.Sprintf("%s %s (%.1f-%.1f s, from the %s snapshot)", name, describeRole(role, slots, failed), s.t, t1, s.label)
			color := "#1e88e5"
			switch {
			case failed:
				color = "#c62828"
			case role != "primary":
				color = "#9e9e9e"
			}
			if role == "primary" || failed {
				fmt.Fprintf(p, `<rect class="role" x="%.1f" y="%.1f" width="%.1f" height="18" fill="%s" opacity="0.8"><title>%s</title></rect>`,
					x0, rowY(i), max(1, x1-x0), color, template.HTMLEscapeString(title))
				if x1-x0 > 60 && slots != "" {
					fmt.Fprintf(p, `<text x="%.1f" y="%.1f" fill="#fff" font-size="10">%s</text>`, x0+3, rowY(i)+13, template.HTMLEscapeString(clip(describeSlots(slotBits(slots)), int((x1-x0)/6))))
				}
			} else {
				fmt.Fprintf(p, `<rect class="role" x="%.1f" y="%.1f" width="%.1f" height="4" fill="%s"><title>%s</title></rect>`,
					x0, rowY(i)+7, max(1, x1-x0), color, template.HTMLEscapeString(title))
			}
		}
	}
	step := plot.NiceStep(end, 10)
	for t := 0.0; t <= end+1e-9; t += step {
		fmt.Fprintf(p, `<text x="%.1f" y="%.0f" text-anchor="middle">%s s</text>`, p.XPos(t), p.H-p.Bottom+14, trimFloat(t))
	}
	return p.SVG(), changes
}

func splitKey(k string) (role, slots string, failed bool) {
	parts := strings.SplitN(k, "|", 3)
	return parts[0], parts[1], parts[2] == "true"
}

// slotBits reads slot ranges ("0-5460 5461 ...") into a bitmap.
func slotBits(ranges string) []bool {
	bits := make([]bool, 16384)
	for _, r := range strings.Fields(ranges) {
		a, b, ok := strings.Cut(r, "-")
		if !ok {
			b = a
		}
		var lo, hi int
		if _, err := fmt.Sscan(a, &lo); err != nil {
			continue
		}
		if _, err := fmt.Sscan(b, &hi); err != nil {
			continue
		}
		for i := max(lo, 0); i <= min(hi, 16383); i++ {
			bits[i] = true
		}
	}
	return bits
}

// describeSlots says a slot set briefly: the ranges when few, else their
// count and the first ranges.
func describeSlots(bits []bool) string {
	var ranges []string
	n := 0
	for i := 0; i < len(bits); i++ {
		if !bits[i] {
			continue
		}
		j := i
		for j+1 < len(bits) && bits[j+1] {
			j++
		}
		n += j - i + 1
		if i == j {
			ranges = append(ranges, fmt.Sprint(i))
		} else {
			ranges = append(ranges, fmt.Sprintf("%d-%d", i, j))
		}
		i = j
	}
	if len(ranges) <= 4 {
		return strings.Join(ranges, " ")
	}
	return fmt.Sprintf("%d slots in %d ranges (%s …)", n, len(ranges), strings.Join(ranges[:3], " "))
}

// slotChange tells what a primary gained and lost between two snapshots.
func slotChange(from, to string) string {
	a, b := slotBits(from), slotBits(to)
	gained, lost := make([]bool, len(a)), make([]bool, len(a))
	var ng, nl int
	for i := range a {
		if b[i] && !a[i] {
			gained[i] = true
			ng++
		}
		if a[i] && !b[i] {
			lost[i] = true
			nl++
		}
	}
	var parts []string
	if ng > 0 {
		parts = append(parts, "gained slots "+describeSlots(gained))
	}
	if nl > 0 {
		parts = append(parts, "gave up slots "+describeSlots(lost))
	}
	return strings.Join(parts, " and ") + ", now primary of " + describeSlots(b)
}

func describeRole(role, slots string, failed bool) string {
	s := role
	if role == "" {
		s = "not listed"
	}
	if slots != "" {
		s += " of slots " + describeSlots(slotBits(slots))
	} else if role == "primary" {
		s += " without slots"
	}
	if failed {
		s += ", flagged failed"
	}
	return s
}

func clip(s string, n int) string {
	if n < 4 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

// naturalLess orders n2 before n10.
func naturalLess(a, b string) bool {
	if len(a) != len(b) && strings.TrimRight(a, "0123456789") == strings.TrimRight(b, "0123456789") {
		return len(a) < len(b)
	}
	return a < b
}
