package clusteradmin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redline-dev/redline/harness/cluster"
)

// SlotMover moves slots between primaries the way redis-cli does, and
// remembers what it did: the migrations it opened and has not closed, and
// the slots it moved. Whoever moves slots for a run (the nemesis' migrate
// and member faults) moves them through one mover; its RepairSlots and
// ReassertMoves then repair its open migrations and re-assert its moves
// whichever fault made them, and never touch a slot someone else has open
// (Unaccounted finds those first). Every change is journalled before it is
// made.
type SlotMover struct {
	admin     *Admin
	journal   *Journal
	c         cluster.Cluster
	log       func(format string, args ...any)
	mu        sync.Mutex
	open      map[int]openSlot // migrations left open on purpose or by an error
	moved     map[int]openSlot // slots it moved, by slot: the last move
	epochPair [2]string        // last source/target pair awaitEpoch checked
	// BetweenNode, when set (tests), runs between the two SETSLOT NODEs of
	// closeMigrations: the moment a ping of the other node can arrive.
	BetweenNode func(ctx context.Context, src, dst NodeState)
}

// NewSlotMover makes a mover of c's slots that sends its commands through
// admin and journals every change in j. log (may be nil) receives what a
// move could not do and went on without.
func NewSlotMover(c cluster.Cluster, admin *Admin, j *Journal, log func(format string, args ...any)) *SlotMover {
	if log == nil {
		log = func(string, ...any) {}
	}
	return &SlotMover{admin: admin, journal: j, c: c, log: log, open: map[int]openSlot{}, moved: map[int]openSlot{}}
}

// NewStep forgets the epoch check of the previous step (awaitEpoch).
func (n *SlotMover) NewStep() {
	n.mu.Lock()
	n.epochPair = [2]string{}
	n.mu.Unlock()
}

// openSlot is a migration the mover opened and has not closed yet.
type openSlot struct {
	Slot     int
	Src, Dst string // node ids
	Stable   bool   // repair with SETSLOT STABLE when the target got no keys
}

// SlotMove is one slot moved (or planned), as the history records it.
type SlotMove struct {
	Slot int    `json:"slot"`
	From string `json:"from"`
	To   string `json:"to"`
	Keys int    `json:"keys"`
}

// MoveSlot moves one slot from src to dst the way redis-cli does and tells
// every primary in all. It returns the number of keys moved.
func (n *SlotMover) MoveSlot(ctx context.Context, slot int, src, dst NodeState, all []NodeState) (int, error) {
	return n.MoveSlots(ctx, []int{slot}, src, dst, all)
}

// moveBatch is how many slots MoveSlots opens and closes per pipeline.
const moveBatch = 64

// MoveSlots moves slots from src to dst with redis-cli's commands, batched:
// for each batch of slots, one pipeline of SETSLOT IMPORTING on dst, one of
// SETSLOT MIGRATING on src, GETKEYSINSLOT/MIGRATE for the slots that hold
// keys, then pipelines of SETSLOT NODE on dst, src and the other primaries.
// Each slot gets exactly the commands redis-cli sends; only the round trips
// are shared. A node that does not answer leaves the batch open for Heal.
func (n *SlotMover) MoveSlots(ctx context.Context, slots []int, src, dst NodeState, all []NodeState) (int, error) {
	keys := 0
	for i := 0; i < len(slots); i += moveBatch {
		b := slots[i:min(i+moveBatch, len(slots))]
		seq, err := n.journal.Begin(Step{Kind: "migrate", Slots: b, From: src.ID, To: dst.ID})
		if err != nil {
			return keys, err
		}
		n.mu.Lock()
		for _, s := range b {
			n.open[s] = openSlot{Slot: s, Src: src.ID, Dst: dst.ID}
		}
		n.mu.Unlock()
		k, err := n.moveBatch(ctx, b, src, dst, all)
		keys += k
		n.journal.End(seq, err)
		if err != nil {
			return keys, err
		}
	}
	return keys, nil
}

