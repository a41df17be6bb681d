package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
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
	// needs is the capability the runtime must offer ("" when any target
	// will do through admin connections); capabilityWords say it in words.
	needs() cluster.Capability
	// borrows names the other faults whose means a mode of this one
	// strikes with (a study mode that kills during a move borrows kill),
	// so that a runtime without them refuses the mode before it starts.
	borrows(mode string) []string
	// hookable says a --nemesis-hook can stand in for the runtime.
	hookable() bool
	// probe is what the fault, with the modes named of it (nil: all of
	// them), needs of the host whatever the target implements: a
	// cluster.Probe* kind a Prober answers for, "" when nothing (or when
	// the fault can do without it).
	probe(named []string) string
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
func (base) needs() cluster.Capability        { return "" }
func (base) probe([]string) string            { return "" }
func (base) borrows(string) []string          { return nil }
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
	// fault's means (handoff.go, compose.go) borrows that fault's value
	// as those means (borrow: nodeStriker, pairCutter, roleWaiter), so
	// the fault's own heal undoes what the composition left.
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

// has says name is in the set.
func (s *nodeSet) has(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[name]
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

// nodeStriker is a fault that strikes nodes one by one and holds them
// struck until healed (kill, pause). A composition that strikes with such a
// fault's means (handoff.go, compose.go) borrows the bound one as this
// value: the node it leaves struck is then that fault's to heal in the end
// phase, as if the fault had struck it itself.
type nodeStriker interface {
	// strikeNode marks node held and strikes it; a node whose strike
	// failed stays marked, so the end phase still tries to undo it.
	strikeNode(ctx context.Context, node string) error
	// healNode undoes the strike, and unmarks the node once it is undone.
	healNode(ctx context.Context, node string) error
	// holds says node is held struck now.
	holds(node string) bool
}

// pairCutter is a fault that can cut two nodes from each other and heal
// its cuts (partition), for a composition's partition.
type pairCutter interface {
	cutPair(ctx context.Context, a, b string) error
	healCuts(ctx context.Context) error
}

// oneWayCutter drops what one node sends to others and heals its cuts
// (partition's one-way means), for a composition that loses one path.
type oneWayCutter interface {
	cutOneWay(ctx context.Context, from string, to []string) error
	healCuts(ctx context.Context) error
}

// roleWaiter waits for a node to take a role, for a composition's
// failover (the failover fault's means).
type roleWaiter interface {
	waitRole(ctx context.Context, addr string, primary bool, limit time.Duration) bool
	sinceWon(id string) time.Duration
	sinceVoted(id string) time.Duration
	knowsReplica(ctx context.Context, addr, primaryID, replicaID string) bool
	seesPrimaryUp(ctx context.Context, addr, primaryID string) bool
}

// borrow gives the bound fault of that name as the means T a composition
// strikes with; ok is false when the target cannot cause that fault.
func borrow[T any](e *env, name string) (T, bool) {
	v, ok := e.bound[name].(T)
	return v, ok
}

// strikeHeld marks node in set and strikes it with do (nodeStriker).
func strikeHeld(ctx context.Context, set *nodeSet, node string, do func(context.Context, string) error) error {
	set.mark(node, true)
	return do(ctx, node)
}

// healHeld undoes node's strike with undo and unmarks it once undone.
func healHeld(ctx context.Context, set *nodeSet, node string, undo func(context.Context, string) error) error {
	if err := undo(ctx, node); err != nil {
		return err
	}
	set.mark(node, false)
	return nil
}

// hold makes a the action of a fault that holds nodes struck: start
// strikes every node, stop heals every node, both concurrently over the
// nodes.
func hold(a *action, s nodeStriker) {
	a.start = func(ctx context.Context) (map[string]any, error) {
		return nil, each(a.nodes, func(name string) error { return s.strikeNode(ctx, name) })
	}
	a.stop = func(ctx context.Context) (map[string]any, error) {
		return nil, each(a.nodes, func(name string) error { return s.healNode(ctx, name) })
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
