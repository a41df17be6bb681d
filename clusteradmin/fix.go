package clusteradmin

// Finishing or undoing a slot move that something interrupted, decided the
// way `redis-cli --cluster fix` decides (Redis 7.0 redis-cli.c,
// clusterManagerFixOpenSlot and clusterManagerFixSlotsCoverage): count the
// slot's keys on every primary (CLUSTER COUNTKEYSINSLOT), and the slot goes
// where the keys are. A move the cluster interrupted with a role change
// (the destination's replica promoted between MIGRATE and SETSLOT NODE, a
// killed source whose replica took its slots, Valkey 8's migration states
// re-pointed at a promoted primary) is finished on the current primary of
// the destination's shard or undone onto the current primary of the
// source's shard; never "forgotten" while its keys sit on a primary that
// does not own the slot.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redline-dev/redline/cluster"
)

// slotCensus is one slot as every primary reports it.
type slotCensus struct {
	Slot     int
	Claimers []NodeState      // reachable primaries that claim it on their own line
	Keys     map[string]int64 // primary id -> keys it holds in the slot (only > 0)
	Open     []string         // MIGRATING/IMPORTING states on any node, in words
	Stated   []NodeState      // primaries with a MIGRATING/IMPORTING state of the slot
}

// census counts the keys of slots on every reachable primary (one
// pipeline per primary) and lists who claims each slot and who has it
// open. A primary that does not answer while the cluster still routes
// slots to it makes the census fail: keys nobody can count decide nothing
// (redis-cli refuses to fix with unreachable masters for the same reason).
func (n *SlotMover) census(ctx context.Context, t *Topology, slots []int) (map[int]*slotCensus, error) {
	out := make(map[int]*slotCensus, len(slots))
	for _, s := range slots {
		out[s] = &slotCensus{Slot: s, Keys: map[string]int64{}}
	}
	for _, m := range t.Members {
		if !m.Reachable && m.Primary && len(m.Slots) > 0 {
			return nil, fmt.Errorf("%s (%s) does not answer and still serves %d slots: its keys cannot be counted", m.Node.Name, m.Announce, len(m.Slots))
		}
	}
	name := func(id string) string {
		if m, ok := t.ByID(id); ok {
			return m.Node.Name
		}
		return id
	}
	for _, m := range t.Members {
		if !m.Reachable {
			continue
		}
		for _, s := range slots {
			c := out[s]
			if to, ok := m.Migrating[s]; ok {
				c.Open = append(c.Open, fmt.Sprintf("MIGRATING on %s to %s", m.Node.Name, name(to)))
			}
			if from, ok := m.Importing[s]; ok {
				c.Open = append(c.Open, fmt.Sprintf("IMPORTING on %s from %s", m.Node.Name, name(from)))
			}
			if m.Primary && (m.Migrating[s] != "" || m.Importing[s] != "") {
				c.Stated = append(c.Stated, m)
			}
		}
		if !m.Primary {
			continue
		}
		for _, s := range slots {
			if slices.Contains(m.Slots, s) {
				out[s].Claimers = append(out[s].Claimers, m)
			}
		}
		cmds := make([][]any, len(slots))
		for i, s := range slots {
			cmds[i] = []any{"cluster", "countkeysinslot", s}
		}
		counts := make([]any, len(slots))
		if err := n.admin.Pipe(ctx, m.Node.Addr, cmds, counts); err != nil {
			return nil, fmt.Errorf("counting keys on %s: %w", m.Node.Name, err)
		}
		for i, s := range slots {
			if k, _ := counts[i].(int64); k > 0 {
				out[s].Keys[m.ID] = k
			}
		}
	}
	return out, nil
}

// holders are the primaries with keys of the slot, most keys first.
func (c *slotCensus) holders(t *Topology) []NodeState {
	var out []NodeState
	for id := range c.Keys {
		if m, ok := t.ByID(id); ok {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b NodeState) int {
		if d := c.Keys[b.ID] - c.Keys[a.ID]; d != 0 {
			return int(d)
		}
		return strings.Compare(a.Node.Name, b.Node.Name)
	})
	return out
}

