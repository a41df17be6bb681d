package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

// headline figures, in the order a person wants them.
var headline = []string{"lost", "set_aside", "unexpected", "recovered", "stale_reads", "anomalous_keys",
	"wait_satisfied", "wait_unsatisfied", "no_wait", "unknown_keys", "anomaly_types", "wrong_total",
	"refused_crossslot", "noscript", "noscript_after_failover", "executed", "ops", "redirects", "affected", "rto_ms",
	"evidence", "error"}

// HeadlineFigures renders the figures that matter most in one short line
// for terminals and CI logs ("lost=3 stale_reads=1").
func HeadlineFigures(r checker.Result) string {
	var parts []string
	for _, kv := range headlineParts(r.Values()) {
		parts = append(parts, kv[0]+"="+kv[1])
	}
	return strings.Join(parts, " ")
}

// headlineWords is HeadlineFigures for the report's readers: "lost 3,
// stale reads 1, rto n 1 max 6.76s".
func headlineWords(f map[string]any) string {
	var parts []string
	for _, kv := range headlineParts(f) {
		parts = append(parts, strings.ReplaceAll(kv[0], "_", " ")+" "+strings.Trim(kv[1], "{}"))
	}
	return strings.Join(parts, ", ")
}

// headlineParts are the headline figures a checker has, as name and value.
func headlineParts(f map[string]any) [][2]string {
	var parts [][2]string
	for _, k := range headline {
		v, ok := f[k]
		if !ok {
			continue
		}
		if m, ok := v.(map[string]any); ok && strings.HasSuffix(k, "_ms") && m["p99"] != nil {
			// A duration summary (rto_ms): seconds, to two decimals.
			parts = append(parts, [2]string{strings.TrimSuffix(k, "_ms"), fmt.Sprintf("{n=%v p50=%s p99=%s max=%s}", m["count"], msSeconds(m["p50"]), msSeconds(m["p99"]), msSeconds(m["max"]))})
			continue
		}
		s := shortValue(v)
		if s == "" {
			continue
		}
		parts = append(parts, [2]string{k, s})
	}
	return parts
}

// msSeconds renders a figure in milliseconds as seconds ("6.76s").
func msSeconds(v any) string {
	f, ok := v.(float64)
	if !ok {
		return fmt.Sprint(v)
	}
	return seconds(f / 1000)
}

// seconds renders a duration in seconds with the precision a person reads:
// two decimals under 10 s, one under 100 s, none above.
func seconds(s float64) string {
	if math.Abs(s) < 0.005 {
		s = 0 // no "-0.00s"
	}
	switch a := math.Abs(s); {
	case a < 10:
		return fmt.Sprintf("%.2fs", s)
	case a < 100:
		return fmt.Sprintf("%.1fs", s)
	}
	return fmt.Sprintf("%.0fs", s)
}

func shortValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []any:
		return fmt.Sprint(len(x))
	case []string:
		return fmt.Sprint(len(x))
	case map[string]any:
		if c, ok := x["count"]; ok {
			if p99, ok := x["p99"]; ok {
				// A latency-like summary: count, tail and worst.
				return fmt.Sprintf("{n=%v p50=%v p99=%v max=%v}", c, x["p50"], p99, x["max"])
			}
			return fmt.Sprint(c)
		}
		return fmt.Sprintf("{%d}", len(x))
	case string:
		if len(x) > 60 {
			return fmt.Sprintf("%q", x[:60]+"...")
		}
		return fmt.Sprintf("%q", x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}

// reportData is what the report template shows, section by section.
type reportData struct {
	Test, Dir, Valid string
	Headline         []string // the run in sentences
	Facts            []fact   // target, build, workloads ... as a small table
	Checkers         []reportChecker
	Anomalies        []anomalySection
	Groups           []groupView // the attributions grouped by cause
	Census           []string    // the key census in sentences
	LatencyRaw       template.HTML
	LatencyQ         template.HTML
	Throughput       template.HTML
	RPO              template.HTML
	RPOTables        []instanceTable
	RTOTables        []instanceTable
	Windows          []windowRow // one row per fault window: lost, RPO, RTO per shard
	Topology         template.HTML
	TopologyChanges  []string
	Faults           []faultRow
	Files            []string
	Config           string
	Notes            []string // what the report could not show and why
}

type fact struct{ Name, Value string }

type reportChecker struct {
	Name     string
	Valid    string
	Headline string
	Figures  string
}

// WriteReport renders report.html from the run's files: one self-contained
// page (inline CSS and SVG, no script, no external asset) that reads the
// same offline or mailed.
func WriteReport(r *Run) error {
	return WriteReportOf(r, nil)
}

