package nemesis

// Handoff compositions: one slot moved from a source to a destination
// primary, atomically (CLUSTER MIGRATION IMPORT) or the classic way
// (SETSLOT/MIGRATE), with a fault striking while the move is under way:
//
//	<method>-kill-src | kill-dst      SIGKILL the source or destination, held, restarted
//	<method>-pause-src | pause-dst    freeze it, held, resumed
//	<method>-partition               cut source and destination from each other, held, healed
//	<method>-failover-dst            CLUSTER FAILOVER on a replica of the destination
//	<method>-failover-src            CLUSTER FAILOVER on a replica of the source
//	atomic-cancel | atomic-cancel-src CLUSTER MIGRATION CANCEL on the destination (for good)
//	                                 or on the source only (the destination retries)
//	atomic-concurrent-classic        a classic move of the same slot at the same time
//	atomic | classic                 no fault: the baseline of the same move
//
// They are study modes of the migrate fault (migrateFault.studyModes): a
// random schedule never picks them; a run names them, e.g. --nemesis
// migrate:atomic-kill-src,migrate:atomic-cancel.
// Each step of a composition (import, strike, heal, the task's states) goes
// into the history as a nemesis "handoff" entry when it happens, and the
// whole sequence, the task's final STATUS on both sides and the placement
// records (checker.Handoff) into the start-migrate completion. The fault
// strikes 0-40 ms (seeded) after the move began, and the history says in
// which state the task was then: a fast task may be done before the strike.
// A strike uses the means and the state of the fault it borrows (the
// bound kill, pause, partition and failover values, env.bound): a node it
// killed or paused, or a cut in force, is then that fault's to undo in the
// end phase, as if that fault had caused it.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/history"
)

// handoffStrikes are the faults a composition can strike with.
var handoffStrikes = []string{"kill-src", "kill-dst", "pause-src", "pause-dst", "partition", "failover-dst",
	"cancel", "cancel-src", "concurrent-classic", "failover-src"}

// atomicOnly are the strikes only an atomic task has.
var atomicOnly = map[string]bool{"cancel": true, "cancel-src": true, "concurrent-classic": true}

// handoffModes are the composition modes, in a fixed order.
func handoffModes() []string {
	modes := []string{"atomic", "classic"}
	for _, s := range handoffStrikes {
		modes = append(modes, "atomic-"+s)
	}
	for _, s := range handoffStrikes {
		if !atomicOnly[s] {
			modes = append(modes, "classic-"+s)
		}
	}
	return modes
}

// splitHandoffMode returns the method and strike of a composition mode
// (ok false for other modes).
func splitHandoffMode(mode string) (method, strike string, ok bool) {
	if !slices.Contains(handoffModes(), mode) {
		return "", "", false
	}
	method, strike, _ = strings.Cut(mode, "-")
	return method, strike, true
}

// handoffAction is the migrate action of a composition mode.
func (f *migrateFault) handoffAction(ctx context.Context, st Step, a *action, slot int, src, dst clusteradmin.NodeState, all []clusteradmin.NodeState, t *clusteradmin.Topology) error {
	method, strike, _ := splitHandoffMode(st.Mode)
	h := &handoffRun{env: f.env, mover: f.mover}
	h.kill, _ = borrow[nodeStriker](f.env, "kill")
	h.pause, _ = borrow[nodeStriker](f.env, "pause")
	h.part, _ = borrow[pairCutter](f.env, "partition")
	h.failover, _ = borrow[roleWaiter](f.env, "failover")
	switch {
	case method == "atomic" && !f.mover.AtomicCapable(ctx, all):
		return fmt.Errorf("%s needs CLUSTER MIGRATION (Redis 8.4) on every primary", st.Mode)
	case strings.HasPrefix(strike, "kill") && h.kill == nil:
		return fmt.Errorf("%s needs to %s", st.Mode, needsWords(lookup("kill")))
	case strings.HasPrefix(strike, "pause") && h.pause == nil:
		return fmt.Errorf("%s needs to %s", st.Mode, needsWords(lookup("pause")))
	case strike == "partition" && h.part == nil:
		return fmt.Errorf("%s needs to %s", st.Mode, needsWords(lookup("partition")))
	case strings.HasPrefix(strike, "failover") && h.failover == nil:
		return fmt.Errorf("%s needs the failover fault", st.Mode)
	}
	var replica clusteradmin.NodeState
	if strings.HasPrefix(strike, "failover") {
		// The struck shard: the destination's for failover-dst, the
		// source's for failover-src (whose new primary must then finish
		// or undo the move the old one had open).
		side, which := dst, "destination"
		if strike == "failover-src" {
			side, which = src, "source"
		}
		for _, m := range t.Replicas() {
			if m.MasterID == side.ID && m.Reachable {
				replica = m
				break
			}
		}
		if replica.ID == "" {
			return fmt.Errorf("%s: the %s %s has no reachable replica", st.Mode, which, side.Node.Name)
		}
		a.nodes = append(a.nodes, replica.Node.Name)
	}
	a.detail["method"], a.detail["strike"] = method, strike
	h.st, h.method, h.strike, h.slot, h.src, h.dst, h.all, h.replica = st, method, strike, slot, src, dst, all, replica
	h.shards, h.rng, h.began, h.nodes = shardsOf(t, src, dst), rand.New(rand.NewPCG(st.Seed, 0x68616e646f6666)), time.Now(), a.nodes
	a.start = h.run
	return nil
}

