package nemesis

// Compositions from known reports: sequences of admin steps and faults that
// upstream reports (or redis-cli's own way of failing) describe, each a
// study mode of the fault whose means it mostly uses, so a random schedule
// never picks it and no older seed changes:
//
//	migrate:cli-abort-failover-src  the two-step case: a classic move done in
//	    redis-cli's order (IMPORTING on the target, MIGRATING on the
//	    source, MIGRATE every key), the destination's shard fails over
//	    before SETSLOT NODE, the former destination refuses NODE ("use
//	    SETSLOT only with masters") and the move is left as redis-cli
//	    leaves it (source MIGRATING); then the source's shard fails over
//	    before anyone runs `redis-cli --cluster fix`. Redis 7.0 does not
//	    replicate SETSLOT (redis/redis#6339): the open state vanishes with
//	    the failover and the slot looks stable on a primary without its keys.
//	    Stopping it repairs the slot (SlotMover.RepairSlot).
//	failover:takeover-killed  SIGKILL a majority of the primaries (so no
//	    election can win), CLUSTER FAILOVER TAKEOVER on a replica of each,
//	    hold, restart the old primaries (configEpoch collisions between the
//	    old primaries and the takeovers: valkey-io/valkey#974).
//	member:emptied-replica-kill  move every slot of a primary away (as
//	    member remove does), make it a replica of another primary with
//	    CLUSTER REPLICATE, and SIGKILL that primary while the emptied node's
//	    full sync is still in progress; restart it after the hold. The
//	    emptied node may rank itself by its old primary offset, win the
//	    election and serve the slots without their data
//	    (valkey-io/valkey#885).
//
// Each step goes into the history as a nemesis "compose" entry when it
// happens, and the whole sequence into the fault's completion, with a census
// of the slot (every node's view of its owner, its open states and its key
// count) where a slot is involved: evidence for the attribution of a loss.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redline-dev/redline/harness/clusteradmin"
)

// composer records the steps of one composition.
type composer struct {
	*env
	mode  string
	nodes []string
	began time.Time
	steps []map[string]any
}

func newComposer(e *env, mode string, nodes []string) *composer {
	return &composer{env: e, mode: mode, nodes: nodes, began: time.Now()}
}

// step records one step now, in the history and in the final detail.
func (c *composer) step(name string, d map[string]any) {
	if d == nil {
		d = map[string]any{}
	}
	for k, v := range d {
		if v == nil {
			delete(d, k) // an error that did not happen
		}
	}
	d["step"], d["mode"], d["at_ms"] = name, c.mode, time.Since(c.began).Milliseconds()
	c.steps = append(c.steps, d)
	c.note("compose", c.nodes, d)
}

// replicaOf is a reachable replica of the primary with id (ok false when
// it has none).
func replicaOf(t *clusteradmin.Topology, id string) (clusteradmin.NodeState, bool) {
	for _, m := range t.Replicas() {
		if m.MasterID == id && m.Reachable {
			return m, true
		}
	}
	return clusteradmin.NodeState{}, false
}

// promote sends CLUSTER FAILOVER [mode] to replica (journalled as a
// failover of primary) and waits until it reports itself primary.
func (c *composer) promote(ctx context.Context, replica, primary clusteradmin.NodeState, mode, why string) (map[string]any, error) {
	args := []any{"cluster", "failover"}
	if mode != "" && mode != "default" {
		args = append(args, mode)
	}
	d := map[string]any{"replica": replica.Node.Name, "primary": primary.Node.Name, "command": clusteradmin.CommandString(args)}
	seq, err := c.journal.Begin(clusteradmin.Step{Kind: "failover", From: primary.ID, To: replica.ID,
		Note: clusteradmin.CommandString(args) + " on the replica: " + why})
	if err != nil {
		return d, err
	}
	began := time.Now()
	_, err = c.admin.Do(ctx, replica.Node.Addr, 3*time.Second, args...)
	if err == nil {
		fo, _ := c.bound["failover"].(*failoverFault)
		promoted := fo != nil && fo.waitRole(ctx, replica.Node.Addr, true, max(10*time.Second, 5*c.opts.NodeTimeout))
		d["promoted"], d["waited_ms"] = promoted, time.Since(began).Milliseconds()
		if !promoted {
			err = fmt.Errorf("%s was not promoted", replica.Node.Name)
		}
	}
	c.journal.End(seq, err)
	if err != nil {
		d["error"] = err.Error()
	}
	return d, err
}