// WriteReportOf is WriteReport with the run's history already read (as
// `redline check` has it): not read, nor held, a second time.
func WriteReportOf(r *Run, h *history.ReadResult) error {
	d, err := loadRunWith(r, h)
	if err != nil {
		return err
	}
	writeTimeline := d.writeTimeline
	if d.big != nil {
		writeTimeline = d.writeBoundedTimeline
	}
	if err := writeTimeline(r); err != nil {
		return err
	}
	d.groups = d.anomalyGroups()
	if len(d.groups) > 0 {
		if err := r.WriteJSON(GroupsFile, d.groups); err != nil {
			return err
		}
	} else if err := os.Remove(r.Path(GroupsFile)); err != nil && !os.IsNotExist(err) {
		return err
	}
	var buf bytes.Buffer
	if err := reportTmpl.Execute(&buf, d.report()); err != nil {
		return err
	}
	return r.WriteFile("report.html", buf.Bytes())
}

func (d *runData) report() reportData {
	rd := reportData{Test: d.run.Test, Dir: d.run.Dir, Valid: d.sum.Valid.String()}
	cfg, _ := json.MarshalIndent(d.cfg, "", "  ")
	rd.Config = string(cfg)
	for _, n := range d.checkerNames() {
		c := d.sum.Checkers[n]
		fig, _ := json.MarshalIndent(c.Values(), "", "  ")
		if len(fig) > 100_000 {
			fig = append(fig[:100_000], []byte("\n... (see results.json)")...)
		}
		rd.Checkers = append(rd.Checkers, reportChecker{Name: n, Valid: checker.VerdictWord(c), Headline: headlineWords(c.Values()), Figures: string(fig)})
	}
	if line := NotApplicableLine(d.sum.NotApplicable); line != "" {
		rd.Notes = append(rd.Notes, "Not applicable, not part of the verdict: "+line+".")
	}
	rd.Notes = append(rd.Notes, d.boundedNotes()...)
	if d.torn {
		rd.Notes = append(rd.Notes, "The history's end was torn (the run crashed while writing its last line or frame); it is left out.")
	}
	if len(d.ops) == 0 {
		rd.Notes = append(rd.Notes, "No history: the plots are empty.")
	}
	end := d.duration()
	windows := d.windows()
	ss := d.samples()
	var marks []anomalyMark
	rd.Anomalies, marks = d.anomalies()
	for i := range rd.Anomalies {
		// Titles and headers in words ("Bad read samples", "ack (s)"),
		// not the figures' field names.
		for j := range rd.Anomalies[i].Tables {
			rd.Anomalies[i].Tables[j].Name = titleWords(rd.Anomalies[i].Tables[j].Name)
			for k, c := range rd.Anomalies[i].Tables[j].Columns {
				rd.Anomalies[i].Tables[j].Columns[k] = columnWords(c)
			}
		}
		for j := range rd.Anomalies[i].Lists {
			rd.Anomalies[i].Lists[j].Name = titleWords(rd.Anomalies[i].Lists[j].Name)
		}
	}
	rd.Groups = groupViews(d.groups)
	rd.Census = d.censusSentences()
	rd.LatencyRaw = latencyRawSVG(ss, end, windows, marks)
	bs, width := buckets(ss, end, 120)
	if len(ss) > 0 {
		rd.LatencyQ = latencyQuantileSVG(bs, width, end, windows)
		rd.Throughput = throughputSVG(ss, bs, width, end, windows)
	}
	lost, spans := d.losses()
	if len(ss) > 0 {
		rd.RPO = rpoSVG(ss, bs, width, end, windows, lost, spans)
	}
	rd.RPOTables, rd.RTOTables = d.recoveryTables()
	rd.Windows = d.windowRows(windows)
	rd.Topology, rd.TopologyChanges = d.topologySVG(windows)
	rd.Faults = d.faultRows()
	addImpact(rd.Faults, ss, end)
	rd.Files = d.htmlFiles()
	rd.Facts, rd.Headline = d.headline(ss, windows, lost)
	return rd
}

