package nemesis

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/history"
)

// A capacity-change plan (`bench --plan 'at=10s scale-out; at=30s reshard
// 500; at=50s failover'`) is a nemesis whose steps fire at chosen times
// instead of the seeded schedule: the changes a team plans (add a primary
// and rebalance onto it, drain one and remove it, move N slots, fail a
// primary over) made while the load runs, each recorded under its own
// name so the bench's windows read "scale-out", "reshard", ...

// Change is one planned capacity change.
type Change struct {
	At   time.Duration `json:"at"`   // since traffic started
	Kind string        `json:"kind"` // scale-out, scale-in, reshard, failover
	// Slots is how many slots a reshard moves.
	Slots int `json:"slots,omitempty"`
}

// ChangeKinds are the plan's kinds and what each does.
var ChangeKinds = map[string]string{
	"scale-out": "a new node joins as a primary and every primary gives it an equal share of its slots",
	"scale-in":  "the primary with the fewest slots is drained to the others, its replicas re-pointed, and it is removed",
	"reshard":   "N slots move from the primary with the most slots to the one with the fewest (reshard N)",
	"failover":  "a replica of the primary with the most slots takes over (CLUSTER FAILOVER)",
}

// ParsePlan reads 'at=10s scale-out; at=30s reshard 500; at=50s failover'
// (steps separated by ';' or new lines; '#' starts a comment), or, with a
// leading '@', the file of that name.
func ParsePlan(s string) ([]Change, error) {
	if path, ok := strings.CutPrefix(strings.TrimSpace(s), "@"); ok {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("plan file: %w", err)
		}
		s = string(b)
	}
	var out []Change
	for _, line := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == '\n' }) {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		at, ok := strings.CutPrefix(f[0], "at=")
		if !ok || len(f) < 2 {
			return nil, fmt.Errorf("plan step %q: expected 'at=DURATION KIND [N]', e.g. 'at=10s scale-out' or 'at=30s reshard 500'", strings.TrimSpace(line))
		}
		d, err := time.ParseDuration(at)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("plan step %q: %q is not a duration (10s, 1m30s)", strings.TrimSpace(line), at)
		}
		c := Change{At: d, Kind: strings.ToLower(f[1])}
		if _, ok := ChangeKinds[c.Kind]; !ok {
			kinds := make([]string, 0, len(ChangeKinds))
			for k := range ChangeKinds {
				kinds = append(kinds, k)
			}
			slices.Sort(kinds)
			return nil, fmt.Errorf("plan step %q: unknown change %q: choose %s", strings.TrimSpace(line), f[1], strings.Join(kinds, ", "))
		}
		switch {
		case c.Kind == "reshard":
			if len(f) != 3 {
				return nil, fmt.Errorf("plan step %q: reshard needs the number of slots to move (reshard 500)", strings.TrimSpace(line))
			}
			n, err := strconv.Atoi(f[2])
			if err != nil || n < 1 || n > 16384 {
				return nil, fmt.Errorf("plan step %q: %q is not a number of slots between 1 and 16384", strings.TrimSpace(line), f[2])
			}
			c.Slots = n
		case len(f) != 2:
			return nil, fmt.Errorf("plan step %q: %s takes no argument", strings.TrimSpace(line), c.Kind)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the plan is empty: e.g. --plan 'at=10s scale-out; at=30s reshard 500'")
	}
	slices.SortStableFunc(out, func(a, b Change) int { return int(a.At - b.At) })
	return out, nil
}

// NewPlan is a nemesis that makes the planned changes at their times.
// The faults it needs (member, failover, migrate) must be possible on c:
// scale-out and scale-in need a runtime that adds and removes nodes.
func NewPlan(plan []Change, c cluster.Cluster, opts Options) (*Nemesis, error) {
	var faults []string
	for _, ch := range plan {
		switch ch.Kind {
		case "scale-out", "scale-in":
			faults = append(faults, "member")
		case "failover":
			faults = append(faults, "failover")
		case "reshard":
			faults = append(faults, "migrate")
		}
	}
	if opts.Interval <= 0 {
		opts.Interval = time.Second // unused: the plan sets the times
	}
	n, err := New(canonical(faults), c, opts)
	if err != nil {
		return nil, err
	}
	n.plan = plan
	return n, nil
}

