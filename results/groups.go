package results

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

// Attributed anomalies grouped by cause: a run that loses hundreds of
// writes in one partition tells one story, not one card per write. A group
// is the anomalies of one checker with one cause (the attribution's
// verdict, or "documented" below), one acknowledging node and one fault
// window; the report and the terminal show its count and its first three
// examples.

// Documented is the cause of a loss the server lost the way Redis Cluster
// documents that it loses writes: acknowledged by a primary cut off by a
// partition, later demoted, with no WAIT satisfied (asynchronous
// replication). It is a presentation class over the attribution's
// "server-lost" verdict, which results.json keeps as it is.
const Documented = "documented"

// groupExamples is how many examples a group shows in full.
const groupExamples = 3

// GroupsFile holds the groups as the report computed them (with the
// history's evidence), for the terminal to print without reading the
// history again.
const GroupsFile = "anomaly-groups.json"

// AnomalyGroup is attributed anomalies of one cause.
type AnomalyGroup struct {
	Checker string `json:"checker"`
	Kind    string `json:"kind"`
	// Cause is the attributions' verdict, or Documented.
	Cause string `json:"cause"`
	// Words says the cause in words: the verdict, or for a documented
	// loss what the evidence shows ("documented asynchronous
	// replication: the isolated primary n2 acknowledged ...").
	Words  string `json:"words"`
	Node   string `json:"node,omitempty"`   // the acknowledging node ("" for unserved shards)
	Window string `json:"window,omitempty"` // the fault window, in words
	Count  int    `json:"count"`
	// Examples are the group's first attributions (at most three), More
	// the rest as one-line references.
	Examples []checker.Attribution `json:"examples"`
	More     []string              `json:"more,omitempty"`
}

// groupEvidence is what the history says about one attributed loss,
// enough to tell a documented loss from an unexplained one.
type groupEvidence struct {
	window     int     // index of the fault window in force at the ack, -1 when none
	windowText string  // the window in words
	node       string  // the acknowledging node's name
	after      float64 // seconds from the window's start to the ack
	isolated   bool    // the node was cut from every other node
}

// documented tells whether an attributed loss is Redis Cluster's
// documented asynchronous-replication loss, from the history's evidence
// alone: the write acknowledged (ok) by a node while a partition that cut
// it off (isolated, or on the minority side) was in force, the last
// CLUSTER NODES view of it up to the partition's start a primary, the
// node demoted after the start (a replica in a later view, or in the end's
// census; a census saying replica must not meet a last view saying
// primary), the attribution's census of it the same as the history's, and
// no WAIT satisfied (a run with --wait needs the op's WAIT record).
// Anything missing or contradicting: false, and the loss stays
// unexplained.
func (d *runData) documented(a checker.Attribution, census *history.Census, windows []checker.Window, snaps []snapshot) (groupEvidence, bool) {
	ev := groupEvidence{window: -1}
	if a.Verdict != checker.ServerLost || a.Unserved != nil || a.Ack == nil || census == nil {
		return ev, false
	}
	// A lost write names the write; a counter's attribution names the
	// last acknowledged increment before its final read, not the ones
	// lost (a counter tells amounts, not which increments): no evidence
	// of who acknowledged what was lost.
	if a.Kind != "lost-write" {
		return ev, false
	}
	inv, ok := d.op(a.Ack.Index)
	if !ok || inv.Type != history.Invoke || inv.NemesisOp() || inv.F != a.Ack.F {
		return ev, false
	}
	comp, ok := d.completion(a.Ack.Index)
	if !ok || comp == inv || comp.Type != history.OK || comp.Node == "" {
		return ev, false
	}
	// The attribution names the node that acknowledged: it must be the
	// history's.
	cn, ok := census.Node(comp.Node)
	if !ok || cn.Name == "" {
		return ev, false
	}
	if a.Ack.Node != "" && a.Ack.Node != cn.Name && !strings.HasPrefix(a.Ack.Node, cn.Name+" ") {
		return ev, false
	}
	ev.node = cn.Name
	if cn.Role != "replica" && cn.Role != "primary" {
		return ev, false // did not answer the census
	}
	if contradicts(a, cn, snaps, comp.Time) || d.waitCovered(inv, comp) {
		return ev, false
	}
	// A partition in force at the ack that cut the node off, the node a
	// primary by the last view of it up to the partition's start. A view
	// between the start and the ack that shows it failed or replaced is
	// the majority's (the node itself went on acknowledging: that is the
	// documented behaviour), no contradiction.
	for i, win := range windows {
		if win.Fault != "partition" || win.Start > comp.Time || (!win.Open && win.End < comp.Time) {
			continue
		}
		isolated, cut := d.cutOff(win, cn.Name)
		if !cut || !primaryAt(snaps, cn, float64(win.Start)/1e9) {
			continue
		}
		if !demotedAfter(cn, snaps, win.Start) {
			continue
		}
		ev.window, ev.isolated = i, isolated
		ev.after = float64(comp.Time-win.Start) / 1e9
		ev.windowText = windowWords(win)
		return ev, true
	}
	return ev, false
}

