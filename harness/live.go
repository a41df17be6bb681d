package harness

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads"
)

// liveWatch judges, while a run goes, what can be judged from each entry as
// it is recorded, in constant memory per key: a soak run of an hour shows
// its running verdict and the faults so far on its progress line instead
// of keeping every anomaly for the end. It is an early warning, never the
// verdict: the checkers judge the whole history from its file when the run
// ends, and a check that cannot be made entry by entry says "at the end".
//
// Today one check is live, the counter's bounds (a read below the
// increments acknowledged before it began, or above every increment sent
// by its end): the set and register checks need the whole history
// (elements, linearizability) and say so.
type liveWatch struct {
	mu       sync.Mutex
	faults   int            // fault starts recorded
	counters []*liveCounter // one per counter workload
	others   []string       // workloads judged only at the end
	pending  map[int64]*livePending
}

// livePending is a client op between its invocation and its completion.
type livePending struct {
	c     *liveCounter
	key   string
	f     string
	delta int64
	lower int64 // a read's lower bound: what was acknowledged when it began
}

// liveCounter is the counter workload's live check: per key the sum of
// acknowledged increments and of every increment that may have applied.
type liveCounter struct {
	name, prefix string
	keys         map[string]*liveCounterKey
	anomalies    int
	first        string // the first anomaly, in words
}

type liveCounterKey struct {
	acked, attempted int64
	// unjudged: the key saw a delta the bounds below do not cover (a
	// negative or unparsable one): judged at the end only.
	unjudged bool
}

func newLiveWatch(ws []workloads.Workload) *liveWatch {
	lw := &liveWatch{pending: map[int64]*livePending{}}
	for _, w := range ws {
		if w.Name() == "counter" {
			lw.counters = append(lw.counters, &liveCounter{name: w.Name(), prefix: w.KeyPrefix(), keys: map[string]*liveCounterKey{}})
		} else {
			lw.others = append(lw.others, w.Name())
		}
	}
	sort.Strings(lw.others)
	return lw
}

// observe takes one recorded entry, in index order (Recorder.Watch).
func (lw *liveWatch) observe(op *history.Op) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if op.Process == history.Nemesis {
		if _, ok := history.StartedFault(op.F); ok && op.Type == history.Invoke {
			lw.faults++
		}
		return
	}
	p := int64(op.Process)
	if op.Type == history.Invoke {
		for _, c := range lw.counters {
			if strings.HasPrefix(op.Key, c.prefix) {
				lw.pending[p] = c.invoke(op)
				return
			}
		}
		return
	}
	pe, ok := lw.pending[p]
	if !ok {
		return
	}
	delete(lw.pending, p)
	pe.c.complete(pe, op)
}

func (c *liveCounter) key(k string) *liveCounterKey {
	ck := c.keys[k]
	if ck == nil {
		ck = &liveCounterKey{}
		c.keys[k] = ck
	}
	return ck
}

func (c *liveCounter) invoke(op *history.Op) *livePending {
	ck := c.key(op.Key)
	pe := &livePending{c: c, key: op.Key, f: op.F}
	switch op.F {
	case "add":
		d, ok := op.Int()
		if !ok || d < 0 {
			ck.unjudged = true
			break
		}
		pe.delta = d
		ck.attempted += d
	case "read":
		pe.lower = ck.acked
	}
	return pe
}

func (c *liveCounter) complete(pe *livePending, op *history.Op) {
	ck := c.key(pe.key)
	switch pe.f {
	case "add":
		switch op.Type {
		case history.OK:
			ck.acked += pe.delta
		case history.Fail:
			ck.attempted -= pe.delta // a failed add did not apply
		}
	case "read":
		if op.Type != history.OK || ck.unjudged {
			return
		}
		v, ok := op.Int()
		switch {
		case !ok:
			c.anomaly(fmt.Sprintf("read of %s answered %s, not a count", pe.key, op.Value))
		case v > ck.attempted:
			c.anomaly(fmt.Sprintf("read of %s answered %d, above every increment sent (%d)", pe.key, v, ck.attempted))
		case v < pe.lower && !op.FromReplica():
			// A replica may lag (documented); a primary below what was
			// acknowledged before the read began has lost increments.
			c.anomaly(fmt.Sprintf("read of %s answered %d, below the %d acknowledged before it began", pe.key, v, pe.lower))
		}
	}
}

func (c *liveCounter) anomaly(what string) {
	c.anomalies++
	if c.first == "" {
		c.first = what
	}
}

// Faults is the number of faults started so far.
func (lw *liveWatch) Faults() int {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.faults
}

// Verdicts is the running verdict per workload, in a few words:
// "counter: 2 reads out of bounds so far" (every later read of a key that
// lost increments is out of bounds too, so the count grows with the reads,
// not with the losses) or "counter: none so far", then the
// workloads judged only when the run ends.
func (lw *liveWatch) Verdicts() string {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	var parts []string
	for _, c := range lw.counters {
		if c.anomalies == 0 {
			parts = append(parts, c.name+": none so far")
		} else {
			parts = append(parts, fmt.Sprintf("%s: %d reads out of bounds so far", c.name, c.anomalies))
		}
	}
	if len(lw.others) > 0 {
		parts = append(parts, strings.Join(lw.others, ", ")+": at the end")
	}
	return strings.Join(parts, "; ")
}

// FirstAnomalies is each live check's first anomaly, for the log.
func (lw *liveWatch) FirstAnomalies() []string {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	var out []string
	for _, c := range lw.counters {
		if c.first != "" {
			out = append(out, c.name+": "+c.first)
		}
	}
	return out
}
