package adversary

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/redline-dev/redline/history"
)

// WAIT probes (the wait-probe checker): when WAIT counts a replica, the
// client reads the key on every replica right after and records the
// replies with the WAIT. The corpus was recorded without --wait, so each
// mutation first gives one acknowledged add of a counter or set run the
// WAIT and probe record a redline of today writes (Prepares), then plants
// what the replies would show.

// probeKind is what a replica holding the add answers, per workload: a
// counter's GET at least the INCRBY's reply, a set's SISMEMBER 1.
func (r *Run) probeKind() (string, bool) {
	for _, w := range []string{"counter", "set"} {
		if slices.Equal(r.Config.Workloads, []string{w}) {
			return w, true
		}
	}
	return "", false
}

// plantProbe gives one ok add a WAIT that counted acked replicas and the
// probes probes(kind) makes.
func plantProbe(acked int, probes func(kind string) (reply string, ps []history.WaitProbe), what string) func(*Run, *rand.Rand) (string, error) {
	return func(r *Run, rng *rand.Rand) (string, error) {
		kind, ok := r.probeKind()
		if !ok {
			return "", ErrNotApplicable
		}
		var adds []call
		for _, c := range r.calls() {
			if r.invOf(c).F == "add" && r.outcome(c) == history.OK {
				adds = append(adds, c)
			}
		}
		c, ok := pick(rng, adds)
		if !ok {
			return "", ErrNotApplicable
		}
		reply, ps := probes(kind)
		r.Ops[c.comp].SetWait(&history.Wait{Want: 1, Acked: acked, Reply: reply, Probes: ps})
		return fmt.Sprintf("%s: WAIT counted %d, probes %s", r.describe(c.comp), acked, what), nil
	}
}

// probeOf is one replica's reply.
func probeOf(v string) history.WaitProbe { return history.WaitProbe{Node: "10.0.0.99:6379", Value: &v} }

var waitProbeMutations = []Mutation{
	{
		Name: "wait-probe-overcounted", Kind: Anomaly, Checker: "wait-probe", Figure: class("wait-overcounted"), Prepares: true,
		Class: "WAIT counted a replica whose probe, right after, lacks the write",
		Apply: plantProbe(1, func(kind string) (string, []history.WaitProbe) {
			if kind == "counter" {
				return "100", []history.WaitProbe{probeOf("99")}
			}
			return "", []history.WaitProbe{probeOf("0")}
		}, "show the write on none"),
	},
	{
		Name: "wait-probe-holds", Kind: Allowed, Checker: "wait-probe", Prepares: true,
		Class: "WAIT counted a replica and its probe shows the write (the verdict stays)",
		Apply: plantProbe(1, func(kind string) (string, []history.WaitProbe) {
			if kind == "counter" {
				return "100", []history.WaitProbe{probeOf("101")}
			}
			return "", []history.WaitProbe{probeOf("1")}
		}, "show the write"),
	},
	{
		Name: "wait-probe-garbage", Kind: Lie, Checker: "wait-probe",
		Class: "a probe's reply no write produces",
		Apply: plantProbe(1, func(string) (string, []history.WaitProbe) {
			return "100", []history.WaitProbe{probeOf("not a number")}
		}, "answer garbage"),
	},
	{
		Name: "wait-probe-without-count", Kind: Lie, Checker: "wait-probe",
		Class: "probes recorded beside a WAIT that counted no replica",
		Apply: plantProbe(0, func(kind string) (string, []history.WaitProbe) {
			if kind == "counter" {
				return "100", []history.WaitProbe{probeOf("101")}
			}
			return "", []history.WaitProbe{probeOf("1")}
		}, "exist although WAIT counted none"),
	},
}