// primaryAt tells whether the last view that lists the node at or before
// t (s) shows it a primary serving (none: false).
func primaryAt(snaps []snapshot, cn history.CensusNode, t float64) bool {
	primary := false
	for _, s := range snaps {
		if s.t > t {
			break
		}
		if role := roleIn(s, cn); role != "" {
			primary = role == "primary"
		}
	}
	return primary
}

// cutOff says whether the partition window cut node off: its start
// entries (the invocation, which carries the plan, and the completion)
// name it the minority, or the one node of an isolate mode; a start that
// recorded an error (the cut may not be in force) cuts nobody off.
func (d *runData) cutOff(w checker.Window, node string) (isolated, cut bool) {
	seen := 0
	for i := range d.ops {
		op := &d.ops[i]
		if op.Time < w.Start {
			continue
		}
		if (op.Time > w.End && !w.Open) || seen == 2 {
			break
		}
		if !op.NemesisOp() || op.F != history.StartOf("partition") {
			continue
		}
		seen++
		if op.Type == history.Fail || op.ErrorText() != "" {
			return false, false
		}
		var det struct {
			Mode     string   `json:"mode"`
			Minority []string `json:"minority"`
			Error    string   `json:"error"`
		}
		if json.Unmarshal(op.DetailRaw(), &det) != nil || det.Error != "" {
			return false, false
		}
		nodes := op.NodeList()
		switch {
		case slices.Contains(det.Minority, node):
			isolated, cut = len(det.Minority) == 1, true
		case (det.Mode == "isolate-one" || det.Mode == "isolate-primary") && len(nodes) == 1 && nodes[0] == node:
			isolated, cut = true, true
		case op.Type == history.Invoke:
			return false, false // the plan cut other nodes off
		}
		if op.Type != history.Invoke {
			break // the completion follows its invocation
		}
	}
	return isolated, cut
}

// roleIn is the census node's role in a CLUSTER NODES view, matched by
// address or id: "primary", "failed primary" (flagged by its peers),
// "replica", or "" when the view does not list it.
func roleIn(s snapshot, cn history.CensusNode) string {
	for _, n := range s.nodes {
		if (cn.Addr != "" && n.addr == cn.Addr) || (cn.ID != "" && n.id == cn.ID) {
			switch {
			case n.primary && !n.failed:
				return "primary"
			case n.primary:
				return "failed primary" // flagged by its peers, not demoted
			}
			return "replica"
		}
	}
	return ""
}

func windowWords(w checker.Window) string {
	s := fmt.Sprintf("%s %s–%s s", w.Fault, trimFloat(round2(float64(w.Start)/1e9)), trimFloat(round2(float64(w.End)/1e9)))
	if len(w.Nodes) > 0 {
		s += " on " + strings.Join(w.Nodes, ",")
	}
	return s
}

func round2(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }

// anomalyGroups groups the run's attributions by checker, cause,
// acknowledging node and fault window, in the order of their first
// member.
func (d *runData) anomalyGroups() []AnomalyGroup {
	if len(d.sum.Attribution) == 0 {
		return nil
	}
	census := history.CensusOf(d.ops)
	windows := d.checkerWindows()
	// An unserved window's index is into the windows sorted by start, as
	// the attributor numbers them.
	byStart := slices.Clone(windows)
	slices.SortStableFunc(byStart, func(x, y checker.Window) int { return cmp.Compare(x.Start, y.Start) })
	var snaps []snapshot
	if d.run != nil {
		snaps = d.snapshots() // in time order
	}
	type acc struct {
		g        AnomalyGroup
		maxAfter float64
		isolated bool
	}
	var order []string
	groups := map[string]*acc{}
	for _, a := range d.sum.Attribution {
		cause, node, win := a.Verdict, "", ""
		ev, doc := d.documented(a, census, windows, snaps)
		if a.Kind == "lost-increment" {
			ev, doc = d.documentedCounter(a, census, windows, snaps)
		}
		switch {
		case a.Unserved != nil:
			// No acknowledging node: the shards of one window and cause
			// are one group (each example names its shard).
			switch w := a.Unserved.Window; {
			case w >= 0 && w < len(byStart):
				win = windowWords(byStart[w])
			case w >= 0:
				win = fmt.Sprintf("fault window %d", w)
			default:
				win = "outside every fault window"
			}
		case doc:
			cause, node, win = Documented, ev.node, ev.windowText
		case a.Kind == "lost-increment":
			// No increment can be named, so no acknowledging node: the
			// group is where the loss first showed (groupscounter.go).
			if _, _, ok := d.counterReveal(a.Checker, a.Key); ok {
				win = revealedWords(a)
			}
		default:
			node, win = ackNode(a), d.windowAt(a, windows)
		}
		key := strings.Join([]string{a.Checker, a.Kind, cause, node, win}, "\x00")
		g := groups[key]
		if g == nil {
			g = &acc{g: AnomalyGroup{Checker: a.Checker, Kind: a.Kind, Cause: cause, Node: node, Window: win}}
			groups[key] = g
			order = append(order, key)
		}
		g.g.Count++
		if len(g.g.Examples) < groupExamples {
			g.g.Examples = append(g.g.Examples, a)
		} else {
			g.g.More = append(g.g.More, exampleRef(a))
		}
		if doc {
			g.maxAfter = max(g.maxAfter, ev.after)
			g.isolated = ev.isolated
		}
	}
	// Unexplained first, then what an admin step did, then what Redis
	// Cluster documents and outages to expect; in order of the first
	// member within each.
	rank := map[string]int{checker.ServerLost: 0, checker.NotRecovered: 0, checker.AttrUnknown: 1, Documented: 3, checker.FaultOutage: 4}
	slices.SortStableFunc(order, func(x, y string) int {
		rx, ok := rank[groups[x].g.Cause]
		if !ok {
			rx = 2
		}
		ry, ok := rank[groups[y].g.Cause]
		if !ok {
			ry = 2
		}
		return rx - ry
	})
	out := make([]AnomalyGroup, 0, len(order))
	for _, k := range order {
		g := groups[k]
		if g.g.Cause == Documented {
			who := "the primary " + g.g.Node + ", cut off on the minority side,"
			if g.isolated {
				who = "the isolated primary " + g.g.Node
			}
			// Tenths of a second; under 0.1 s, milliseconds ("~0 s" read as
			// nothing acknowledged at all).
			span := "~" + trimFloat(float64(int64(g.maxAfter*10+0.5))/10) + " s"
			if g.maxAfter < 0.05 {
				span = fmt.Sprintf("%d ms", int64(g.maxAfter*1000+0.5))
			}
			if g.g.Kind == "lost-increment" {
				// Amounts, not writes: what the key showed lost first is no
				// more than what the cut-off primary acknowledged.
				g.g.Words = fmt.Sprintf("documented asynchronous replication, as far as the amounts show: %s acknowledged increments for %s after the partition began (%s), was demoted after it, no WAIT covered them, and the loss each key first showed after it is no more than they add up to (a counter cannot name the increments lost; %s lost %s increments in all)",
					who, span, g.g.Window, g.g.Checker, trimFloat(d.sum.Checkers[g.g.Checker].Counts().Lost.N()))
			} else {
				g.g.Words = fmt.Sprintf("documented asynchronous replication: %s acknowledged for %s after the partition began (%s), was demoted after it, and no WAIT covered the writes", who, span, g.g.Window)
				// The attribution covers the first instances only: the span is
				// what they show, not the whole loss.
				if lost := d.sum.Checkers[g.g.Checker].Counts().Lost.N(); int(lost) > g.g.Count {
					g.g.Words += fmt.Sprintf(" (as far as these %d attributed show: %s lost %s in all)", g.g.Count, g.g.Checker, trimFloat(lost))
				}
			}
		} else {
			g.g.Words = checker.VerdictWords(g.g.Cause)
			if g.g.Kind == "lost-increment" && g.g.Cause == checker.ServerLost {
				g.g.Words += " (a counter cannot name the increments lost: the group is where the loss first showed)"
			}
		}
		out = append(out, g.g)
	}
	return out
}