// handoffRun is one composition under way.
type handoffRun struct {
	*env
	mover          *clusteradmin.SlotMover
	kill           nodeStriker // the bound faults a strike borrows (nil: the target cannot)
	pause          nodeStriker
	part           pairCutter
	failover       roleWaiter
	st             Step
	method, strike string
	slot           int
	src, dst       clusteradmin.NodeState
	replica        clusteradmin.NodeState // the replica failover-dst or failover-src promotes
	all            []clusteradmin.NodeState
	shards         [2][]string // node ids of the source's and the destination's shard
	rng            *rand.Rand
	began          time.Time
	nodes          []string
	steps          []map[string]any
	// struck: the strike took effect (a node killed, paused or cut off, a
	// replica promoted). The move it interrupts then fails by design, and
	// the start records took_effect beside the move's error, so the
	// coverage checker counts the window (it took any error for a start
	// that did nothing: "migrate: 4 scheduled, none took effect" on a
	// Valkey run of classic-failover-src whose 4 failovers all promoted).
	struck bool
}

// noteStep records one step now, in the history and in the final detail.
func (h *handoffRun) noteStep(step string, detail map[string]any) {
	if detail == nil {
		detail = map[string]any{}
	}
	detail["step"] = step
	detail["mode"] = h.st.Mode
	detail["at_ms"] = time.Since(h.began).Milliseconds()
	h.steps = append(h.steps, detail)
	h.note(history.Handoff, h.nodes, detail)
}

// hold is how long a kill, pause or partition is held: the step's hold,
// between 1 s and three node timeouts plus a second (long enough for a
// replica of a killed primary to be promoted).
func (h *handoffRun) hold() time.Duration {
	d := time.Duration(h.st.Hold * float64(h.opts.Interval))
	return min(max(d, time.Second), 3*h.opts.NodeTimeout+time.Second)
}