// losses collects, from every checker, the lost writes known one by one
// (rows with an acknowledgement time) and the per-window losses known only
// as amounts (counters), for the RPO timeline.
func (d *runData) losses() ([]lostMark, []lossSpan) {
	var lost []lostMark
	var spans []lossSpan
	for _, name := range d.checkerNames() {
		if rows := d.sum.Checkers[name].LostElements(); rows != nil {
			for _, m := range rows {
				if t, ok := m["ack_s"].(float64); ok {
					lost = append(lost, lostMark{t, fmt.Sprintf("%s: lost %s in %s, acknowledged at %.3f s by %s (%s)", name, cell(m["element"]), cell(m["key"]), t, d.name(cell(m["node"])), cell(m["wait"]))})
				}
			}
		}
		// Per-window losses of an RPO checker: all that is known of a
		// counter's losses, and the extent of a set's beyond its examples.
		rpo, ok := checker.FiguresAs[*checker.RPOFigures](d.sum.Checkers[name])
		if !ok {
			continue
		}
		for _, w := range rpo.PerWindow {
			if n := w.Lost; n > 0 && w.AckedFromS != nil && w.AckedToS != nil {
				from, to := *w.AckedFromS, *w.AckedToS
				spans = append(spans, lossSpan{from: from, to: to, row: rpoRow(name, spans), label: fmt.Sprintf("%s: %d lost", name, n),
					title: fmt.Sprintf("%s: %d acknowledged writes lost, acknowledged between %.1f and %.1f s (during the %s of %s)", name, n, from, to, w.Fault, strings.Join(w.Nodes, ","))})
			}
		}
	}
	return lost, spans
}

// recoveryTables shows the RPO and RTO checkers' list figures (per window,
// per shard, whatever they report) as tables for people, each checker's
// scalar figures as a sentence; the per-window table (windowRows) above
// them says the same per fault at a glance.
func (d *runData) recoveryTables() (rpo, rto []instanceTable) {
	for _, name := range d.checkerNames() {
		res := d.sum.Checkers[name]
		var summary instanceTable
		var into *[]instanceTable
		if f, ok := checker.FiguresAs[*checker.RPOFigures](res); ok {
			summary, into = instanceTable{Name: name, Why: rpoWords(f)}, &rpo
		} else if f, ok := checker.FiguresAs[*checker.RTOFigures](res); ok {
			summary, into = instanceTable{Name: name, Why: rtoSentence(f)}, &rto
		} else {
			continue
		}
		// Every list the checker reports becomes a table, whatever it is.
		f := res.Values()
		var ts []instanceTable
		for _, k := range sortedKeys(f) {
			if v, ok := f[k].([]any); ok && len(v) > 0 {
				if t, ok := humanTable(name+": "+columnWords(k), v); ok {
					t.Why = ""
					ts = append(ts, t)
				}
			}
		}
		*into = append(append(*into, summary), ts...)
	}
	return rpo, rto
}

// rpoRow gives each RPO checker its own row of loss spans.
func rpoRow(name string, spans []lossSpan) int {
	rows := map[string]int{}
	for _, s := range spans {
		rows[s.checker()] = s.row
	}
	if r, ok := rows[name]; ok {
		return r
	}
	return len(rows)
}

// clientFact names the client under test: redline's own unless
// --client chose a library, then with its library and version.
func (d *runData) clientFact() string {
	lib, ok := d.cfg["client_library"].(map[string]any)
	if !ok {
		if c := d.str("client"); c != "" {
			return c
		}
		return "redline (its own exactly-once client)"
	}
	str := func(k string) string { s, _ := lib[k].(string); return s }
	out := str("name") + ": " + str("library") + " " + str("version")
	if o := str("options"); o != "" {
		out += " (" + o + ")"
	}
	return out
}

