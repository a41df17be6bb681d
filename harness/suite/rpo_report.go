package suite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// StudyReport is rpo.json.
type StudyReport struct {
	Started  string   `json:"started"`
	SuiteDir string   `json:"suite_dir"`
	Seeds    int      `json:"seeds"`
	Entries  []Entry  `json:"entries"`
	Fidelity []string `json:"fidelity,omitempty"` // where reference and redis differ beyond noise
	Compared int      `json:"compared_cells"`     // cells run on both reference and redis
	Notes    []string `json:"notes"`
	// Builds say what was tested, per target: the server's version line,
	// image and digests, and the redline build that ran the study.
	Builds []string `json:"builds,omitempty"`
	// Shape is the clusters' shape and the load ("6 nodes, 1 replica per
	// primary, 10 clients"), from the runs' config.json.
	Shape []string `json:"shape,omitempty"`
	// Model is set when a target is the reference server: its figures
	// are redline's model of Redis, not a Redis build's, and the words say
	// when that model was last checked against redis-server.
	Model string `json:"model,omitempty"`
}

// LastFidelityCheck is the date and commit of the last measured RPO
// comparison of the reference server against redis-server
// (docs/fidelity.md); CI's TestReferenceRPOMatchesRedis checks it on every
// change.
const LastFidelityCheck = "2026-12-05 (docs/fidelity.md)"

// modelWords says what a study's reference figures are.
func modelWords() string {
	return "Figures of target reference measure redline's model of Redis Cluster (its bundled reference server), not a Redis build. " +
		"The model's RPO figures were last measured against redis-server's on " + LastFidelityCheck +
		", and CI compares them on every change (lost share and loss window within 2x, RTO within 1.5x)."
}

// title is the study's title: a study of the reference alone is a study of
// redline's model of Redis, and says so first.
func (r *StudyReport) title() string {
	onlyModel, model := len(r.Entries) > 0, false
	for _, e := range r.Entries {
		if e.Target == "reference" {
			model = true
		} else {
			onlyModel = false
		}
	}
	switch {
	case onlyModel:
		return "RPO study of redline's model of Redis (reference server, not a Redis build)"
	case model:
		return "RPO study, with redline's model of Redis beside it"
	}
	return "RPO study"
}

// studyNotes say how the figures are made, in rpo.json and rpo.md.
var studyNotes = []string{
	"workload set: every write adds a unique element, so every lost acknowledged write is known with its ack time (RPO is exact, not a bound)",
	"one fault per run, starting half a nemesis interval after traffic starts; interval = max(10s, 5 x node-timeout), held 0.5-0.75 of it",
	"rpo_ms: span between the first and last ack of the lost writes of a run; p50 and max over runs",
	"loss_window_ms: ack times of lost writes relative to the fault's start, of the run with the latest loss",
	"rto_ms: per affected key (i.e. per shard), from the fault's start to the first ok op after its last failure; p50 = median of the runs' p50s, max over runs",
	"lost_wait_satisfied: lost writes whose WAIT had reported enough replicas; WAIT does not make Redis Cluster strongly consistent",
	"power-shard, power-all: the nodes' data directories are FUSE mounts that drop what was not fsynced when the power is cut (and count a change 30 s old as written back, as the kernel's flusher); a run's traffic before the cut is about half an interval, so where everything unsynced was lost (appendfsync no, RDB only, none) the RPO is the whole run's span so far: a lower bound of what such a setting loses",
}

// NewStudyReport aggregates a study's summary and compares targets.
func NewStudyReport(sum *Summary, seeds int) *StudyReport {
	r := &StudyReport{Started: sum.Started.Format("2006-01-02 15:04:05 UTC"), SuiteDir: sum.Dir, Seeds: seeds, Notes: studyNotes}
	r.Entries = Aggregate(sum)
	r.Fidelity, r.Compared = compareTargets(r.Entries)
	r.Fidelity = append(r.Fidelity, FidelityGaps(r.Entries)...)
	r.Builds, r.Shape = describeRuns(sum)
	for _, e := range r.Entries {
		if e.Target == "reference" {
			r.Model = modelWords()
			break
		}
	}
	return r
}