// moveBatch moves the slots of one batch of MoveSlots.
func (n *SlotMover) moveBatch(ctx context.Context, b []int, src, dst NodeState, all []NodeState) (int, error) {
	keys := 0
	if err := n.admin.Pipe(ctx, dst.Node.Addr, setslots(b, "importing", src.ID), nil); err != nil {
		return keys, err
	}
	if err := n.admin.Pipe(ctx, src.Node.Addr, setslots(b, "migrating", dst.ID), nil); err != nil {
		return keys, err
	}
	counts := make([]any, len(b))
	var cmds [][]any
	for _, s := range b {
		cmds = append(cmds, []any{"cluster", "countkeysinslot", s})
	}
	if err := n.admin.Pipe(ctx, src.Node.Addr, cmds, counts); err != nil {
		return keys, err
	}
	for j, s := range b {
		if c, _ := counts[j].(int64); c == 0 {
			continue
		}
		k, _, err := n.MoveKeys(ctx, s, src, dst, 0)
		keys += k
		if err != nil {
			return keys, err
		}
	}
	if err := n.closeMigrations(ctx, b, src, dst, all); err != nil {
		return keys, err
	}
	return keys, nil
}

func setslots(slots []int, how, id string) [][]any {
	cmds := make([][]any, 0, len(slots))
	for _, s := range slots {
		cmds = append(cmds, []any{"cluster", "setslot", s, how, id})
	}
	return cmds
}

func (n *SlotMover) OpenMigration(ctx context.Context, slot int, src, dst NodeState, stable bool) error {
	seq, err := n.journal.Begin(Step{Kind: "open", Slots: []int{slot}, From: src.ID, To: dst.ID,
		Note: "left open on purpose until the fault stops"})
	if err != nil {
		return err
	}
	err = n.openSlotNow(ctx, slot, src, dst, stable)
	n.journal.End(seq, err)
	return err
}

func (n *SlotMover) openSlotNow(ctx context.Context, slot int, src, dst NodeState, stable bool) error {
	n.mu.Lock()
	n.open[slot] = openSlot{Slot: slot, Src: src.ID, Dst: dst.ID, Stable: stable}
	n.mu.Unlock()
	if _, err := n.admin.Do(ctx, dst.Node.Addr, 3*time.Second, "cluster", "setslot", slot, "importing", src.ID); err != nil {
		return err
	}
	_, err := n.admin.Do(ctx, src.Node.Addr, 3*time.Second, "cluster", "setslot", slot, "migrating", dst.ID)
	return err
}

// MoveKeys moves the keys of slot from src to dst in batches of 10 with
// MIGRATE ... REPLACE KEYS, at most maxBatches batches (0: until empty).
func (n *SlotMover) MoveKeys(ctx context.Context, slot int, src, dst NodeState, maxBatches int) (moved int, empty bool, err error) {
	host, port, err := cluster.SplitAddr(dst.Announce)
	if err != nil {
		return 0, false, fmt.Errorf("address of %s (%q): %w", dst.Node.Name, dst.Announce, err)
	}
	for b := 0; maxBatches == 0 || b < maxBatches; b++ {
		v, err := n.admin.Do(ctx, src.Node.Addr, 3*time.Second, "cluster", "getkeysinslot", slot, 10)
		if err != nil {
			return moved, false, err
		}
		ks, _ := v.([]any)
		if len(ks) == 0 {
			return moved, true, nil
		}
		args := []any{"migrate", host, port, "", 0, 5000, "replace"}
		// The target wants the same credentials redline has (as
		// redis-cli --cluster reshard passes them); CommandString hides them.
		if cr := cluster.AdminCredentials(); cr.Password != "" && cr.User != "" {
			args = append(args, "auth2", cr.User, cr.Password)
		} else if cr.Password != "" {
			args = append(args, "auth", cr.Password)
		}
		args = append(append(args, "keys"), ks...)
		if err := n.migrateBatch(ctx, src.Node.Addr, args); err != nil {
			return moved, false, err
		}
		moved += len(ks)
	}
	return moved, false, nil
}