// headline says what happened in sentences: the verdict and who found
// what, losses with the faults they happened in, stale reads, recovery
// times and what the faults did to latency.
func (d *runData) headline(ss []sample, windows []faultWindow, lost []lostMark) ([]fact, []string) {
	var facts []fact
	add := func(n, v string) {
		if v != "" {
			facts = append(facts, fact{n, v})
		}
	}
	target := d.str("target")
	if v, ok := d.cfg["versions"].(map[string]any); ok {
		var build []string
		for _, k := range []string{"version", "image", "server_binary", "redis_version"} {
			if s, ok := v[k].(string); ok && s != "" && s != target {
				build = append(build, s)
			}
		}
		if len(build) > 0 {
			target += " (" + strings.Join(build, ", ") + ")"
		}
	}
	add("target", target)
	add("client", d.clientFact())
	if lib, ok := d.cfg["client_library"].(map[string]any); ok {
		if r, _ := lib["retries"].(string); r != "" {
			add("client retries", r)
		}
	}
	add("workloads", d.str("workloads"))
	faultCount := map[string]int{}
	for _, w := range windows {
		faultCount[strings.TrimSpace(w.Fault+" "+w.Mode)]++ // "kill primary" apart from "kill all"
	}
	var fc []string
	for _, f := range sortedKeys(faultCount) {
		fc = append(fc, fmt.Sprintf("%d× %s", faultCount[f], f))
	}
	nem := d.str("nemesis")
	if len(fc) > 0 {
		nem += ": " + strings.Join(fc, ", ")
	} else if nem != "" {
		nem += ": no fault took effect"
	}
	add("faults", nem)
	counts := map[history.Type]int{}
	for _, s := range ss {
		counts[s.outcome]++
	}
	completed := len(ss)
	if d.big != nil {
		counts, completed = d.big.counts, 0
		for _, n := range counts {
			completed += n
		}
	}
	add("duration", fmt.Sprintf("%.1f s", d.duration()))
	add("ops", fmt.Sprintf("%d completed: %d ok, %d fail, %d info", completed, counts[history.OK], counts[history.Fail], counts[history.Info]))
	add("seed", d.str("seed"))
	add("started", d.str("started"))
	if w := d.str("wait"); w != "" && w != "0" {
		add("WAIT", "WAIT "+w+" after each write, timeout "+d.str("wait_timeout"))
	}

	var words []string
	var bad, undecided []string
	for _, n := range d.checkerNames() {
		switch d.sum.Checkers[n].Valid {
		case checker.Invalid:
			bad = append(bad, n)
		case checker.Unknown:
			undecided = append(undecided, n)
		}
	}
	switch {
	case len(bad) > 0:
		words = append(words, fmt.Sprintf("INVALID: %s found anomalies.", joinWords(bad)))
	case len(undecided) > 0:
		words = append(words, fmt.Sprintf("UNKNOWN: %s could not decide.", joinWords(undecided)))
	case len(d.sum.Caveats()) > 0:
		words = append(words, fmt.Sprintf("VALID (%s): the checkers found no anomaly, but a requested fault kind exercised nothing they could judge.", strings.Join(d.sum.Caveats(), "; ")))
	default:
		words = append(words, "VALID: every checker found evidence and no anomaly.")
	}
	// What each requested fault kind exercised (the coverage checker).
	for _, k := range d.sum.Checkers[checker.CoverageName].Coverage() {
		if k.Summary != "" {
			words = append(words, "Coverage: "+k.Summary+".")
		}
	}
	for _, n := range d.checkerNames() {
		if measuresRecoveryOrLoad(d.sum.Checkers[n]) {
			continue // their own sections say what they measured
		}
		var parts []string
		counts := d.sum.Checkers[n].Counts()
		if l := counts.Lost.N(); l > 0 {
			s := fmt.Sprintf("%s acknowledged writes lost", trimFloat(l))
			if w := d.str("wait"); w != "" && w != "0" {
				sat := counts.WaitSatisfied.N()
				if sat == 0 {
					s += " (WAIT did not cover any of them)"
				} else {
					s += fmt.Sprintf(" (%s of them had been confirmed by WAIT)", trimFloat(sat))
				}
			} else {
				s += " (no WAIT was sent)"
			}
			parts = append(parts, s+d.lossWindows(n)+d.lossShards(d.sum.Checkers[n].LostElements(), l))
		}
		if v := counts.AnomalousKeys.N(); v > 0 {
			parts = append(parts, fmt.Sprintf("%s keys not linearizable", trimFloat(v)))
		}
		if v := counts.StaleReads.N(); v > 0 {
			parts = append(parts, fmt.Sprintf("%s stale reads", trimFloat(v)))
		}
		if classes := d.sum.Checkers[n].AnomalyClasses(); len(classes) > 0 {
			parts = append(parts, fmt.Sprintf("anomalies %s", strings.Join(classes, ", ")))
		}
		for _, c := range []*checker.Figure{counts.Unexpected, counts.WrongTotal, counts.NegativeBalances, counts.BadReads, counts.Executed, counts.UnknownKeys} {
			if v := c.N(); v > 0 {
				parts = append(parts, fmt.Sprintf("%s %s", trimFloat(v), strings.ReplaceAll(c.Name, "_", " ")))
			}
		}
		if v := counts.ResentAdds.N(); v > 0 {
			parts = append(parts, fmt.Sprintf("the client library sent %s increments again after an attempt of unknown outcome "+
				"(each may have applied twice: see client retries above)", trimFloat(v)))
		}
		if d.sum.Checkers[n].Valid == checker.Unknown {
			if e := sentences(d.sum.Checkers[n].Err()); len(e) > 0 {
				parts = append(parts, "undecided: "+clip(e[0], 200))
			}
		}
		if len(parts) > 0 {
			words = append(words, n+": "+strings.Join(parts, "; ")+".")
		}
	}
	if s := d.groupsWords(); s != "" {
		words = append(words, s)
	}
	if s := d.rtoWords(); s != "" {
		words = append(words, s)
	}
	if s := latencyWords(ss, windows); s != "" {
		words = append(words, s)
	}
	return facts, words
}