// problems says what is wrong with the slot after a repair: nobody or two
// primaries claim it, keys on a primary that does not own it, a state
// left open. Empty means the slot is closed and its keys are on its owner.
func (c *slotCensus) problems(t *Topology) []SlotProblem {
	var out []SlotProblem
	switch len(c.Claimers) {
	case 0:
		out = append(out, SlotProblem{Slot: c.Slot, Kind: "unowned", What: fmt.Sprintf("slot %d: no primary claims it", c.Slot)})
	case 1:
	default:
		var ns []string
		for _, m := range c.Claimers {
			ns = append(ns, m.Node.Name)
		}
		out = append(out, SlotProblem{Slot: c.Slot, Kind: "conflict", What: fmt.Sprintf("slot %d is claimed by %s", c.Slot, strings.Join(ns, " and "))})
	}
	for _, h := range c.holders(t) {
		if !slices.ContainsFunc(c.Claimers, func(m NodeState) bool { return m.ID == h.ID }) {
			out = append(out, SlotProblem{Slot: c.Slot, Kind: "stranded", Node: h.Node.Name, Keys: c.Keys[h.ID],
				What: fmt.Sprintf("slot %d: %d keys on %s, which does not own the slot", c.Slot, c.Keys[h.ID], h.Node.Name)})
		}
	}
	for _, o := range c.Open {
		out = append(out, SlotProblem{Slot: c.Slot, Kind: "open", What: fmt.Sprintf("slot %d is %s", c.Slot, o)})
	}
	return out
}

// SlotProblem is what the end phase found wrong with a slot redline moved
// or opened (or a reason the end phase could not look).
type SlotProblem struct {
	Slot int    `json:"slot"`
	Kind string `json:"kind"` // unowned, conflict, stranded, open, uncounted
	Node string `json:"node,omitempty"`
	Keys int64  `json:"keys,omitempty"`
	What string `json:"what"`
}

// FixResult is what the mover did to one slot to close it.
type FixResult struct {
	Slot   int    `json:"slot"`
	Action string `json:"action"` // finished, undone, rehomed, closed (nothing moved)
	Keeper string `json:"keeper"` // the primary that owns the slot now
	Moved  int    `json:"moved_keys"`
	Why    string `json:"why"`
	Steps  string `json:"steps"`
	keeper string // its node id
}

// shardPrimaryOf is the reachable primary among a shard's node ids, or
// the node id itself when the shard is not known (nil: none).
func shardPrimaryOf(t *Topology, shard []string, id string) *NodeState {
	ids := shard
	if len(ids) == 0 {
		ids = []string{id}
	}
	for _, x := range ids {
		if m, ok := t.ByID(x); ok && m.Primary && m.Reachable {
			return &m
		}
	}
	return nil
}