// ackNode is the name of the node that acknowledged an attributed write
// ("n2 (10.0.0.3:6379)" -> "n2").
func ackNode(a checker.Attribution) string {
	if a.Ack == nil {
		return ""
	}
	n, _, _ := strings.Cut(a.Ack.Node, " (")
	return n
}

// windowAt names the fault window in force when the write was
// acknowledged, else the first fault the attribution lists in between.
func (d *runData) windowAt(a checker.Attribution, windows []checker.Window) string {
	if a.Ack != nil {
		t := int64(a.Ack.TimeS * 1e9)
		for _, w := range windows {
			if w.Start <= t && (w.Open || w.End >= t) {
				return windowWords(w)
			}
		}
	}
	if len(a.Faults) > 0 {
		return "after the ack: " + a.Faults[0]
	}
	return ""
}

// exampleRef is an attribution in one short line: the key, the op and
// when, never the whole value.
func exampleRef(a checker.Attribution) string {
	s := a.Key
	if a.Kind == "lost-increment" && a.Miss != nil {
		// The last increment (Ack) is no lost write: the final read says
		// what the key came to.
		s += fmt.Sprintf(" (final read op %d at %ss", a.Miss.Index, trimFloat(a.Miss.TimeS))
		if a.Miss.Value != "" {
			s += ", value " + clip(a.Miss.Value, 24)
		}
		return s + ")"
	}
	if a.Ack != nil {
		s += fmt.Sprintf(" (op %d at %ss", a.Ack.Index, trimFloat(a.Ack.TimeS))
		if a.Ack.Value != "" {
			s += ", value " + clip(a.Ack.Value, 24)
		}
		s += ")"
	} else if u := a.Unserved; u != nil {
		s = fmt.Sprintf("shard of %s %ss to %ss (first key %s)", u.Shard, trimFloat(u.FromS), trimFloat(u.ToS), a.Key)
	}
	return s
}

// GroupLines are the terminal's lines for the anomaly groups: one line per
// group with its count, cause and up to three examples. dir is the run's
// directory: the groups the report wrote there (GroupsFile) when it has
// them, else grouped from s alone (without the history's evidence no loss
// is said to be documented).
func GroupLines(dir string, s checker.Summary) []string {
	var groups []AnomalyGroup
	if dir != "" {
		r := &Run{Dir: dir}
		if err := r.ReadJSON(GroupsFile, &groups); err != nil || !groupsOf(groups, s) {
			groups = nil
		}
	}
	if groups == nil {
		d := &runData{sum: s, cfg: map[string]any{}}
		groups = d.anomalyGroups()
	}
	var out []string
	for _, g := range groups {
		out = append(out, g.line())
	}
	return out
}

// groupsOf tells whether groups (read from a run's GroupsFile) group s's
// attributions: as many in all, each example one of them with the same
// verdict (a documented one is a server-lost one). A file left by an
// earlier check of the run is not printed for another summary.
func groupsOf(groups []AnomalyGroup, s checker.Summary) bool {
	id := func(a checker.Attribution) string {
		ix := int64(-1)
		if a.Ack != nil {
			ix = a.Ack.Index
		}
		return fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%d", a.Checker, a.Kind, a.Key, a.Verdict, ix)
	}
	have := map[string]bool{}
	for _, a := range s.Attribution {
		have[id(a)] = true
	}
	n := 0
	for _, g := range groups {
		n += g.Count
		for _, a := range g.Examples {
			if !have[id(a)] {
				return false
			}
		}
	}
	return n == len(s.Attribution)
}