// slotCensus asks every reachable node what it knows of slot: the owner in
// its own view, its MIGRATING/IMPORTING state for the slot, and how many
// keys of the slot it holds (COUNTKEYSINSLOT, primaries and replicas). The
// summary says what `redis-cli --cluster check` would see (open states and
// coverage only) and where the keys are.
func (e *env) slotCensus(ctx context.Context, slot int) map[string]any {
	t, err := e.topology(ctx)
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	nodes := map[string]any{}
	open := 0
	owner := ""
	var withKeys []string
	for _, m := range t.Members {
		if !m.Reachable {
			nodes[m.Node.Name] = map[string]any{"reachable": false}
			continue
		}
		d := map[string]any{"role": role(m)}
		if m.Primary && slices.Contains(m.Slots, slot) {
			d["owns"] = true
			owner = m.Node.Name
		}
		if id, ok := m.Migrating[slot]; ok {
			d["migrating_to"] = nameOf(t, id)
			open++
		}
		if id, ok := m.Importing[slot]; ok {
			d["importing_from"] = nameOf(t, id)
			open++
		}
		if v, err := e.admin.Do(ctx, m.Node.Addr, 2*time.Second, "cluster", "countkeysinslot", slot); err == nil {
			n, _ := v.(int64)
			d["keys"] = n
			if n > 0 && m.Primary {
				withKeys = append(withKeys, m.Node.Name)
			}
		} else {
			d["keys_error"] = err.Error()
		}
		nodes[m.Node.Name] = d
	}
	out := map[string]any{"slot": slot, "owner": owner, "open_states": open, "nodes": nodes, "primaries_with_keys": withKeys}
	switch {
	case open > 0:
		out["summary"] = fmt.Sprintf("slot %d is open (%d MIGRATING/IMPORTING states): redis-cli --cluster check reports it", slot, open)
	case owner != "" && len(withKeys) > 0 && !slices.Contains(withKeys, owner):
		out["summary"] = fmt.Sprintf("slot %d looks stable on %s, which holds none of its keys; %s hold them without owning the slot: "+
			"redis-cli --cluster check sees no open slot", slot, owner, strings.Join(withKeys, ", "))
	default:
		out["summary"] = fmt.Sprintf("slot %d is stable on %q with its keys", slot, owner)
	}
	return out
}

func nameOf(t *clusteradmin.Topology, id string) string {
	if m, ok := t.ByID(id); ok {
		return m.Node.Name
	}
	return id
}

// cliAbortMode is the two-step case (see the top of this file).
const cliAbortMode = "cli-abort-failover-src"

// cliAbortAction makes a the two-step case on slot, moved from src to dst.
func (f *migrateFault) cliAbortAction(a *action, st Step, slot int, src, dst clusteradmin.NodeState, t *clusteradmin.Topology) error {
	srcRep, ok1 := replicaOf(t, src.ID)
	dstRep, ok2 := replicaOf(t, dst.ID)
	if !ok1 || !ok2 {
		return fmt.Errorf("%s needs a reachable replica of the source %s and of the destination %s", st.Mode, src.Node.Name, dst.Node.Name)
	}
	a.nodes = append(a.nodes, srcRep.Node.Name, dstRep.Node.Name)
	a.opensSlot = true
	n := f.mover
	c := newComposer(f.env, st.Mode, a.nodes)
	a.start = func(ctx context.Context) (map[string]any, error) {
		res := map[string]any{"slot": slot, "from": src.Node.Name, "to": dst.Node.Name}
		defer func() { res["steps"] = c.steps }()
		seq, err := f.journal.Begin(clusteradmin.Step{Kind: "migrate", Slots: []int{slot}, From: src.ID, To: dst.ID,
			Note: "two-step case: redis-cli's order, interrupted by a failover of the destination's shard, then of the source's"})
		if err != nil {
			return res, err
		}
		// 1. redis-cli's order: the target IMPORTING, the source MIGRATING,
		// every key MIGRATEd.
		err = n.OpenMigration(ctx, slot, src, dst, false)
		keys := 0
		if err == nil {
			keys, _, err = n.MoveKeys(ctx, slot, src, dst, 0)
		}
		c.step("open-and-migrate", map[string]any{"keys": keys, "error": errText(err)})
		if err != nil {
			f.journal.End(seq, err)
			return res, err
		}
		res["keys"] = keys
		// 2. The destination's shard fails over before SETSLOT NODE.
		d, err := c.promote(ctx, dstRep, dst, "default", "the destination's shard, after MIGRATE and before SETSLOT NODE")
		c.step("failover-dst", d)
		if err != nil {
			f.journal.End(seq, err)
			return res, err
		}
		// 3. redis-cli's next step, SETSLOT NODE on the target: a replica
		// refuses it, and redis-cli stops there with the source MIGRATING.
		_, nerr := f.admin.Do(ctx, dst.Node.Addr, 3*time.Second, "cluster", "setslot", slot, "node", dst.ID)
		c.step("setslot-node-dst", map[string]any{"on": dst.Node.Name, "refused": nerr != nil, "error": errText(nerr)})
		res["node_refused"] = nerr != nil
		if nerr == nil {
			// Not the two-step case: the target took the slot.
			res["interrupted"] = false
		}
		// 4. Before any fix, the source's shard fails over.
		d, err = c.promote(ctx, srcRep, src, "default", "the source's shard, before any redis-cli --cluster fix")
		c.step("failover-src", d)
		f.journal.End(seq, errors.Join(nerr, err))
		if err != nil {
			return res, err
		}
		if err := f.waitConverged(ctx, 5*time.Second); err != nil {
			c.step("converge", map[string]any{"error": err.Error()})
		}
		// 5. What the cluster looks like now: where the keys are, who owns
		// the slot, and whether anything still shows the move as open.
		census := f.slotCensus(ctx, slot)
		res["census"] = census
		c.step("census", map[string]any{"summary": census["summary"]})
		return res, nil
	}
	a.stop = func(ctx context.Context) (map[string]any, error) {
		how, err := n.RepairSlot(ctx, slot)
		return map[string]any{"slot": slot, "repair": how, "census": f.slotCensus(ctx, slot)}, err
	}
	return nil
}

func errText(err error) any {
	if err == nil {
		return nil
	}
	return err.Error()
}