// decideKeeper picks the primary a slot goes to, as redis-cli --cluster fix
// would: the move's own case 1 (the source's shard MIGRATING and the
// destination's shard IMPORTING) is finished on the destination's current
// primary; otherwise the slot goes where its keys are (with keys on both
// sides of a move of redline's under way: finished on the destination,
// else the primary holding most); with no keys anywhere it stays with its
// one claimer unless it is redline's own move to finish. rec is redline's
// record of the move (known false: none). It is pure.
func decideKeeper(c *slotCensus, t *Topology, rec openSlot, known bool) (NodeState, string, error) {
	slot := c.Slot
	var src, dst *NodeState
	if known {
		src, dst = shardPrimaryOf(t, rec.SrcShard, rec.Src), shardPrimaryOf(t, rec.DstShard, rec.Dst)
	}
	finishing := known && !rec.Stable && dst != nil && (src == nil || src.ID != dst.ID)
	if known && rec.KeepOwner && src != nil && slices.ContainsFunc(c.Claimers, func(m NodeState) bool { return m.ID == src.ID }) {
		why := fmt.Sprintf("no move: the slot's owner is %s", src.Node.Name)
		if dst != nil && dst.ID != src.ID {
			why = fmt.Sprintf("%s opened it itself when it started again (it held keys of a slot %s owns), no move: the slot stays with its owner %s and the keys come back to it",
				dst.Node.Name, src.Node.Name, src.Node.Name)
		}
		return *src, why, nil
	}
	if finishing && src != nil && src.Migrating[slot] != "" && dst.Importing[slot] != "" &&
		slices.ContainsFunc(c.Claimers, func(m NodeState) bool { return m.ID == src.ID }) {
		return *dst, fmt.Sprintf("the move %s -> %s is open on both sides (redis-cli's case 1): finish it", src.Node.Name, dst.Node.Name), nil
	}
	// Also redis-cli's case 1, whatever redline meant to do (abort-stable
	// meant to undo): the owner is still MIGRATING to a primary that holds
	// keys of the slot (written there by ASK). Undoing it onto the owner is
	// not safe: a MIGRATING owner answers the keys' RESTORE-ASKING with ASK,
	// so it would have to turn STABLE before they come back, and in that gap
	// it serves them as missing (a stale read; a write makes a second copy).
	// Finishing is the migration protocol itself: no gap.
	if len(c.Claimers) == 1 {
		o := c.Claimers[0]
		if to := o.Migrating[slot]; to != "" && c.Keys[to] > 0 {
			if d, ok := t.ByID(to); ok && d.Primary && d.Reachable {
				return d, fmt.Sprintf("the owner %s is MIGRATING to %s, which holds %d of its keys: finish the move (undoing it would leave the owner serving those keys as missing until they came back)", o.Node.Name, d.Node.Name, c.Keys[to]), nil
			}
		}
	}
	hs := c.holders(t)
	switch {
	case len(hs) == 1:
		return hs[0], fmt.Sprintf("the slot goes where its keys are: all %d on %s", c.Keys[hs[0].ID], hs[0].Node.Name), nil
	case len(hs) > 1:
		if finishing && slices.ContainsFunc(hs, func(m NodeState) bool { return m.ID == dst.ID }) {
			return *dst, fmt.Sprintf("keys on %d primaries, some already on the destination %s: finish the move", len(hs), dst.Node.Name), nil
		}
		return hs[0], fmt.Sprintf("keys on %d primaries: the slot goes to %s, which holds most (%d)", len(hs), hs[0].Node.Name, c.Keys[hs[0].ID]), nil
	}
	if len(c.Claimers) == 1 && (!finishing || c.Claimers[0].ID == dst.ID) {
		return c.Claimers[0], fmt.Sprintf("no keys anywhere: it stays with its owner %s", c.Claimers[0].Node.Name), nil
	}
	if finishing {
		return *dst, fmt.Sprintf("no keys anywhere: finish the move on the destination's primary %s", dst.Node.Name), nil
	}
	if len(c.Claimers) > 0 {
		return c.Claimers[0], fmt.Sprintf("no keys anywhere: it stays with %s", c.Claimers[0].Node.Name), nil
	}
	if src != nil {
		return *src, fmt.Sprintf("no keys and no owner anywhere: back to the source's primary %s", src.Node.Name), nil
	}
	return NodeState{}, "", fmt.Errorf("slot %d: no primary holds keys of it or claims it, and redline has no record of where it should go", slot)
}