// migrateBatch sends one MIGRATE, retried for a few seconds while the
// target refuses with CLUSTERDOWN or TRYAGAIN: a node that has just joined
// (or briefly saw a peer as failing on a loaded machine) may not take
// writes yet. A refused MIGRATE deletes nothing on the source, and REPLACE
// makes a repeat harmless.
func (n *SlotMover) migrateBatch(ctx context.Context, addr string, args []any) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := n.admin.Do(ctx, addr, 10*time.Second, args...)
		if err == nil {
			return nil
		}
		msg := err.Error()
		if !strings.Contains(msg, "CLUSTERDOWN") && !strings.Contains(msg, "TRYAGAIN") || time.Now().After(deadline) {
			return err
		}
		if sleepCtx(ctx, 200*time.Millisecond) != nil {
			return err
		}
	}
}

// closeMigration assigns slot to dst on dst, src and every other primary.
func (n *SlotMover) closeMigration(ctx context.Context, slot int, src, dst NodeState, all []NodeState) error {
	return n.closeMigrations(ctx, []int{slot}, src, dst, all)
}

// closeMigrations assigns slots to dst with SETSLOT NODE on src, then dst,
// then every other primary in all. A primary that does not answer learns it
// from gossip.
//
// The source goes first (redis-cli --cluster tells the target first).
// A node that owns a slot and no longer imports it gives the slot to any
// node that claims it with a higher config epoch, and deletes its keys as
// a slot it lost (Redis 7.0 clusterUpdateSlotsConfigWith). Told second,
// the source still claims the slot after the target took it; should its
// epoch rise above the target's in that window (a config epoch collision
// resolved by bumping, which slot storms cause), its next ping takes the
// slot back and the target empties it: a key lost in CI after a storm, and
// the end phase then re-asserted an empty slot. Told first, the source
// stops claiming the slot while the target still imports it, and an
// importing node ignores every claim of the slot; by the time the target
// owns it, nobody else claims it. TestMoveKeepsKeysWhenTheSourceEpochRises
// holds a move in that window.
//
// Before that it waits until dst knows src's current config epoch: SETSLOT
// NODE on the importing node bumps its epoch only when it does not already
// hold the highest epoch it knows of. A target that has not yet heard of
// the source's latest epoch keeps a lower one, and a ping the source sent
// before it gave the slot away then takes the slot back everywhere but on
// the source: nobody claims it any more (seen with Redis 7.0 on loopback
// during slot storms).
//
// A source that has just lost its last slot may have turned into a replica
// of dst ("Please use SETSLOT only with masters"): that is the expected end
// of a drain, not an error. If dst does not answer after the source let
// go, nobody claims the slots until Heal finishes them on dst.
func (n *SlotMover) closeMigrations(ctx context.Context, slots []int, src, dst NodeState, all []NodeState) error {
	n.awaitEpoch(ctx, src, dst)
	cmds := setslots(slots, "node", dst.ID)
	if err := n.admin.Pipe(ctx, src.Node.Addr, cmds, nil); err != nil && !strings.Contains(err.Error(), "only with masters") {
		return err
	}
	if n.BetweenNode != nil {
		n.BetweenNode(ctx, src, dst)
	}
	if err := n.admin.Pipe(ctx, dst.Node.Addr, cmds, nil); err != nil {
		return err
	}
	var wg sync.WaitGroup
	for _, m := range all {
		if m.ID == src.ID || m.ID == dst.ID || !m.Primary {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := n.admin.Pipe(ctx, m.Node.Addr, cmds, nil); err != nil {
				n.log("%v (it will learn from gossip)", err)
			}
		}()
	}
	wg.Wait()
	n.mu.Lock()
	for _, s := range slots {
		delete(n.open, s)
		n.moved[s] = openSlot{Slot: s, Src: src.ID, Dst: dst.ID}
	}
	n.mu.Unlock()
	return nil
}

