package suite

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/results"
)

// Scenario is one fault of the RPO study, as the nemesis fault:mode that
// causes it and the words the report uses for it.
type Scenario struct {
	Name    string
	Nemesis string
	Words   string // "when ..." clause of the report
}

// Scenarios of the RPO study, in report order.
var Scenarios = []Scenario{
	{"isolate-primary", "partition:isolate-primary", "a primary is cut off from every peer while clients still reach it"},
	{"kill-primary", "kill:primary", "a primary is killed (SIGKILL) and restarted later"},
	{"pause-primary", "pause:primary-long", "a primary is frozen longer than node-timeout and then resumes (the zombie primary)"},
	{"primary-in-minority", "partition:primary-minority", "a primary ends up on the minority side of a partition, without its replicas"},
	// Power loss (issue 41): the nodes' data directories lose what was
	// not fsynced, so the persistence setting decides what comes back.
	{"power-shard", "power:shard", "a primary and its replicas lose power at once (what they had not fsynced is gone) and are powered on later"},
	{"power-all", "power:all", "every node loses power at once (what none had fsynced is gone) and the cluster is powered on later"},
}

// DefaultScenarios are the scenarios a study runs unless told: those
// every runtime can cause (the power ones need the FUSE layer under the
// nodes' data directories).
var DefaultScenarios = []string{"isolate-primary", "kill-primary", "pause-primary", "primary-in-minority"}

// PowerScenarios are the power-loss scenarios.
var PowerScenarios = []string{"power-shard", "power-all"}

// ScenarioNames lists the scenario names.
func ScenarioNames() []string {
	var out []string
	for _, s := range Scenarios {
		out = append(out, s.Name)
	}
	return out
}

// Persistence is a persistence setting a team chooses between, as the
// --server-config lines that make it on every node (redline's clusters
// otherwise run appendonly yes, appendfsync everysec, no save points).
type Persistence struct {
	Name     string
	Settings []string
	Label    string // in tables and settings names
	Words    string // in the report's sentences
}

// Persistences are the settings of the RPO study's --persistence.
var Persistences = []Persistence{
	{"always", []string{"appendonly yes", "appendfsync always"}, "appendfsync always", "appendfsync always (an fsync before every reply)"},
	{"everysec", []string{"appendonly yes", "appendfsync everysec"}, "appendfsync everysec", "appendfsync everysec (a background fsync about once a second)"},
	{"no", []string{"appendonly yes", "appendfsync no"}, "appendfsync no", "appendfsync no (the OS writes the AOF back; the power layer counts a change 30 s old as written back, as the kernel's dirty_expire_centisecs)"},
	{"rdb", []string{"appendonly no", "save 3600 1 300 100 60 10000"}, "RDB only", "RDB snapshots only, at Redis's default save points (3600 1 300 100 60 10000)"},
	{"none", []string{"appendonly no"}, "no persistence", "no persistence (appendonly no, no save points)"},
}

// PersistenceNames lists the persistence settings' names.
func PersistenceNames() []string {
	var out []string
	for _, p := range Persistences {
		out = append(out, p.Name)
	}
	return out
}

// PersistenceByName is the setting called name.
func PersistenceByName(name string) (Persistence, bool) {
	for _, p := range Persistences {
		if p.Name == name {
			return p, true
		}
	}
	return Persistence{}, false
}

// persistenceOf is the persistence setting settings start with.
func persistenceOf(settings []string) (Persistence, []string, bool) {
	for _, p := range Persistences {
		if len(settings) >= len(p.Settings) && slices.Equal(settings[:len(p.Settings)], p.Settings) {
			return p, settings[len(p.Settings):], true
		}
	}
	return Persistence{}, settings, false
}

func scenarioOf(nemesis string) (Scenario, bool) {
	for _, s := range Scenarios {
		if s.Nemesis == nemesis {
			return s, true
		}
	}
	return Scenario{}, false
}