// fixSlotNow closes one slot on the primary decideKeeper picks: every
// other primary's keys of the slot are migrated to it (each opened for
// MIGRATE as redis-cli does), it takes the slot first (SETSLOT IMPORTING
// then NODE, which gives it a fresh config epoch) or, already owning it,
// closes its own state; then every other primary is told (NODE, then
// STABLE where a state is left). Keys that arrive late on another primary
// (an ASK in flight while the slot closed) are swept in the same way, up
// to three rounds. The decision is journalled (kind) before the first
// change.
func (n *SlotMover) fixSlotNow(ctx context.Context, slot int, kind string) (res FixResult, err error) {
	n.mu.Lock()
	rec, known := n.open[slot]
	if !known {
		rec, known = n.moved[slot]
	}
	n.mu.Unlock()
	res.Slot = slot
	var steps []string
	seq := 0
	defer func() {
		if seq > 0 {
			n.journal.End(seq, err)
		}
	}()
	for round := 0; round < 3; round++ {
		t, err := n.admin.Topology(ctx, n.c)
		if err != nil {
			return res, err
		}
		cs, err := n.census(ctx, t, []int{slot})
		if err != nil {
			return res, fmt.Errorf("slot %d: %w", slot, err)
		}
		c := cs[slot]
		if len(c.problems(t)) == 0 {
			if round == 0 {
				res.Action, res.Why = "none", "already closed: one owner holds all its keys"
				if len(c.Claimers) == 1 {
					res.Keeper, res.keeper = c.Claimers[0].Node.Name, c.Claimers[0].ID
				}
			}
			break
		}
		k, why, err := decideKeeper(c, t, rec, known)
		if err != nil {
			return res, err
		}
		if seq == 0 {
			res.Keeper, res.keeper, res.Why = k.Node.Name, k.ID, why
			res.Action = "closed"
			switch {
			case known && slices.Contains(append([]string{rec.Dst}, rec.DstShard...), k.ID):
				res.Action = "finished"
			case known && slices.Contains(append([]string{rec.Src}, rec.SrcShard...), k.ID):
				res.Action = "undone"
			case known:
				res.Action = "rehomed"
			}
			s, err := n.journal.Begin(Step{Kind: kind, Slots: []int{slot}, From: rec.Src, To: k.ID,
				FromShard: rec.SrcShard, ToShard: rec.DstShard, Note: res.Action + " on " + k.Node.Name + ": " + why})
			if err != nil {
				return res, err
			}
			seq = s
		}
		moved, did, err := n.closeOn(ctx, t, c, k, rec)
		res.Moved += moved
		steps = append(steps, did...)
		if errors.Is(err, errKeysArrived) && round < 2 {
			// The decision's step ends with the reason; the next round
			// journals its own.
			n.journal.End(seq, err)
			seq = 0
			steps = append(steps, err.Error())
			continue
		}
		if err != nil {
			res.Steps = strings.Join(steps, "; ")
			return res, fmt.Errorf("slot %d onto %s: %w", slot, k.Node.Name, err)
		}
	}
	res.Steps = strings.Join(steps, "; ")
	if err := n.awaitClosed(ctx, slot); err != nil {
		return res, err
	}
	n.mu.Lock()
	delete(n.open, slot)
	n.moved[slot] = openSlot{Slot: slot, Src: rec.Src, Dst: res.keeper, SrcShard: rec.SrcShard, DstShard: rec.DstShard}
	n.mu.Unlock()
	n.log("slot %d %s on %s (%d keys moved): %s [%s]", slot, res.Action, res.Keeper, res.Moved, res.Why, res.Steps)
	return res, nil
}

// errKeysArrived: while an undo closed the importing side, a key was
// written there (an ASK in flight): the slot is decided again.
var errKeysArrived = errors.New("keys arrived on the importing side while the undo closed it")