// RepairSlot closes an open slot from the live topology: the owner (the
// primary that claims the slot) and the destination (the node importing
// it, or the one recorded when it was opened). A migration opened with
// Stable and whose destination holds no keys is undone with SETSLOT STABLE
// on both (target first, so that no ASK lands there afterwards); every other
// one is finished. It returns what it did.
func (n *SlotMover) RepairSlot(ctx context.Context, slot int) (string, error) {
	n.mu.Lock()
	rec := n.open[slot]
	n.mu.Unlock()
	seq, err := n.journal.Begin(Step{Kind: "close", Slots: []int{slot}, From: rec.Src, To: rec.Dst,
		Note: "finish (or, when the target got no keys, undo) redline's own open migration"})
	if err != nil {
		return "", err
	}
	how, err := n.repairSlotNow(ctx, slot)
	n.journal.End(seq, err)
	return how, err
}

func (n *SlotMover) repairSlotNow(ctx context.Context, slot int) (string, error) {
	t, err := n.admin.Topology(ctx, n.c)
	if err != nil {
		return "", err
	}
	n.mu.Lock()
	rec, known := n.open[slot]
	n.mu.Unlock()
	var owner, dst *NodeState
	for i := range t.Members {
		m := &t.Members[i]
		if m.Primary && m.Reachable && slices.Contains(m.Slots, slot) && owner == nil {
			owner = m
		}
	}
	if owner == nil && known {
		// The source let go (closeMigrations tells it first) and the
		// target, still importing, never heard: finish it there.
		if d, ok := t.ByID(rec.Dst); ok && d.Reachable && d.Primary && d.Importing[slot] != "" {
			if _, err := n.admin.Do(ctx, d.Node.Addr, 3*time.Second, "cluster", "setslot", slot, "node", d.ID); err != nil {
				return "", err
			}
			n.mu.Lock()
			delete(n.open, slot)
			n.moved[slot] = openSlot{Slot: slot, Src: rec.Src, Dst: rec.Dst}
			n.mu.Unlock()
			return "finished", nil
		}
	}
	if owner == nil {
		return "", fmt.Errorf("slot %d: no reachable primary claims it", slot)
	}
	if id, ok := owner.Migrating[slot]; ok {
		if m, ok := t.ByID(id); ok {
			dst = &m
		}
	}
	if dst == nil {
		for i := range t.Members {
			if _, ok := t.Members[i].Importing[slot]; ok && t.Members[i].ID != owner.ID {
				dst = &t.Members[i]
				break
			}
		}
	}
	if dst == nil && known {
		if m, ok := t.ByID(rec.Dst); ok {
			dst = &m
		}
	}
	forget := func() {
		n.mu.Lock()
		delete(n.open, slot)
		n.mu.Unlock()
	}
	if dst == nil || dst.ID == owner.ID || !dst.Reachable || !dst.Primary {
		// Nowhere to move it: make every node that has it open stable,
		// after handing keys an importer holds back to the owner.
		for _, m := range t.Members {
			_, mig := m.Migrating[slot]
			_, imp := m.Importing[slot]
			if !(mig || imp) || !m.Reachable {
				continue
			}
			if imp && m.ID != owner.ID {
				if _, _, err := n.MoveKeys(ctx, slot, m, *owner, 0); err != nil {
					return "", err
				}
			}
			if _, err := n.admin.Do(ctx, m.Node.Addr, 3*time.Second, "cluster", "setslot", slot, "stable"); err != nil {
				return "", err
			}
		}
		forget()
		return "stable", nil
	}
	if known && rec.Stable {
		if _, err := n.admin.Do(ctx, dst.Node.Addr, 3*time.Second, "cluster", "setslot", slot, "stable"); err != nil {
			return "", err
		}
		v, err := n.admin.Do(ctx, dst.Node.Addr, 3*time.Second, "cluster", "countkeysinslot", slot)
		if err != nil {
			return "", err
		}
		if c, _ := v.(int64); c == 0 {
			if _, err := n.admin.Do(ctx, owner.Node.Addr, 3*time.Second, "cluster", "setslot", slot, "stable"); err != nil {
				return "", err
			}
			forget()
			return "stable", nil
		}
	}
	if _, err := n.admin.Do(ctx, dst.Node.Addr, 3*time.Second, "cluster", "setslot", slot, "importing", owner.ID); err != nil {
		return "", err
	}
	if _, err := n.admin.Do(ctx, owner.Node.Addr, 3*time.Second, "cluster", "setslot", slot, "migrating", dst.ID); err != nil {
		return "", err
	}
	if _, _, err := n.MoveKeys(ctx, slot, *owner, *dst, 0); err != nil {
		return "", err
	}
	if err := n.closeMigration(ctx, slot, *owner, *dst, t.Members); err != nil {
		return "", err
	}
	return "finished", nil
}

