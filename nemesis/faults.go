package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// partition cuts node-to-node links as planPartition says.
func (n *Nemesis) partition(st Step, t *topo, rng *rand.Rand) (*action, error) {
	plan, err := planPartition(st.Mode, t, rng)
	if err != nil {
		return nil, err
	}
	nodes := sortedKeys(plan.Cuts)
	clients := n.opts.PartitionClients && len(plan.Minority) > 0
	// The entry names the side that is cut off: the minority, or the first
	// group of an even split (primaries in primaries-replicas); for ring
	// and bridge every node that drops something.
	touched := nodes
	switch {
	case len(plan.Minority) > 0:
		touched = plan.Minority
	case st.Mode != "ring" && st.Mode != "bridge" && len(plan.Groups) == 2:
		touched = plan.Groups[0]
	}
	a := &action{nodes: touched, detail: map[string]any{
		"groups": plan.Groups, "cuts": plan.Cuts, "minority": plan.Minority, "clients": clients,
	}}
	a.start = func(ctx context.Context) (map[string]any, error) {
		n.mu.Lock()
		n.cut = true
		n.mu.Unlock()
		var errs []error
		for _, node := range nodes {
			withClients := clients && slices.Contains(plan.Minority, node)
			if err := n.parter.Cut(ctx, node, plan.Cuts[node], withClients); err != nil {
				errs = append(errs, fmt.Errorf("cut %s from %v: %w", node, plan.Cuts[node], err))
			}
		}
		return nil, errors.Join(errs...)
	}
	a.stop = func(ctx context.Context) (map[string]any, error) {
		if err := n.parter.Heal(ctx); err != nil {
			return nil, fmt.Errorf("heal partition: %w", err)
		}
		n.mu.Lock()
		n.cut = false
		n.mu.Unlock()
		return nil, nil
	}
	return a, nil
}

// kill SIGKILLs the targets and restarts them when stopped.
func (n *Nemesis) kill(st Step, t *topo, rng *rand.Rand) (*action, error) {
	targets, err := killTargets(st.Mode, t, rng)
	if err != nil {
		return nil, err
	}
	names := memberNames(targets)
	a := &action{nodes: names, detail: map[string]any{"roles": roles(targets)}}
	a.start = func(ctx context.Context) (map[string]any, error) {
		return nil, n.each(names, func(name string) error {
			n.mark(n.killed, name, true)
			return n.killer.Kill(ctx, name)
		})
	}
	a.stop = func(ctx context.Context) (map[string]any, error) {
		return nil, n.each(names, func(name string) error {
			if err := n.killer.Restart(ctx, name); err != nil {
				return err
			}
			n.mark(n.killed, name, false)
			return nil
		})
	}
	return a, nil
}

// pause freezes the targets and resumes them when stopped. primary-long
// holds the pause for at least three node timeouts plus a second, so that a
// replica is promoted and the old primary comes back as a zombie.
func (n *Nemesis) pause(st Step, t *topo, rng *rand.Rand) (*action, error) {
	targets, err := killTargets(st.Mode, t, rng)
	if err != nil {
		return nil, err
	}
	names := memberNames(targets)
	a := &action{nodes: names, detail: map[string]any{"roles": roles(targets)}}
	if st.Mode == "primary-long" {
		a.minHold = 3*n.opts.NodeTimeout + time.Second
		a.detail["min_hold_ms"] = a.minHold.Milliseconds()
	}
	a.start = func(ctx context.Context) (map[string]any, error) {
		return nil, n.each(names, func(name string) error {
			n.mark(n.paused, name, true)
			return n.pauser.Pause(ctx, name)
		})
	}
	a.stop = func(ctx context.Context) (map[string]any, error) {
		return nil, n.each(names, func(name string) error {
			if err := n.pauser.Resume(ctx, name); err != nil {
				return err
			}
			n.mark(n.paused, name, false)
			return nil
		})
	}
	return a, nil
}

// skew bumps one node's clock by 1-120 s either way, or strobes it between
// 0 and 1-10 s every 50-300 ms while the fault is held.
func (n *Nemesis) skew(st Step, t *topo, rng *rand.Rand) (*action, error) {
	target := pickOne(rng, t.Members)
	name := target.Node.Name
	a := &action{nodes: []string{name}, detail: map[string]any{"role": role(target)}}
	sign := time.Duration(1)
	if rng.IntN(2) == 0 {
		sign = -1
	}
	switch st.Mode {
	case "bump":
		off := sign * time.Duration(1+rng.IntN(120)) * time.Second
		a.detail["offset_ms"] = off.Milliseconds()
		a.start = func(ctx context.Context) (map[string]any, error) {
			n.mark(n.skewed, name, true)
			before := n.serverTime(ctx, target.Node.Addr)
			err := n.clock.SetClockOffset(ctx, name, off)
			return map[string]any{"time_before": before, "time_after": n.serverTime(ctx, target.Node.Addr)}, err
		}
	case "strobe":
		off := sign * time.Duration(1+rng.IntN(10)) * time.Second
		period := time.Duration(50+rng.IntN(251)) * time.Millisecond
		a.detail["offset_ms"], a.detail["period_ms"] = off.Milliseconds(), period.Milliseconds()
		var stop context.CancelFunc
		var done sync.WaitGroup
		a.start = func(ctx context.Context) (map[string]any, error) {
			n.mark(n.skewed, name, true)
			if err := n.clock.SetClockOffset(ctx, name, off); err != nil {
				return nil, err
			}
			var sctx context.Context
			sctx, stop = context.WithCancel(context.Background())
			done.Add(1)
			go func() {
				defer done.Done()
				tick := time.NewTicker(period)
				defer tick.Stop()
				on := true
				for {
					select {
					case <-sctx.Done():
						return
					case <-tick.C:
					}
					on = !on
					o := time.Duration(0)
					if on {
						o = off
					}
					if err := n.clock.SetClockOffset(sctx, name, o); err != nil && sctx.Err() == nil {
						n.opts.Log("nemesis: strobe clock of %s: %v", name, err)
					}
				}
			}()
			return nil, nil
		}
		a.stop = func(ctx context.Context) (map[string]any, error) {
			if stop != nil {
				stop()
				done.Wait()
			}
			return nil, n.resetClock(ctx, name)
		}
		return a, nil
	default:
		return nil, fmt.Errorf("unknown mode %q", st.Mode)
	}
	a.stop = func(ctx context.Context) (map[string]any, error) {
		return nil, n.resetClock(ctx, name)
	}
	return a, nil
}

func (n *Nemesis) resetClock(ctx context.Context, name string) error {
	if err := n.clock.SetClockOffset(ctx, name, 0); err != nil {
		return err
	}
	n.mark(n.skewed, name, false)
	return nil
}

// serverTime returns the node's TIME in unix milliseconds, or nil.
func (n *Nemesis) serverTime(ctx context.Context, addr string) any {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	tm, err := n.admin.client(addr).Time(ctx).Result()
	if err != nil {
		return nil
	}
	return tm.UnixMilli()
}

func (n *Nemesis) mark(set map[string]bool, name string, on bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if on {
		set[name] = true
	} else {
		delete(set, name)
	}
}

// each runs f for every name concurrently and joins the errors.
func (n *Nemesis) each(names []string, f func(string) error) error {
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(name); err != nil {
				errs[i] = fmt.Errorf("%s: %w", name, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func role(m member) string {
	if m.Primary {
		return "primary"
	}
	return "replica"
}

func roles(ms []member) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		out[m.Node.Name] = role(m)
	}
	return out
}
