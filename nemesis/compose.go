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
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/history"
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
	c.note(history.Compose, c.nodes, d)
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
	fo, _ := borrow[roleWaiter](c.env, "failover")
	def := mode == "" || mode == "default"
	if def {
		if waited := manualFailoverReady(ctx, fo, replica, primary, max(5*time.Second, 3*c.opts.NodeTimeout)); waited != nil {
			d["waited"] = waited
		}
	}
	began := time.Now()
	_, err = c.admin.Do(ctx, replica.Node.Addr, 3*time.Second, args...)
	if err == nil {
		var promoted bool
		if def {
			var why map[string]any
			promoted, why = awaitPromotion(ctx, fo, replica, primary, max(10*time.Second, 5*c.opts.NodeTimeout))
			if why != nil {
				d["unpromoted_evidence"] = why
			}
		} else {
			promoted = fo != nil && fo.waitRole(ctx, replica.Node.Addr, true, max(10*time.Second, 5*c.opts.NodeTimeout))
		}
		d["promoted"], d["waited_ms"] = promoted, time.Since(began).Milliseconds()
		if !promoted && err == nil {
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
	keysOf := map[string]int64{}
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
				keysOf[m.Node.Name] = n
			}
		} else {
			d["keys_error"] = err.Error()
		}
		nodes[m.Node.Name] = d
	}
	var strays []string
	for _, name := range withKeys {
		if name != owner {
			strays = append(strays, fmt.Sprintf("%s (%d keys)", name, keysOf[name]))
		}
	}
	out := map[string]any{"slot": slot, "owner": owner, "open_states": open, "nodes": nodes, "primaries_with_keys": withKeys,
		"stray_primaries": len(strays)}
	switch {
	case open > 0:
		out["summary"] = fmt.Sprintf("slot %d is open (%d MIGRATING/IMPORTING states): redis-cli --cluster check reports it", slot, open)
	case len(strays) > 0:
		out["summary"] = fmt.Sprintf("slot %d looks stable on %q (%d keys) while %s hold keys of it without owning it: "+
			"redis-cli --cluster check sees no open slot", slot, owner, keysOf[owner], strings.Join(strays, ", "))
	case keysOf[owner] == 0:
		out["summary"] = fmt.Sprintf("slot %d is stable on %q and no primary holds a key of it", slot, owner)
	default:
		out["summary"] = fmt.Sprintf("slot %d is stable on %q with %d keys, no other primary holds any", slot, owner, keysOf[owner])
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
	if _, external := f.c.(*clusteradmin.External); external {
		// It strands every key of the slot by design, a user's too: a
		// guest does not do that to a cluster it did not create.
		return fmt.Errorf("%s strands a slot's keys on purpose: it runs only on clusters redline creates, not on --addrs", st.Mode)
	}
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
		// The former destination learns that it is a replica from its
		// successor's next message, a moment after the successor reports
		// itself primary; until then it is still a primary and takes the
		// slot (seen once on the reference under load, 119 ms after the
		// failover began): the step waits for the demotion, as redis-cli's
		// user would have seen it.
		if fo, ok := borrow[roleWaiter](c.env, "failover"); ok && err == nil {
			d["former_demoted"] = fo.waitRole(ctx, dst.Node.Addr, false, max(5*time.Second, 3*c.opts.NodeTimeout))
		}
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

// epochView is every reachable node's own line: its role, config epoch and
// primary, by node name, plus the config epochs two or more primaries
// share (a collision Redis resolves by bumping one of them).
func (e *env) epochView(ctx context.Context) map[string]any {
	nodes := map[string]any{}
	byEpoch := map[uint64][]string{}
	for _, nd := range e.c.Nodes() {
		text, err := e.admin.ClusterNodes(ctx, nd.Addr)
		if err != nil {
			nodes[nd.Name] = map[string]any{"error": err.Error()}
			continue
		}
		ls, err := cluster.ParseNodes(text)
		if err != nil {
			nodes[nd.Name] = map[string]any{"error": err.Error()}
			continue
		}
		self, ok := cluster.Self(ls)
		if !ok {
			continue
		}
		d := map[string]any{"config_epoch": self.ConfigEpoch, "primary": self.IsPrimary()}
		if self.IsPrimary() {
			slots := 0
			for _, r := range self.Ranges {
				slots += r.End - r.Start + 1
			}
			d["slots"] = slots
			if slots > 0 {
				byEpoch[self.ConfigEpoch] = append(byEpoch[self.ConfigEpoch], nd.Name)
			}
		}
		nodes[nd.Name] = d
	}
	var shared []string
	for ep, ns := range byEpoch {
		if len(ns) > 1 {
			shared = append(shared, fmt.Sprintf("epoch %d: %s", ep, strings.Join(ns, ",")))
		}
	}
	slices.Sort(shared)
	return map[string]any{"nodes": nodes, "shared_epochs": shared}
}

// takeoverKilledMode is the takeover composition (see the top of this file).
const takeoverKilledMode = "takeover-killed"

// takeoverKilledAction kills a majority of the primaries and takes each
// one's shard over with CLUSTER FAILOVER TAKEOVER on a replica; stopping
// restarts the old primaries and records what they became.
func (f *failoverFault) takeoverKilledAction(st Step, t *clusteradmin.Topology, rng *rand.Rand) (*action, error) {
	k, _ := borrow[nodeStriker](f.env, "kill")
	if k == nil {
		return nil, fmt.Errorf("%s needs to %s", st.Mode, needsWords(lookup("kill")))
	}
	prim := t.Primaries()
	var withReplica []clusteradmin.NodeState
	for _, p := range prim {
		if _, ok := replicaOf(t, p.ID); ok && p.Reachable {
			withReplica = append(withReplica, p)
		}
	}
	want := len(prim)/2 + 1
	if len(withReplica) < want {
		return nil, fmt.Errorf("%s needs %d primaries with a reachable replica (a majority of %d), have %d", st.Mode, want, len(prim), len(withReplica))
	}
	victims := pickN(rng, withReplica, want)
	var replicas []clusteradmin.NodeState
	var nodes []string
	for _, v := range victims {
		r, _ := replicaOf(t, v.ID)
		replicas = append(replicas, r)
		nodes = append(nodes, v.Node.Name, r.Node.Name)
	}
	a := &action{nodes: nodes, detail: map[string]any{"killed": memberNames(victims), "takeover": memberNames(replicas)}}
	c := newComposer(f.env, st.Mode, nodes)
	a.start = func(ctx context.Context) (map[string]any, error) {
		res := map[string]any{}
		defer func() { res["steps"] = c.steps }()
		err := each(memberNames(victims), func(name string) error { return k.strikeNode(ctx, name) })
		c.step("kill", map[string]any{"nodes": memberNames(victims), "error": errText(err)})
		if err != nil {
			return res, err
		}
		// At once, before failure detection: with a majority of the
		// primaries down no election can win, TAKEOVER needs none.
		errs := make([]error, len(replicas))
		each(memberNames(replicas), func(name string) error {
			for i, r := range replicas {
				if r.Node.Name == name {
					var d map[string]any
					d, errs[i] = c.promote(ctx, r, victims[i], "takeover", "its primary was killed with a majority of the primaries")
					c.step("takeover", d)
				}
			}
			return nil
		})
		res["epochs_after_takeover"] = f.epochView(ctx)
		return res, errors.Join(errs...)
	}
	a.stop = func(ctx context.Context) (map[string]any, error) {
		res := map[string]any{}
		err := each(memberNames(victims), func(name string) error { return k.healNode(ctx, name) })
		c.step("restart", map[string]any{"nodes": memberNames(victims), "error": errText(err)})
		cerr := f.waitConverged(ctx, max(10*time.Second, 5*f.opts.NodeTimeout))
		view := f.epochView(ctx)
		res["epochs_after_restart"] = view
		// Who serves each taken-over shard now: the takeover, or the old
		// primary back (the loss of valkey-io/valkey#974).
		var back []string
		if ns, ok := view["nodes"].(map[string]any); ok {
			for _, v := range victims {
				if d, ok := ns[v.Node.Name].(map[string]any); ok && d["primary"] == true && d["slots"] != nil && d["slots"] != 0 {
					back = append(back, v.Node.Name)
				}
			}
		}
		res["old_primaries_serving"] = back
		res["steps"] = c.steps
		c.step("after-restart", map[string]any{"old_primaries_serving": back, "shared_epochs": view["shared_epochs"], "converge_error": errText(cerr)})
		return res, err
	}
	return a, nil
}

// emptiedReplicaKillMode is the emptied-primary composition (see the top
// of this file).
const emptiedReplicaKillMode = "emptied-replica-kill"

// replInfo is a node's INFO replication fields that say where a sync is.
func (e *env) replInfo(ctx context.Context, addr string) map[string]any {
	v, err := e.admin.Do(ctx, addr, 2*time.Second, "info", "replication")
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	text, _ := v.(string)
	out := map[string]any{}
	for _, k := range []string{"role", "master_host", "master_port", "master_link_status", "master_sync_in_progress",
		"slave_repl_offset", "master_repl_offset"} {
		if s, ok := clusteradmin.InfoField(text, k); ok {
			out[k] = s
		}
	}
	return out
}

// emptiedReplicaKillAction empties a primary E of its slots, the last one
// going to primary P, so that E becomes P's replica (Redis 7's replica
// migration of an emptied primary; CLUSTER REPLICATE where the server did
// not), and kills P while E's full sync is still in progress. Stopping
// restarts P. The record says who won P's shard: P's own replica or E.
func (f *memberFault) emptiedReplicaKillAction(st Step, t *clusteradmin.Topology, rng *rand.Rand) (*action, error) {
	k, _ := borrow[nodeStriker](f.env, "kill")
	if k == nil {
		return nil, fmt.Errorf("%s needs to %s", st.Mode, needsWords(lookup("kill")))
	}
	prim := t.Primaries()
	if len(prim) < 4 {
		// Only primaries with slots vote: with three, emptying one leaves
		// two, and with P killed the one left cannot make a majority.
		return nil, fmt.Errorf("%s needs four primaries with slots (e.g. --nodes 8 --replicas 1), have %d", st.Mode, len(prim))
	}
	for _, m := range prim {
		if !m.Reachable {
			return nil, fmt.Errorf("primary %s does not answer", m.Node.Name)
		}
	}
	pair := pickN(rng, prim, 2)
	emptied, target := pair[0], pair[1]
	rep, ok := replicaOf(t, target.ID)
	if !ok {
		return nil, fmt.Errorf("%s: %s has no reachable replica to compete with the emptied %s", st.Mode, target.Node.Name, emptied.Node.Name)
	}
	var others []clusteradmin.NodeState
	for _, m := range prim {
		if m.ID != emptied.ID && m.ID != target.ID {
			others = append(others, m)
		}
	}
	nodes := []string{emptied.Node.Name, target.Node.Name, rep.Node.Name}
	a := &action{nodes: nodes, detail: map[string]any{"emptied": emptied.Node.Name, "killed": target.Node.Name, "replica": rep.Node.Name}}
	c := newComposer(f.env, st.Mode, nodes)
	a.start = func(ctx context.Context) (map[string]any, error) {
		res := map[string]any{}
		defer func() { res["steps"] = c.steps }()
		// 1. Empty it: its slots spread over the others, the last one to P.
		slots := slices.Clone(emptied.Slots)
		last := slots[len(slots)-1]
		rest := slots[:len(slots)-1]
		chunk := (len(rest) + len(others)) / (len(others) + 1)
		moved := 0
		var err error
		for i, dst := range append(slices.Clone(others), target) {
			part := rest[min(i*chunk, len(rest)):min((i+1)*chunk, len(rest))]
			if dst.ID == target.ID {
				part = append(slices.Clone(rest[min(i*chunk, len(rest)):]), last)
			}
			if len(part) == 0 {
				continue
			}
			if _, err = f.mover.MoveSlots(ctx, part, emptied, dst, prim); err != nil {
				break
			}
			moved += len(part)
		}
		c.step("empty", map[string]any{"slots_moved": moved, "last_slot_to": target.Node.Name, "error": errText(err)})
		res["slots_moved"] = moved
		if err != nil {
			return res, err
		}
		// 2. E replicates P: by itself on Redis 7 (it lost its last slot to
		// P), else told so.
		info := f.replInfo(ctx, emptied.Node.Addr)
		for end := time.Now().Add(3 * time.Second); info["role"] != "slave" && time.Now().Before(end); {
			time.Sleep(50 * time.Millisecond)
			info = f.replInfo(ctx, emptied.Node.Addr)
		}
		how := "by itself (replica migration of an emptied primary)"
		if info["role"] != "slave" {
			how = "CLUSTER REPLICATE"
			seq, jerr := f.journal.Begin(clusteradmin.Step{Kind: "replicate", From: emptied.ID, To: target.ID,
				Note: "the emptied primary replicates the primary that took its last slot"})
			if jerr != nil {
				return res, jerr
			}
			_, err = f.admin.Do(ctx, emptied.Node.Addr, 3*time.Second, "cluster", "replicate", target.ID)
			f.journal.End(seq, err)
			if err != nil {
				c.step("replicate", map[string]any{"how": how, "error": err.Error()})
				return res, err
			}
			info = f.replInfo(ctx, emptied.Node.Addr)
		}
		c.step("replicate", map[string]any{"how": how, "emptied": info, "replica": f.replInfo(ctx, rep.Node.Addr)})
		// 3. Kill P before E's full sync is done (Redis and Valkey wait
		// repl-diskless-sync-delay, 5 s by default, before sending the
		// snapshot).
		// Not synced yet, read just before the kill (after it the link is
		// down anyway): the link is not up, or a sync is in progress.
		before := f.replInfo(ctx, emptied.Node.Addr)
		unsynced := before["role"] == "slave" && (before["master_link_status"] != "up" || before["master_sync_in_progress"] == "1")
		replica := f.replInfo(ctx, rep.Node.Addr)
		err = k.strikeNode(ctx, target.Node.Name)
		c.step("kill", map[string]any{"node": target.Node.Name, "emptied_before": before, "replica_before": replica,
			"unsynced": unsynced, "error": errText(err)})
		res["unsynced_at_kill"] = unsynced
		return res, err
	}
	a.minHold = 3*f.opts.NodeTimeout + time.Second // long enough for an election in P's shard
	a.stop = func(ctx context.Context) (map[string]any, error) {
		res := map[string]any{}
		if !k.holds(target.Node.Name) {
			// The start failed before the kill: nothing was struck.
			res["struck"] = false
			c.step("not-struck", nil)
			res["steps"] = c.steps
			return res, nil
		}
		// Who won P's shard before P comes back: the owner of the last
		// slot, waited for (an election takes about two node timeouts;
		// the start may have used up the hold emptying the node).
		lastSlot := emptied.Slots[len(emptied.Slots)-1]
		winner := ""
		for end := time.Now().Add(max(10*time.Second, 5*f.opts.NodeTimeout)); winner == "" && time.Now().Before(end); {
			if tt, err := f.topology(ctx); err == nil {
				for _, m := range tt.Members {
					if m.Primary && m.Reachable && slices.Contains(m.Slots, lastSlot) {
						winner = m.Node.Name
					}
				}
			}
			if winner == "" && !sleepUntil(ctx, time.Now().Add(200*time.Millisecond)) {
				break
			}
		}
		res["winner"], res["emptied_won"] = winner, winner == emptied.Node.Name
		// Keys held by the emptied node and by P's own replica once the
		// election is over (the loser then syncs from the winner, so equal
		// counts say little; the workload's checkers judge the loss).
		keys := map[string]any{}
		for _, m := range []clusteradmin.NodeState{emptied, rep} {
			if v, err := f.admin.Do(ctx, m.Node.Addr, 2*time.Second, "dbsize"); err == nil {
				keys[m.Node.Name] = v
			}
		}
		res["dbsize"] = keys
		c.step("election", map[string]any{"winner": winner, "emptied_won": winner == emptied.Node.Name, "dbsize": keys,
			"emptied": f.replInfo(ctx, emptied.Node.Addr)})
		err := k.healNode(ctx, target.Node.Name)
		c.step("restart", map[string]any{"node": target.Node.Name, "error": errText(err)})
		res["steps"] = c.steps
		return res, err
	}
	return a, nil
}
