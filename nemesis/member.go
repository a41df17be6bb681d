package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
)

// memberFault adds a node and rebalances slots onto it, or drains a
// primary and removes it, moving slots through the slot mover. "remove"
// turns into "add" unless at least three primaries would keep slots (with
// two, losing one leaves no majority to elect a replica); "add" turns into
// "remove" once the cluster has grown by two nodes past its size when the
// nemesis was made.
type memberFault struct {
	base
	*env
	grower    cluster.Grower
	origNodes int
}

func (*memberFault) name() string              { return "member" }
func (*memberFault) modes() []string           { return []string{"add", "remove"} }
func (*memberFault) needs() cluster.Capability { return cluster.CanGrow }

func (f *memberFault) bind(e *env, _ *hook, _ bool) error {
	f.env = e
	f.origNodes = len(e.c.Nodes())
	f.grower, _ = e.c.(cluster.Grower)
	if f.grower == nil {
		return errUnsupported
	}
	return nil
}

func (*memberFault) studyModes() []string {
	return []string{emptiedReplicaKillMode, orphanMigrationKillMode, killAfterReconfigureMode}
}

func (f *memberFault) resolve(ctx context.Context, st Step, t *clusteradmin.Topology, rng *rand.Rand) (*action, error) {
	if st.Mode == emptiedReplicaKillMode {
		return f.emptiedReplicaKillAction(st, t, rng)
	}
	if st.Mode == orphanMigrationKillMode {
		return f.orphanMigrationKillAction(st, t, rng)
	}
	if st.Mode == killAfterReconfigureMode {
		return f.killAfterReconfigureAction(st, t, rng)
	}
	prim := t.Primaries()
	mode := st.Mode
	if mode == "remove" && len(prim) <= 3 {
		mode = "add"
	}
	if mode == "add" && len(t.Members) >= f.origNodes+2 && len(prim) > 3 {
		mode = "remove"
	}
	for _, m := range prim {
		if !m.Reachable {
			return nil, fmt.Errorf("primary %s does not answer", m.Node.Name)
		}
	}
	a := &action{detail: map[string]any{"effective": mode}}
	switch mode {
	case "add":
		a.start = func(ctx context.Context) (map[string]any, error) {
			res, err := f.addMember(ctx, t)
			if name, ok := res["added"].(string); ok {
				a.nodes = []string{name} // the completion names the new node
			}
			return res, err
		}
	case "remove":
		victim := pickOne(rng, prim)
		a.nodes = []string{victim.Node.Name}
		a.start = func(ctx context.Context) (map[string]any, error) {
			return f.removeMember(ctx, t, victim)
		}
	default:
		return nil, fmt.Errorf("unknown mode %q", st.Mode)
	}
	return a, nil
}

func (f *memberFault) addMember(ctx context.Context, t *clusteradmin.Topology) (map[string]any, error) {
	prim := t.Primaries()
	nd, err := f.grower.AddNode(ctx)
	if err != nil {
		return nil, fmt.Errorf("add node: %w", err)
	}
	res := map[string]any{"added": nd.Name, "addr": nd.Addr}
	host, port, err := cluster.SplitAddr(prim[0].Announce)
	if err != nil {
		return res, err
	}
	seq, err := f.journal.Begin(clusteradmin.Step{Kind: "add-node", Note: nd.Name + " " + nd.Addr + " meets the cluster"})
	if err != nil {
		return res, err
	}
	if _, err = f.admin.Do(ctx, nd.Addr, 3*time.Second, "cluster", "meet", host, port); err != nil {
		f.journal.End(seq, err)
		return res, err
	}
	id, err := f.waitJoined(ctx, nd, t, max(20*time.Second, 10*f.opts.NodeTimeout))
	f.journal.End(seq, err)
	if err != nil {
		return res, err
	}
	res["id"] = id
	fresh := clusteradmin.NodeState{Node: nd, ID: id, Announce: clusteradmin.AnnounceOf(nd), Primary: true, Reachable: true}
	all := append(slices.Clone(prim), fresh)
	moved, keys := 0, 0
	for _, p := range prim {
		k := len(p.Slots) / (len(prim) + 1)
		slots := p.Slots[len(p.Slots)-k:]
		nk, err := f.mover.MoveSlots(ctx, slots, p, fresh, all)
		keys += nk
		if err != nil {
			res["slots_moved"], res["keys_moved"] = moved, keys
			return res, fmt.Errorf("move slots from %s to %s: %w", p.Node.Name, nd.Name, err)
		}
		moved += len(slots)
	}
	res["slots_moved"], res["keys_moved"] = moved, keys
	return res, nil
}

// waitJoined waits until the new node and every member know each other.
func (f *memberFault) waitJoined(ctx context.Context, nd cluster.Node, t *clusteradmin.Topology, limit time.Duration) (string, error) {
	deadline := time.Now().Add(limit)
	var why string
	for {
		id, w := f.joined(ctx, nd, t)
		if w == "" {
			return id, nil
		}
		why = w
		if time.Now().After(deadline) || !sleepUntil(ctx, time.Now().Add(100*time.Millisecond)) {
			return "", fmt.Errorf("%s did not join within %s: %s", nd.Name, limit, why)
		}
	}
}