func (h *handoffRun) run(ctx context.Context) (map[string]any, error) {
	n := h.mover
	res := map[string]any{"method": h.method, "strike": h.strike}
	before := n.BeforeKeys(ctx, h.src, []int{h.slot})
	var status map[string]any
	var moveErr error
	taskID := ""
	if h.method == "atomic" {
		seq, err := h.journal.Begin(clusteradmin.Step{Kind: "migrate", Slots: []int{h.slot}, From: h.src.ID, To: h.dst.ID,
			Note: "atomic " + h.st.Mode})
		if err != nil {
			return res, err
		}
		var heal func(context.Context) error
		var strikeErr error
		first := strikeFirst[h.strike]
		if first {
			heal, strikeErr = h.strikeBegin(ctx, func() string { return "not started" })
		}
		id, err := n.StartImport(ctx, []int{h.slot}, h.dst)
		if err != nil {
			h.journal.End(seq, err)
			h.noteStep("import", map[string]any{"error": err.Error()})
			if heal != nil {
				err = errors.Join(err, h.holdAndHeal(ctx, heal, func() string { return "not started" }))
			}
			res["steps"] = h.steps
			return res, err
		}
		taskID = id
		h.noteStep("import", map[string]any{"task": taskID, "slot": h.slot, "from": h.src.Node.Name, "to": h.dst.Node.Name})
		if first {
			strikeErr = errors.Join(strikeErr, h.holdAndHeal(ctx, heal, func() string { return h.dstState(ctx, taskID) }))
		} else {
			strikeErr = h.strikeAtomic(ctx, taskID)
		}
		status, moveErr = h.awaitTask(ctx, taskID)
		moveErr = errors.Join(strikeErr, moveErr)
		h.journal.End(seq, moveErr)
	} else {
		done := make(chan error, 1)
		h.noteStep("classic-start", map[string]any{"slot": h.slot, "from": h.src.Node.Name, "to": h.dst.Node.Name})
		go func() {
			_, err := n.MoveSlot(ctx, h.slot, h.src, h.dst, h.all)
			done <- err
		}()
		strikeErr := h.strike1(ctx, "", func() string { return "classic move under way" })
		moveErr = errors.Join(strikeErr, <-done)
		d := map[string]any{}
		if moveErr != nil {
			d["error"] = moveErr.Error()
		}
		h.noteStep("classic-end", d)
	}
	// Placement once the cluster agrees (bounded): read from the current
	// primaries of the source's and the destination's shards.
	// A failed classic move leaves its slot open for Heal: the wait is
	// short, so one such step does not eat the next steps' slots.
	if err := h.waitConverged(ctx, 5*time.Second); err != nil {
		h.noteStep("converge", map[string]any{"error": err.Error()})
	}
	srcNow, dstNow := h.src, h.dst
	if t, err := h.topology(ctx); err == nil {
		srcNow, dstNow = shardPrimary(t, h.shards[0], h.src), shardPrimary(t, h.shards[1], h.dst)
	}
	state := "moved"
	if status != nil {
		state = fmt.Sprint(status["state"])
		res["tasks"] = []map[string]any{status}
	} else if moveErr != nil {
		state = "failed"
	}
	res["placement"] = n.AfterKeys(ctx, before, []int{h.slot}, srcNow, dstNow, h.method, state, taskID)
	if moveErr == nil && (h.method == "classic" || state == "done") {
		res["moved"] = []clusteradmin.SlotMove{{Slot: h.slot, From: h.src.Node.Name, To: h.dst.Node.Name, Keys: len(before[h.slot].Before)}}
		if h.method == "atomic" {
			n.NoteMoved([]int{h.slot}, h.src, h.dst)
		}
	}
	res["steps"] = h.steps
	if h.struck {
		res["took_effect"] = true
	}
	return res, moveErr
}

// strikeAtomic strikes during task id.
func (h *handoffRun) strikeAtomic(ctx context.Context, id string) error {
	n := h.mover
	stateOf := func() string {
		st, err := n.TaskStatus(ctx, h.dst.Node.Addr, id)
		if err != nil {
			return "unknown: " + err.Error()
		}
		return fmt.Sprint(st["state"])
	}
	switch h.strike {
	case "", "none":
		return nil
	case "concurrent-classic":
		h.noteStep("classic-start", map[string]any{"task_state": stateOf()})
		_, err := n.MoveSlot(ctx, h.slot, h.src, h.dst, h.all)
		d := map[string]any{"task_state": stateOf()}
		if err != nil {
			d["error"] = err.Error()
		}
		h.noteStep("classic-end", d)
		return nil // the classic move's failure is a finding, not the nemesis's
	case "cancel", "cancel-src":
		h.wait(ctx)
		on := h.dst
		if h.strike == "cancel-src" {
			on = h.src
			// The source knows the task once the SYNC arrived: a cancel
			// before that would find nothing to cancel.
			for end := time.Now().Add(2 * time.Second); time.Now().Before(end) && ctx.Err() == nil; time.Sleep(5 * time.Millisecond) {
				if _, err := n.TaskStatus(ctx, h.src.Node.Addr, id); err == nil {
					break
				}
			}
		}
		state := stateOf()
		v, err := n.CancelTask(ctx, on, id)
		d := map[string]any{"on": on.Node.Name, "task_state": state, "canceled": v}
		if err != nil {
			d["error"] = err.Error()
		}
		canceled, _ := v.(int64)
		switch {
		case canceled > 0:
			// The cancel ended the task: the move's "canceled" error is
			// the strike's doing, and the window took effect (without
			// this the coverage checker counted it as a start that did
			// nothing).
			h.struck = true
		case err == nil && (state == "done" || state == "canceled" || state == "failed"):
			// The seeded wait is shorter than most tasks, not than all:
			// a task on a quiet slot can end within milliseconds (the
			// reference's did in 5 ms once), and the cancel then finds
			// nothing to cancel. Said so, not left to be read from
			// canceled 0.
			d["reached"] = false
			d["why"] = "the task had ended (" + state + ") before the cancel arrived"
		}
		h.noteStep("strike", d)
		return err
	}
	return h.strike1(ctx, id, stateOf)
}

