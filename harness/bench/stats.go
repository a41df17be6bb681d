package bench

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Op types measured.
const (
	opGet = iota
	opSet
	numOps
)

var opNames = [numOps]string{"get", "set"}

// Latency kinds: corrected is measured from the intended send time (the
// schedule), raw from the moment the command was written.
const (
	corrected = iota
	raw
	numKinds
)

var kindNames = [numKinds]string{"corrected", "raw"}

// histMaxUs bounds recorded latencies (1 hour); larger values are clamped.
const histMaxUs = int64(time.Hour / time.Microsecond)

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, histMaxUs, 3) }

// hists is one latency histogram per op type and kind.
type hists [numOps][numKinds]*hdrhistogram.Histogram

func newHists() hists {
	var h hists
	for o := range h {
		for k := range h[o] {
			h[o][k] = newHist()
		}
	}
	return h
}

func (h *hists) merge(from *hists) {
	for o := range h {
		for k := range h[o] {
			if from[o][k].TotalCount() > 0 {
				h[o][k].Merge(from[o][k])
			}
		}
	}
}

func (h *hists) reset() {
	for o := range h {
		for k := range h[o] {
			if h[o][k].TotalCount() > 0 {
				h[o][k].Reset()
			}
		}
	}
}

func record(h *hdrhistogram.Histogram, d time.Duration) {
	us := int64(d / time.Microsecond)
	if us < 1 {
		us = 1
	} else if us > histMaxUs {
		us = histMaxUs
	}
	_ = h.RecordValue(us)
}

// Counts are the per-second (and whole-run) counters.
type Counts struct {
	OK     [numOps]int64 `json:"ok"`     // by op: get, set
	Hits   int64         `json:"hits"`   // GETs that found a value
	Misses int64         `json:"misses"` // GETs that found none
	// Errors are ops that ended with an error reply (CLUSTERDOWN, OOM, a
	// redirect limit...): certainly not executed.
	Errors [numOps]int64 `json:"errors"`
	// Timeouts are ops whose reply never came: outcome unknown.
	Timeouts [numOps]int64 `json:"timeouts"`
	// ConnErrors are ops refused because no connection could be made or a
	// connection broke before the command was written.
	ConnErrors int64 `json:"conn_errors"`
	// Replies that did not end the op: followed or retried.
	Moved       int64 `json:"moved"`
	Ask         int64 `json:"ask"`
	TryAgain    int64 `json:"tryagain"`
	ClusterDown int64 `json:"clusterdown"`
	Reconnects  int64 `json:"reconnects"`
	// Late counts ops sent more than lateAfter behind their intended time;
	// LagMaxNs is the largest such delay: the generator could not keep
	// the schedule.
	Late     int64 `json:"late"`
	LagMaxNs int64 `json:"lag_max_ns"`
	Bytes    int64 `json:"bytes"` // value bytes written by ok SETs
	// Wire is by op the bytes on the wire, requests and replies (ASKING
	// and redirected re-sends included) of every op that ended: memtier's
	// KB/sec.
	Wire [numOps]int64 `json:"wire_bytes"`
	// Backlog counts scheduled ops never sent because their node's queue
	// was full (a node stalled for longer than its queue holds); they are
	// part of Result.Unsent.
	Backlog int64 `json:"backlog,omitempty"`
	// DispatchLagNs is the longest the open loop's schedule itself ran
	// late: an op was queued this long after its intended time because
	// the dispatcher did not get to run (the generator's own CPU or the
	// host's scheduling), whichever node it was for.
	DispatchLagNs int64 `json:"dispatch_lag_ns,omitempty"`
}

// lateAfter: an op sent this long after its intended time is late.
const lateAfter = time.Millisecond

func (c *Counts) add(o *Counts) {
	for i := range c.OK {
		c.OK[i] += o.OK[i]
		c.Errors[i] += o.Errors[i]
		c.Timeouts[i] += o.Timeouts[i]
		c.Wire[i] += o.Wire[i]
	}
	c.Hits += o.Hits
	c.Misses += o.Misses
	c.ConnErrors += o.ConnErrors
	c.Moved += o.Moved
	c.Ask += o.Ask
	c.TryAgain += o.TryAgain
	c.ClusterDown += o.ClusterDown
	c.Reconnects += o.Reconnects
	c.Late += o.Late
	c.LagMaxNs = max(c.LagMaxNs, o.LagMaxNs)
	c.Bytes += o.Bytes
	c.Backlog += o.Backlog
	c.DispatchLagNs = max(c.DispatchLagNs, o.DispatchLagNs)
}

// TotalOK is every successful op.
func (c *Counts) TotalOK() int64 { return c.OK[opGet] + c.OK[opSet] }

// Failed is every op that did not succeed.
func (c *Counts) Failed() int64 {
	return c.Errors[opGet] + c.Errors[opSet] + c.Timeouts[opGet] + c.Timeouts[opSet] + c.ConnErrors
}

// workerStats is what one worker measured since the last collection. The
// lock is taken by its worker once per batch and by the collector once a
// second; in the open loop the worker's lanes (one per primary) share it,
// so at most a few goroutines ever contend for it.
type workerStats struct {
	mu    sync.Mutex
	h     hists
	c     Counts
	shard shardFigs // per shard (as at the start), this interval
	// shardH is each shard's corrected latency, to shardSigFigs digits.
	shardH []*hdrhistogram.Histogram
	slots  *slotCounts // whole-run ok ops and bytes per slot (slotload.go)
}

func newWorkerStats(shards int) *workerStats {
	s := &workerStats{h: newHists(), shard: newShardFigs(shards)}
	for range shards {
		s.shardH = append(s.shardH, newShardHist())
	}
	return s
}

// drainInto moves the worker's figures into the second's and resets them;
// the per-shard latency goes into the run's shardH.
func (w *workerStats) drainInto(h *hists, c *Counts, sh *shardFigs, shardH []*hdrhistogram.Histogram) {
	w.mu.Lock()
	h.merge(&w.h)
	w.h.reset()
	c.add(&w.c)
	w.c = Counts{}
	sh.add(&w.shard)
	w.shard.reset()
	for i, x := range w.shardH {
		if x.TotalCount() > 0 {
			if i < len(shardH) {
				shardH[i].Merge(x)
			}
			x.Reset()
		}
	}
	w.mu.Unlock()
}

// shardFigs are per-shard counters of one interval, by shard number.
type shardFigs struct {
	ok      []int64 // ok ops
	backlog []int64 // ops its node's full queue refused (Counts.Backlog)
	lagNs   []int64 // the largest lag of an op sent late (as Counts.LagMaxNs)
}

func newShardFigs(n int) shardFigs {
	return shardFigs{ok: make([]int64, n), backlog: make([]int64, n), lagNs: make([]int64, n)}
}

func (f *shardFigs) add(o *shardFigs) {
	for i := range o.ok {
		if i < len(f.ok) {
			f.ok[i] += o.ok[i]
			f.backlog[i] += o.backlog[i]
			f.lagNs[i] = max(f.lagNs[i], o.lagNs[i])
		}
	}
}

func (f *shardFigs) reset() {
	clear(f.ok)
	clear(f.backlog)
	clear(f.lagNs)
}

// shardSigFigs: per-shard latency is kept to 2 significant digits (a
// histogram of 27 KB instead of 188 KB per worker and shard).
const shardSigFigs = 2

func newShardHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, histMaxUs, shardSigFigs) }