// line is the group on one line.
func (g AnomalyGroup) line() string {
	s := fmt.Sprintf("%s %s ×%d", g.Checker, g.Kind, g.Count)
	if g.Node != "" {
		if g.Kind == "unserved" {
			s += ", shard of " + g.Node
		} else {
			s += ", acknowledged by " + g.Node
		}
	}
	if g.Window != "" {
		s += ", " + g.Window
	}
	s += ": " + g.Words
	var ex []string
	for _, a := range g.Examples {
		ex = append(ex, exampleRef(a))
	}
	if len(ex) > 0 {
		s += "; e.g. " + strings.Join(ex, ", ")
	}
	if n := len(g.More); n > 0 {
		s += fmt.Sprintf(" and %d more", n)
	}
	return s
}

// groupView is one anomaly group as the report shows it.
type groupView struct {
	Title, Class, Words string
	Cause               string
	Count               int
	Cards               []attributionView
	More                []string
}

// kindWords names an attribution kind in the plural, for a group's title.
var kindWords = map[string]string{"lost-write": "lost writes", "lost-increment": "lost increments", "stale-read": "stale reads",
	"unserved": "unserved shard-windows", "not-linearizable": "non-linearizable keys", "set-aside": "writes set aside",
	"unexpected-increment": "unexpected increments"}

// groupViews renders the groups: a title with the count, the cause in
// words with its badge, three example cards and the rest in one line each.
func groupViews(groups []AnomalyGroup) []groupView {
	var out []groupView
	for _, g := range groups {
		kind := kindWords[g.Kind]
		if kind == "" {
			kind = g.Kind
		}
		v := groupView{Title: fmt.Sprintf("%s: %d %s", g.Checker, g.Count, kind), Words: g.Words, Cause: g.Cause, Count: g.Count, More: g.More}
		if g.Node != "" {
			if g.Kind == "unserved" {
				v.Title += ", shard of " + g.Node
			} else {
				v.Title += ", acknowledged by " + g.Node
			}
		}
		if g.Window != "" {
			v.Title += ", " + g.Window
		}
		v.Cards = attributionCards(g.Examples)
		v.Class = "unknown"
		if len(v.Cards) > 0 {
			v.Class = v.Cards[0].VerdictClass
		}
		if g.Cause == Documented {
			v.Class = Documented
			for i := range v.Cards {
				v.Cards[i].Verdict, v.Cards[i].VerdictClass = "documented asynchronous replication", Documented
			}
		}
		out = append(out, v)
	}
	return out
}

// groupsWords is the headline's sentence on the attributed anomalies
// (unserved windows left out: the RTO says those): each group's count and
// cause, unexplained first.
func (d *runData) groupsWords() string {
	var parts []string
	more := 0
	attributed := map[string]int{}
	for _, g := range d.groups {
		// A counter's attributions are keys, its loss increments: the two
		// do not compare.
		if g.Kind == "lost-write" {
			attributed[g.Checker] += g.Count
		}
	}
	for _, g := range d.groups {
		if g.Kind == "unserved" {
			continue
		}
		if len(parts) == 4 {
			more++
			continue
		}
		kind := kindWords[g.Kind]
		if kind == "" {
			kind = g.Kind
		}
		p := fmt.Sprintf("%d %s of %s: ", g.Count, kind, g.Checker)
		switch g.Cause {
		case Documented:
			p += "documented asynchronous replication"
		case checker.ServerLost:
			p += "the server lost them, unexplained"
		default:
			p += g.Words
		}
		switch {
		case g.Node != "":
			p += " (acknowledged by " + g.Node
			if g.Window != "" {
				p += ", " + g.Window
			}
			p += ")"
		case g.Window != "":
			p += " (" + g.Window + ")"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	s := "Attributed anomalies (the first instances, by cause): " + strings.Join(parts, "; ")
	if more > 0 {
		s += fmt.Sprintf("; and %d more groups", more)
	}
	for _, c := range sortedKeys(attributed) {
		if lost := d.sum.Checkers[c].Counts().Lost.N(); int(lost) > attributed[c] {
			s += fmt.Sprintf("; %d of the %s writes %s lost are attributed", attributed[c], trimFloat(lost), c)
		}
	}
	return s + "."
}