// Study is an RPO study: every target x scenario x wait x node-timeout x
// settings, each repeated Seeds times with seeds 1..Seeds.
type Study struct {
	Targets      []string
	Scenarios    []string
	Waits        []int
	NodeTimeouts []time.Duration
	Seeds        int
	// Settings are alternative --server-config sets; an empty set is the
	// server's defaults (e.g. {{}, {"min-replicas-to-write 1", "min-replicas-max-lag 10"}}).
	Settings [][]string
	// Base are flags every run gets (concurrency, server-binary ...).
	Base Params
	// Clients are the client libraries to compare (--client values);
	// empty: redline's own client only.
	Clients []string
}

// Timing of one run: a single fault that starts half an interval in and is
// held half to three quarters of an interval (the nemesis schedule), then
// traffic goes on until 1.45 intervals so the cluster recovers and no
// second fault starts. The interval scales with node-timeout so that a
// fault always outlasts failure detection and promotion (~2.2x node-timeout).
func studyInterval(nodeTimeout time.Duration) time.Duration {
	return max(10*time.Second, 5*nodeTimeout)
}

// Suite expands the study into a suite whose runs use the set workload:
// every write adds a unique element, so each lost acknowledged write is
// known with its ack time and the RPO is exact.
func (st Study) Suite(name string) (*Suite, error) {
	if st.Seeds < 1 {
		return nil, fmt.Errorf("--seeds must be at least 1")
	}
	if len(st.Settings) == 0 {
		st.Settings = [][]string{nil}
	}
	s := &Suite{Name: name, Study: true}
	clients := st.Clients
	if len(clients) == 0 {
		clients = []string{""}
	}
	for _, client := range clients {
		for _, target := range st.Targets {
			for _, scName := range st.Scenarios {
				sc, ok := scenarioByName(scName)
				if !ok {
					return nil, fmt.Errorf("unknown scenario %q: choose from %s", scName, strings.Join(ScenarioNames(), ", "))
				}
				for _, nt := range st.NodeTimeouts {
					for _, settings := range st.Settings {
						for _, wait := range st.Waits {
							for seed := 1; seed <= st.Seeds; seed++ {
								iv := studyInterval(nt)
								ps := slices.Clone(st.Base)
								ps = ps.with("target", []string{target})
								ps = ps.with("workload", []string{"set"})
								ps = ps.with("nemesis", []string{sc.Nemesis})
								ps = ps.with("nemesis-interval", []string{iv.String()})
								ps = ps.with("time-limit", []string{time.Duration(1.45 * float64(iv)).Truncate(time.Second).String()})
								ps = ps.with("node-timeout", []string{nt.String()})
								ps = ps.with("wait", []string{strconv.Itoa(wait)})
								ps = ps.with("seed", []string{strconv.Itoa(seed)})
								if len(settings) > 0 {
									ps = ps.with("server-config", settings)
								}
								if target != "redis" {
									ps = without(ps, "server-binary", "image")
								}
								name := fmt.Sprintf("%s %s wait=%d node-timeout=%s %s seed=%d",
									target, sc.Name, wait, nt, settingsName(settings), seed)
								if client != "" {
									ps = ps.with("client", []string{client})
									name += " client=" + client
								}
								s.Runs = append(s.Runs, Run{Name: name, Params: ps})
							}
						}
					}
				}
			}
		}
	}
	return s, nil
}

