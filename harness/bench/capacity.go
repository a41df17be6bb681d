package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A capacity search (`bench --slo 'p99<=2ms'`) answers "how many ops/s
// does this cluster sustain at our latency target": it steps the open-loop
// rate up (a coarse doubling ramp) until a step misses the objectives, then
// bisects between the last rate that met them and the first that did not.
// Each step is a load test of its own at one rate; its first seconds (the
// warm-up: connections, queues, the servers' caches) are driven but not
// measured. The search itself is pure: the measuring is a function handed
// in, so the tests drive it with a fake cluster whose knee is known.

// Objective is one service-level objective: a latency quantile (corrected,
// from the intended send time), the mean or the max at most Limit ms, or
// the share of failed ops at most Limit percent.
type Objective struct {
	// Metric is "p99", "p99.9", "p50", ..., "mean", "max" or "errors".
	Metric string `json:"metric"`
	// Quantile is the percentile of a pNN metric (99, 99.9), 0 otherwise.
	Quantile float64 `json:"quantile,omitempty"`
	// Limit is in ms for latency, in percent of ops for errors.
	Limit float64 `json:"limit"`
	// Text is the objective as the user wrote it.
	Text string `json:"text"`
}

// SLO is every objective a rate must meet.
type SLO struct {
	Objectives []Objective `json:"objectives"`
	Text       string      `json:"text"` // as given on the command line
}

// ParseSLO reads comma-joined objectives: 'p99<=2ms', 'p99.9<=10ms',
// 'mean<=1ms', 'max<=50ms', 'errors<=0.1%'. Latency units: us, ms, s.
func ParseSLO(s string) (SLO, error) {
	out := SLO{Text: strings.TrimSpace(s)}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, val, ok := strings.Cut(part, "<=")
		if !ok {
			if strings.ContainsAny(part, "<>=") {
				return SLO{}, fmt.Errorf("objective %q: only upper bounds are objectives, written with <= (p99<=2ms)", part)
			}
			return SLO{}, fmt.Errorf("objective %q: expected METRIC<=LIMIT, e.g. p99<=2ms, p99.9<=10ms, errors<=0.1%%", part)
		}
		o := Objective{Metric: strings.ToLower(strings.TrimSpace(name)), Text: part}
		val = strings.TrimSpace(val)
		switch {
		case o.Metric == "errors":
			num, isPct := strings.CutSuffix(val, "%")
			if !isPct {
				return SLO{}, fmt.Errorf("objective %q: the error limit is a percentage of ops (errors<=0.1%%)", part)
			}
			f, err := strconv.ParseFloat(num, 64)
			if err != nil || f < 0 || f > 100 {
				return SLO{}, fmt.Errorf("objective %q: %q is not a percentage between 0 and 100", part, val)
			}
			o.Limit = f
		case o.Metric == "mean" || o.Metric == "max" || strings.HasPrefix(o.Metric, "p"):
			if o.Metric != "mean" && o.Metric != "max" {
				q, err := strconv.ParseFloat(o.Metric[1:], 64)
				if err != nil || q <= 0 || q >= 100 {
					return SLO{}, fmt.Errorf("objective %q: %q is not a percentile (p50, p99, p99.9, p99.99)", part, o.Metric)
				}
				o.Quantile = q
			}
			ms, err := parseMs(val)
			if err != nil {
				return SLO{}, fmt.Errorf("objective %q: %v", part, err)
			}
			o.Limit = ms
		default:
			return SLO{}, fmt.Errorf("objective %q: unknown metric %q: choose pNN (p99, p99.9), mean, max or errors", part, name)
		}
		out.Objectives = append(out.Objectives, o)
	}
	if len(out.Objectives) == 0 {
		return SLO{}, errors.New("no objective given: e.g. --slo 'p99<=2ms' or --slo 'p99<=2ms,p99.9<=10ms,errors<=0.1%'")
	}
	return out, nil
}