// RepairSlots repairs every migration this mover left open (on purpose,
// or because a node stopped answering half-way). A slot someone else left
// open is never touched: Unaccounted finds those first. It returns the
// slots it touched.
func (n *SlotMover) RepairSlots(ctx context.Context) ([]int, error) {
	n.mu.Lock()
	slots := sortedSlots(n.open)
	n.mu.Unlock()
	var errs []error
	for _, s := range slots {
		if _, err := n.RepairSlot(ctx, s); err != nil {
			errs = append(errs, fmt.Errorf("repair slot %d: %w", s, err))
		}
	}
	return slots, errors.Join(errs...)
}

// epochs returns the config epochs the node at addr knows, by node id.
func (n *SlotMover) epochs(ctx context.Context, addr string) (map[string]uint64, string, error) {
	text, err := n.admin.ClusterNodes(ctx, addr)
	if err != nil {
		return nil, "", err
	}
	ls, err := cluster.ParseNodes(text)
	if err != nil {
		return nil, "", err
	}
	out := map[string]uint64{}
	self := ""
	for _, l := range ls {
		out[l.ID] = l.ConfigEpoch
		if l.Myself() {
			self = l.ID
		}
	}
	return out, self, nil
}

// awaitEpoch waits (at most 5 s) until dst knows src's config epoch as src
// reports it, or holds a higher one itself.
// Once dst has taken a slot from src, its epoch is above src's until src
// imports a slot itself, so later moves of the same pair in the same step
// skip the check.
func (n *SlotMover) awaitEpoch(ctx context.Context, src, dst NodeState) {
	pair := [2]string{src.ID, dst.ID}
	n.mu.Lock()
	if n.epochPair == pair {
		n.mu.Unlock()
		return
	}
	n.epochPair = pair
	n.mu.Unlock()
	se, _, err := n.epochs(ctx, src.Node.Addr)
	if err != nil {
		return
	}
	want := se[src.ID]
	deadline := time.Now().Add(5 * time.Second)
	for {
		de, _, err := n.epochs(ctx, dst.Node.Addr)
		if err != nil || de[src.ID] >= want || de[dst.ID] > want {
			return
		}
		if time.Now().After(deadline) || sleepCtx(ctx, 20*time.Millisecond) != nil {
			n.log("%s still does not know epoch %d of %s", dst.Node.Name, want, src.Node.Name)
			return
		}
	}
}