// describeRuns reads the runs' config.json for what was tested (the
// builds, per target) and how (the clusters' shape), once per distinct
// value.
func describeRuns(sum *Summary) (builds, shape []string) {
	seen := map[string]bool{}
	add := func(list *[]string, s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			*list = append(*list, s)
		}
	}
	for _, r := range sum.Runs {
		if r.Dir == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(r.Dir, "config.json"))
		if err != nil {
			continue
		}
		var cfg struct {
			Target        string            `json:"target"`
			Nodes         int               `json:"nodes"`
			Replicas      int               `json:"replicas"`
			Concurrency   int               `json:"concurrency"`
			Rate          float64           `json:"rate"`
			ServerVersion string            `json:"server_version"`
			ServerSHA256  string            `json:"server_sha256"`
			ServerBinary  string            `json:"server_binary"`
			Versions      map[string]string `json:"versions"`
		}
		if json.Unmarshal(b, &cfg) != nil {
			continue
		}
		var parts []string
		if cfg.ServerVersion != "" {
			parts = append(parts, cfg.ServerVersion)
		}
		if cfg.ServerBinary != "" {
			parts = append(parts, "binary "+cfg.ServerBinary)
		}
		if cfg.ServerSHA256 != "" {
			parts = append(parts, "sha256 "+short(cfg.ServerSHA256, 16))
		}
		for _, k := range []string{"redis_version", "image", "image_id"} {
			if v := cfg.Versions[k]; v != "" {
				if k == "image_id" {
					v = short(v, 16) // a digest: its head names it
				}
				parts = append(parts, strings.ReplaceAll(k, "_", " ")+" "+v)
			}
		}
		if len(parts) > 0 {
			add(&builds, cfg.Target+": "+strings.Join(parts, ", "))
		}
		if v := cfg.Versions["redline"]; v != "" {
			add(&builds, "redline "+v)
		}
		load := fmt.Sprintf("%d clients", cfg.Concurrency)
		if cfg.Rate > 0 {
			load += fmt.Sprintf(" at %.0f ops/s", cfg.Rate)
		}
		if cfg.Nodes > 0 {
			add(&shape, fmt.Sprintf("%s: %d nodes, %d primaries with %d replica(s) each, %s", cfg.Target, cfg.Nodes, cfg.Nodes/(cfg.Replicas+1), cfg.Replicas, load))
		}
	}
	return builds, shape
}

func short(s string, n int) string {
	s = strings.TrimPrefix(s, "sha256:")
	if len(s) > n {
		return s[:n]
	}
	return s
}

