package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/redline-dev/redline/harness/cluster"
	"github.com/redline-dev/redline/harness/clusteradmin"
)

// fault is one kind of fault, as a value: its name and modes, what it
// needs of the runtime, how a step of it resolves against the live
// topology, and how the end phase undoes what it still holds. Each value
// carries its own state (the nodes it killed, paused, skewed ...); a
// Nemesis makes fresh ones from the registry.
type fault interface {
	// name is what --nemesis and a Step call it.
	name() string
	// modes are the modes a schedule picks from, in order: append new
	// ones at the end, or older seeds' schedules change.
	modes() []string
	// studyModes are modes only "fault:mode" names reach (never picked by
	// a schedule, so they change no seed's schedule).
	studyModes() []string
	// needs says what the runtime must offer ("" when any target will do),
	// for the error naming a target that cannot.
	needs() string
	// hookable says a --nemesis-hook can stand in for the runtime.
	hookable() bool
	// bind takes what the fault needs from the cluster, or from the hook
	// for it. requested says the user asked for the fault (a probe that
	// touches a node runs only then). errUnsupported, or the probe's
	// error, when the target cannot cause it.
	bind(e *env, hook *hook, requested bool) error
	// resolve turns a step into an action on the topology t.
	resolve(ctx context.Context, st Step, t *clusteradmin.Topology, rng *rand.Rand) (*action, error)
	// heal undoes what the fault still holds on nodes (partitions, paused,
	// killed, skewed nodes) and reports it in h.
	heal(ctx context.Context, h *healing)
	// settle runs once the end phase found no open slot it cannot account
	// for and the cluster's own slot repairs are done (restoring roles).
	settle(ctx context.Context, h *healing)
}

// errUnsupported is bind's answer for a target that cannot cause a fault.
var errUnsupported = errors.New("unsupported")

// base gives a fault the defaults: no study modes, no hook, nothing to heal
// or settle.
type base struct{}

func (base) studyModes() []string             { return nil }
func (base) hookable() bool                   { return false }
func (base) heal(context.Context, *healing)   {}
func (base) settle(context.Context, *healing) {}
func (base) needs() string                    { return "" }
func (base) bind(*env, *hook, bool) error     { return nil }

// env is what every fault may use of the run: the cluster, the options,
// admin connections, the journal of topology changes, and the slot mover
// that migrate and member share (its open and moved slots are repaired by
// the end phase whichever fault left them).
type env struct {
	c       cluster.Cluster
	opts    Options
	admin   *clusteradmin.Admin
	journal *clusteradmin.Journal
	mover   *clusteradmin.SlotMover
	// named is the modes the user named as fault:mode, by fault.
	named map[string][]string
	// bound is every fault the target can cause, by name (filled by New
	// in registry order): a composition that strikes with another
	// fault's means (handoff.go) uses that fault's value, so the fault's
	// own heal undoes what the composition left.
	bound map[string]fault
	// note records an info entry into the history now, for a fault that
	// records its steps as they happen (handoff.go).
	note func(f string, nodes []string, detail map[string]any)
}

// capable returns the cluster's implementation of capability T, or the
// hook's in its place when the user gave one; errUnsupported when neither.
func capable[T any](c cluster.Cluster, h *hook, fromHook func(hook) T) (T, error) {
	if h != nil {
		return fromHook(*h), nil
	}
	if v, ok := c.(T); ok {
		return v, nil
	}
	var none T
	return none, errUnsupported
}

// healing collects what the end phase did: the heal entry's detail, the
// nodes it touched and the errors.
type healing struct {
	res       map[string]any
	touched   []string
	errs      []error
	scheduled map[string]bool // the faults of the schedule
}

func (h *healing) fail(err error) {
	if err != nil {
		h.errs = append(h.errs, err)
	}
}

// nodeSet is a fault's set of nodes it holds in some state (killed,
// paused, skewed), safe for concurrent use.
type nodeSet struct {
	mu sync.Mutex
	m  map[string]bool
}

func (s *nodeSet) mark(name string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]bool{}
	}
	if on {
		s.m[name] = true
	} else {
		delete(s.m, name)
	}
}

// sorted returns the names in the set, "n2" before "n10".
func (s *nodeSet) sorted() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedKeys(s.m)
}

// undo calls f for every node in the set, clears those it succeeds on, and
// reports the set (as it was) under key in h.
func (s *nodeSet) undo(ctx context.Context, h *healing, key, verb string, f func(context.Context, string) error) {
	names := s.sorted()
	for _, name := range names {
		if err := f(ctx, name); err != nil {
			h.fail(fmt.Errorf("%s %s: %w", verb, name, err))
			continue
		}
		s.mark(name, false)
	}
	if len(names) > 0 {
		h.res[key] = names
	}
	h.touched = append(h.touched, names...)
}

// hold makes a the action of a fault that holds nodes in a state: start
// puts every node in it (do) and marks it in set, stop takes every node out
// (undo) and unmarks it, both concurrently over the nodes.
func hold(a *action, set *nodeSet, do, undo func(context.Context, string) error) {
	a.start = func(ctx context.Context) (map[string]any, error) {
		return nil, each(a.nodes, func(name string) error {
			set.mark(name, true)
			return do(ctx, name)
		})
	}
	a.stop = func(ctx context.Context) (map[string]any, error) {
		return nil, each(a.nodes, func(name string) error {
			if err := undo(ctx, name); err != nil {
				return err
			}
			set.mark(name, false)
			return nil
		})
	}
}

// each runs f for every name concurrently and joins the errors.
func each(names []string, f func(string) error) error {
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

func role(m clusteradmin.NodeState) string {
	if m.Primary {
		return "primary"
	}
	return "replica"
}

func roles(ms []clusteradmin.NodeState) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		out[m.Node.Name] = role(m)
	}
	return out
}