// closeOn is one round of fixSlotNow: it moves every other primary's keys
// of the slot to k and makes k the slot's only owner, with no state left
// open on any primary. It returns the keys moved and what it did.
func (n *SlotMover) closeOn(ctx context.Context, t *Topology, c *slotCensus, k NodeState, rec openSlot) (int, []string, error) {
	slot := c.Slot
	var did []string
	do := func(m NodeState, args ...any) error {
		_, err := n.admin.Do(ctx, m.Node.Addr, 3*time.Second, args...)
		if err == nil {
			did = append(did, fmt.Sprintf("%s %v", m.Node.Name, args[1:]))
		}
		return err
	}
	claims := func(m NodeState) bool { return slices.Contains(m.Slots, slot) }
	var others []NodeState
	for _, m := range t.Members {
		if m.Primary && m.Reachable && m.ID != k.ID {
			others = append(others, m)
		}
	}
	kOwns := claims(k)
	if kOwns && k.Migrating[slot] != "" {
		// An undo onto an owner still MIGRATING, with no keys elsewhere
		// (decideKeeper finishes the move when its target holds keys):
		// the importing sides are closed first, so that no ASK write can
		// land there once the owner serves the slot alone; a key that
		// landed in between sends the slot back to be decided again.
		for _, m := range others {
			if m.Importing[slot] == "" {
				continue
			}
			if err := do(m, "cluster", "setslot", slot, "stable"); err != nil {
				return 0, did, err
			}
			v, err := n.admin.Do(ctx, m.Node.Addr, 3*time.Second, "cluster", "countkeysinslot", slot)
			if err != nil {
				return 0, did, err
			}
			if x, _ := v.(int64); x > 0 {
				return 0, did, fmt.Errorf("%w: %d on %s", errKeysArrived, x, m.Node.Name)
			}
		}
	}
	if kOwns {
		// An owner still MIGRATING redirects keys coming back with ASK;
		// STABLE makes it take them as their owner (a no-op on a stable
		// slot). Keys are elsewhere here only on a primary the owner was
		// not migrating to (their slot unreachable there in any case).
		if err := do(k, "cluster", "setslot", slot, "stable"); err != nil {
			return 0, did, err
		}
	}
	if !kOwns {
		// The keeper imports from a primary (SETSLOT IMPORTING wants a
		// master): the claimer, else the move's source, else any.
		from := ""
		for _, m := range c.Claimers {
			if m.ID != k.ID {
				from = m.ID
				break
			}
		}
		if from == "" {
			if s := shardPrimaryOf(t, rec.SrcShard, rec.Src); s != nil && s.ID != k.ID {
				from = s.ID
			} else if len(others) > 0 {
				from = others[0].ID
			}
		}
		if from == "" {
			return 0, did, errors.New("no other primary to import from")
		}
		if err := do(k, "cluster", "setslot", slot, "importing", from); err != nil {
			return 0, did, err
		}
		if err := n.ownImportedSlots(ctx, t, k, slot, from, &did); err != nil {
			return 0, did, err
		}
	}
	moved := 0
	hand := func(m NodeState) error {
		if claims(m) {
			if err := do(m, "cluster", "setslot", slot, "migrating", k.ID); err != nil {
				return err
			}
		} else if err := do(m, "cluster", "setslot", slot, "importing", k.ID); err != nil {
			// Opened only so that MIGRATE runs there (it runs locally on
			// an open slot); closed with STABLE below.
			return err
		}
		x, _, err := n.MoveKeys(ctx, slot, m, k, 0)
		moved += x
		if x > 0 {
			did = append(did, fmt.Sprintf("moved %d keys %s -> %s", x, m.Node.Name, k.Node.Name))
		}
		return err
	}
	stated := map[string]bool{}
	for _, m := range c.Stated {
		stated[m.ID] = true
	}
	for _, m := range others {
		if c.Keys[m.ID] > 0 {
			stated[m.ID] = true
			if err := hand(m); err != nil {
				return moved, did, err
			}
		}
	}
	// The keeper takes the slot first (redis-cli tells the target first):
	// once it owns the slot nobody is left without it whatever happens to
	// the others. A keeper that already owned it closes its own state,
	// which ends its ASK redirects.
	if !kOwns {
		if err := do(k, "cluster", "setslot", slot, "node", k.ID); err != nil {
			return moved, did, err
		}
	} else if k.Migrating[slot] != "" || k.Importing[slot] != "" {
		if err := do(k, "cluster", "setslot", slot, "stable"); err != nil {
			return moved, did, err
		}
	}
	var errs []error
	for _, m := range others {
		// A late key (an ASK in flight while the slot closed) is swept
		// before the other is told it no longer owns the slot.
		if v, err := n.admin.Do(ctx, m.Node.Addr, 3*time.Second, "cluster", "countkeysinslot", slot); err == nil {
			if x, _ := v.(int64); x > 0 {
				stated[m.ID] = true
				if err := hand(m); err != nil {
					errs = append(errs, err)
					continue
				}
			}
		}
		if err := do(m, "cluster", "setslot", slot, "node", k.ID); err != nil && !strings.Contains(err.Error(), "only with masters") {
			errs = append(errs, err)
		}
		if stated[m.ID] {
			if err := do(m, "cluster", "setslot", slot, "stable"); err != nil && !strings.Contains(err.Error(), "only with masters") {
				errs = append(errs, err)
			}
		}
	}
	return moved, did, errors.Join(errs...)
}

