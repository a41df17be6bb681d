package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/results/plot"
)

// Result is what a load test measured; it is stored as bench.json.
type Result struct {
	DurationS float64 `json:"duration_s"`
	Rate      float64 `json:"rate"` // scheduled ops/s, 0 = closed loop
	Workers   int     `json:"workers"`
	Pipeline  int     `json:"pipeline"`
	// Throughput is ok ops per second over the traffic phase.
	Throughput float64 `json:"throughput"`
	// Unsent counts ops the schedule held that were never sent because the
	// run ended while the generator was behind: they are not in the
	// latency figures, which understate the tail by that much.
	Unsent int64 `json:"unsent,omitempty"`
	// Backlog is the part of Unsent that a node's full queue refused
	// (Options.QueueLimit): the node was stalled for longer than its queue
	// holds. Per shard in Shards.
	Backlog int64                 `json:"backlog,omitempty"`
	Ops     map[string]*OpFigures `json:"ops"` // get, set, total
	Counts  Counts                `json:"counts"`
	// Generator health: how far it fell behind the schedule, how much CPU
	// it used, and what that means in words.
	LateOps     int64    `json:"late_ops"`
	LagMaxMs    float64  `json:"lag_max_ms"`
	CPUMaxCores float64  `json:"cpu_max_cores"`
	Cores       int      `json:"cores"`
	Diagnosis   []string `json:"diagnosis,omitempty"`
	// Availability: the longest time each shard (as at the start) served
	// no op, and every gap of 250 ms or more.
	Shards  []ShardGap `json:"shards,omitempty"`
	Gaps    []Gap      `json:"gaps,omitempty"`
	Seconds []Second   `json:"seconds"`
	Events  []Event    `json:"events,omitempty"`
	Windows []Window   `json:"windows,omitempty"`
	// Load is the load per slot and per shard (capacity planning), with
	// the server's CLUSTER SLOT-STATS beside it where supported.
	Load *LoadReport `json:"load,omitempty"`
	// Capacity is the capacity search this run was the best step of
	// (bench --slo), with every step's figures: the curve.
	Capacity *Capacity `json:"capacity,omitempty"`
	// Thresholds are bench --threshold's bounds with what was measured
	// (threshold.go).
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`
	// Runs are the figures of each run of a --run-count series, whose
	// aggregate this Result is (runs.go); BestRun and WorstRun (1-based)
	// had the highest and lowest throughput.
	Runs     []RunFigures `json:"runs,omitempty"`
	BestRun  int          `json:"best_run,omitempty"`
	WorstRun int          `json:"worst_run,omitempty"`

	// WarmupS is the traffic driven before the measured part (DurationS):
	// connections, queues and caches settling; no figure includes it.
	WarmupS float64 `json:"warmup_s,omitempty"`
	// DispatchLagMaxMs is the longest the open loop's schedule itself ran
	// late (Counts.DispatchLagNs): the generator's own scheduling delay.
	DispatchLagMaxMs float64 `json:"dispatch_lag_max_ms,omitempty"`

	// Generators are a distributed run's generators (bench --generators,
	// merge.go): each one's share, figures and fate; GeneratorsFailed
	// counts those left out of the figures, RequestedRate is the total
	// rate asked of them all (Rate is the merged generators' part).
	Generators       []GeneratorFigures `json:"generators,omitempty"`
	GeneratorsFailed int                `json:"generators_failed,omitempty"`
	RequestedRate    float64            `json:"requested_rate,omitempty"`

	// Histograms are the measured part's latency histograms by op and
	// kind ("get.corrected", ...), HdrHistogram's compressed encoding
	// (histograms.go).
	Histograms map[string][]byte `json:"histograms,omitempty"`

	secs []second // with histograms, for the windows
	// shardHists are each shard's corrected latency (a generator's report
	// carries them to the coordinator).
	shardHists []*hdrhistogram.Histogram
	// elapsed and warmedAt are the traffic's length and the warm-up's end
	// exactly (DurationS and WarmupS are rounded to float seconds).
	elapsed, warmedAt time.Duration
}

// OpFigures summarise one op type (or all) over the run.
type OpFigures struct {
	OKPerS     float64   `json:"ok_per_s"`
	HitsPerS   float64   `json:"hits_per_s,omitempty"`
	MissesPerS float64   `json:"misses_per_s,omitempty"`
	KBPerS     float64   `json:"kb_per_s"`
	Failed     int64     `json:"failed"`
	Corrected  Quantiles `json:"corrected_ms"`
	Raw        Quantiles `json:"raw_ms"`
}

// ShardGap is one shard's longest availability gap.
type ShardGap struct {
	Shard string `json:"shard"` // the primary's node name (its address when unnamed)
	// Addr is the primary's address at the start.
	Addr       string  `json:"addr,omitempty"`
	MaxGapS    float64 `json:"max_gap_s"`
	MaxGapAtS  float64 `json:"max_gap_at_s"`
	GapsListed int     `json:"gaps"`
	// GeneratorBehind: during the gap the generator was itself behind the
	// schedule by at least half the gap, i.e. every worker may have been
	// waiting on another shard; the gap may be the generator's, not this
	// shard's.
	GeneratorBehind bool `json:"generator_behind,omitempty"`
	// The shard's own figures over the run: ok ops, ops its node's full
	// queue refused, the longest an op waited past its intended time
	// before it was sent (in the open loop, a stalled node's ops wait in
	// its queue while the other shards' ops are sent on time), and the
	// corrected latency of its ok ops (2 significant digits).
	OK        int64     `json:"ok"`
	Backlog   int64     `json:"backlog,omitempty"`
	LagMaxMs  float64   `json:"lag_max_ms"`
	Corrected Quantiles `json:"corrected_ms"`
}

// Second is one point of the time series.
type Second struct {
	T           float64 `json:"t"` // end of the interval, s since start
	OKPerS      float64 `json:"ok_per_s"`
	GetPerS     float64 `json:"get_per_s"`
	SetPerS     float64 `json:"set_per_s"`
	FailPerS    float64 `json:"fail_per_s"`
	MovedPerS   float64 `json:"moved_per_s"`
	AskPerS     float64 `json:"ask_per_s"`
	TryAgain    int64   `json:"tryagain,omitempty"`
	ClusterDown int64   `json:"clusterdown,omitempty"`
	Reconnects  int64   `json:"reconnects,omitempty"`
	P50Ms       float64 `json:"p50_ms"`   // corrected, all ops
	P99Ms       float64 `json:"p99_ms"`   // corrected
	P999Ms      float64 `json:"p99_9_ms"` // corrected
	RawP99Ms    float64 `json:"raw_p99_ms"`
	RawP999Ms   float64 `json:"raw_p99_9_ms"`
	LagMaxMs    float64 `json:"lag_max_ms"`
	CPUCores    float64 `json:"cpu_cores"`
	// DispatchLagMaxMs is the schedule's own lateness this second.
	DispatchLagMaxMs float64 `json:"dispatch_lag_max_ms,omitempty"`
	// ShardOKPerS is ok ops/s per shard, in the order of Result.Shards.
	ShardOKPerS []float64 `json:"shard_ok_per_s,omitempty"`
	// ShardLagMaxMs is per shard the longest an op waited past its
	// intended time before it was sent (0: none more than 1 ms late).
	ShardLagMaxMs []float64 `json:"shard_lag_max_ms,omitempty"`
	// ShardBacklog counts per shard the ops its node's full queue refused
	// (only when there were any).
	ShardBacklog []int64 `json:"shard_backlog,omitempty"`
}

// Window summarises a fault: the same length of time before it, while it
// lasted, and after it ended.
type Window struct {
	Fault string `json:"fault"`
	// StartS..EndS is the fault (start invoked .. stop completed).
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
	// TookS is how long the fault's action took (a migration or rebalance
	// from start to done).
	TookS float64 `json:"took_s"`
	// Detail says what the change did, from its record: the node added
	// or removed, slots and keys moved, an error.
	Detail string        `json:"detail,omitempty"`
	Before WindowFigures `json:"before"`
	During WindowFigures `json:"during"`
	After  WindowFigures `json:"after"`
}

// WindowFigures are the figures of one window.
type WindowFigures struct {
	FromS float64 `json:"from_s"`
	ToS   float64 `json:"to_s"`
	// Seconds is how many one-second intervals the figures cover (0: the
	// window was too short or outside the traffic).
	Seconds       int     `json:"seconds"`
	OKPerS        float64 `json:"ok_per_s"`
	ErrorsPerS    float64 `json:"errors_per_s"`
	RedirectsPerS float64 `json:"redirects_per_s"`
	// The replies that sent ops elsewhere or back during the window: the
	// ops that hit the change (counted per reply; an op can hit several).
	Moved       int64   `json:"moved"`
	Ask         int64   `json:"ask"`
	TryAgain    int64   `json:"tryagain"`
	ClusterDown int64   `json:"clusterdown"`
	P50Ms       float64 `json:"p50_ms"`
	P99Ms       float64 `json:"p99_ms"`
	P999Ms      float64 `json:"p99_9_ms"`
	RawP99Ms    float64 `json:"raw_p99_ms"`
}

// result turns the collected series into a Result.
func (e *engine) result(elapsed time.Duration) *Result {
	s := e.series
	s.mu.Lock()
	defer s.mu.Unlock()
	measured := elapsed - s.warmedAt
	r := &Result{DurationS: measured.Seconds(), WarmupS: s.warmedAt.Seconds(), Rate: e.o.Rate, Workers: e.o.Concurrency, Pipeline: e.o.KV.Pipeline,
		Counts: s.total, Cores: runtime.GOMAXPROCS(0), Ops: map[string]*OpFigures{}, secs: s.seconds, shardHists: s.shardH,
		elapsed: elapsed, warmedAt: s.warmedAt,
		DispatchLagMaxMs: float64(s.total.DispatchLagNs) / 1e6}
	secs := measured.Seconds()
	r.encodeHists(s.totalH)
	all := newHists()
	for o := 0; o < numOps; o++ {
		f := &OpFigures{
			OKPerS:    float64(s.total.OK[o]) / secs,
			Failed:    s.total.Errors[o] + s.total.Timeouts[o],
			Corrected: quantiles(s.totalH[o][corrected]),
			Raw:       quantiles(s.totalH[o][raw]),
		}
		if o == opGet {
			f.HitsPerS, f.MissesPerS = float64(s.total.Hits)/secs, float64(s.total.Misses)/secs
		}
		r.Ops[opNames[o]] = f
		all[0][corrected].Merge(s.totalH[o][corrected])
		all[0][raw].Merge(s.totalH[o][raw])
	}
	// KB/sec as memtier's: every byte of request and reply on the wire.
	for o := 0; o < numOps; o++ {
		r.Ops[opNames[o]].KBPerS = float64(s.total.Wire[o]) / 1024 / secs
	}
	r.Ops["total"] = &OpFigures{
		OKPerS: float64(s.total.TotalOK()) / secs, Failed: s.total.Failed(),
		HitsPerS: r.Ops["get"].HitsPerS, MissesPerS: r.Ops["get"].MissesPerS,
		KBPerS:    float64(s.total.Wire[opGet]+s.total.Wire[opSet]) / 1024 / secs,
		Corrected: quantiles(all[0][corrected]), Raw: quantiles(all[0][raw]),
	}
	r.Throughput = r.Ops["total"].OKPerS
	if e.o.Rate > 0 {
		scheduled := int64(math.Ceil(e.o.Rate * (e.o.Duration - s.warmedAt).Seconds()))
		r.Unsent = max(0, scheduled-s.total.TotalOK()-s.total.Failed())
	}
	r.Backlog = s.total.Backlog
	r.LateOps, r.LagMaxMs = s.total.Late, float64(s.total.LagMaxNs)/1e6
	for _, sec := range s.seconds {
		r.Seconds = append(r.Seconds, sec.point())
		r.CPUMaxCores = max(r.CPUMaxCores, sec.CPU)
	}
	if e.gaps != nil {
		for i, n := range e.gaps.names {
			listed := 0
			for _, g := range e.gaps.gaps {
				if g.Shard == n {
					listed++
				}
			}
			sh := ShardGap{Shard: n, MaxGapS: e.gaps.max[i].Seconds(), MaxGapAtS: e.gaps.maxAt[i].Seconds(), GapsListed: listed}
			for _, sec := range s.seconds {
				if i < len(sec.Shard.ok) {
					sh.OK += sec.Shard.ok[i]
					sh.Backlog += sec.Shard.backlog[i]
					sh.LagMaxMs = max(sh.LagMaxMs, float64(sec.Shard.lagNs[i])/1e6)
				}
			}
			if i < len(s.shardH) {
				sh.Corrected = quantiles(s.shardH[i])
			}
			if i < len(e.shardAddrs) && e.shardAddrs[i] != n {
				sh.Addr = e.shardAddrs[i]
			}
			r.Shards = append(r.Shards, sh)
		}
		r.Gaps = e.gaps.gaps
	}
	if r.Rate > 0 {
		for i := range r.Shards {
			sh := &r.Shards[i]
			lag := 0.0
			for _, p := range r.Seconds {
				if p.T > sh.MaxGapAtS && p.T-1 < sh.MaxGapAtS+sh.MaxGapS {
					lag = max(lag, p.lagElsewhere(i)/1000)
				}
			}
			sh.GeneratorBehind = sh.MaxGapS >= gapWorth.Seconds() && lag >= sh.MaxGapS/2
		}
	}
	r.diagnose()
	return r
}

// lagElsewhere is the second's largest lag of ops not to shard i: a gap
// of shard i is the generator's only if ops elsewhere were late too. When
// the second's largest lag was an op of shard i itself, the other shards'
// lags count; otherwise the overall lag (the generator's own, or another
// shard's) does.
func (p *Second) lagElsewhere(i int) float64 {
	if i >= len(p.ShardLagMaxMs) || p.ShardLagMaxMs[i] < p.LagMaxMs {
		return p.LagMaxMs
	}
	l := 0.0
	for j, v := range p.ShardLagMaxMs {
		if j != i {
			l = max(l, v)
		}
	}
	return l
}

func (sec *second) point() Second {
	l := sec.Len.Seconds()
	c := &sec.C
	h := combined(sec)
	p := Second{
		T: sec.At.Seconds(), OKPerS: float64(c.TotalOK()) / l,
		GetPerS: float64(c.OK[opGet]) / l, SetPerS: float64(c.OK[opSet]) / l,
		FailPerS: float64(c.Failed()) / l, MovedPerS: float64(c.Moved) / l, AskPerS: float64(c.Ask) / l,
		TryAgain: c.TryAgain, ClusterDown: c.ClusterDown, Reconnects: c.Reconnects,
		LagMaxMs: float64(c.LagMaxNs) / 1e6, CPUCores: sec.CPU, DispatchLagMaxMs: float64(c.DispatchLagNs) / 1e6,
	}
	for i, n := range sec.Shard.ok {
		p.ShardOKPerS = append(p.ShardOKPerS, float64(n)/l)
		p.ShardLagMaxMs = append(p.ShardLagMaxMs, float64(sec.Shard.lagNs[i])/1e6)
		if sec.Shard.backlog[i] > 0 && p.ShardBacklog == nil {
			p.ShardBacklog = make([]int64, len(sec.Shard.ok))
		}
	}
	if p.ShardBacklog != nil {
		copy(p.ShardBacklog, sec.Shard.backlog)
	}
	q, qr := quantiles(h[corrected]), quantiles(h[raw])
	p.P50Ms, p.P99Ms, p.P999Ms, p.RawP99Ms, p.RawP999Ms = q.P50, q.P99, q.P999, qr.P99, qr.P999
	return p
}

// combined decodes a second's histograms into one per kind (all ops).
func combined(secs ...*second) [numKinds]*hdrhistogram.Histogram {
	out := [numKinds]*hdrhistogram.Histogram{newHist(), newHist()}
	for _, sec := range secs {
		for o := range sec.H {
			for k, enc := range sec.H[o] {
				if len(enc) == 0 {
					continue
				}
				if h, err := hdrhistogram.Decode(enc); err == nil {
					out[k].Merge(h)
				}
			}
		}
	}
	return out
}

// lagWorth: falling this far behind the schedule is worth a word.
const lagWorth = 10 * time.Millisecond

// diagnose says in words whether the generator kept its schedule and,
// if not, whether its own CPU or the cluster was the limit.
func (r *Result) diagnose() {
	if r.Rate <= 0 {
		r.Diagnosis = append(r.Diagnosis, fmt.Sprintf("closed loop: %d workers each send the next op when the previous one completed; latency is raw (no schedule to correct against)", r.Workers))
	} else {
		r.Diagnosis = append(r.Diagnosis, r.stalls()...)
		if r.Unsent > r.Backlog {
			r.Diagnosis = append(r.Diagnosis, fmt.Sprintf("%d scheduled ops were never sent: the run ended while they were still due or queued (the generator or a node was behind); their latency is missing from the figures", r.Unsent-r.Backlog))
		}
		if r.Backlog > 0 {
			var which []string
			for _, s := range r.Shards {
				if s.Backlog > 0 {
					which = append(which, fmt.Sprintf("%s %d", s.Shard, s.Backlog))
				}
			}
			r.Diagnosis = append(r.Diagnosis, fmt.Sprintf("%d scheduled ops were not sent because their node's queue was full (backlog: the node was behind by more than its queue holds)%s; they are counted as unsent and their latency, at least the time the queue took to drain, is missing from the figures", r.Backlog, listed(which)))
		}
		if got := r.Throughput + float64(r.Counts.Failed())/r.DurationS; got < 0.95*r.Rate {
			r.Diagnosis = append(r.Diagnosis, fmt.Sprintf("delivered %s ops/s of the %s scheduled (see the stalls above for why)", Count(got), Count(r.Rate)))
		}
	}
	if r.CPUMaxCores >= 0.9*float64(r.Cores) {
		r.Diagnosis = append(r.Diagnosis, fmt.Sprintf("the generator used up to %.2f of %d cores: its own CPU was (or was close to) the limit, figures may understate the cluster", r.CPUMaxCores, r.Cores))
	}
}

// stalls explains the seconds in which ops were sent late, telling three
// causes apart by where the lateness was:
//   - the schedule itself ran late (the dispatcher woke up late for the
//     oldest due op, whichever node it was for): the generator did not
//     get the CPU: its own (it used its cores) or the host's (it used
//     little, yet was not scheduled: host contention, every shard at once);
//   - only some shards' ops waited in their node's queue while the others
//     were sent on time: those shards were slow;
//   - every shard's ops waited while the schedule ran on time: every
//     node's connections were busy at once (the cluster as a whole, or
//     too few connections for the rate: Little's law says which).
func (r *Result) stalls() []string {
	type class struct {
		secs  int
		worst float64 // ms
		at    float64
	}
	var host, gen, all class
	shardSecs := map[int]*class{}
	for _, p := range r.Seconds {
		if p.LagMaxMs < float64(lagWorth/time.Millisecond) {
			continue
		}
		note := func(c *class, v float64) {
			c.secs++
			if v > c.worst {
				c.worst, c.at = v, p.T
			}
		}
		switch {
		case p.DispatchLagMaxMs >= p.LagMaxMs/2:
			if r.Cores > 0 && p.CPUCores >= 0.9*float64(r.Cores) {
				note(&gen, p.DispatchLagMaxMs)
			} else {
				note(&host, p.DispatchLagMaxMs)
			}
		default:
			var late []int
			for i, v := range p.ShardLagMaxMs {
				if v >= max(float64(lagWorth/time.Millisecond), p.LagMaxMs/2) {
					late = append(late, i)
				}
			}
			if len(late) == 0 || len(late) == len(p.ShardLagMaxMs) {
				note(&all, p.LagMaxMs)
				continue
			}
			for _, i := range late {
				if shardSecs[i] == nil {
					shardSecs[i] = &class{}
				}
				note(shardSecs[i], p.ShardLagMaxMs[i])
			}
		}
	}
	var out []string
	n := len(r.Seconds)
	if host.secs > 0 {
		out = append(out, fmt.Sprintf("host contention in %d of %d seconds: the generator's own schedule ran up to %s ms late (worst at %s s) while it used under 90%% of its %d cores, so every shard's ops were sent late at once: the machine's CPU was busy elsewhere (the servers on the same cores, other processes); corrected latency includes that wait, which is not any one shard's",
			host.secs, n, Num(host.worst), Num(host.at), r.Cores))
	}
	if gen.secs > 0 {
		out = append(out, fmt.Sprintf("the generator was its own limit in %d of %d seconds: it used 90%% or more of its %d cores and its schedule ran up to %s ms late (worst at %s s); the figures may understate the cluster",
			gen.secs, n, r.Cores, Num(gen.worst), Num(gen.at)))
	}
	if len(shardSecs) > 0 {
		// Slow is relative to the slowest: a shard whose worst wait is
		// under half the slowest shard's was late in its seconds by what
		// a busy host adds to any queue (60-640 ms seen beside a 2 s
		// stall on a loaded 2-core machine), not by its own node; it is
		// named apart, so that the slow shard stands alone.
		slowest := 0.0
		for _, c := range shardSecs {
			slowest = max(slowest, c.worst)
		}
		var parts, minor []string
		for i, sh := range r.Shards {
			c := shardSecs[i]
			switch {
			case c == nil:
			case c.worst >= slowest/2:
				parts = append(parts, fmt.Sprintf("%s %s ms in %d s", sh.Shard, Num(c.worst), c.secs))
			default:
				minor = append(minor, fmt.Sprintf("%s %s ms in %d s", sh.Shard, Num(c.worst), c.secs))
			}
		}
		out = append(out, fmt.Sprintf("slow shard: ops to some shards waited in their node's queue past their intended time, at worst%s, while the other shards' ops were sent on time: every connection to that node was waiting for replies; corrected latency includes that wait",
			listed(parts)))
		if len(minor) > 0 {
			out = append(out, fmt.Sprintf("smaller waits on other shards, under half the slowest shard's and not named slow:%s; a busy host delays every queue a little", listed(minor)))
		}
	}
	if all.secs > 0 {
		msg := fmt.Sprintf("every shard at once in %d of %d seconds: ops to every node waited in their queues, up to %s ms (worst at %s s), while the schedule itself ran on time",
			all.secs, n, Num(all.worst), Num(all.at))
		// Little's law: ops in flight = rate x time each op takes.
		inFlight := r.Rate * r.Ops["total"].Raw.Mean / 1000 / float64(max(1, r.Pipeline))
		if inFlight > 0.5*float64(r.Workers) {
			msg += fmt.Sprintf("; at %s ms mean raw latency the rate needs about %s ops in flight and there are %d connections per primary: raise --concurrency (or --pipeline)", Num(r.Ops["total"].Raw.Mean), Num(inFlight), r.Workers)
		} else {
			msg += fmt.Sprintf("; the connections were enough for the rate (about %s ops in flight for %d per primary): the servers answered slowly together (the cluster as a whole, or the host they share)", Num(inFlight), r.Workers)
		}
		out = append(out, msg)
	}
	return out
}

// finish computes the fault windows once the events are known. The
// nemesis runs one fault at a time: a fault lasts from its start's
// invocation until its stop completes, or, for a fault without a stop (a
// failover, a rebalance), until its start completes.
func (r *Result) finish() {
	type span struct {
		fault             string
		from, to, took    float64
		started, finished bool
		detail            string
	}
	var spans []span
	for _, ev := range r.Events {
		cur := len(spans) - 1
		if fault, ok := history.StartedFault(ev.F); ok {
			switch {
			case ev.Type == "invoke":
				spans = append(spans, span{fault: fault, from: ev.AtS, to: -1})
			case cur >= 0 && spans[cur].fault == fault && !spans[cur].started:
				spans[cur].started, spans[cur].took, spans[cur].to = true, ev.AtS-spans[cur].from, ev.AtS
				spans[cur].detail = changeDetail(ev.Detail)
			}
			continue
		}
		if fault, ok := history.StoppedFault(ev.F); ok && ev.Type != "invoke" && cur >= 0 && spans[cur].fault == fault {
			spans[cur].to, spans[cur].finished = ev.AtS, true
		}
	}
	for i, sp := range spans {
		if sp.to < 0 || sp.to > r.DurationS {
			sp.to = r.DurationS // still in force when traffic ended
		}
		l := max(sp.to-sp.from, 5)
		before := max(0, sp.from-l)
		if i > 0 {
			before = max(before, min(spans[i-1].to, sp.from))
		}
		after := min(r.DurationS, sp.to+l)
		if i+1 < len(spans) {
			after = max(sp.to, min(after, spans[i+1].from))
		}
		r.Windows = append(r.Windows, Window{
			Fault: sp.fault, StartS: sp.from, EndS: sp.to, TookS: max(sp.took, 0), Detail: sp.detail,
			Before: r.figures(before, sp.from),
			During: r.figures(sp.from, sp.to),
			After:  r.figures(sp.to, after),
		})
	}
}

// changeDetail reads what a fault's completion record says it did.
func changeDetail(raw json.RawMessage) string {
	var d map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &d) != nil {
		return ""
	}
	var parts []string
	for _, k := range []struct{ key, say string }{{"added", "added %v"}, {"removed", "removed %v"}, {"promoted", "replica promoted: %v"},
		{"slots_moved", "%v slots moved"}, {"keys_moved", "%v keys moved"}, {"from", "from %v"}, {"to", "to %v"}, {"error", "error: %v"}} {
		if v, ok := d[k.key]; ok {
			if b, isBool := v.(bool); isBool {
				v = map[bool]string{true: "yes", false: "no"}[b]
			}
			if f, isNum := v.(float64); isNum {
				v = Count(f)
			}
			parts = append(parts, fmt.Sprintf(k.say, v))
		}
	}
	return strings.Join(parts, ", ")
}

// figures merges the seconds that belong to [from, to): those whose
// midpoint lies in it, or, for a window shorter than a second, those that
// overlap it.
func (r *Result) figures(from, to float64) WindowFigures {
	w := WindowFigures{FromS: from, ToS: to}
	var in []*second
	var c Counts
	var length float64
	for i := range r.secs {
		s := &r.secs[i]
		end := s.At.Seconds()
		start := end - s.Len.Seconds()
		mid := (start + end) / 2
		if mid >= from && mid < to || to-from < 1 && start < to && end > from {
			in = append(in, s)
			c.add(&s.C)
			length += s.Len.Seconds()
		}
	}
	if length == 0 {
		return w
	}
	h := combined(in...)
	q, qr := quantiles(h[corrected]), quantiles(h[raw])
	w.Seconds = len(in)
	w.OKPerS = float64(c.TotalOK()) / length
	w.ErrorsPerS = float64(c.Failed()) / length
	w.RedirectsPerS = float64(c.Moved+c.Ask) / length
	w.Moved, w.Ask, w.TryAgain, w.ClusterDown = c.Moved, c.Ask, c.TryAgain, c.ClusterDown
	w.P50Ms, w.P99Ms, w.P999Ms, w.RawP99Ms = q.P50, q.P99, q.P999, qr.P99
	return w
}

// PrintSummary prints a memtier-like table, the generator's health, the
// availability gaps and fault windows. The caller ends with
// "throughput: N ops/s" (Result.Throughput) as the last line.
func (r *Result) PrintSummary(w io.Writer) {
	r.printTable(w)
	r.printRest(w)
}

// printTable prints the memtier-like table of sets, gets and totals.
func (r *Result) printTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\nType\tOps/sec\tHits/sec\tMisses/sec\tAvg ms\tp50 ms\tp99 ms\tp99.9 ms\tMax ms\traw p50\traw p99\traw p99.9\tKB/sec\tFailed\t")
	for _, n := range []string{"set", "get", "total"} {
		f := r.Ops[n]
		hits, misses := trimFloat(f.HitsPerS), trimFloat(f.MissesPerS)
		if n == "set" {
			hits, misses = "---", "---"
		}
		c, rw := f.Corrected, f.Raw
		fmt.Fprintf(tw, "%s\t%.2f\t%s\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.2f\t%d\t\n",
			strings.ToUpper(n[:1])+n[1:]+"s", f.OKPerS, hits, misses, c.Mean, c.P50, c.P99, c.P999, c.Max, rw.P50, rw.P99, rw.P999, f.KBPerS, f.Failed)
	}
	tw.Flush()
}

// printRest prints what follows the table: the mode, redirects, the
// generator's health, shards, fault windows and the load per slot.
func (r *Result) printRest(w io.Writer) {
	mode := "closed loop"
	conns := "workers"
	if r.Rate > 0 {
		mode = fmt.Sprintf("open loop at %s ops/s; latency from the intended send time, raw from the actual send", trimFloat(r.Rate))
		conns = "connections per primary, each with its own queue"
	}
	if len(r.Generators) > 0 {
		conns += fmt.Sprintf(" (in each of %d generators)", len(r.Generators))
	}
	fmt.Fprintf(w, "\n%d %s, pipeline %d, %s, %.1f s\n", r.Workers, conns, r.Pipeline, mode, r.DurationS)
	c := r.Counts
	fmt.Fprintf(w, "redirects: MOVED %d, ASK %d, TRYAGAIN %d, CLUSTERDOWN %d; reconnects %d; timeouts %d, connection errors %d\n",
		c.Moved, c.Ask, c.TryAgain, c.ClusterDown, c.Reconnects, c.Timeouts[opGet]+c.Timeouts[opSet], c.ConnErrors)
	fmt.Fprintf(w, "generator: up to %.2f of %d cores; lag max %s ms, %d ops late, %d scheduled ops unsent\n", r.CPUMaxCores, r.Cores, trimFloat(r.LagMaxMs), r.LateOps, r.Unsent)
	for _, d := range r.Diagnosis {
		fmt.Fprintf(w, "  note: %s\n", d)
	}
	if len(r.Shards) > 0 {
		var parts []string
		behind := false
		for _, s := range r.Shards {
			mark := ""
			if s.GeneratorBehind {
				mark, behind = "*", true
			}
			parts = append(parts, fmt.Sprintf("%s %.2fs%s", s.Shard, s.MaxGapS, mark))
		}
		fmt.Fprintf(w, "longest availability gap per shard: %s\n", strings.Join(parts, ", "))
		if behind {
			fmt.Fprintf(w, "  * the generator was behind during that gap: ops to other shards were late too, so part of the gap may be the generator's (raise --concurrency)\n")
		}
		fmt.Fprintln(w)
		r.ShardTable().Print(w)
	}
	if len(r.Windows) > 0 {
		fmt.Fprintln(w)
		r.WindowTable().Print(w)
	}
	r.printGenerators(w)
	r.Load.print(w)
}

// printGenerators lists a distributed run's generators, those left out
// of the figures first in words.
func (r *Result) printGenerators(w io.Writer) {
	if len(r.Generators) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nGENERATOR\tNAME\tSTATUS\tRATE\tSECONDS\tOK\tFAILED\tP99 MS\tSTART SKEW MS")
	for _, g := range r.Generators {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s ± %s\n", g.Index, g.Name, g.Status, Count(g.Rate), g.Seconds, g.OK, g.Failed, Num(g.P99Ms), Num(g.StartSkewMs), Num(g.ClockUncertaintyMs))
	}
	tw.Flush()
	if r.GeneratorsFailed > 0 {
		fmt.Fprintf(w, "%d of %d generators left out of the figures (see the notes): not a measurement of the %s ops/s asked\n", r.GeneratorsFailed, len(r.Generators), Count(r.RequestedRate))
	}
}

func listed(parts []string) string {
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// pctChange is the change from before to after in percent, "-" when
// there is no percentage of 0; "+0%" when nothing changed.
func pctChange(before, after float64) string {
	switch c := plot.Compare(before, after, true); {
	case before == 0:
		return "-"
	case c.Pct == "":
		return "+0%"
	default:
		return c.Pct
	}
}

func trimFloat(f float64) string {
	s := fmt.Sprintf("%.2f", f)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}