// ReassertMoves finishes the last step of this mover's own finished moves
// that the cluster has since undone: a slot it handed to dst that no
// reachable primary claims on its own myself line any more. That happens
// when dst took the slot without a higher config epoch than the source's
// (it had not heard of it yet) and a ping the source sent before giving the
// slot away made the others route it back to the source, which no longer
// claims it. dst gets the slot the way redis-cli finishes a migration:
// SETSLOT IMPORTING from the source, then SETSLOT NODE itself, which gives
// it a fresh epoch when it does not hold the highest. No key moves (the
// keys are on dst; the source refuses to let go of a slot with keys). A
// slot some other primary claims is left alone and reported. It returns the
// slots it re-asserted.
func (n *SlotMover) ReassertMoves(ctx context.Context) ([]int, error) {
	n.mu.Lock()
	moved := make(map[int]openSlot, len(n.moved))
	for s, m := range n.moved {
		moved[s] = m
	}
	n.mu.Unlock()
	if len(moved) == 0 {
		return nil, nil
	}
	t, err := n.admin.Topology(ctx, n.c)
	if err != nil {
		return nil, err
	}
	claimer := map[int]string{}
	for _, m := range t.Members {
		if m.Primary && m.Reachable {
			for _, s := range m.Slots {
				claimer[s] = m.ID
			}
		}
	}
	var done []int
	var errs []error
	for _, s := range sortedSlots(moved) {
		mv := moved[s]
		c, ok := claimer[s]
		if ok {
			if c != mv.Dst {
				n.log("slot %d, moved by redline to %s, is now claimed by %s: left alone", s, mv.Dst, c)
			}
			continue
		}
		dst, ok := t.ByID(mv.Dst)
		if !ok || !dst.Reachable || !dst.Primary {
			errs = append(errs, fmt.Errorf("slot %d: nobody claims it and its destination %s is not a reachable primary", s, mv.Dst))
			continue
		}
		seq, err := n.journal.Begin(Step{Kind: "reassert", Slots: []int{s}, From: mv.Src, To: mv.Dst,
			Note: "redline moved this slot to its destination and no primary claims it any more"})
		if err == nil {
			_, err = n.admin.Do(ctx, dst.Node.Addr, 3*time.Second, "cluster", "setslot", s, "importing", mv.Src)
		}
		if err == nil {
			_, err = n.admin.Do(ctx, dst.Node.Addr, 3*time.Second, "cluster", "setslot", s, "node", dst.ID)
		}
		n.journal.End(seq, err)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, s)
	}
	if len(done) > 0 {
		n.log("re-asserted %d slots redline had moved and the cluster had lost: %v", len(done), done)
	}
	return done, errors.Join(errs...)
}

func sortedSlots[V any](m map[int]V) []int {
	out := make([]int, 0, len(m))
	for s := range m {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// Unaccounted compares the live topology with what this mover knows it
// did. found lists every open slot that is not one of its own migrations
// (the user's, or left from before the run); would lists the repairs the
// end phase would make. An empty found means the repairs may go ahead.
func (n *SlotMover) Unaccounted(ctx context.Context) (found, would []string, err error) {
	n.mu.Lock()
	open := make(map[int]openSlot, len(n.open))
	for s, o := range n.open {
		open[s] = o
	}
	n.mu.Unlock()
	t, err := n.admin.Topology(ctx, n.c)
	if err != nil {
		return nil, nil, err
	}
	name := func(id string) string {
		if m, ok := t.ByID(id); ok {
			return m.Node.Name + " (" + m.Announce + ")"
		}
		return id
	}
	for _, m := range t.Members {
		for _, s := range sortedSlots(m.Migrating) {
			if o, ok := open[s]; !ok || o.Src != m.ID && o.Dst != m.ID {
				found = append(found, fmt.Sprintf("slot %d is MIGRATING on %s to %s, not by redline", s, name(m.ID), name(m.Migrating[s])))
			}
		}
		for _, s := range sortedSlots(m.Importing) {
			if o, ok := open[s]; !ok || o.Src != m.ID && o.Dst != m.ID {
				found = append(found, fmt.Sprintf("slot %d is IMPORTING on %s from %s, not by redline", s, name(m.ID), name(m.Importing[s])))
			}
		}
	}
	for _, s := range sortedSlots(open) {
		o := open[s]
		would = append(would, fmt.Sprintf("finish or undo its own migration of slot %d from %s to %s", s, name(o.Src), name(o.Dst)))
	}
	return found, would, nil
}