// lossWindows says in which fault windows a checker's losses happened, from
// the RPO checker of the same workload.
func (d *runData) lossWindows(name string) string {
	prefix := ""
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		prefix = name[:i+1]
	}
	rpo, ok := checker.FiguresAs[*checker.RPOFigures](d.sum.Checkers[prefix+"rpo"])
	if !ok {
		return ""
	}
	var parts []string
	for _, w := range rpo.PerWindow {
		if w.Lost > 0 {
			parts = append(parts, fmt.Sprintf("%d during the %s of %s at %.1f-%.1f s", w.Lost, w.Fault, strings.Join(w.Nodes, ","), w.StartS, w.EndS))
		}
	}
	if n := rpo.Outside.Lost; n > 0 {
		parts = append(parts, fmt.Sprintf("%d outside any fault window", n))
	}
	if len(parts) == 0 {
		return ""
	}
	s := ": " + strings.Join(parts, ", ")
	if v := rpo.RPOMs; v != nil && *v > 0 {
		s += fmt.Sprintf("; RPO %.2f s (the lost writes of one window were acknowledged over that span)", *v/1000)
	} else if v := rpo.BoundMs; v != nil && *v > 0 {
		s += fmt.Sprintf("; RPO at most %.2f s (a bound: counters tell amounts, not which writes)", *v/1000)
	}
	return s
}

// lossShards says which nodes had acknowledged the lost writes a checker
// lists one by one, and which slots each served as primary then (from the
// last CLUSTER NODES snapshot before the acknowledgement).
func (d *runData) lossShards(rows []map[string]any, lost float64) string {
	if len(rows) == 0 {
		return ""
	}
	snaps := d.snapshots()
	count := map[string]int{}
	slots := map[string]string{}
	for _, r := range rows {
		node := d.name(cell(r["node"]))
		if node == "" {
			continue
		}
		count[node]++
		t, _ := r["ack_s"].(float64)
		for i := len(snaps) - 1; i >= 0; i-- {
			if snaps[i].t <= t {
				if role, sl, _ := d.roleOf(snaps[i], node); role == "primary" && sl != "" {
					slots[node] = sl
				}
				break
			}
		}
	}
	if len(count) == 0 {
		return ""
	}
	var parts []string
	for _, n := range sortedKeys(count) {
		p := fmt.Sprintf("%s (%d)", n, count[n])
		if sl := slots[n]; sl != "" {
			p = fmt.Sprintf("%s, primary of slots %s (%d)", n, sl, count[n])
		}
		parts = append(parts, p)
	}
	what := "they were"
	if int(lost) > len(rows) {
		what = fmt.Sprintf("the first %d listed were", len(rows))
	}
	return "; " + what + " acknowledged by " + strings.Join(parts, ", ")
}

// rtoWords names the longest recovery over the RTO checkers.
func (d *runData) rtoWords() string {
	worst, who := 0.0, ""
	unrecovered := 0.0
	for _, n := range d.checkerNames() {
		f, ok := checker.FiguresAs[*checker.RTOFigures](d.sum.Checkers[n])
		if !ok {
			continue
		}
		if v := f.RTOMs.Max; v != nil && *v > worst {
			worst, who = *v, n
		}
		unrecovered += float64(f.Unrecovered)
	}
	if who == "" {
		return ""
	}
	s := fmt.Sprintf("Longest recovery after a fault: %.1f s (%s).", worst/1000, who)
	if unrecovered > 0 {
		s += fmt.Sprintf(" %s keys never recovered.", trimFloat(unrecovered))
	}
	return s
}

// latencyWords compares the p99 latency of ok ops inside fault windows to
// the one outside.
func latencyWords(ss []sample, windows []faultWindow) string {
	if len(windows) == 0 || len(ss) == 0 {
		return ""
	}
	var in, out []float64
	fails := 0
	for _, s := range ss {
		inside := false
		for _, w := range windows {
			if s.t >= w.Start && s.t <= w.End {
				inside = true
				break
			}
		}
		if s.outcome != history.OK {
			if inside {
				fails++
			}
			continue
		}
		if inside {
			in = append(in, s.latMs)
		} else {
			out = append(out, s.latMs)
		}
	}
	p99 := func(xs []float64) float64 {
		if len(xs) == 0 {
			return math.NaN()
		}
		sort.Float64s(xs)
		return xs[min(len(xs)-1, int(0.99*float64(len(xs))))]
	}
	return fmt.Sprintf("During faults: p99 latency of ok ops %.1f ms (outside faults %.1f ms), %d ops failed or timed out.", p99(in), p99(out), fails)
}

