package checker

import (
	"context"
	"strconv"

	"github.com/redline-dev/redline/history"
)

// ProbeKind says what a replica that has a write shows when probed.
type ProbeKind int

const (
	// ProbeAtLeast: the probe reads a counter; a replica that has the
	// increment holds at least the INCRBY's reply (every delta positive).
	ProbeAtLeast ProbeKind = iota
	// ProbeMember: the probe is SISMEMBER of the added element; a replica
	// that has the add answers 1.
	ProbeMember
)

type waitProbe struct {
	o    Scope
	kind ProbeKind
	// replicas is how many replicas each primary had when the run made
	// the cluster (0: not known, an existing cluster).
	replicas int
}

// WaitProbe judges WAIT's answers themselves, without waiting for a loss:
// when WAIT says n replicas have a write, redline's own client reads the
// key on every replica of the node that took it right away (the WAIT
// probe, history Wait.Probes), and at least n of them must show the write.
// A write whose probes show fewer is "wait-overcounted": WAIT counted a
// replica that did not have it (WAIT released before the write was done,
// redis/redis#11608's kind). A probe that failed, or fewer probes than
// WAIT's count (the client's replica list was short), cannot tell, and is
// counted as unjudged, never as holding; a reply no write could produce is
// garbage. Only add ops with WAIT and probes are judged: with a client
// library under test, or without --wait, the checker is not applicable.
func WaitProbe(kind ProbeKind, opts ...Scope) Checker { return WaitProbeOf(kind, 0, opts...) }

// WaitProbeOf is WaitProbe on a cluster whose primaries each had replicas
// replicas (0: not known). A write whose probes missed one of them is not
// judged over-counted: the replica not probed may be the one WAIT counted
// (with two replicas and WAIT 1, the client may know one replica of the
// node at that moment).
func WaitProbeOf(kind ProbeKind, replicas int, opts ...Scope) Checker {
	return waitProbe{firstScope(opts), kind, replicas}
}

func (w waitProbe) Name() string { return w.o.name("wait-probe") }

// probeVerdict is one probe's reading.
type probeVerdict int

const (
	probeHolds probeVerdict = iota
	probeLacks
	probeUnknown
	probeGarbage
)

func (w waitProbe) judge(reply string, p history.WaitProbe) probeVerdict {
	if p.Error != "" {
		return probeUnknown
	}
	switch w.kind {
	case ProbeAtLeast:
		want, err := strconv.ParseInt(reply, 10, 64)
		if err != nil {
			return probeGarbage // the write's own reply is no count
		}
		if p.Value == nil {
			return probeLacks // no key at all: none of the increments
		}
		v, err := strconv.ParseInt(*p.Value, 10, 64)
		switch {
		case err != nil:
			return probeGarbage
		case v >= want:
			return probeHolds
		}
		return probeLacks
	default:
		if p.Value == nil {
			return probeGarbage // SISMEMBER never answers nil
		}
		switch *p.Value {
		case "1":
			return probeHolds
		case "0":
			return probeLacks
		}
		return probeGarbage
	}
}

func (w waitProbe) Check(ctx context.Context, in *History) Result {
	calls, err := w.o.calls(in)
	if err != nil {
		return invalidHistory(err)
	}
	return w.verdict(w.tally(calls))
}

// probeTally is what the probes of some calls say: of the whole history
// (Check), or summed over its partitions (CheckPartitions).
type probeTally struct {
	an                                *anomalies
	probed, judged, unjudged, holders int
}