// compareTargets finds cells where the reference server and Redis differ
// beyond noise in what a faithful copy must share: how long after the fault
// acknowledged writes were still lost, and how long keys went unserved.
// Beyond noise means the runs' ranges do not overlap and the medians differ
// by more than 25% and 200 ms, over at least two runs a side. (The lost fraction is not compared: it
// follows throughput, and the servers' speeds differ.)
func compareTargets(es []Entry) ([]string, int) {
	type key struct {
		client   string
		scenario string
		wait     int
		nt       int64
		settings string
	}
	ref, red := map[key]Entry{}, map[key]Entry{}
	for _, e := range es {
		k := key{e.Client, e.Scenario, e.Wait, e.NodeTimeoutMs, strings.Join(e.Settings, ";")}
		switch e.Target {
		case "reference":
			ref[k] = e
		case "redis":
			red[k] = e
		}
	}
	var out []string
	compared := 0
	for _, e := range es {
		k := key{e.Client, e.Scenario, e.Wait, e.NodeTimeoutMs, strings.Join(e.Settings, ";")}
		a, okA := ref[k]
		b, okB := red[k]
		if e.Target != "reference" || !okA || !okB || a.Runs == 0 || b.Runs == 0 {
			continue
		}
		compared++
		where := fmt.Sprintf("%s, wait %d, node-timeout %dms, %s", k.scenario, k.wait, k.nt, settingsName(a.Settings))
		for _, m := range []struct {
			name  string
			unit  string
			floor float64
			get   func(RunFigures) (float64, bool)
		}{
			{"end of the loss window", "ms", 200, func(f RunFigures) (float64, bool) {
				if f.LossWindowMs == nil {
					return 0, true
				}
				return f.LossWindowMs.To, true
			}},
			{"RTO max", "ms", 200, func(f RunFigures) (float64, bool) {
				if f.RTOMs == nil {
					return 0, false
				}
				return f.RTOMs.Max, true
			}},
		} {
			va, vb := values(a.PerRun, m.get), values(b.PerRun, m.get)
			if len(va) < 2 || len(vb) < 2 {
				continue // one run per side shows no noise to judge against
			}
			lo1, hi1, lo2, hi2 := minOf(va), maxOf(va), minOf(vb), maxOf(vb)
			ma, mb := median(va), median(vb)
			if (hi1 < lo2 || hi2 < lo1) && math.Abs(ma-mb) > m.floor && math.Abs(ma-mb) > 0.25*math.Max(ma, mb) {
				out = append(out, fmt.Sprintf("%s: %s differs: reference %.4g%s (runs %.4g-%.4g), redis %.4g%s (runs %.4g-%.4g): a fidelity bug of the reference server to look at",
					where, m.name, ma, m.unit, lo1, hi1, mb, m.unit, lo2, hi2))
			}
		}
	}
	return out, compared
}

func values(fs []RunFigures, get func(RunFigures) (float64, bool)) []float64 {
	var out []float64
	for _, f := range fs {
		if v, ok := get(f); ok {
			out = append(out, v)
		}
	}
	return out
}

func minOf(xs []float64) float64 {
	m := math.Inf(1)
	for _, x := range xs {
		m = math.Min(m, x)
	}
	return m
}

func secs(ms float64) string { return fmt.Sprintf("%.1f s", ms/1000) }