// runPlan fires each change at its time; a change due while the previous
// one still runs starts when it is done, and its record says how late.
func (n *Nemesis) runPlan(ctx context.Context, rec history.Recorder) error {
	t0 := time.Now()
	for _, ch := range n.plan {
		due := t0.Add(ch.At)
		if !sleepUntil(ctx, due) {
			return nil
		}
		late := time.Since(due)
		if late < 20*time.Millisecond {
			late = 0
		}
		st := Step{Fault: ch.Kind, Mode: "at=" + ch.At.String(), Slots: ch.Slots}
		if a := n.fireLate(ctx, rec, st, late); a != nil && a.stop != nil {
			n.finish(ctx, rec, a)
		}
	}
	<-ctx.Done()
	return nil
}

// resolveChange turns a planned change into an action on t.
func (n *Nemesis) resolveChange(ctx context.Context, st Step, t *clusteradmin.Topology) (*action, error) {
	prim := t.Primaries()
	bySlots := slices.Clone(prim)
	slices.SortStableFunc(bySlots, func(a, b clusteradmin.NodeState) int { return len(b.Slots) - len(a.Slots) })
	switch st.Fault {
	case "scale-out":
		// Not the member fault's resolve: it turns an add into a remove
		// once the cluster has grown by two; a plan does what it says.
		m := n.bound["member"].(*memberFault)
		a := &action{detail: map[string]any{"effective": "add"}}
		a.start = func(ctx context.Context) (map[string]any, error) {
			res, err := m.addMember(ctx, t)
			if name, ok := res["added"].(string); ok {
				a.nodes = []string{name}
			}
			return res, err
		}
		return a, nil
	case "scale-in":
		if len(prim) <= 3 {
			return nil, fmt.Errorf("scale-in needs more than 3 primaries (have %d): a smaller cluster cannot elect a replica after losing one", len(prim))
		}
		m := n.bound["member"].(*memberFault)
		victim := bySlots[len(bySlots)-1]
		a := &action{nodes: []string{victim.Node.Name}, detail: map[string]any{"effective": "remove"}}
		a.start = func(ctx context.Context) (map[string]any, error) { return m.removeMember(ctx, t, victim) }
		return a, nil
	case "failover":
		// The busiest primary's replica: the failover that matters most.
		busiest := bySlots[0]
		for _, r := range t.Replicas() {
			if r.MasterID == busiest.ID && r.Reachable {
				sub := *t
				sub.Members = []clusteradmin.NodeState{busiest, r}
				return n.bound["failover"].resolve(ctx, Step{Fault: "failover", Mode: "default"}, &sub, stepRand(st))
			}
		}
		return n.bound["failover"].resolve(ctx, Step{Fault: "failover", Mode: "default"}, t, stepRand(st))
	case "reshard":
		if len(prim) < 2 {
			return nil, fmt.Errorf("reshard needs two primaries, have %d", len(prim))
		}
		src, dst := bySlots[0], bySlots[len(bySlots)-1]
		k := min(st.Slots, len(src.Slots))
		slots := src.Slots[len(src.Slots)-k:]
		a := &action{nodes: []string{src.Node.Name, dst.Node.Name}, detail: map[string]any{"slots": k, "from": src.Node.Name, "to": dst.Node.Name}}
		a.start = func(ctx context.Context) (map[string]any, error) {
			keys, err := n.mover.MoveSlots(ctx, slots, src, dst, prim)
			return map[string]any{"slots_moved": k, "keys_moved": keys, "from": src.Node.Name, "to": dst.Node.Name}, err
		}
		return a, nil
	}
	return nil, fmt.Errorf("unknown change %q", st.Fault)
}