// tally reads the probes of calls, in their order.
func (w waitProbe) tally(calls []call) *probeTally {
	an := newAnomalies(w.o.MaxExamples)
	var probed, judged, unjudged, holders int
	for i := range calls {
		c := &calls[i]
		if c.inv.Name() != OpAdd || c.comp == nil || c.comp.Type != history.OK {
			continue
		}
		wi := c.comp.WaitInfo()
		if wi == nil || len(wi.Probes) == 0 {
			continue
		}
		probed++
		if wi.Acked < 1 {
			// The client probes only after WAIT counted a replica:
			// probes beside no count contradict how they are made.
			an.add("garbage", map[string]any{"index": c.index, "key": c.inv.Key, "acked": wi.Acked,
				"why": "WAIT probes recorded beside a WAIT that counted no replica"})
			continue
		}
		var holds, unknown, garbage int
		for _, p := range wi.Probes {
			switch w.judge(wi.Reply, p) {
			case probeHolds:
				holds++
			case probeUnknown:
				unknown++
			case probeGarbage:
				garbage++
			}
		}
		ex := func() map[string]any {
			return map[string]any{"index": c.index, "key": c.inv.Key, "node": c.comp.Node, "acked": wi.Acked,
				"reply": wi.Reply, "probes": wi.Probes, "holding": holds}
		}
		switch {
		case garbage > 0:
			an.add("garbage", ex())
		case len(wi.Probes) < wi.Acked:
			// Fewer replicas probed than WAIT counted: the client's list
			// was short (a replica had just joined), and the one not
			// probed may be the one that has it.
			unjudged++
		case holds+unknown < wi.Acked && len(wi.Probes) < w.replicas:
			// A replica was not probed: it may hold the write WAIT
			// counted.
			unjudged++
		case holds+unknown < wi.Acked:
			an.add("wait-overcounted", ex())
		case holds < wi.Acked:
			unjudged++ // the failed probes may be the holders
		default:
			judged++
			holders += holds
		}
	}
	return &probeTally{an: an, probed: probed, judged: judged, unjudged: unjudged, holders: holders}
}

// verdict is the verdict and figures of a tally.
func (w waitProbe) verdict(t *probeTally) Result {
	an, probed, judged, unjudged, holders := t.an, t.probed, t.judged, t.unjudged, t.holders
	if probed == 0 {
		return NotApplicable("no write had a WAIT probe (probes need --wait, a WAIT answered 1 or more, and redline's own client)")
	}
	fig := &WaitProbeFigures{ProbedWrites: probed, Judged: judged, Unjudged: unjudged, ReplicasHolding: holders, Anomalies: an.classes()}
	res := Result{Valid: Valid, Figures: fig}
	switch {
	case an.total() > 0:
		res.Valid = Invalid
		fig.because("%s", an.describe())
	case judged == 0:
		res.Valid = Unknown
		fig.because("none of the %d probed writes could be judged: probes failed or fewer replicas were probed than WAIT counted", probed)
		fig.Error = fig.Reason
	}
	return res
}

// CheckPartitions is Check on a history given as slot partitions
// (PartitionChecker): each add is judged by its own probes, so the
// partitions' tallies add up, their anomalies merged in index order (the
// order Check scans the calls in). It holds one partition's ops at a time.
func (w waitProbe) CheckPartitions(ctx context.Context, n int, load PartitionLoader) (Result, error) {
	parts := make([]*anomalies, 0, n)
	sum := &probeTally{}
	for i := range n {
		in, err := PartitionCalls(ctx, load, i, w.o)
		if err != nil {
			return Result{}, err
		}
		calls, err := w.o.calls(in)
		if err != nil {
			// The caller checks such a history whole; if not, the first
			// partition's word.
			return invalidHistory(err), nil
		}
		t := w.tally(calls)
		parts = append(parts, t.an)
		sum.probed += t.probed
		sum.judged += t.judged
		sum.unjudged += t.unjudged
		sum.holders += t.holders
	}
	sum.an = mergeAnomalies(parts, w.o.MaxExamples)
	return w.verdict(sum), nil
}

// WaitProbeFigures are the wait-probe checker's figures.
type WaitProbeFigures struct {
	ProbedWrites    int       `json:"probed_writes"`
	Judged          int       `json:"judged"`
	Unjudged        int       `json:"unjudged"`
	ReplicasHolding int       `json:"replicas_holding"`
	Anomalies       Anomalies `json:"anomalies,omitempty"`
	Verdict
}

// The figures this checker explains (describe.go).
var _ = ExplainFigures(map[string]string{
	"wait-overcounted": "WAIT answered that n replicas had a write, and when read right after (the WAIT probe, on every replica of the node that took it) fewer than n of them showed it: WAIT counted a replica that did not have the write, so a write believed safe on a replica may be on none",
	"probed_writes":    "writes whose WAIT answered 1 or more and whose replicas were read right after (the WAIT probe)",
})
