package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
)

// slowLinkFault caps the rate at which one node sends (to peers and
// clients alike) at 128 kbit/s - 4 Mbit/s, drawn log-uniformly, while it is
// held: a slow link rather than a lossy or a cut one. What exceeds the rate
// queues for up to about 200 ms and is dropped past that, so the bus and
// the replication stream fall behind and TCP backs off.
type slowLinkFault struct {
	base
	throttler cluster.Throttler
	slowed    nodeSet
}

func (*slowLinkFault) name() string              { return "slow-link" }
func (*slowLinkFault) modes() []string           { return []string{"one", "primary"} }
func (*slowLinkFault) needs() cluster.Capability { return cluster.CanThrottle }

func (*slowLinkFault) probe([]string) string { return cluster.ProbeThrottle }

func (f *slowLinkFault) bind(e *env, _ *hook, requested bool) (err error) {
	f.throttler, err = bindProbed[cluster.Throttler](e, requested, f.probe(nil))
	return err
}

// The rate cap's range, in bits per second.
const (
	minLinkRate = 128_000
	maxLinkRate = 4_000_000
)

// linkRate draws a rate cap log-uniformly from its range (as many caps
// between 128k and 256k as between 2M and 4M), rounded to a kbit/s.
func linkRate(rng *rand.Rand) int64 {
	lo, hi := math.Log(minLinkRate), math.Log(maxLinkRate)
	return int64(math.Exp(lo+rng.Float64()*(hi-lo))/1000) * 1000
}

func (f *slowLinkFault) resolve(_ context.Context, st Step, t *clusteradmin.Topology, rng *rand.Rand) (*action, error) {
	targets, err := killTargets(evidenceMode(st), t, rng)
	if err != nil {
		return nil, err
	}
	rate := linkRate(rng)
	a := &action{nodes: memberNames(targets), detail: map[string]any{"roles": roles(targets), "rate_kbit": rate / 1000}}
	hold(a, shapeStrike{&f.slowed, func(ctx context.Context, name string) error { return f.throttler.Throttle(ctx, name, rate) }, f.unthrottle})
	return a, nil
}

func (f *slowLinkFault) unthrottle(ctx context.Context, name string) error {
	return f.throttler.Throttle(ctx, name, 0)
}

func (f *slowLinkFault) heal(ctx context.Context, h *healing) {
	f.slowed.undo(ctx, h, "rate_cap_removed", "remove the rate cap of", f.unthrottle)
}

// slowFault starves one node of CPU while it is held: 2-20% of one CPU,
// drawn per step. Where the runtime can cap a node's CPU (docker: the
// container's CFS quota) the kernel does it; elsewhere, on any target that
// can pause a node (a local process's SIGSTOP, docker pause, a pause hook),
// a duty cycle does: the node runs for the share of every 250 ms (20 ms at
// least) and is paused for the rest. Either way the node answers, late:
// slow, not dead, so failure detection, elections and p99 see a node that
// keeps up with nothing rather than one that is gone.
type slowFault struct {
	base
	limiter cluster.CPULimiter // nil: duty cycle with pauser
	pauser  cluster.Pauser
	slowed  nodeSet

	mu     sync.Mutex
	cycles map[string]*dutyCycle
}

func (*slowFault) name() string    { return "slow" }
func (*slowFault) modes() []string { return []string{"one", "primary"} }

// needs: pausing is what every runtime that can slow a node has (a
// CPULimiter, docker's CFS quota, is used where there is one).
func (*slowFault) needs() cluster.Capability { return cluster.CanPause }

func (f *slowFault) bind(e *env, _ *hook, requested bool) error {
	if l, err := bindProbed[cluster.CPULimiter](e, requested, cluster.ProbeCPU); err == nil {
		f.limiter = l
		return nil
	}
	var h *hook
	if cmd, ok := e.opts.Hooks["pause"]; ok {
		h = &hook{fault: "pause", cmd: cmd, c: e.c}
	}
	var err error
	f.pauser, err = capable(e.c, h, func(h hook) cluster.Pauser { return hookPauser{h} })
	return err
}

