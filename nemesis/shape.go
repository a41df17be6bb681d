package nemesis

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
)

// bindProbed takes the cluster's implementation of T for a fault and,
// when the fault is asked for and the cluster can say (cluster.Prober),
// asks whether this host can cause it: a runtime may implement the
// interface and still not have what it needs (docker on a kernel without
// sch_netem).
func bindProbed[T any](e *env, requested bool, kind string) (T, error) {
	v, err := capable(e.c, nil, func(hook) T { var none T; return none })
	if err != nil || !requested {
		return v, err
	}
	if p, ok := e.c.(cluster.Prober); ok {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.Probe(ctx, kind); err != nil {
			var none T
			return none, err
		}
	}
	return v, nil
}

// delayFault slows every packet one node sends (to its peers and its
// clients) by 20-400 ms, jitter a tenth of that, while it is held: a slow
// link rather than a cut one. It stays below any node timeout redline sets
// (the default 2 s), so it tests timeouts and ordering, not failover.
type delayFault struct {
	base
	shaper  cluster.Delayer
	delayed nodeSet
}

func (*delayFault) name() string              { return "delay" }
func (*delayFault) modes() []string           { return []string{"one", "primary"} }
func (*delayFault) needs() cluster.Capability { return cluster.CanDelay }

func (*delayFault) probe([]string) string { return cluster.ProbeDelay }

func (f *delayFault) bind(e *env, _ *hook, requested bool) (err error) {
	f.shaper, err = bindProbed[cluster.Delayer](e, requested, f.probe(nil))
	return err
}

func (f *delayFault) resolve(_ context.Context, st Step, t *clusteradmin.Topology, rng *rand.Rand) (*action, error) {
	targets, err := killTargets(evidenceMode(st), t, rng)
	if err != nil {
		return nil, err
	}
	latency := time.Duration(20+rng.IntN(381)) * time.Millisecond
	jitter := latency / 10
	a := &action{nodes: memberNames(targets), detail: map[string]any{
		"roles": roles(targets), "latency_ms": latency.Milliseconds(), "jitter_ms": jitter.Milliseconds(),
	}}
	hold(a, shapeStrike{&f.delayed, func(ctx context.Context, name string) error { return f.shaper.Delay(ctx, name, latency, jitter) }, f.undelay})
	return a, nil
}

func (f *delayFault) undelay(ctx context.Context, name string) error {
	return f.shaper.Delay(ctx, name, 0, 0)
}

func (f *delayFault) heal(ctx context.Context, h *healing) {
	f.delayed.undo(ctx, h, "undelayed", "remove the delay of", f.undelay)
}

// lossFault drops 5-50% of the packets one node sends while it is held.
// TCP resends what is lost, so the node's peers and clients see stalls of
// a retransmission timeout or more, not missing bytes.
type lossFault struct {
	base
	shaper cluster.Dropper
	lossy  nodeSet
}

func (*lossFault) name() string              { return "loss" }
func (*lossFault) modes() []string           { return []string{"one", "primary"} }
func (*lossFault) needs() cluster.Capability { return cluster.CanDrop }

func (*lossFault) probe([]string) string { return cluster.ProbeLoss }

func (f *lossFault) bind(e *env, _ *hook, requested bool) (err error) {
	f.shaper, err = bindProbed[cluster.Dropper](e, requested, f.probe(nil))
	return err
}

func (f *lossFault) resolve(_ context.Context, st Step, t *clusteradmin.Topology, rng *rand.Rand) (*action, error) {
	targets, err := killTargets(evidenceMode(st), t, rng)
	if err != nil {
		return nil, err
	}
	percent := 5 + rng.IntN(46)
	a := &action{nodes: memberNames(targets), detail: map[string]any{"roles": roles(targets), "loss_percent": percent}}
	hold(a, shapeStrike{&f.lossy, func(ctx context.Context, name string) error { return f.shaper.Loss(ctx, name, percent) }, f.unloss})
	return a, nil
}

func (f *lossFault) unloss(ctx context.Context, name string) error {
	return f.shaper.Loss(ctx, name, 0)
}

func (f *lossFault) heal(ctx context.Context, h *healing) {
	f.lossy.undo(ctx, h, "loss_removed", "remove the packet loss of", f.unloss)
}

// shapeStrike is one step's strike of delay or loss: its figures are the
// step's own (drawn when it resolves), so the strike is a value of the
// step rather than of the fault.
type shapeStrike struct {
	set      *nodeSet
	do, undo func(context.Context, string) error
}

func (s shapeStrike) strikeNode(ctx context.Context, node string) error {
	return strikeHeld(ctx, s.set, node, s.do)
}

func (s shapeStrike) healNode(ctx context.Context, node string) error {
	return healHeld(ctx, s.set, node, s.undo)
}

func (s shapeStrike) holds(node string) bool { return s.set.has(node) }