// Markdown renders rpo.md: a table and a paragraph per scenario cell.
func (r *StudyReport) Markdown() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s (%s)\n\n", r.title(), r.Started)
	if r.Model != "" {
		b.WriteString(r.Model + "\n\n")
	}
	fmt.Fprintf(&b, "%d seed(s) per cell; runs and their reports are listed in %s/summary.html.\n\n", r.Seeds, r.SuiteDir)
	if len(r.Builds) > 0 {
		b.WriteString("Tested builds:\n\n")
		for _, s := range r.Builds {
			b.WriteString("- " + s + "\n")
		}
		b.WriteString("\n")
	}
	if len(r.Shape) > 0 {
		b.WriteString("Clusters:\n\n")
		for _, s := range r.Shape {
			b.WriteString("- " + s + "\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("| target (/ client) | scenario | wait | node-timeout | settings | runs | acked | lost | lost per seed | lost % | RPO p50 / max | RPO per seed | loss window (from fault start) | RTO p50 / max | lost with WAIT satisfied | ops/s |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, e := range r.Entries {
		win, rto := "none lost", "n/a"
		if e.LossWindowMs != nil {
			win = fmt.Sprintf("+%s to +%s", secs(e.LossWindowMs.From), secs(e.LossWindowMs.To))
		}
		if e.RTOMs != nil {
			rto = secs(e.RTOMs.P50) + " / " + secs(e.RTOMs.Max)
		}
		lostSeeds, rpoSeeds := e.spread()
		fmt.Fprintf(&b, "| %s | %s | %d | %d ms | %s | %d | %d | %d | %s | %.3f | %s / %s | %s | %s | %s | %d | %.0f |\n",
			e.Label(), e.Scenario, e.Wait, e.NodeTimeoutMs, settingsName(e.Settings), e.Runs, e.Acked, e.Lost, lostSeeds, e.LostPct,
			secs(e.RPOMs.P50), secs(e.RPOMs.Max), rpoSeeds, win, rto, e.LostWaitSatisfied, e.ThroughputOpsS)
	}
	b.WriteString("\n## In words\n\n")
	for _, e := range r.Entries {
		b.WriteString(e.Paragraph(r.Entries))
		b.WriteString("\n\n")
	}
	if r.Compared > 0 {
		b.WriteString("## Reference server against Redis\n\n")
		if len(r.Fidelity) == 0 {
			fmt.Fprintf(&b, "In the %d cell(s) run on both, the reference server's lost share and end of the loss window are within 2x of Redis's and its RTO within 1.5x (or both near zero), and the end of the loss window and the RTO match within noise (noise judged only where each side has at least two runs: use --seeds 2 or more).\n", r.Compared)
		}
		for _, f := range r.Fidelity {
			b.WriteString("- " + f + "\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("## How the figures are made\n\n")
	for _, n := range r.Notes {
		b.WriteString("- " + n + "\n")
	}
	return b.Bytes()
}

// Paragraph says what an entry found in plain words.
func (e Entry) Paragraph(all []Entry) string {
	sc, _ := scenarioByName(e.Scenario)
	var b strings.Builder
	fmt.Fprintf(&b, "**%s, %s, node-timeout %s, WAIT %d, %s.** When %s, ", e.Label(), e.Scenario, secs(float64(e.NodeTimeoutMs)), e.Wait, settingsName(e.Settings), sc.Words)
	switch {
	case e.Runs == 0:
		fmt.Fprintf(&b, "no run finished, so nothing can be said (%s).", strings.Join(e.Failed, "; "))
		return b.String()
	case e.Lost == 0:
		fmt.Fprintf(&b, "no acknowledged write was lost in %d run(s) (%d writes acknowledged).", e.Runs, e.Acked)
	default:
		fmt.Fprintf(&b, "writes acknowledged from %s to %s after the fault began were lost: %d of %d acknowledged (%.3f%%) over %d run(s); the lost writes spanned %s at the median and %s at worst.",
			signedSecs(e.LossWindowMs.From), signedSecs(e.LossWindowMs.To), e.Lost, e.Acked, e.LostPct, e.Runs, secs(e.RPOMs.P50), secs(e.RPOMs.Max))
	}
	if e.RTOMs != nil {
		fmt.Fprintf(&b, " Keys were served again %s after the fault began at the median, %s at worst.", secs(e.RTOMs.P50), secs(e.RTOMs.Max))
	}
	if slices.Contains(PowerScenarios, e.Scenario) {
		b.WriteString(" " + e.powerSentence())
	}
	if e.Wait > 0 && e.Lost > 0 {
		if e.LostWaitSatisfied == 0 {
			fmt.Fprintf(&b, " With WAIT %d, every lost write was one whose WAIT had reported too few replicas (%d): the client could have known.", e.Wait, e.LostWaitUnsat)
		} else {
			fmt.Fprintf(&b, " **%d lost write(s) had WAIT %d report enough replicas**: WAIT did not make them durable.", e.LostWaitSatisfied, e.Wait)
		}
	}
	for _, o := range all {
		if e.Wait > 0 && o.Wait == 0 && o.Target == e.Target && o.Client == e.Client && o.Scenario == e.Scenario && o.NodeTimeoutMs == e.NodeTimeoutMs &&
			settingsName(o.Settings) == settingsName(e.Settings) && o.ThroughputOpsS > 0 {
			fmt.Fprintf(&b, " WAIT cost throughput: %.0f ops/s against %.0f without (%.0f%%); without WAIT %d write(s) were lost.",
				e.ThroughputOpsS, o.ThroughputOpsS, 100*e.ThroughputOpsS/o.ThroughputOpsS, o.Lost)
		}
	}
	if len(e.Failed) > 0 {
		fmt.Fprintf(&b, " %d run(s) left out for lack of a verdict: %s.", len(e.Failed), strings.Join(e.Failed, "; "))
	}
	return b.String()
}

// powerSentence is the answer a power-loss cell gives: "with everysec we
// lose up to N ms of acknowledged writes on power loss".
func (e Entry) powerSentence() string {
	setting := "the servers' defaults (appendonly yes, appendfsync everysec)"
	if p, rest, ok := persistenceOf(e.Settings); ok && len(rest) == 0 {
		setting = p.Words
	} else if len(e.Settings) > 0 {
		setting = strings.Join(e.Settings, "; ")
	}
	what := "a shard's"
	if e.Scenario == "power-all" {
		what = "the whole cluster's"
	}
	if e.Lost == 0 {
		return fmt.Sprintf("So with %s, %s power loss lost no acknowledged write in %d run(s).", setting, what, e.Runs)
	}
	return fmt.Sprintf("So with %s, %s power loss loses up to %.0f ms of acknowledged writes (the worst of %d run(s); %.0f ms at the median).",
		setting, what, e.RPOMs.Max, e.Runs, e.RPOMs.P50)
}

// spread lists each seed's lost writes and RPO in seed order ("3, 0, 12"
// and "0.4 s, 0.0 s, 1.2 s"), so the table shows how far runs of one cell
// differ, not only their sum and median.
func (e Entry) spread() (lost, rpo string) {
	runs := slices.Clone(e.PerRun)
	sort.SliceStable(runs, func(i, j int) bool { return naturalSeed(runs[i].Seed) < naturalSeed(runs[j].Seed) })
	var ls, rs []string
	for _, f := range runs {
		ls = append(ls, strconv.FormatInt(f.Lost, 10))
		rs = append(rs, secs(f.RPOMs))
	}
	if len(ls) == 0 {
		return "-", "-"
	}
	return strings.Join(ls, ", "), strings.Join(rs, ", ")
}

// LostPerSeed is each seed's lost writes, in seed order (rpo.html).
func (e Entry) LostPerSeed() string { l, _ := e.spread(); return l }

func naturalSeed(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

func signedSecs(ms float64) string {
	if ms < 0 {
		return "-" + secs(-ms)
	}
	return "+" + secs(ms)
}

// HTML renders rpo.html: the table and plots of the loss window and RTO
// against node-timeout, and of WAIT's throughput cost.
func (r *StudyReport) HTML() ([]byte, error) {
	type plot struct {
		Title string
		SVG   template.HTML
	}
	var plots []plot
	groups := map[string][]Entry{}
	var order []string
	for _, e := range r.Entries {
		k := fmt.Sprintf("%s, %s, WAIT %d, %s", e.Target, e.Scenario, e.Wait, settingsName(e.Settings))
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], e)
	}
	for _, k := range order {
		plots = append(plots, plot{"loss window and RTO against node-timeout: " + k, template.HTML(windowPlot(groups[k]))})
	}
	if svg := waitCostPlot(r.Entries); svg != "" {
		plots = append(plots, plot{"WAIT's throughput cost", template.HTML(svg)})
	}
	var buf bytes.Buffer
	err := rpoPage.Execute(&buf, map[string]any{"R": r, "Title": r.title(), "Plots": plots, "Paragraphs": paragraphs(r.Entries)})
	return buf.Bytes(), err
}

func paragraphs(es []Entry) []template.HTML {
	var out []template.HTML
	for _, e := range es {
		p := template.HTMLEscapeString(e.Paragraph(es))
		// **bold** from the markdown paragraph.
		for strings.Contains(p, "**") {
			p = strings.Replace(p, "**", "<b>", 1)
			p = strings.Replace(p, "**", "</b>", 1)
		}
		out = append(out, template.HTML(p))
	}
	return out
}

// windowPlot draws, per node-timeout, the loss window as a bar from its
// start to its end and the RTO p50 and max as points, in seconds from the
// fault's start.
func windowPlot(es []Entry) string {
	const w, h, left, bottom = 520.0, 60.0, 90.0, 30.0
	rowH := 28.0
	height := bottom + rowH*float64(len(es)) + 22
	maxMs := 1000.0
	for _, e := range es {
		if e.LossWindowMs != nil {
			maxMs = math.Max(maxMs, e.LossWindowMs.To)
		}
		if e.RTOMs != nil {
			maxMs = math.Max(maxMs, e.RTOMs.Max)
		}
	}
	maxMs *= 1.1
	x := func(ms float64) float64 { return left + (w-left-10)*math.Max(0, ms)/maxMs }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-size="11" font-family="sans-serif">`, w, height)
	for i, e := range es {
		y := 10 + rowH*float64(i)
		fmt.Fprintf(&b, `<text x="4" y="%.0f">nt %s</text>`, y+14, secs(float64(e.NodeTimeoutMs)))
		if e.LossWindowMs != nil {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.0f" width="%.1f" height="12" fill="#d9534f"><title>lost writes acked +%s to +%s</title></rect>`,
				x(e.LossWindowMs.From), y+4, math.Max(1, x(e.LossWindowMs.To)-x(e.LossWindowMs.From)), secs(e.LossWindowMs.From), secs(e.LossWindowMs.To))
		}
		if e.RTOMs != nil {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.0f" r="4" fill="#337ab7"><title>RTO p50 %s</title></circle>`, x(e.RTOMs.P50), y+10, secs(e.RTOMs.P50))
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.0f" r="4" fill="none" stroke="#337ab7"><title>RTO max %s</title></circle>`, x(e.RTOMs.Max), y+10, secs(e.RTOMs.Max))
		}
	}
	axisY := height - bottom - 6
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#333"/>`, left, axisY, w-10, axisY)
	for s := 0.0; s*1000 <= maxMs; s += math.Max(1, math.Round(maxMs/1000/6)) {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%gs</text>`, x(s*1000), axisY+14, s)
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" fill="#d9534f">■ lost writes' ack times</text><text x="%.0f" y="%.0f" fill="#337ab7">● RTO p50 ○ max</text>`, left, axisY+26, left+170, axisY+26)
	b.WriteString(`</svg>`)
	_ = h
	return b.String()
}

// waitCostPlot draws throughput with and without WAIT per cell that has both.
func waitCostPlot(es []Entry) string {
	type pair struct {
		label      string
		none, wait float64
	}
	var ps []pair
	for _, e := range es {
		if e.Wait != 0 {
			continue
		}
		for _, o := range es {
			if o.Wait > 0 && o.Target == e.Target && o.Client == e.Client && o.Scenario == e.Scenario && o.NodeTimeoutMs == e.NodeTimeoutMs && settingsName(o.Settings) == settingsName(e.Settings) {
				ps = append(ps, pair{fmt.Sprintf("%s %s nt %s", e.Target, e.Scenario, secs(float64(e.NodeTimeoutMs))), e.ThroughputOpsS, o.ThroughputOpsS})
			}
		}
	}
	if len(ps) == 0 {
		return ""
	}
	const w, left = 560.0, 230.0
	maxT := 1.0
	for _, p := range ps {
		maxT = math.Max(maxT, math.Max(p.none, p.wait))
	}
	x := func(v float64) float64 { return (w - left - 90) * v / maxT }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%d" font-size="11" font-family="sans-serif">`, w, 30*len(ps)+24)
	for i, p := range ps {
		y := float64(30 * i)
		fmt.Fprintf(&b, `<text x="4" y="%.0f">%s</text>`, y+16, template.HTMLEscapeString(p.label))
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.1f" height="11" fill="#5cb85c"/><text x="%.1f" y="%.0f">%.0f ops/s</text>`, left, y+2, x(p.none), left+x(p.none)+4, y+11, p.none)
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.1f" height="11" fill="#f0ad4e"/><text x="%.1f" y="%.0f">%.0f ops/s</text>`, left, y+14, x(p.wait), left+x(p.wait)+4, y+23, p.wait)
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%d" fill="#5cb85c">■ no WAIT</text><text x="%.0f" y="%d" fill="#f0ad4e">■ WAIT after each write</text></svg>`, left, 30*len(ps)+16, left+90, 30*len(ps)+16)
	return b.String()
}

var rpoPage = template.Must(template.New("rpo").Funcs(template.FuncMap{
	"ms": func(v float64) string { return fmt.Sprintf("%.0f", v) },
}).Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>{{.Title}} {{.R.Started}}</title>
<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}
td:nth-child(-n+5),th{text-align:left}.bad{background:#f8c9c4}</style></head><body>
<h1>{{.Title}}</h1>{{if .R.Model}}<p class="model">{{.R.Model}}</p>{{end}}<p>{{.R.Started}}, {{.R.Seeds}} seed(s) per cell; runs: <a href="summary.html">summary</a>.</p>
{{if .R.Builds}}<p>Tested builds:</p><ul id="builds">{{range .R.Builds}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .R.Shape}}<p>Clusters:</p><ul id="shape">{{range .R.Shape}}<li>{{.}}</li>{{end}}</ul>{{end}}
<table><tr><th>target</th><th>scenario</th><th>wait</th><th>node-timeout</th><th>settings</th><th>runs</th><th>acked</th><th>lost</th><th>lost per seed</th><th>lost %</th><th>RPO p50 ms</th><th>RPO max ms</th><th>loss window ms</th><th>RTO p50 ms</th><th>RTO max ms</th><th>lost, WAIT satisfied</th><th>ops/s</th></tr>
{{range .R.Entries}}<tr><td>{{.Label}}</td><td>{{.Scenario}}</td><td>{{.Wait}}</td><td>{{.NodeTimeoutMs}} ms</td><td>{{range .Settings}}{{.}}; {{else}}defaults{{end}}</td>
<td>{{.Runs}}</td><td>{{.Acked}}</td><td>{{.Lost}}</td><td class="seeds">{{.LostPerSeed}}</td><td>{{.LostPct}}</td><td>{{ms .RPOMs.P50}}</td><td>{{ms .RPOMs.Max}}</td>
<td>{{with .LossWindowMs}}{{ms .From}} to {{ms .To}}{{else}}none lost{{end}}</td><td>{{with .RTOMs}}{{ms .P50}}{{end}}</td><td>{{with .RTOMs}}{{ms .Max}}{{end}}</td>
<td{{if .LostWaitSatisfied}} class="bad"{{end}}>{{.LostWaitSatisfied}}</td><td>{{.ThroughputOpsS}}</td></tr>
{{end}}</table>
<h2>In words</h2>{{range .Paragraphs}}<p>{{.}}</p>{{end}}
{{if .R.Compared}}<h2>Reference server against Redis</h2>{{if not .R.Fidelity}}<p>In the {{.R.Compared}} cell(s) run on both, the reference's lost share and end of the loss window are within 2x of Redis's, its RTO within 1.5x, and both match within noise.</p>{{end}}<ul>{{range .R.Fidelity}}<li>{{.}}</li>{{end}}</ul>{{end}}
<h2>Plots</h2>{{range .Plots}}<h3>{{.Title}}</h3>{{.SVG}}{{end}}
<h2>How the figures are made</h2><ul>{{range .R.Notes}}<li>{{.}}</li>{{end}}</ul>
</body></html>
`))