// The duty cycle's period and the shortest run in it: pausing and resuming
// a container takes some milliseconds each.
const (
	dutyPeriod = 250 * time.Millisecond
	minDutyRun = 20 * time.Millisecond
)

func (f *slowFault) resolve(_ context.Context, st Step, t *clusteradmin.Topology, rng *rand.Rand) (*action, error) {
	targets, err := killTargets(evidenceMode(st), t, rng)
	if err != nil {
		return nil, err
	}
	share := float64(2+rng.IntN(19)) / 100
	a := &action{nodes: memberNames(targets), detail: map[string]any{"roles": roles(targets), "cpu_share": share}}
	if f.limiter != nil {
		a.detail["how"] = "cpu-quota"
		hold(a, shapeStrike{&f.slowed, func(ctx context.Context, name string) error { return f.limiter.LimitCPU(ctx, name, share) }, f.unslow})
		return a, nil
	}
	run := max(time.Duration(share*float64(dutyPeriod)), minDutyRun)
	a.detail["how"], a.detail["period_ms"], a.detail["run_ms"] = "pause-duty-cycle", dutyPeriod.Milliseconds(), run.Milliseconds()
	hold(a, shapeStrike{&f.slowed, func(ctx context.Context, name string) error { return f.startCycle(ctx, name, run) }, f.unslow})
	return a, nil
}

// unslow lifts the CPU cap, or stops the duty cycle and resumes the node.
func (f *slowFault) unslow(ctx context.Context, name string) error {
	if f.limiter != nil {
		return f.limiter.LimitCPU(ctx, name, 0)
	}
	f.mu.Lock()
	dc := f.cycles[name]
	delete(f.cycles, name)
	f.mu.Unlock()
	var cycleErr error
	if dc != nil {
		cycleErr = dc.stop()
	}
	return errors.Join(f.pauser.Resume(ctx, name), cycleErr)
}

func (f *slowFault) heal(ctx context.Context, h *healing) {
	f.slowed.undo(ctx, h, "unslowed", "end the CPU starvation of", f.unslow)
}

// dutyCycle pauses a node for the rest of every period after it ran for
// run, until stopped; it ends with the node running.
type dutyCycle struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	err    error // the first pause or resume that failed
}

// stop ends the cycle and says what failed in it.
func (d *dutyCycle) stop() error {
	d.cancel()
	<-d.done
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// startCycle starts node's duty cycle; its first pause comes after run,
// and a node already cycling keeps its cycle.
func (f *slowFault) startCycle(ctx context.Context, name string, run time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cycles == nil {
		f.cycles = map[string]*dutyCycle{}
	}
	if f.cycles[name] != nil {
		return nil
	}
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	dc := &dutyCycle{cancel: cancel, done: make(chan struct{})}
	f.cycles[name] = dc
	go func() {
		defer close(dc.done)
		tick := time.NewTicker(dutyPeriod)
		defer tick.Stop()
		for {
			select {
			case <-cctx.Done():
				return
			case <-time.After(run):
			}
			if err := f.pauser.Pause(cctx, name); err != nil && cctx.Err() == nil {
				dc.mu.Lock()
				if dc.err == nil {
					dc.err = fmt.Errorf("pause %s: %w", name, err)
				}
				dc.mu.Unlock()
			}
			select {
			case <-cctx.Done():
				return // unslow resumes it
			case <-tick.C:
			}
			if err := f.pauser.Resume(cctx, name); err != nil && cctx.Err() == nil {
				dc.mu.Lock()
				if dc.err == nil {
					dc.err = fmt.Errorf("resume %s: %w", name, err)
				}
				dc.mu.Unlock()
			}
		}
	}()
	return nil
}