func parseMs(v string) (float64, error) {
	for _, u := range []struct {
		suffix string
		ms     float64
	}{{"us", 1e-3}, {"µs", 1e-3}, {"ms", 1}, {"s", 1000}} {
		if num, ok := strings.CutSuffix(v, u.suffix); ok {
			f, err := strconv.ParseFloat(num, 64)
			if err != nil || f <= 0 {
				return 0, fmt.Errorf("%q is not a positive duration", v)
			}
			return f * u.ms, nil
		}
	}
	return 0, fmt.Errorf("%q has no unit: write 2ms, 500us or 1s", v)
}

// Step is one rate of a search, as measured after its warm-up.
type Step struct {
	Rate     float64 `json:"rate"`      // scheduled ops/s
	OKPerS   float64 `json:"ok_per_s"`  // delivered
	ErrorPct float64 `json:"error_pct"` // failed ops, % of ops sent
	// UnsentPct is the share of scheduled ops never sent (the generator or
	// a node was behind when the step ended, or a full queue refused them).
	UnsentPct float64 `json:"unsent_pct"`
	// Latency is the corrected latency in ms, by metric name: p50, p90,
	// p99, p99.9, mean, max and every quantile an objective names.
	Latency map[string]float64 `json:"latency_ms"`
	Shards  []ShardStep        `json:"shards,omitempty"`
	// The generator: its CPU (cores, the busiest second), the machine's
	// cores, and the longest the schedule itself ran late (the dispatcher
	// could not run on time: its own CPU or the host's scheduling).
	GeneratorCores   float64  `json:"generator_cores"`
	Cores            int      `json:"cores"`
	DispatchLagMaxMs float64  `json:"dispatch_lag_max_ms"`
	MeasuredS        float64  `json:"measured_s"`
	WarmupS          float64  `json:"warmup_s"`
	Met              bool     `json:"met"`
	Missed           []string `json:"missed,omitempty"` // the objectives (and conditions) not met, in words
	// Stable: the measured seconds' two halves agree (ok/s within 10%,
	// p99 within a factor of 2 or both within the objective).
	Stable bool `json:"stable"`
	// Confirms: this step re-measured a rate the search had settled on.
	Confirms bool `json:"confirms,omitempty"`
	// Remeasures: this step measured again a rate whose step had just
	// missed; the rate's verdict is this step's.
	Remeasures bool `json:"remeasures,omitempty"`
	// SettleS is how long the step waited, before it began, for the
	// cluster to work off the step before it (replicas catching up), and
	// Settle says what it waited for ("" when nothing was left over).
	SettleS float64 `json:"settle_s,omitempty"`
	Settle  string  `json:"settle,omitempty"`
}

// Role says, for the step tables and the progress lines, why a rate was
// measured more than once: " (confirmation)", " (measured again after a
// miss)", or "" for a rate's first step.
func (s Step) Role() string {
	switch {
	case s.Confirms:
		return " (confirmation)"
	case s.Remeasures:
		return " (measured again after a miss)"
	}
	return ""
}

// Remarks is Role and, when the step had to wait for the cluster to
// settle first, what it waited for: the step tables' and progress lines'
// remark after the verdict.
func (s Step) Remarks() string {
	if s.Settle == "" {
		return s.Role()
	}
	return s.Role() + " (before it: " + s.Settle + ")"
}

// ShardStep is one shard's share of a step.
type ShardStep struct {
	Shard    string  `json:"shard"`
	OKPerS   float64 `json:"ok_per_s"`
	P50Ms    float64 `json:"p50_ms"`
	P99Ms    float64 `json:"p99_ms"`
	P999Ms   float64 `json:"p99_9_ms"`
	LagMaxMs float64 `json:"lag_max_ms"` // longest an op waited in the node's queue
}

