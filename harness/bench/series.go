package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/redline-dev/redline/history"
)

// series collects the workers' figures once a second. Each second keeps
// its counters and its latency histograms, compressed (a few hundred bytes
// each), so a window of seconds (before/during/after a fault) can be
// summarised exactly at the end while memory grows by a few KB a second.
type series struct {
	stats  []*workerStats // the workers' (and the dispatcher's)
	shards int

	mu      sync.Mutex
	seconds []second
	total   Counts
	totalH  hists
	scratch hists
	lastCPU time.Duration
	lastAt  time.Duration

	// shardH is each shard's corrected latency over the run.
	shardH []*hdrhistogram.Histogram

	// warmup: collections ending before it are driven, not measured;
	// warmedAt is where the last of them ended (the measured part starts).
	warmup, warmedAt time.Duration

	ok, fail atomic.Int64

	// onSecond, if set, gets each measured second (a generator's report).
	onSecond func(*second)
}

// second is one collection interval.
type second struct {
	At    time.Duration // end of the interval, since the start of traffic
	Len   time.Duration
	C     Counts
	H     [numOps][numKinds][]byte // compressed histograms
	Sum   [numOps][numKinds]Quantiles
	CPU   float64   // generator CPU in cores over the interval
	Shard shardFigs // ok ops, backlog and lag per shard
}

func newSeries(ws []*worker, shards int) *series {
	s := &series{shards: shards, totalH: newHists(), scratch: newHists(), lastCPU: cpuTime()}
	for _, w := range ws {
		s.stats = append(s.stats, w.stats)
	}
	for range shards {
		s.shardH = append(s.shardH, newShardHist())
	}
	return s
}

// addStats adds statistics to collect (the dispatcher's).
func (s *series) addStats(st *workerStats) {
	s.mu.Lock()
	s.stats = append(s.stats, st)
	s.mu.Unlock()
}

// run collects every second until ctx ends. The final collection after
// the workers stop is the caller's.
func (s *series) run(ctx context.Context, start time.Time) {
	for i := 1; ; i++ {
		t := time.NewTimer(time.Until(start.Add(time.Duration(i) * time.Second)))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		s.collect(time.Since(start))
	}
}

// collect drains every worker into a new second ending at `at`.
func (s *series) collect(at time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if at <= s.lastAt {
		return
	}
	var c Counts
	shard := newShardFigs(s.shards)
	s.scratch.reset()
	if s.warmup > 0 && at < s.warmup+warmupSlack {
		// Warm-up: drained and dropped (connections dialled, queues and
		// the servers' caches settling), the CPU clock restarted.
		for _, st := range s.stats {
			st.drainInto(&s.scratch, &c, &shard, nil)
		}
		s.lastCPU, s.lastAt, s.warmedAt = cpuTime(), at, at
		return
	}
	for _, st := range s.stats {
		st.drainInto(&s.scratch, &c, &shard, s.shardH)
	}
	if c == (Counts{}) && at-s.lastAt < 100*time.Millisecond {
		return // the final collection right after a tick: nothing new
	}
	sec := second{At: at, Len: at - s.lastAt, C: c, Shard: shard}
	for o := range sec.H {
		for k := range sec.H[o] {
			h := s.scratch[o][k]
			sec.Sum[o][k] = quantiles(h)
			if h.TotalCount() > 0 {
				sec.H[o][k], _ = h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
			}
		}
	}
	cpu := cpuTime()
	sec.CPU = float64(cpu-s.lastCPU) / float64(sec.Len)
	s.lastCPU, s.lastAt = cpu, at
	s.total.add(&c)
	s.totalH.merge(&s.scratch)
	s.seconds = append(s.seconds, sec)
	s.ok.Add(c.TotalOK())
	s.fail.Add(c.Failed())
	if s.onSecond != nil {
		s.onSecond(&s.seconds[len(s.seconds)-1])
	}
}

// warmupSlack: the collection due at the warm-up's end fires a little
// after it and still belongs to the warm-up.
const warmupSlack = 100 * time.Millisecond