func joinWords(xs []string) string {
	if len(xs) <= 1 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

// titleWords is a figure's name as a title: "bad_read_samples: x" ->
// "Bad read samples: x".
func titleWords(name string) string {
	head, rest, found := strings.Cut(name, ": ")
	head = columnWords(head)
	if head != "" {
		head = strings.ToUpper(head[:1]) + head[1:]
	}
	if found {
		return head + ": " + rest
	}
	return head
}

// numeric tells a cell that reads as a number, a time or a span of them
// ("12", "0.35 s", "2.03–4.78 s", "≤ 0.40 s", "p99 3 ms"): it must not
// wrap inside.
func numeric(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 40 {
		return false
	}
	digits := 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case strings.ContainsRune(" .,:-–+≤~%×()", r), r == 's', r == 'm', r == 'µ', r == 'n':
		default:
			return false
		}
	}
	return digits > 0
}

// reportCSS is shared by the report and the results browser's pages.
const reportCSS = `
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1280px;padding:0 1em;color:#222}
nav a{margin-right:1em}
.v-valid{color:#fff;background:#2e7d32}.v-measured{color:#fff;background:#1565c0}.v-invalid{color:#fff;background:#c62828}.v-unknown{color:#fff;background:#ef6c00}.v-incomplete{color:#fff;background:#757575}
.badge{padding:.15em .5em;border-radius:4px;font-weight:bold}
table{border-collapse:collapse;margin:.6em 0;font-size:13px}td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
td{max-width:36em;overflow-wrap:normal;word-break:keep-all}td.num,th{white-space:nowrap}.tw{overflow-x:auto;max-width:100%}section{overflow-x:auto}
th{background:#f3f3f3}
pre{background:#f6f6f6;padding:.6em;overflow:auto;max-height:30em;font-size:12px;white-space:pre-wrap}
.headline li{margin:.3em 0}.why{color:#444;font-style:italic}
details{margin:.3em 0}section{margin-bottom:2em}
.anomaly{border-left:4px solid #c62828;padding-left:1em;margin:1em 0}
.nw{white-space:nowrap}.effect{min-width:22em;max-width:34em}.impact{min-width:11em}.err{min-width:14em;max-width:24em}
.v-documented{color:#000;background:#ffb300}
.group{border-left:4px solid #757575;padding-left:1em;margin:1.2em 0}.group[data-cause=documented]{border-color:#ffb300}.group[data-cause=server-lost]{border-color:#c62828}
.attribution{margin-left:.5em}details.more li{font-size:13px}
.cycle{white-space:pre-wrap;font-family:monospace;font-size:12px;background:#fff3f3;padding:.4em}
`