// Capacity is a search's answer.
type Capacity struct {
	SLO SLO `json:"slo"`
	// Rate is the highest rate that met every objective (0: none did).
	Rate float64 `json:"rate"`
	// Bound is the lowest rate that missed (0: none missed up to MaxRate);
	// the capacity lies in [Rate, Bound).
	Bound float64 `json:"bound"`
	// Limit says in words what stopped the rate at Bound.
	Limit string `json:"limit"`
	// LimitKind is "shard", "host", "generator", "errors", "cluster" or
	// "none" (the search reached MaxRate).
	LimitKind string `json:"limit_kind"`
	Steps     []Step `json:"steps"` // in the order measured: the curve
	// Best is the step at Rate (nil when none met the objectives).
	Best *Step `json:"best,omitempty"`
	// Confirmed: Rate met the objectives twice (SearchOptions.Confirm).
	Confirmed bool `json:"confirmed"`
	// MetAbove is the highest rate above Rate that met the objectives in
	// some step and missed them in another (0: none): steps at one rate
	// disagreed, so repeat searches on this host can answer anywhere from
	// Rate to MetAbove. Noise says so in words ("" when MetAbove is 0).
	MetAbove float64 `json:"met_above,omitempty"`
	Noise    string  `json:"noise,omitempty"`
}

// SearchOptions configure a capacity search.
type SearchOptions struct {
	SLO   SLO
	Start float64 // first rate (ops/s)
	// MaxRate ends the ramp (the capacity is then "at least MaxRate").
	MaxRate float64
	// MinRate ends a search whose first step already missed.
	MinRate float64
	// Precision: bisection stops when the bracket is within this fraction
	// of the passing rate (0.05: 5%).
	Precision float64
	MaxSteps  int
	// Measure runs one step at rate; the search judges it.
	Measure func(ctx context.Context, rate float64) (Step, error)
	// Confirm re-measures the answer (and falls back while it misses).
	Confirm bool
	// Progress, if set, learns every judged step.
	Progress func(Step)
}

// Search finds the highest rate that meets the SLO.
func Search(ctx context.Context, o SearchOptions) (*Capacity, error) {
	if o.Measure == nil || len(o.SLO.Objectives) == 0 {
		return nil, errors.New("capacity search: no objectives or no measure")
	}
	if o.Start <= 0 {
		o.Start = 1000
	}
	if o.MaxRate <= 0 {
		o.MaxRate = 10_000_000
	}
	if o.MinRate <= 0 {
		o.MinRate = min(100, o.Start)
	}
	if o.Precision <= 0 {
		o.Precision = 0.05
	}
	if o.MaxSteps <= 0 {
		o.MaxSteps = 24
	}
	c := &Capacity{SLO: o.SLO}
	var pass, fail *Step
	// verdict is each rate's last word: a re-measure overrides the miss
	// before it, a confirmation the step it confirms.
	verdict := map[float64]bool{}
	judged := 0 // rates judged, re-measures not counted
	measure := func(rate float64, how func(*Step)) (*Step, error) {
		s, err := o.Measure(ctx, rate)
		if err != nil {
			return nil, err
		}
		s.Rate = rate
		how(&s)
		Judge(&s, o.SLO)
		c.Steps = append(c.Steps, s)
		verdict[rate] = s.Met
		if o.Progress != nil {
			o.Progress(s)
		}
		return &c.Steps[len(c.Steps)-1], nil
	}
	// A step that misses is measured once more before it bounds the
	// search: on a shared host one stall (another process's burst, the
	// kernel's own work) can push a 10 s step's p99 past the objective
	// far below the knee, and a doubling ramp or a bisection that took
	// that miss at its word would answer up to half the capacity away.
	// A rate past the knee misses twice, at the cost of one step.
	step := func(rate float64) (*Step, error) {
		judged++
		s, err := measure(rate, func(*Step) {})
		if err != nil || s.Met {
			return s, err
		}
		return measure(rate, func(s *Step) { s.Remeasures = true })
	}
	// The ramp: double until a step misses (or halve until one meets).
	rate := min(o.Start, o.MaxRate)
	for judged < o.MaxSteps {
		s, err := step(rate)
		if err != nil {
			return c, err
		}
		if s.Met {
			pass = s
			if fail != nil || rate >= o.MaxRate {
				break
			}
			rate = min(rate*2, o.MaxRate)
		} else {
			fail = s
			if pass != nil || rate/2 < o.MinRate {
				break
			}
			rate /= 2
		}
	}
	// Bisection between the last pass and the first miss, then the
	// confirmation: the answer is measured once more, so that on a noisy
	// host a lucky step near the knee does not stand alone. A rate that
	// misses the second time becomes the bracket's top and the bisection
	// goes on from the highest rate below it that met (not straight down
	// to it: with a doubling ramp that is up to half the answer away, and
	// repeat searches would differ by that much); its answer is confirmed
	// in turn. Confirmations may take the budget up to MaxSteps+6.
	bisect := func(limit int) error {
		for pass != nil && fail != nil && judged < limit && fail.Rate-pass.Rate > o.Precision*pass.Rate {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			mid := roundRate((pass.Rate + fail.Rate) / 2)
			if mid <= pass.Rate || mid >= fail.Rate {
				break
			}
			s, err := step(mid)
			if err != nil {
				return err
			}
			if s.Met {
				pass = s
			} else {
				fail = s
			}
		}
		return nil
	}
	if err := bisect(o.MaxSteps); err != nil {
		return c, err
	}
	unconfirmed := map[float64]bool{}
	for o.Confirm && pass != nil && judged < o.MaxSteps+6 && ctx.Err() == nil {
		// A confirmation is already the rate's second measurement: a
		// miss is not measured a third time.
		judged++
		s, err := measure(pass.Rate, func(s *Step) { s.Confirms = true })
		if err != nil {
			return c, err
		}
		if s.Met {
			c.Confirmed = true
			break
		}
		unconfirmed[pass.Rate] = true
		fail = s
		var lower *Step
		for i := range c.Steps {
			st := &c.Steps[i]
			if st.Met && verdict[st.Rate] && st.Rate < fail.Rate && !unconfirmed[st.Rate] && (lower == nil || st.Rate > lower.Rate) {
				lower = st
			}
		}
		pass = lower
		if err := bisect(o.MaxSteps + 5); err != nil {
			return c, err
		}
	}
	// The bound is the lowest rate above the answer whose last word was
	// a miss (a rate that missed once and met when measured again is no
	// bound); its last missing step says what limited it.
	if pass != nil {
		c.Rate = pass.Rate
		b := *pass
		c.Best = &b
	}
	fail = nil
	for i := range c.Steps {
		st := &c.Steps[i]
		if !st.Met && !verdict[st.Rate] && st.Rate > c.Rate && (fail == nil || st.Rate <= fail.Rate) {
			fail = st
		}
	}
	c.noise()
	if fail != nil {
		c.Bound = fail.Rate
		c.LimitKind, c.Limit = limitOf(fail, pass, o.SLO)
	} else {
		c.LimitKind = "none"
		c.Limit = fmt.Sprintf("every rate up to the search's ceiling of %s ops/s met the objectives: the capacity is at least that", Count(o.MaxRate))
	}
	return c, nil
}

