package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
)

// clockFault bumps one node's clock by 1-120 s either way, or strobes it
// between 0 and 1-10 s every 50-300 ms while the fault is held; stopping
// (or the end phase) resets the offset to 0.
type clockFault struct {
	base
	*env
	clock  cluster.Clock
	skewed nodeSet
}

func (*clockFault) name() string              { return "clock" }
func (*clockFault) modes() []string           { return []string{"bump", "strobe"} }
func (*clockFault) needs() cluster.Capability { return cluster.CanClock }
func (*clockFault) hookable() bool            { return true }

// bind probes a runtime's clock when the fault is asked for: a runtime may
// implement Clock and still not be able to skew (a custom image without
// the clock shim); resetting the first node's offset to 0 is harmless and
// tells. A hook is taken as it is.
func (f *clockFault) bind(e *env, h *hook, requested bool) error {
	f.env = e
	var err error
	if f.clock, err = capable(e.c, h, func(h hook) cluster.Clock { return hookClock{h} }); err != nil || h != nil {
		return err
	}
	if requested {
		if nodes := cluster.SortedNodes(e.c.Nodes()); len(nodes) > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := f.clock.SetClockOffset(ctx, nodes[0].Name, 0)
			cancel()
			if err != nil {
				f.clock = nil
				return err
			}
		}
	}
	return nil
}

func (f *clockFault) resolve(_ context.Context, st Step, t *clusteradmin.Topology, rng *rand.Rand) (*action, error) {
	among := t.Members
	if prim := t.Primaries(); st.Evidence && len(prim) > 0 {
		among = prim // a skewed primary can produce evidence, a replica seldom
	}
	target := pickOne(rng, among)
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
			f.skewed.mark(name, true)
			before := f.serverTime(ctx, target.Node.Addr)
			err := f.clock.SetClockOffset(ctx, name, off)
			return map[string]any{"time_before": before, "time_after": f.serverTime(ctx, target.Node.Addr)}, err
		}
	case "strobe":
		off := sign * time.Duration(1+rng.IntN(10)) * time.Second
		period := time.Duration(50+rng.IntN(251)) * time.Millisecond
		a.detail["offset_ms"], a.detail["period_ms"] = off.Milliseconds(), period.Milliseconds()
		var stop context.CancelFunc
		var done sync.WaitGroup
		a.start = func(ctx context.Context) (map[string]any, error) {
			f.skewed.mark(name, true)
			if err := f.clock.SetClockOffset(ctx, name, off); err != nil {
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
					if err := f.clock.SetClockOffset(sctx, name, o); err != nil && sctx.Err() == nil {
						f.opts.Log("nemesis: strobe clock of %s: %v", name, err)
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
			return nil, f.reset(ctx, name)
		}
		return a, nil
	default:
		return nil, fmt.Errorf("unknown mode %q", st.Mode)
	}
	a.stop = func(ctx context.Context) (map[string]any, error) {
		return nil, f.reset(ctx, name)
	}
	return a, nil
}

func (f *clockFault) reset(ctx context.Context, name string) error {
	if err := f.clock.SetClockOffset(ctx, name, 0); err != nil {
		return err
	}
	f.skewed.mark(name, false)
	return nil
}

func (f *clockFault) heal(ctx context.Context, h *healing) {
	f.skewed.undo(ctx, h, "clock_reset", "reset clock of", func(ctx context.Context, name string) error {
		return f.clock.SetClockOffset(ctx, name, 0)
	})
}

// serverTime returns the node's TIME in unix milliseconds, or nil.
func (f *clockFault) serverTime(ctx context.Context, addr string) any {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	tm, err := f.admin.Client(addr).Time(ctx).Result()
	if err != nil {
		return nil
	}
	return tm.UnixMilli()
}