var reportTmpl = template.Must(template.New("report").Funcs(template.FuncMap{"num": numeric}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>redline {{.Test}}: {{.Valid}}</title>
<style>` + reportCSS + `</style></head><body>
<h1>{{.Test}} <span class="badge v-{{.Valid}}" id="verdict">{{.Valid}}</span></h1>
<nav><a href="#latency">latency</a><a href="#throughput">throughput</a><a href="#rpo">RPO</a><a href="#topology">topology</a><a href="#attribution">anomalies by cause</a><a href="#anomalies">anomalies per checker</a><a href="#rto">RTO</a><a href="#faults">faults</a><a href="#checkers">checkers</a><a href="#config">config</a><a id="timeline-link" href="timeline.html">timeline (ops per process)</a></nav>
<section id="headline"><ul class="headline">{{range .Headline}}<li>{{.}}</li>{{end}}</ul>
<div class="tw"><table>{{range .Facts}}<tr><th>{{.Name}}</th><td>{{.Value}}</td></tr>{{end}}<tr><th>directory</th><td>{{.Dir}}</td></tr></table></div>
{{range .Notes}}<p class="why">{{.}}</p>{{end}}</section>

<section id="latency"><h2>Latency</h2>
<p class="why">Every op at its invocation time (points merged by pixel; failed ops red squares and unknown ones orange over the ok ones; anomalous ops circled in black), faults shaded and labelled.</p>
{{.LatencyRaw}}
{{.LatencyQ}}</section>
<section id="throughput"><h2>Throughput</h2>{{.Throughput}}</section>
<section id="rpo"><h2>RPO: acknowledged writes and losses</h2>{{.RPO}}
{{if .Windows}}<h3 id="windows">Per fault window</h3><p class="why">What each fault lost (acknowledged writes, over every workload), the RPO (the span over which the lost writes had been acknowledged; ≤ a bound) and how long each shard, by its primary, took to serve again (RTO).</p>
<div class="tw"><table id="window-table"><tr><th>#</th><th>fault</th><th>mode</th><th>nodes</th><th>in force</th><th>lost</th><th>RPO</th><th>RTO per shard</th><th>keys on touched nodes</th></tr>
{{range .Windows}}<tr><td class="num">{{.Index}}</td><td>{{.Fault}}</td><td>{{.Mode}}</td><td>{{.Nodes}}</td><td class="num">{{.When}}</td><td{{if num .Lost}} class="num"{{end}}>{{.Lost}}</td><td{{if num .RPO}} class="num"{{end}}>{{.RPO}}</td><td>{{.RTO}}</td><td>{{.Coverage}}</td></tr>{{end}}</table></div>{{end}}
{{range .RPOTables}}<h4>{{.Name}}</h4>{{if .Why}}<p class="why">{{.Why}}</p>{{end}}{{if .Columns}}<div class="tw"><table><tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr>{{range .Rows}}<tr>{{range .}}<td{{if num .}} class="num"{{end}}>{{.}}</td>{{end}}</tr>{{end}}</table></div>{{if .More}}<p>… and {{.More}} more in results.json</p>{{end}}{{end}}{{end}}</section>
<section id="topology"><h2>Topology</h2>
{{if .Topology}}{{.Topology}}{{else}}<p>No CLUSTER NODES snapshot was recorded.</p>{{end}}
{{if .TopologyChanges}}<details open><summary>Changes ({{len .TopologyChanges}})</summary><ul>{{range .TopologyChanges}}<li>{{.}}</li>{{end}}</ul></details>{{end}}</section>
{{if or .Groups .Census}}<section id="attribution"><h2>Anomalies by cause</h2>
{{range .Census}}<p class="census">{{.}}</p>{{end}}
<p class="why">The attributed anomalies grouped by checker, cause, acknowledging node (or shard) and fault window, each group with its count and its first examples in full. A loss is <em>documented asynchronous replication</em> only when the history shows the node that acknowledged it was a primary cut off by a partition, a replica at the end (demoted) and no WAIT satisfied: Redis Cluster documents that it loses such writes. Any other loss the attribution could not pin on an admin step reads "the server lost it". For each example: the node that acknowledged the write, the read that missed it, where the key is at the end (a census of every node, primaries and replicas), the faults and journalled admin steps in between and the servers' own log lines of that span. For each shard that went unserved: the span from its first failed call to its first served one, the errors clients saw, who served its slots again, and a verdict: the fault did it (an outage to expect), an admin step did it, or unknown.</p>
{{range .Groups}}<div class="group" data-cause="{{.Cause}}" data-count="{{.Count}}"><h3>{{.Title}}</h3><p><span class="badge v-{{.Class}}">{{if eq .Cause "documented"}}documented behaviour{{else}}{{.Words}}{{end}}</span>{{if eq .Cause "documented"}} {{.Words}}{{end}}</p>
{{range .Cards}}<div class="attribution"><h4>{{.Title}}</h4><p><span class="badge v-{{.VerdictClass}}">{{.Verdict}}</span> {{.Why}}</p>
<div class="tw"><table>{{range .Facts}}<tr><th>{{.Name}}</th><td>{{.Value}}</td></tr>{{end}}</table></div>
{{if .Logs}}<details><summary>server log lines ({{len .Logs}})</summary><pre>{{range .Logs}}{{.}}
{{end}}</pre></details>{{end}}</div>{{end}}
{{if .More}}<details class="more"><summary>and {{len .More}} more</summary><ul>{{range .More}}<li>{{.}}</li>{{end}}</ul></details>{{end}}</div>{{end}}</section>{{end}}
<section id="anomalies"><h2>Anomalies per checker</h2>
{{if not .Anomalies}}<p>No checker found an anomaly.</p>{{end}}
{{range .Anomalies}}<div class="anomaly" data-checker="{{.Checker}}"><h3>{{.Checker}} <span class="badge v-{{.Valid}}">{{.Valid}}</span></h3>
{{range .Sentences}}<p>{{.}}</p>{{end}}
{{range .Cycles}}<h4>{{.Class}}{{if .Count}} ({{.Count}}){{end}}</h4>{{if .Why}}<p class="why">{{.Why}}</p>{{end}}{{range .Steps}}<div class="cycle">{{.}}</div>{{end}}{{end}}
{{range .Tables}}<h4>{{.Name}}</h4>{{if .Why}}<p class="why">{{.Why}}</p>{{end}}<div class="tw"><table><tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr>{{range .Rows}}<tr>{{range .}}<td{{if num .}} class="num"{{end}}>{{.}}</td>{{end}}</tr>{{end}}</table></div>{{if .More}}<p>… and {{.More}} more in results.json</p>{{end}}{{end}}
{{range .Lists}}<h4>{{.Name}}</h4>{{if .Why}}<p class="why">{{.Why}}</p>{{end}}<p>{{range $i, $e := .Items}}{{if $i}}, {{end}}{{$e}}{{end}}{{if .More}} … and {{.More}} more{{end}}</p>{{end}}
{{if .Links}}<p>Visualizations (porcupine shows the longest linearizable prefix and the op that cannot follow it):</p><ul>{{range .Links}}<li><a href="{{.}}">{{.}}</a></li>{{end}}</ul>{{end}}
{{if .Ops}}<h4>Ops involved (first instances)</h4><div class="tw"><table><tr><th>index</th><th>process</th><th>time</th><th>op</th><th>key</th><th>sent</th><th>outcome</th><th>got</th><th>node</th><th>latency</th><th>error</th></tr>
{{range .Ops}}<tr><td class="num">{{.Index}}</td><td class="num">{{.Process}}</td><td class="num">{{.Time}}</td><td>{{.F}}</td><td>{{.Key}}</td><td>{{.Sent}}</td><td>{{.Outcome}}</td><td>{{.Got}}</td><td>{{.Node}}</td><td class="num">{{.Latency}}</td><td>{{.Error}}</td></tr>{{end}}</table></div>{{end}}
</div>{{end}}</section>
<section id="rto"><h2>RTO: recovery per fault and shard</h2>
{{range .RTOTables}}<h4>{{.Name}}</h4>{{if .Why}}<p class="why">{{.Why}}</p>{{end}}{{if .Columns}}<div class="tw"><table><tr>{{range .Columns}}<th>{{.}}</th>{{end}}</tr>{{range .Rows}}<tr>{{range .}}<td{{if num .}} class="num"{{end}}>{{.}}</td>{{end}}</tr>{{end}}</table></div>{{if .More}}<p>… and {{.More}} more in results.json</p>{{end}}{{end}}{{else}}<p>No RTO checker ran.</p>{{end}}</section>
<section id="faults"><h2>Faults</h2>
{{if .Faults}}<div class="tw"><table><tr><th>fault</th><th>start</th><th>stop</th><th>duration</th><th>nodes</th><th>mode</th><th>effect</th><th>clients saw</th><th>error</th></tr>
{{range .Faults}}<tr><td class="nw">{{.Fault}}</td><td class="num">{{.Start}}</td><td class="num">{{.Stop}}</td><td class="num">{{.Duration}}</td><td>{{.Nodes}}</td><td>{{.Mode}}</td><td class="effect">{{.Effect}}</td><td class="impact">{{.Impact}}</td><td class="err">{{.Error}}</td></tr>{{end}}</table></div>{{else}}<p>No fault was injected.</p>{{end}}</section>
<section id="checkers"><h2>Checkers</h2>
<div class="tw"><table><tr><th>checker</th><th>verdict</th><th>figures</th></tr>
{{range .Checkers}}<tr><td>{{.Name}}</td><td><span class="badge v-{{.Valid}}">{{.Valid}}</span></td><td>{{.Headline}}</td></tr>
{{end}}</table></div>
{{range .Checkers}}<details><summary>{{.Name}}: all figures</summary><pre>{{.Figures}}</pre></details>{{end}}
{{if .Files}}<h3>Files</h3><ul>{{range .Files}}<li><a href="{{.}}">{{.}}</a></li>{{end}}</ul>{{end}}</section>
<section id="config"><h2>Configuration</h2><pre>{{.Config}}</pre></section>
</body></html>
`))

// measuresRecoveryOrLoad says a result's figures are the RPO, RTO or perf
// checker's, which the report's recovery table and plots show.
func measuresRecoveryOrLoad(r checker.Result) bool {
	_, rpo := checker.FiguresAs[*checker.RPOFigures](r)
	_, rto := checker.FiguresAs[*checker.RTOFigures](r)
	_, perf := checker.FiguresAs[*checker.PerfFigures](r)
	return rpo || rto || perf
}