// noise sets MetAbove and Noise: the highest rate above the answer that
// met the objectives in one step and missed in another. The answer is the
// search's honest best, but a rate that went both ways says how far a
// repeat search may land from it (on 2 shared cores, three searches of
// one cluster answered 20,000, 20,000 and 25,000 ops/s, with 24,000 and
// 21,000 met once in the first two).
func (c *Capacity) noise() {
	met, missed := map[float64]bool{}, map[float64]bool{}
	for _, st := range c.Steps {
		if st.Met {
			met[st.Rate] = true
		} else {
			missed[st.Rate] = true
		}
	}
	for r := range met {
		if r > c.Rate && missed[r] && r > c.MetAbove {
			c.MetAbove = r
		}
	}
	if c.MetAbove > 0 && c.Rate > 0 {
		c.Noise = fmt.Sprintf("%s ops/s met the objectives in one step and missed them in another: steps at one rate disagree here, so a repeat search may answer anywhere from %s to %s ops/s (longer steps, --slo-step, narrow it)",
			Count(c.MetAbove), Count(c.Rate), Count(c.MetAbove))
	}
}

// roundRate keeps two significant digits past the leading one (a rate
// of 12345 becomes 12300): rates that read well and repeat across runs.
func roundRate(r float64) float64 {
	if r <= 0 {
		return r
	}
	e := math.Pow(10, math.Floor(math.Log10(r))-2)
	return math.Round(r/e) * e
}