func (f *memberFault) joined(ctx context.Context, nd cluster.Node, t *clusteradmin.Topology) (string, string) {
	text, err := f.admin.ClusterNodes(ctx, nd.Addr)
	if err != nil {
		return "", err.Error()
	}
	ls, err := cluster.ParseNodes(text)
	if err != nil {
		return "", err.Error()
	}
	var id string
	known := map[string]bool{}
	for _, l := range ls {
		if l.Myself() {
			id = l.ID
		} else if !l.HasFlag("handshake") {
			known[l.ID] = true
		}
	}
	for _, m := range t.Members {
		if !known[m.ID] {
			return "", fmt.Sprintf("%s does not know %s yet", nd.Name, m.Node.Name)
		}
	}
	// A fresh primary refuses writes (and so MIGRATE's RESTORE) until its
	// own cluster state is ok.
	v, err := f.admin.Do(ctx, nd.Addr, 2*time.Second, "cluster", "info")
	if err != nil {
		return "", err.Error()
	}
	if info, _ := v.(string); !strings.Contains(info, "cluster_state:ok") {
		return "", fmt.Sprintf("%s: cluster_state is not ok yet", nd.Name)
	}
	for _, m := range t.Members {
		if !m.Reachable {
			continue
		}
		text, err := f.admin.ClusterNodes(ctx, m.Node.Addr)
		if err != nil {
			return "", err.Error()
		}
		if !strings.Contains(text, id) {
			return "", fmt.Sprintf("%s does not know %s yet", m.Node.Name, nd.Name)
		}
	}
	return id, ""
}

// removeMember moves every slot of victim to the other primaries, moves its
// replicas to the primary with the fewest, makes every node forget it and
// removes it, as redis-cli reshard + del-node do.
func (f *memberFault) removeMember(ctx context.Context, t *clusteradmin.Topology, victim clusteradmin.NodeState) (map[string]any, error) {
	prim := t.Primaries()
	var others []clusteradmin.NodeState
	for _, m := range prim {
		if m.ID != victim.ID {
			others = append(others, m)
		}
	}
	res := map[string]any{"removed": victim.Node.Name, "id": victim.ID}
	moved, keys := 0, 0
	chunk := (len(victim.Slots) + len(others) - 1) / len(others)
	for i, dst := range others {
		slots := victim.Slots[min(i*chunk, len(victim.Slots)):min((i+1)*chunk, len(victim.Slots))]
		nk, err := f.mover.MoveSlots(ctx, slots, victim, dst, prim)
		keys += nk
		if err != nil {
			res["slots_moved"], res["keys_moved"] = moved, keys
			return res, fmt.Errorf("move slots from %s to %s: %w", victim.Node.Name, dst.Node.Name, err)
		}
		moved += len(slots)
	}
	res["slots_moved"], res["keys_moved"] = moved, keys
	// Replicas of the drained node follow its last slot by replica
	// migration; any that have not yet are told where to go.
	if fresh, err := f.topology(ctx); err == nil {
		t = fresh
	}
	replicasOf := map[string]int{}
	for _, m := range t.Members {
		if !m.Primary {
			replicasOf[m.MasterID]++
		}
	}
	seq, err := f.journal.Begin(clusteradmin.Step{Kind: "remove-node", From: victim.ID,
		Note: "its replicas replicate other primaries, every node forgets it, it is reset and removed"})
	if err != nil {
		return res, err
	}
	var errs []error
	defer func() { f.journal.End(seq, errors.Join(errs...)) }()
	for _, m := range t.Members {
		if m.Primary || m.MasterID != victim.ID || !m.Reachable {
			continue
		}
		target := slices.MinFunc(others, func(a, b clusteradmin.NodeState) int { return replicasOf[a.ID] - replicasOf[b.ID] })
		replicasOf[target.ID]++
		if _, err := f.admin.Do(ctx, m.Node.Addr, 3*time.Second, "cluster", "replicate", target.ID); err != nil {
			errs = append(errs, err)
		}
	}
	for _, m := range t.Members {
		if m.ID == victim.ID || !m.Reachable {
			continue
		}
		if _, err := f.admin.Do(ctx, m.Node.Addr, 3*time.Second, "cluster", "forget", victim.ID); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := f.admin.Do(ctx, victim.Node.Addr, 3*time.Second, "cluster", "reset", "soft"); err != nil {
		f.opts.Log("nemesis: %v", err)
	}
	if err := f.grower.RemoveNode(ctx, victim.Node.Name); err != nil {
		errs = append(errs, fmt.Errorf("remove %s: %w", victim.Node.Name, err))
	}
	return res, errors.Join(errs...)
}