func scenarioByName(name string) (Scenario, bool) {
	for _, s := range Scenarios {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

func without(ps Params, keys ...string) Params {
	return slices.DeleteFunc(ps, func(p Param) bool { return slices.Contains(keys, p.Key) })
}

// settingsName names a settings set: a persistence setting by its label,
// the rest as given.
func settingsName(s []string) string {
	if len(s) == 0 {
		return "defaults"
	}
	if p, rest, ok := persistenceOf(s); ok {
		return strings.Join(append([]string{p.Label}, rest...), "; ")
	}
	return strings.Join(s, "; ")
}

// Quant is a p50 and a max.
type Quant struct {
	P50 float64 `json:"p50"`
	Max float64 `json:"max"`
}

// Span is a time span relative to the fault's start.
type Span struct {
	From float64 `json:"from"`
	To   float64 `json:"to"`
}

// RunFigures are one run's RPO figures.
type RunFigures struct {
	Dir               string   `json:"dir"`
	Seed              string   `json:"seed"`
	Acked             int64    `json:"acked"`
	Lost              int64    `json:"lost"`
	RPOMs             float64  `json:"rpo_ms"`
	LossWindowMs      *Span    `json:"loss_window_ms,omitempty"` // nil: nothing lost
	RTOMs             *Quant   `json:"rto_ms,omitempty"`
	LostWaitSatisfied int64    `json:"lost_wait_satisfied"`
	LostWaitUnsat     int64    `json:"lost_wait_unsatisfied"`
	ThroughputOpsS    float64  `json:"throughput_ops_s"`
	Missing           []string `json:"missing,omitempty"` // figures results.json did not have
}

// Entry is one scenario cell of rpo.json: a target, scenario, wait,
// node-timeout and settings over all its seeds.
type Entry struct {
	// Client is the client library under test ("": redline's own).
	Client            string       `json:"client,omitempty"`
	Target            string       `json:"target"`
	Scenario          string       `json:"scenario"`
	Wait              int          `json:"wait"`
	NodeTimeoutMs     int64        `json:"node_timeout_ms"`
	Settings          []string     `json:"settings"`
	Runs              int          `json:"runs"`
	Acked             int64        `json:"acked"`
	Lost              int64        `json:"lost"`
	LostPct           float64      `json:"lost_pct"`
	RPOMs             Quant        `json:"rpo_ms"`
	LossWindowMs      *Span        `json:"loss_window_ms"` // of the worst run (latest loss); null if nothing was lost
	RTOMs             *Quant       `json:"rto_ms"`         // over shards' keys and runs
	LostWaitSatisfied int64        `json:"lost_wait_satisfied"`
	LostWaitUnsat     int64        `json:"lost_wait_unsatisfied"`
	ThroughputOpsS    float64      `json:"throughput_ops_s"`
	Failed            []string     `json:"failed_runs,omitempty"` // runs without a verdict, left out
	PerRun            []RunFigures `json:"per_run"`
}

// Label is the entry's target, with the client library when one was
// under test.
func (e Entry) Label() string {
	if e.Client == "" {
		return e.Target
	}
	return e.Target + " / " + e.Client
}

// Aggregate groups a study's runs into entries, reading each run's figures
// through the results.json contract (checkers set, rpo, rto, perf); a run
// whose figures are missing is listed, never counted as lossless.
func Aggregate(sum *Summary) []Entry {
	type cellKey struct {
		client           string
		target, scenario string
		wait             int
		nt               int64
		settings         string
	}
	byKey := map[cellKey]*Entry{}
	var order []cellKey
	for _, r := range sum.Runs {
		sc, ok := scenarioOf(r.Params.Get("nemesis"))
		if !ok {
			continue
		}
		wait, _ := strconv.Atoi(r.Params.Get("wait"))
		nt, _ := time.ParseDuration(r.Params.Get("node-timeout"))
		var settings []string
		for _, p := range r.Params {
			if p.Key == "server-config" {
				settings = p.Values
			}
		}
		k := cellKey{r.Params.Get("client"), r.Params.Get("target"), sc.Name, wait, nt.Milliseconds(), strings.Join(settings, ";")}
		e := byKey[k]
		if e == nil {
			e = &Entry{Client: k.client, Target: k.target, Scenario: k.scenario, Wait: wait, NodeTimeoutMs: k.nt, Settings: nonNilStrings(settings)}
			byKey[k] = e
			order = append(order, k)
		}
		if r.Verdict != Valid && r.Verdict != Invalid && r.Verdict != Unknown || r.Checkers == nil {
			e.Failed = append(e.Failed, fmt.Sprintf("%s: %s %s", r.Name, r.Verdict, r.Error))
			continue
		}
		// The summary keeps key figures only: read the run's own
		// results.json for the per-window ones.
		checkers := map[string]checker.Result{}
		for n, c := range r.Checkers {
			checkers[n] = c.Result(n)
		}
		if full, err := results.ReadSummary(r.Dir); err == nil {
			checkers = full.Checkers
		}
		e.PerRun = append(e.PerRun, runFigures(r, checkers))
	}
	var out []Entry
	for _, k := range order {
		e := byKey[k]
		e.finish()
		out = append(out, *e)
	}
	return out
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// finish sums and summarises the runs of an entry.
func (e *Entry) finish() {
	e.Runs = len(e.PerRun)
	var rpos, rtoP50 []float64
	var tput float64
	for _, f := range e.PerRun {
		e.Acked += f.Acked
		e.Lost += f.Lost
		e.LostWaitSatisfied += f.LostWaitSatisfied
		e.LostWaitUnsat += f.LostWaitUnsat
		rpos = append(rpos, f.RPOMs)
		tput += f.ThroughputOpsS
		if f.LossWindowMs != nil && (e.LossWindowMs == nil || f.LossWindowMs.To > e.LossWindowMs.To) {
			w := *f.LossWindowMs
			e.LossWindowMs = &w
		}
		if f.RTOMs != nil {
			rtoP50 = append(rtoP50, f.RTOMs.P50)
			if e.RTOMs == nil {
				e.RTOMs = &Quant{}
			}
			e.RTOMs.Max = max(e.RTOMs.Max, f.RTOMs.Max)
		}
	}
	if e.Acked > 0 {
		e.LostPct = round(100*float64(e.Lost)/float64(e.Acked), 4)
	}
	e.RPOMs = Quant{P50: round(median(rpos), 1), Max: round(maxOf(rpos), 1)}
	if e.RTOMs != nil {
		e.RTOMs.P50 = round(median(rtoP50), 1)
	}
	if e.Runs > 0 {
		e.ThroughputOpsS = round(tput/float64(e.Runs), 1)
	}
	if e.PerRun == nil {
		e.PerRun = []RunFigures{}
	}
}

// runFigures reads one run's RPO figures from its checkers' results.
func runFigures(r Result, checkers map[string]checker.Result) RunFigures {
	f := RunFigures{Dir: r.Dir, Seed: r.Params.Get("seed")}
	need := func(name string) (checker.Result, bool) {
		for n, c := range checkers {
			if n == name || strings.HasSuffix(n, "/"+name) {
				return c, true
			}
		}
		f.Missing = append(f.Missing, name)
		return checker.Result{}, false
	}
	if res, ok := need("set"); ok {
		if set, ok := checker.FiguresAs[*checker.SetFigures](res); ok {
			f.Acked = int64(set.AddsOK)
			f.Lost = int64(set.Lost)
		}
	}
	if res, ok := need("rpo"); ok {
		if rpo, ok := checker.FiguresAs[*checker.RPOFigures](res); ok {
			f.RPOMs = orZero(rpo.RPOMs)
			for _, w := range rpo.PerWindow {
				f.LostWaitSatisfied += w.WaitSatisfied
				f.LostWaitUnsat += w.WaitUnsatisfied
				if w.Lost > 0 {
					from := 1000 * (orZero(w.AckedFromS) - w.StartS)
					to := 1000 * (orZero(w.AckedToS) - w.StartS)
					if f.LossWindowMs == nil {
						f.LossWindowMs = &Span{From: round(from, 0), To: round(to, 0)}
					} else {
						f.LossWindowMs.From = min(f.LossWindowMs.From, round(from, 0))
						f.LossWindowMs.To = max(f.LossWindowMs.To, round(to, 0))
					}
				}
			}
			f.LostWaitSatisfied += rpo.Outside.WaitSatisfied
			f.LostWaitUnsat += rpo.Outside.WaitUnsatisfied
		}
	}
	if res, ok := need("rto"); ok {
		if rto, ok := checker.FiguresAs[*checker.RTOFigures](res); ok {
			for _, w := range rto.PerWindow {
				if q := w.RTOMs; q.Count > 0 {
					f.RTOMs = &Quant{P50: orZero(q.P50), Max: orZero(q.Max)}
					break
				}
			}
		}
	}
	if res, ok := need("perf"); ok {
		if perf, ok := checker.FiguresAs[*checker.PerfFigures](res); ok {
			var okOps float64
			for _, op := range perf.ByF {
				okOps += float64(op.OK)
			}
			if perf.RunS > 0 {
				f.ThroughputOpsS = round(okOps/perf.RunS, 1)
			}
		}
	}
	return f
}

// orZero is an optional figure's value, 0 when absent.
func orZero(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}