// Judge decides whether a step met the SLO and says what it missed. Beside
// the objectives, a step must have delivered the rate: an open loop that
// sent less than 95% of its schedule (or left more than 1% unsent) did not
// run at the rate it names.
func Judge(s *Step, slo SLO) {
	s.Missed = nil
	for _, o := range slo.Objectives {
		v, ok := s.value(o)
		switch {
		case !ok:
			s.Missed = append(s.Missed, fmt.Sprintf("%s: not measured (no ok op)", o.Text))
		case v > o.Limit:
			s.Missed = append(s.Missed, fmt.Sprintf("%s: was %s", o.Text, o.format(v)))
		}
	}
	if delivered := s.OKPerS * (1 + s.ErrorPct/100); delivered < 0.95*s.Rate {
		s.Missed = append(s.Missed, fmt.Sprintf("delivered %s of %s ops/s", Count(delivered), Count(s.Rate)))
	}
	// Ops still queued or in flight when a step ends are unsent too: up
	// to a tenth of a second of the schedule is that, not a shortfall.
	if s.UnsentPct > 1 && s.UnsentPct/100*s.MeasuredS > 0.1 {
		s.Missed = append(s.Missed, fmt.Sprintf("%s%% of the scheduled ops were never sent", Num(s.UnsentPct)))
	}
	s.Met = len(s.Missed) == 0
}

// value is the step's figure for an objective.
func (s *Step) value(o Objective) (float64, bool) {
	if o.Metric == "errors" {
		return s.ErrorPct, true
	}
	v, ok := s.Latency[o.Metric]
	return v, ok
}

func (o Objective) format(v float64) string {
	if o.Metric == "errors" {
		return Num(v) + "%"
	}
	return Num(v) + " ms"
}

// limitOf names what stopped the rate at fail, from what the step saw:
// errors; one or some shards slow while the others met the objective (a
// shard's limit); every shard slow at once while the schedule itself ran
// late (host contention: the generator and the servers share the cores)
// or while the generator used its cores (the generator's own limit); or
// every shard slow with the generator on time (the cluster as a whole).
func limitOf(fail, pass *Step, slo SLO) (kind, why string) {
	for _, o := range slo.Objectives {
		if o.Metric == "errors" && fail.ErrorPct > o.Limit {
			return "errors", fmt.Sprintf("errors: %s%% of ops failed at %s ops/s (objective %s)", Num(fail.ErrorPct), Count(fail.Rate), o.Text)
		}
	}
	// The latency objective the step missed worst, judged per shard.
	var lat *Objective
	worst := 0.0
	for i, o := range slo.Objectives {
		if o.Metric == "errors" {
			continue
		}
		if v, ok := fail.value(o); ok && v/o.Limit > worst {
			worst, lat = v/o.Limit, &slo.Objectives[i]
		}
	}
	var slow, fine []string
	if lat != nil {
		for _, sh := range fail.Shards {
			v := sh.quantile(lat.Quantile)
			if v > lat.Limit {
				slow = append(slow, fmt.Sprintf("%s %s ms", sh.Shard, Num(v)))
			} else {
				fine = append(fine, sh.Shard)
			}
		}
	}
	genBusy := fail.Cores > 0 && fail.GeneratorCores >= 0.9*float64(fail.Cores)
	// The schedule itself late by half the limit: whichever shards missed,
	// their ops were sent late by the generator's host, not held by them.
	dispatchLate := lat != nil && fail.DispatchLagMaxMs >= lat.Limit/2
	at := fmt.Sprintf("at %s ops/s", Count(fail.Rate))
	which := "every shard"
	if len(fine) > 0 {
		which = "shard" + plural(len(slow)) + " " + strings.Join(slow, ", ")
	}
	switch {
	case genBusy:
		return "generator", fmt.Sprintf("%s: the generator used %s of %d cores and its schedule ran up to %s ms late: its own CPU is the limit, the cluster may sustain more",
			at, Num(fail.GeneratorCores), fail.Cores, Num(fail.DispatchLagMaxMs))
	case dispatchLate:
		return "host", fmt.Sprintf("%s: %s missed %s while the generator's own schedule ran up to %s ms late on %s of %d cores: host contention (the generator and the servers share this machine's cores), not a shard's own limit",
			at, which, lat.Text, Num(fail.DispatchLagMaxMs), Num(fail.GeneratorCores), fail.Cores)
	case len(slow) > 0 && len(fine) > 0:
		return "shard", fmt.Sprintf("%s: %s missed %s while %s met it; the schedule ran on time (late by %s ms at most)",
			at, which, lat.Text, strings.Join(fine, ", "), Num(fail.DispatchLagMaxMs))
	case lat == nil:
		return "cluster", fmt.Sprintf("%s: %s", at, strings.Join(fail.Missed, "; "))
	default:
		return "cluster", fmt.Sprintf("%s: every shard missed %s at once while the generator kept its schedule (late by %s ms at most, %s of %d cores): the cluster as a whole",
			at, lat.Text, Num(fail.DispatchLagMaxMs), Num(fail.GeneratorCores), fail.Cores)
	}
}