// strikeWithin bounds the seeded wait before a strike. An atomic task on
// a quiet slot lasts about one cron tick of the destination (its first ACK
// starts the handoff), 50-150 ms: a strike within 40 ms mostly finds it
// connecting or streaming (a 150 ms bound missed 7 of 9 in a docker run).
const strikeWithin = 40

// strikeDelay is the seeded wait before the strike of a step with seed.
func strikeDelay(rng *rand.Rand) time.Duration {
	return time.Duration(rng.IntN(strikeWithin)) * time.Millisecond
}

// dstState is the task's state on the destination (or why unknown).
func (h *handoffRun) dstState(ctx context.Context, id string) string {
	st, err := h.mover.TaskStatus(ctx, h.dst.Node.Addr, id)
	if err != nil {
		return "unknown: " + err.Error()
	}
	return fmt.Sprint(st["state"])
}

// wait sleeps the seeded delay before the strike.
func (h *handoffRun) wait(ctx context.Context) {
	d := strikeDelay(h.rng)
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// strike1 strikes with a kill, pause, partition or failover, holds it and
// heals it, noting each step with the state stateOf reports.
func (h *handoffRun) strike1(ctx context.Context, id string, stateOf func() string) error {
	if h.strike == "" || h.strike == "none" {
		return nil
	}
	h.wait(ctx)
	heal, err := h.strikeBegin(ctx, stateOf)
	return errors.Join(err, h.holdAndHeal(ctx, heal, stateOf))
}

// strikeFirst: faults on the source side and partitions strike before the
// IMPORT, so the task starts under them (a docker pause or kill takes
// longer than a quiet slot's whole handoff).
var strikeFirst = map[string]bool{"kill-src": true, "pause-src": true, "partition": true}

// strikeBegin causes the fault and returns how to heal it (nil: nothing).
func (h *handoffRun) strikeBegin(ctx context.Context, stateOf func() string) (func(context.Context) error, error) {
	target := h.src
	if strings.HasSuffix(h.strike, "-dst") {
		target = h.dst
	}
	d := map[string]any{"fault": h.strike, "task_state": stateOf()}
	var err error
	var heal func(context.Context) error
	switch {
	case strings.HasPrefix(h.strike, "kill"), strings.HasPrefix(h.strike, "pause"):
		d["node"] = target.Node.Name
		by := h.kill
		if strings.HasPrefix(h.strike, "pause") {
			by = h.pause
		}
		err = by.strikeNode(ctx, target.Node.Name)
		heal = func(ctx context.Context) error { return by.healNode(ctx, target.Node.Name) }
	case h.strike == "partition":
		d["nodes"] = []string{h.src.Node.Name, h.dst.Node.Name}
		err = h.part.cutPair(ctx, h.src.Node.Name, h.dst.Node.Name)
		heal = h.part.healCuts
	case strings.HasPrefix(h.strike, "failover"):
		d["replica"] = h.replica.Node.Name
		side, which := h.dst, "destination"
		if h.strike == "failover-src" {
			side, which = h.src, "source"
		}
		d["primary"] = side.Node.Name
		seq, jerr := h.journal.Begin(clusteradmin.Step{Kind: "failover", From: side.ID, To: h.replica.ID,
			Note: "CLUSTER FAILOVER on the " + which + "'s replica during a handoff"})
		if jerr != nil {
			return nil, jerr
		}
		if waited := manualFailoverReady(ctx, h.failover, h.replica, side, max(5*time.Second, 3*h.opts.NodeTimeout)); waited != nil {
			d["waited"] = waited
		}
		_, err = h.admin.Do(ctx, h.replica.Node.Addr, 3*time.Second, "cluster", "failover")
		if err == nil {
			promoted, why := awaitPromotion(ctx, h.failover, h.replica, side, max(10*time.Second, 5*h.opts.NodeTimeout))
			d["promoted"] = promoted
			if why != nil {
				d["unpromoted_evidence"] = why
			}
		}
		h.journal.End(seq, err)
	}
	if err == nil && d["promoted"] != false {
		h.struck = true
	}
	if err != nil {
		d["error"] = err.Error()
	} else if heal != nil && h.strike != "partition" {
		// What the node looks like from here now: no reply when paused,
		// refused when killed (evidence that the fault took effect). A
		// stop signal may take a moment to land on a loaded machine: a
		// few probes, until one fails.
		d["probe"] = "PONG"
		for i := 0; i < 10 && ctx.Err() == nil; i++ {
			pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			perr := h.admin.Client(target.Node.Addr).Ping(pctx).Err()
			cancel()
			if perr != nil {
				d["probe"] = perr.Error()
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if strings.HasSuffix(h.strike, "-dst") && strings.HasPrefix(h.strike, "pause") {
		d["task_state_after"] = "unknown: the destination is paused"
	} else {
		d["task_state_after"] = stateOf()
	}
	h.noteStep("strike", d)
	return heal, err
}

// holdAndHeal holds a fault for the step's hold, then heals it.
func (h *handoffRun) holdAndHeal(ctx context.Context, heal func(context.Context) error, stateOf func() string) error {
	if heal == nil {
		return nil
	}
	hold := h.hold()
	select {
	case <-ctx.Done():
	case <-time.After(hold):
	}
	// Healing must happen even when the run is ending.
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	herr := heal(hctx)
	hd := map[string]any{"held_ms": hold.Milliseconds(), "task_state": stateOf()}
	if herr != nil {
		hd["error"] = herr.Error()
	}
	h.noteStep("heal", hd)
	return herr
}

// awaitTask polls the destination (or, after a failover, the current
// primary of its shard) until task id ends: done or canceled there, or
// gone (a killed node forgets its tasks). A task still running after
// clusteradmin.AtomicTimeout is canceled. It returns the last STATUS with
// the source's final state and write pause.
func (h *handoffRun) awaitTask(ctx context.Context, id string) (map[string]any, error) {
	n := h.mover
	status := map[string]any{"id": id, "from": h.src.Node.Name, "to": h.dst.Node.Name}
	deadline := time.Now().Add(clusteradmin.AtomicTimeout)
	last := ""
	for {
		addr := h.dst.Node.Addr
		st, err := n.TaskStatus(ctx, addr, id)
		state := ""
		if err != nil {
			state = "unknown: " + err.Error()
		} else {
			for k, v := range st {
				status[k] = v
			}
			state = fmt.Sprint(st["state"])
		}
		if state != last {
			h.noteStep("task", map[string]any{"task": id, "state": state})
			last = state
		}
		switch {
		case state == "done":
			status["source_state"] = n.AwaitSourceEnd(ctx, h.src, id)
			if s, err := n.TaskStatus(ctx, h.src.Node.Addr, id); err == nil {
				status["write_pause_ms"] = s["write_pause_ms"]
			}
			return status, nil
		case state == "canceled":
			status["source_state"] = n.AwaitSourceEnd(ctx, h.src, id)
			if h.strike == "cancel" {
				return status, nil // what was asked
			}
			return status, fmt.Errorf("task %s canceled: %v", id, status["last_error"])
		case err != nil && (strings.Contains(err.Error(), "no task") || strings.Contains(err.Error(), "primary")):
			// The destination forgot the task (killed) or is no longer
			// a primary (failed over): the task is over there.
			status["state"] = "gone"
			status["source_state"] = n.AwaitSourceEnd(ctx, h.src, id)
			return status, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			_, cerr := n.CancelTask(context.WithoutCancel(ctx), h.dst, id)
			h.noteStep("cancel-timeout", map[string]any{"task": id, "state": state})
			return status, errors.Join(fmt.Errorf("task %s not done after %s (state %v)", id, clusteradmin.AtomicTimeout, state), cerr)
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// shardsOf lists the node ids of the source's and the destination's shards
// (the primary and its replicas).
func shardsOf(t *clusteradmin.Topology, src, dst clusteradmin.NodeState) [2][]string {
	var out [2][]string
	for i, p := range []clusteradmin.NodeState{src, dst} {
		out[i] = []string{p.ID}
		for _, m := range t.Members {
			if m.MasterID == p.ID {
				out[i] = append(out[i], m.ID)
			}
		}
	}
	return out
}

// shardPrimary is the member of ids that is a primary in t now (def if
// none is).
func shardPrimary(t *clusteradmin.Topology, ids []string, def clusteradmin.NodeState) clusteradmin.NodeState {
	for _, id := range ids {
		if m, ok := t.ByID(id); ok && m.Primary && m.Reachable {
			return m
		}
	}
	return def
}