// live describes the last collected second: ok ops/s and corrected p99.
func (s *series) live() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.seconds) == 0 {
		if s.warmedAt > 0 || s.warmup > 0 {
			return "warming up"
		}
		return "ops/s -  p99 -"
	}
	sec := &s.seconds[len(s.seconds)-1]
	p99 := 0.0
	for o := range sec.Sum {
		p99 = max(p99, sec.Sum[o][corrected].P99)
	}
	return fmt.Sprintf("ops/s %s  p99 %s ms", Count(float64(sec.C.TotalOK())/sec.Len.Seconds()), Num(p99))
}

func (s *series) counts() (ok, fail, info int64) { return s.ok.Load(), s.fail.Load(), 0 }

// cpuTime is the CPU time this process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Quantiles of a latency distribution, in milliseconds.
type Quantiles struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99_9"`
	Max   float64 `json:"max"`
}

func quantiles(h *hdrhistogram.Histogram) Quantiles {
	if h.TotalCount() == 0 {
		return Quantiles{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return Quantiles{
		Count: h.TotalCount(),
		Mean:  h.Mean() / 1000,
		P50:   ms(h.ValueAtQuantile(50)),
		P90:   ms(h.ValueAtQuantile(90)),
		P99:   ms(h.ValueAtQuantile(99)),
		P999:  ms(h.ValueAtQuantile(99.9)),
		Max:   ms(h.Max()),
	}
}

// gapTracker finds, per shard, the longest time without a successful op
// (an availability gap), from the completions as they happen.
type gapTracker struct {
	names []string
	last  []atomic.Int64 // last ok completion, ns since start

	mu   sync.Mutex
	gaps []Gap
	max  []time.Duration
	// maxAt is when each shard's longest gap began.
	maxAt []time.Duration
}

// Gap is a time a shard served no op successfully.
type Gap struct {
	Shard   string  `json:"shard"`
	StartS  float64 `json:"start_s"`
	LengthS float64 `json:"length_s"`
}

// gapWorth: shorter gaps are normal between two ops and not listed.
const gapWorth = 250 * time.Millisecond

// maxGapsListed bounds the list; the per-shard maximum is always exact.
const maxGapsListed = 1000

func newGapTracker(names []string) *gapTracker {
	return &gapTracker{names: names, last: make([]atomic.Int64, len(names)), max: make([]time.Duration, len(names)), maxAt: make([]time.Duration, len(names))}
}

func (g *gapTracker) ok(shard uint16, at time.Duration) {
	l := &g.last[shard]
	for {
		prev := l.Load()
		if int64(at) <= prev {
			return
		}
		if l.CompareAndSwap(prev, int64(at)) {
			if d := at - time.Duration(prev); d >= gapWorth {
				g.note(int(shard), time.Duration(prev), d)
			}
			return
		}
	}
}

func (g *gapTracker) note(shard int, from, d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if d > g.max[shard] {
		g.max[shard], g.maxAt[shard] = d, from
	}
	if len(g.gaps) < maxGapsListed {
		g.gaps = append(g.gaps, Gap{Shard: g.names[shard], StartS: from.Seconds(), LengthS: d.Seconds()})
	}
}

// finish counts the time from each shard's last success to the end.
func (g *gapTracker) finish(end time.Duration) {
	for i := range g.last {
		if d := end - time.Duration(g.last[i].Load()); d >= gapWorth {
			g.note(i, time.Duration(g.last[i].Load()), d)
		}
	}
}

// eventLog records the nemesis's events (it is the history.Recorder the
// nemesis writes to) with their time since the start of traffic.
type eventLog struct {
	start time.Time
	mu    sync.Mutex
	ops   []history.Op
}

func (l *eventLog) Record(op history.Op) history.Op {
	l.mu.Lock()
	defer l.mu.Unlock()
	op.Index = int64(len(l.ops))
	op.Time = time.Since(l.start).Nanoseconds()
	l.ops = append(l.ops, op)
	return op
}

func (l *eventLog) all() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Event, 0, len(l.ops))
	for _, op := range l.ops {
		out = append(out, Event{AtS: float64(op.Time) / 1e9, Type: op.Type.String(), F: op.F, Nodes: op.NodeList(), Detail: op.DetailRaw()})
	}
	return out
}

// Event is a nemesis event of the run.
type Event struct {
	AtS    float64         `json:"at_s"`
	Type   string          `json:"type"`
	F      string          `json:"f"`
	Nodes  []string        `json:"nodes,omitempty"`
	Detail json.RawMessage `json:"detail,omitempty"`
}