func (sh ShardStep) quantile(q float64) float64 {
	switch {
	case q >= 99.9:
		return sh.P999Ms
	case q >= 99:
		return sh.P99Ms
	default:
		return sh.P50Ms
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// StepOf summarises a load test run at one rate as a search step: the
// measured part only (Options.Warmup excluded by the engine).
func StepOf(r *Result, slo SLO) Step {
	s := Step{Rate: r.Rate, OKPerS: r.Throughput, Cores: r.Cores, GeneratorCores: r.CPUMaxCores,
		DispatchLagMaxMs: r.DispatchLagMaxMs, MeasuredS: r.DurationS, WarmupS: r.WarmupS, Latency: map[string]float64{}}
	tot := r.Ops["total"]
	sent := float64(tot.Corrected.Count) + float64(tot.Failed)
	if sent > 0 {
		s.ErrorPct = float64(tot.Failed) / sent * 100
	}
	if sched := r.Rate * r.DurationS; sched > 0 {
		s.UnsentPct = float64(r.Unsent) / sched * 100
	}
	if tot.Corrected.Count > 0 {
		c := tot.Corrected
		s.Latency["p50"], s.Latency["p90"], s.Latency["p99"], s.Latency["p99.9"] = c.P50, c.P90, c.P99, c.P999
		s.Latency["mean"], s.Latency["max"] = c.Mean, c.Max
		for _, o := range slo.Objectives {
			if o.Quantile > 0 {
				s.Latency[o.Metric] = r.Percentile(o.Quantile)
			}
		}
	}
	for _, sh := range r.Shards {
		s.Shards = append(s.Shards, ShardStep{Shard: sh.Shard, OKPerS: float64(sh.OK) / max(r.DurationS, 1e-9),
			P50Ms: sh.Corrected.P50, P99Ms: sh.Corrected.P99, P999Ms: sh.Corrected.P999, LagMaxMs: sh.LagMaxMs})
	}
	s.Stable = r.halvesAgree(slo)
	return s
}

// halvesAgree compares the first and second half of the measured seconds.
func (r *Result) halvesAgree(slo SLO) bool {
	n := len(r.secs)
	if n < 2 {
		return false
	}
	mid := (r.secs[0].At - r.secs[0].Len + r.secs[n-1].At).Seconds() / 2
	start := (r.secs[0].At - r.secs[0].Len).Seconds()
	a, b := r.figures(start, mid), r.figures(mid, r.secs[n-1].At.Seconds()+1)
	if a.Seconds == 0 || b.Seconds == 0 {
		return false
	}
	if math.Abs(a.OKPerS-b.OKPerS) > 0.1*max(a.OKPerS, b.OKPerS) {
		return false
	}
	limit := math.Inf(1)
	for _, o := range slo.Objectives {
		if o.Quantile == 99 {
			limit = o.Limit
		}
	}
	lo, hi := min(a.P99Ms, b.P99Ms), max(a.P99Ms, b.P99Ms)
	return hi <= 2*lo || hi <= limit
}

// Percentile is the corrected latency (ms) at quantile q of every op.
func (r *Result) Percentile(q float64) float64 {
	h := r.Hist("total", "corrected")
	if h == nil || h.TotalCount() == 0 {
		return 0
	}
	return float64(h.ValueAtQuantile(q)) / 1000
}

// CapacityLine is the line printed before `throughput:`.
func (c *Capacity) CapacityLine() string {
	var once []string
	for _, s := range c.Curve() {
		if s.Met && !slices.Contains(once, Count(s.Rate)) {
			once = append(once, Count(s.Rate))
		}
	}
	switch {
	case c.Rate == 0 && len(once) > 0:
		return fmt.Sprintf("capacity: 0 ops/s at %s (no rate met it twice: %s ops/s met it once and missed when measured again; too noisy to answer)", c.SLO.Text, strings.Join(once, ", "))
	case c.Rate == 0:
		return fmt.Sprintf("capacity: 0 ops/s at %s (no rate tried met it; the lowest tried was %s ops/s)", c.SLO.Text, Count(c.lowest()))
	case c.Bound == 0:
		return fmt.Sprintf("capacity: %.0f ops/s at %s (at least: the search's ceiling)", c.Rate, c.SLO.Text)
	}
	return fmt.Sprintf("capacity: %.0f ops/s at %s", c.Rate, c.SLO.Text)
}

func (c *Capacity) lowest() float64 {
	lo := math.Inf(1)
	for _, s := range c.Steps {
		lo = min(lo, s.Rate)
	}
	return lo
}

// Curve is the steps ordered by rate: the latency-throughput curve.
func (c *Capacity) Curve() []Step {
	out := append([]Step(nil), c.Steps...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Rate < out[j].Rate })
	return out
}

// Table is the search's steps ordered by rate (the curve), each with its
// place in the search (#): what the report shows and Print prints.
func (c *Capacity) Table() Table {
	t := Table{Class: "steps",
		Head: []string{"#", "rate ops/s", "delivered", "p50 ms", "p99 ms", "p99.9 ms", "errors", "generator cores", "schedule late ms", "stable", "met", "slowest shard p99 ms"},
		Left: []bool{10: true, 11: true}}
	order := make([]int, len(c.Steps))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return c.Steps[order[i]].Rate < c.Steps[order[j]].Rate })
	for _, i := range order {
		s := c.Steps[i]
		met := "yes"
		if !s.Met {
			met = "no: " + strings.Join(s.Missed, "; ")
		}
		met += s.Remarks()
		slowest := "-"
		if len(s.Shards) > 0 {
			sh := s.Shards[0]
			for _, x := range s.Shards {
				if x.P99Ms > sh.P99Ms {
					sh = x
				}
			}
			slowest = sh.Shard + " " + Num(sh.P99Ms)
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(i + 1), Count(s.Rate), Count(s.OKPerS), Num(s.Latency["p50"]), Num(s.Latency["p99"]), Num(s.Latency["p99.9"]),
			Num(s.ErrorPct) + "%", Num(s.GeneratorCores), Num(s.DispatchLagMaxMs), yesNo(s.Stable), met, slowest})
	}
	return t
}

// Print writes the curve and the answer (not the capacity line itself).
func (c *Capacity) Print(w io.Writer) {
	fmt.Fprintf(w, "\ncapacity search for %s: %d steps\n", c.SLO.Text, len(c.Steps))
	c.Table().Print(w)
	if c.Bound > 0 && c.Rate > 0 {
		fmt.Fprintf(w, "the capacity lies between %s (met) and %s ops/s (missed)\n", Count(c.Rate), Count(c.Bound))
	}
	if c.Rate > 0 {
		if c.Confirmed {
			fmt.Fprintf(w, "confirmed: %s ops/s met the objectives when measured again\n", Count(c.Rate))
		} else {
			fmt.Fprintf(w, "not confirmed: %s ops/s was not measured a second time (the step budget ran out)\n", Count(c.Rate))
		}
	}
	if c.Noise != "" {
		fmt.Fprintf(w, "noise: %s\n", c.Noise)
	}
	fmt.Fprintf(w, "limit: %s\n", c.Limit)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// StepDuration is a step's default measured length and warm-up.
const (
	DefaultStep   = 5 * time.Second
	DefaultWarmup = 2 * time.Second
)