// ownImportedSlots gives an owner, in k's own slot map, to every slot k
// is IMPORTING that its map leaves without one (slot among them, owned
// there by from unless another primary claims it). A failover can leave
// that state: when a primary turns replica its peers drop its slots
// (Redis 7.0 cluster.c, clusterDelNodeSlots on a master-to-replica
// change), and an IMPORTING node takes no owner of that slot from gossip
// afterwards (clusterUpdateSlotsConfigWith skips importing slots: they
// are closed by hand). With cluster-require-full-coverage the node is
// then cluster_state:fail and refuses the repair's RESTORE-ASKING with
// CLUSTERDOWN (Hash slot not served) for as long as the slot stays
// open: no wait heals it. CLUSTER SETSLOT NODE <owner> on k restores the
// owner the others agree on and keeps k's IMPORTING (only NODE <k> ends
// it), as redis-cli --cluster fix gives an uncovered slot an owner first.
// Each assignment is journalled ("assign").
func (n *SlotMover) ownImportedSlots(ctx context.Context, t *Topology, k NodeState, slot int, from string, did *[]string) error {
	text, err := n.admin.ClusterNodes(ctx, k.Node.Addr)
	if err != nil {
		return err
	}
	view, err := cluster.ParseNodes(text)
	if err != nil {
		return err
	}
	owned := map[int]bool{}
	var imports []int
	for _, v := range view {
		for _, s := range v.Slots() {
			owned[s] = true
		}
		if v.Myself() {
			for _, o := range v.Open {
				if !o.Migrating {
					imports = append(imports, o.Slot)
				}
			}
		}
	}
	if !slices.Contains(imports, slot) {
		imports = append(imports, slot)
	}
	slices.Sort(imports)
	var errs []error
	for _, s := range slices.Compact(imports) {
		if owned[s] {
			continue
		}
		owner := ""
		for _, m := range t.Members {
			if m.Primary && m.Reachable && m.ID != k.ID && slices.Contains(m.Slots, s) {
				owner = m.ID
				break
			}
		}
		if owner == "" && s == slot {
			owner = from
		}
		if owner == "" {
			continue // nobody claims it: not this repair's to assign
		}
		name := owner
		if m, ok := t.ByID(owner); ok {
			name = m.Node.Name
		}
		seq, err := n.journal.Begin(Step{Kind: "assign", Slots: []int{s}, From: owner, To: k.ID,
			Note: fmt.Sprintf("%s imports slot %d but its slot map has no owner of it (cluster_state:fail, RESTORE-ASKING refused): owner %s set on %s, IMPORTING kept", k.Node.Name, s, name, k.Node.Name)})
		if err != nil {
			return err
		}
		_, err = n.admin.Do(ctx, k.Node.Addr, 3*time.Second, "cluster", "setslot", s, "node", owner)
		n.journal.End(seq, err)
		if err != nil {
			errs = append(errs, fmt.Errorf("giving slot %d an owner on %s: %w", s, k.Node.Name, err))
			continue
		}
		*did = append(*did, fmt.Sprintf("%s [setslot %d node %s] (no owner in its map)", k.Node.Name, s, owner))
		n.log("slot %d had no owner in %s's slot map while %s imports it: set to %s (IMPORTING kept)", s, k.Node.Name, k.Node.Name, name)
	}
	return errors.Join(errs...)
}

// awaitClosed waits (at most 10 s) until the slot has one owner holding
// all its keys and no node, replicas included, shows it open: a replica
// of Valkey 8 closes its replicated state once its primary's SETSLOT
// reaches it.
func (n *SlotMover) awaitClosed(ctx context.Context, slot int) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		t, err := n.admin.Topology(ctx, n.c)
		var ps []SlotProblem
		if err == nil {
			var cs map[int]*slotCensus
			cs, err = n.census(ctx, t, []int{slot})
			if err == nil {
				ps = cs[slot].problems(t)
			}
		}
		if err == nil && len(ps) == 0 {
			return nil
		}
		if time.Now().After(deadline) || sleepCtx(ctx, 100*time.Millisecond) != nil {
			if err != nil {
				return err
			}
			var ws []string
			for _, p := range ps {
				ws = append(ws, p.What)
			}
			return fmt.Errorf("still not closed after the repair: %s", strings.Join(ws, "; "))
		}
	}
}

// EndCensus reads every slot this mover moved or opened and says what is
// wrong with each (nothing: the slot is closed, one primary owns it and
// holds all its keys). It is the end phase's proof that redline's steps
// left no slot open and no key on a primary that does not own its slot.
func (n *SlotMover) EndCensus(ctx context.Context) (checked int, problems []SlotProblem, err error) {
	n.mu.Lock()
	set := map[int]bool{}
	for s := range n.open {
		set[s] = true
	}
	for s := range n.moved {
		set[s] = true
	}
	n.mu.Unlock()
	slots := sortedSlots(set)
	if len(slots) == 0 {
		return 0, nil, nil
	}
	t, err := n.admin.Topology(ctx, n.c)
	if err != nil {
		return 0, nil, err
	}
	cs, err := n.census(ctx, t, slots)
	if err != nil {
		return 0, nil, err
	}
	for _, s := range slots {
		problems = append(problems, cs[s].problems(t)...)
	}
	return len(slots), problems, nil
}
