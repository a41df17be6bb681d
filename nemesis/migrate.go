package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redline-dev/redline/harness/cluster"
	"github.com/redline-dev/redline/harness/clusteradmin"
)

// openSlot is a migration this nemesis opened and has not closed yet.
type openSlot struct {
	Slot     int
	Src, Dst string // node ids
	Stable   bool   // repair with SETSLOT STABLE when the target got no keys
}

type slotMove struct {
	Slot int    `json:"slot"`
	From string `json:"from"`
	To   string `json:"to"`
	Keys int    `json:"keys"`
}

// migrate moves slots between primaries as redis-cli does, or leaves one
// open half-way for the stop phase to repair.
func (n *Nemesis) migrate(ctx context.Context, st Step, t *topo, rng *rand.Rand) (*action, error) {
	prim := t.primaries()
	var reach []member
	for _, m := range prim {
		if m.Reachable {
			reach = append(reach, m)
		}
	}
	if len(reach) < 2 {
		return nil, fmt.Errorf("migrate needs two reachable primaries with slots, have %d", len(reach))
	}
	var all []member
	for _, m := range t.Members {
		if m.Primary && m.Reachable {
			all = append(all, m)
		}
	}
	count := 1
	if st.Mode == "storm" {
		count = 8 + rng.IntN(57)
	}
	type move struct {
		slot     int
		src, dst member
	}
	var moves []move
	// A slot someone has open (the user's own resharding, or one left
	// from before the run) is theirs to finish: never picked.
	used := map[int]bool{}
	for _, m := range t.Members {
		for s := range m.Migrating {
			used[s] = true
		}
		for s := range m.Importing {
			used[s] = true
		}
	}
	withKeys := map[string][]int{}
	for range count {
		src := pickOne(rng, reach)
		var others []member
		for _, m := range all {
			if m.ID != src.ID {
				others = append(others, m)
			}
		}
		dst := pickOne(rng, others)
		cands, ok := withKeys[src.ID]
		if !ok {
			cands = n.slotsWithKeys(ctx, src)
			withKeys[src.ID] = cands
		}
		if len(cands) == 0 {
			cands = src.Slots
		}
		slot := -1
		for range 8 {
			s := cands[rng.IntN(len(cands))]
			if !used[s] {
				slot = s
				break
			}
		}
		if slot < 0 {
			continue
		}
		used[slot] = true
		moves = append(moves, move{slot, src, dst})
	}
	var nodes []string
	var planned []slotMove
	for _, m := range moves {
		nodes = append(nodes, m.src.Node.Name, m.dst.Node.Name)
		planned = append(planned, slotMove{Slot: m.slot, From: m.src.Node.Name, To: m.dst.Node.Name})
	}
	slices.SortFunc(nodes, compareNames)
	nodes = slices.Compact(nodes)
	a := &action{nodes: nodes, detail: map[string]any{"moves": planned}}
	switch st.Mode {
	case "slot", "storm":
		atomic := rng.IntN(2) == 0 // used only where every primary supports it (atomic.go)
		a.start = func(ctx context.Context) (map[string]any, error) {
			if atomic && n.atomicCapable(ctx, all) {
				var ms []atomicMove
				for _, m := range moves {
					ms = append(ms, atomicMove{m.slot, m.src, m.dst})
				}
				return n.atomicMoves(ctx, ms)
			}
			var done []slotMove
			var places []slotPlacement
			var errs []error
			for _, m := range moves {
				if ctx.Err() != nil {
					break
				}
				before := n.beforeKeys(ctx, m.src, []int{m.slot})
				keys, err := n.moveSlot(ctx, m.slot, m.src, m.dst, all)
				state := "moved"
				if err != nil {
					state = "failed"
				}
				places = append(places, n.afterKeys(ctx, before, []int{m.slot}, m.src, m.dst, "classic", state, "")...)
				if err != nil {
					errs = append(errs, fmt.Errorf("slot %d %s->%s: %w", m.slot, m.src.Node.Name, m.dst.Node.Name, err))
					continue
				}
				done = append(done, slotMove{m.slot, m.src.Node.Name, m.dst.Node.Name, keys})
			}
			return map[string]any{"method": "classic", "moved": done, "placement": places}, errors.Join(errs...)
		}
	case "abort-stable", "abort-half":
		m := moves[0]
		a.start = func(ctx context.Context) (map[string]any, error) {
			if err := n.openMigration(ctx, m.slot, m.src, m.dst, st.Mode == "abort-stable"); err != nil {
				return nil, err
			}
			if st.Mode == "abort-stable" {
				return map[string]any{"keys": 0}, nil
			}
			keys, _, err := n.moveKeys(ctx, m.slot, m.src, m.dst, 1)
			return map[string]any{"keys": keys}, err
		}
		a.stop = func(ctx context.Context) (map[string]any, error) {
			how, err := n.repairSlot(ctx, m.slot)
			return map[string]any{"slot": m.slot, "repair": how}, err
		}
	default:
		if _, _, ok := splitHandoffMode(st.Mode); !ok || len(moves) == 0 {
			return nil, fmt.Errorf("unknown mode %q", st.Mode)
		}
		m := moves[0]
		if err := n.handoffAction(ctx, st, a, m.slot, m.src, m.dst, all, t); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// moveSlot moves one slot from src to dst the way redis-cli does and tells
// every primary in all. It returns the number of keys moved.
func (n *Nemesis) moveSlot(ctx context.Context, slot int, src, dst member, all []member) (int, error) {
	return n.moveSlots(ctx, []int{slot}, src, dst, all)
}

// moveBatch is how many slots moveSlots opens and closes per pipeline.
const moveBatch = 64

// moveSlots moves slots from src to dst with redis-cli's commands, batched:
// for each batch of slots, one pipeline of SETSLOT IMPORTING on dst, one of
// SETSLOT MIGRATING on src, GETKEYSINSLOT/MIGRATE for the slots that hold
// keys, then pipelines of SETSLOT NODE on dst, src and the other primaries.
// Each slot gets exactly the commands redis-cli sends; only the round trips
// are shared. A node that does not answer leaves the batch open for Heal.
func (n *Nemesis) moveSlots(ctx context.Context, slots []int, src, dst member, all []member) (int, error) {
	keys := 0
	for i := 0; i < len(slots); i += moveBatch {
		b := slots[i:min(i+moveBatch, len(slots))]
		seq, err := n.journal.Begin(clusteradmin.Step{Kind: "migrate", Slots: b, From: src.ID, To: dst.ID})
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

// moveBatch moves the slots of one batch of moveSlots.
func (n *Nemesis) moveBatch(ctx context.Context, b []int, src, dst member, all []member) (int, error) {
	keys := 0
	if err := n.admin.pipe(ctx, dst.Node.Addr, setslots(b, "importing", src.ID), nil); err != nil {
		return keys, err
	}
	if err := n.admin.pipe(ctx, src.Node.Addr, setslots(b, "migrating", dst.ID), nil); err != nil {
		return keys, err
	}
	counts := make([]any, len(b))
	var cmds [][]any
	for _, s := range b {
		cmds = append(cmds, []any{"cluster", "countkeysinslot", s})
	}
	if err := n.admin.pipe(ctx, src.Node.Addr, cmds, counts); err != nil {
		return keys, err
	}
	for j, s := range b {
		if c, _ := counts[j].(int64); c == 0 {
			continue
		}
		k, _, err := n.moveKeys(ctx, s, src, dst, 0)
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

func (n *Nemesis) openMigration(ctx context.Context, slot int, src, dst member, stable bool) error {
	seq, err := n.journal.Begin(clusteradmin.Step{Kind: "open", Slots: []int{slot}, From: src.ID, To: dst.ID,
		Note: "left open on purpose until the fault stops"})
	if err != nil {
		return err
	}
	err = n.openSlotNow(ctx, slot, src, dst, stable)
	n.journal.End(seq, err)
	return err
}

func (n *Nemesis) openSlotNow(ctx context.Context, slot int, src, dst member, stable bool) error {
	n.mu.Lock()
	n.open[slot] = openSlot{Slot: slot, Src: src.ID, Dst: dst.ID, Stable: stable}
	n.mu.Unlock()
	if _, err := n.admin.do(ctx, dst.Node.Addr, 3*time.Second, "cluster", "setslot", slot, "importing", src.ID); err != nil {
		return err
	}
	_, err := n.admin.do(ctx, src.Node.Addr, 3*time.Second, "cluster", "setslot", slot, "migrating", dst.ID)
	return err
}

// moveKeys moves the keys of slot from src to dst in batches of 10 with
// MIGRATE ... REPLACE KEYS, at most maxBatches batches (0: until empty).
func (n *Nemesis) moveKeys(ctx context.Context, slot int, src, dst member, maxBatches int) (moved int, empty bool, err error) {
	host, port, err := splitHostPort(dst.Announce)
	if err != nil {
		return 0, false, fmt.Errorf("address of %s (%q): %w", dst.Node.Name, dst.Announce, err)
	}
	for b := 0; maxBatches == 0 || b < maxBatches; b++ {
		v, err := n.admin.do(ctx, src.Node.Addr, 3*time.Second, "cluster", "getkeysinslot", slot, 10)
		if err != nil {
			return moved, false, err
		}
		ks, _ := v.([]any)
		if len(ks) == 0 {
			return moved, true, nil
		}
		args := []any{"migrate", host, port, "", 0, 5000, "replace"}
		// The target wants the same credentials redline has (as
		// redis-cli --cluster reshard passes them); cmdString hides them.
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
func (n *Nemesis) migrateBatch(ctx context.Context, addr string, args []any) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := n.admin.do(ctx, addr, 10*time.Second, args...)
		if err == nil {
			return nil
		}
		msg := err.Error()
		if !strings.Contains(msg, "CLUSTERDOWN") && !strings.Contains(msg, "TRYAGAIN") || time.Now().After(deadline) {
			return err
		}
		if !sleepUntil(ctx, time.Now().Add(200*time.Millisecond)) {
			return err
		}
	}
}

// closeMigration assigns slot to dst on dst, src and every other primary.
func (n *Nemesis) closeMigration(ctx context.Context, slot int, src, dst member, all []member) error {
	return n.closeMigrations(ctx, []int{slot}, src, dst, all)
}

// closeMigrations assigns slots to dst with SETSLOT NODE on dst, then src,
// then every other primary in all. A primary that does not answer learns it
// from gossip. A source that has just lost its last slot may already have
// turned into a replica of dst ("Please use SETSLOT only with masters"):
// that is the expected end of a drain, not an error.
//
// Before that it waits until dst knows src's current config epoch: SETSLOT
// NODE on the importing node bumps its epoch only when it does not already
// hold the highest epoch it knows of. A target that has not yet heard of
// the source's latest epoch keeps a lower one, and a ping the source sent
// before it gave the slot away then takes the slot back everywhere but on
// the source: nobody claims it any more (seen with Redis 7.0 on loopback
// during slot storms).
func (n *Nemesis) closeMigrations(ctx context.Context, slots []int, src, dst member, all []member) error {
	n.awaitEpoch(ctx, src, dst)
	cmds := setslots(slots, "node", dst.ID)
	if err := n.admin.pipe(ctx, dst.Node.Addr, cmds, nil); err != nil {
		return err
	}
	if err := n.admin.pipe(ctx, src.Node.Addr, cmds, nil); err != nil && !strings.Contains(err.Error(), "only with masters") {
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
			if err := n.admin.pipe(ctx, m.Node.Addr, cmds, nil); err != nil {
				n.opts.Log("nemesis: %v (it will learn from gossip)", err)
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

// repairSlot closes an open slot from the live topology: the owner (the
// primary that claims the slot) and the destination (the node importing
// it, or the one recorded when it was opened). A migration opened with
// Stable and whose destination holds no keys is undone with SETSLOT STABLE
// on both (target first, so that no ASK lands there afterwards); every other
// one is finished. It returns what it did.
func (n *Nemesis) repairSlot(ctx context.Context, slot int) (string, error) {
	n.mu.Lock()
	rec := n.open[slot]
	n.mu.Unlock()
	seq, err := n.journal.Begin(clusteradmin.Step{Kind: "close", Slots: []int{slot}, From: rec.Src, To: rec.Dst,
		Note: "finish (or, when the target got no keys, undo) redline's own open migration"})
	if err != nil {
		return "", err
	}
	how, err := n.repairSlotNow(ctx, slot)
	n.journal.End(seq, err)
	return how, err
}

func (n *Nemesis) repairSlotNow(ctx context.Context, slot int) (string, error) {
	t, err := n.topology(ctx)
	if err != nil {
		return "", err
	}
	n.mu.Lock()
	rec, known := n.open[slot]
	n.mu.Unlock()
	var owner, dst *member
	for i := range t.Members {
		m := &t.Members[i]
		if m.Primary && m.Reachable && slices.Contains(m.Slots, slot) && owner == nil {
			owner = m
		}
	}
	if owner == nil {
		return "", fmt.Errorf("slot %d: no reachable primary claims it", slot)
	}
	if id, ok := owner.Migrating[slot]; ok {
		if m, ok := t.byID(id); ok {
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
		if m, ok := t.byID(rec.Dst); ok {
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
				if _, _, err := n.moveKeys(ctx, slot, m, *owner, 0); err != nil {
					return "", err
				}
			}
			if _, err := n.admin.do(ctx, m.Node.Addr, 3*time.Second, "cluster", "setslot", slot, "stable"); err != nil {
				return "", err
			}
		}
		forget()
		return "stable", nil
	}
	if known && rec.Stable {
		if _, err := n.admin.do(ctx, dst.Node.Addr, 3*time.Second, "cluster", "setslot", slot, "stable"); err != nil {
			return "", err
		}
		v, err := n.admin.do(ctx, dst.Node.Addr, 3*time.Second, "cluster", "countkeysinslot", slot)
		if err != nil {
			return "", err
		}
		if c, _ := v.(int64); c == 0 {
			if _, err := n.admin.do(ctx, owner.Node.Addr, 3*time.Second, "cluster", "setslot", slot, "stable"); err != nil {
				return "", err
			}
			forget()
			return "stable", nil
		}
	}
	if _, err := n.admin.do(ctx, dst.Node.Addr, 3*time.Second, "cluster", "setslot", slot, "importing", owner.ID); err != nil {
		return "", err
	}
	if _, err := n.admin.do(ctx, owner.Node.Addr, 3*time.Second, "cluster", "setslot", slot, "migrating", dst.ID); err != nil {
		return "", err
	}
	if _, _, err := n.moveKeys(ctx, slot, *owner, *dst, 0); err != nil {
		return "", err
	}
	if err := n.closeMigration(ctx, slot, *owner, *dst, t.Members); err != nil {
		return "", err
	}
	return "finished", nil
}

// repairSlots repairs every migration this nemesis left open (on purpose,
// or because a node stopped answering half-way). A slot someone else left
// open is never touched: unaccounted finds those first. It returns the
// slots it touched.
func (n *Nemesis) repairSlots(ctx context.Context) ([]int, error) {
	n.mu.Lock()
	slots := sortedSlots(n.open)
	n.mu.Unlock()
	var errs []error
	for _, s := range slots {
		if _, err := n.repairSlot(ctx, s); err != nil {
			errs = append(errs, fmt.Errorf("repair slot %d: %w", s, err))
		}
	}
	return slots, errors.Join(errs...)
}

// waitConverged waits (cluster.WaitConverged) until every node that answers
// reports cluster_state:ok, no open slots, no failure flags and the same
// slot map.
func (n *Nemesis) waitConverged(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var addrs []string
	for _, nd := range sortedNodes(n.c.Nodes()) {
		addrs = append(addrs, nd.Addr)
	}
	return cluster.WaitConverged(ctx, addrs)
}

// slotsWithKeys returns, sorted, the slots of src that hold some of the keys
// one SCAN of up to 1000 keys finds there, so that migrations move data
// even when the workload uses few keys. Empty when the scan fails.
func (n *Nemesis) slotsWithKeys(ctx context.Context, src member) []int {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	keys, _, err := n.admin.client(src.Node.Addr).Scan(ctx, 0, "", 1000).Result()
	if err != nil {
		return nil
	}
	own := map[int]bool{}
	for _, s := range src.Slots {
		own[s] = true
	}
	var out []int
	for _, k := range keys {
		if s := keySlot(k); own[s] {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// epochs returns the config epochs the node at addr knows, by node id.
func (n *Nemesis) epochs(ctx context.Context, addr string) (map[string]uint64, string, error) {
	text, err := n.admin.clusterNodes(ctx, addr)
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
func (n *Nemesis) awaitEpoch(ctx context.Context, src, dst member) {
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
		if time.Now().After(deadline) || !sleepUntil(ctx, time.Now().Add(20*time.Millisecond)) {
			n.opts.Log("nemesis: %s still does not know epoch %d of %s", dst.Node.Name, want, src.Node.Name)
			return
		}
	}
}

// reassertMoves finishes the last step of this nemesis' own finished moves
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
func (n *Nemesis) reassertMoves(ctx context.Context) ([]int, error) {
	n.mu.Lock()
	moved := make(map[int]openSlot, len(n.moved))
	for s, m := range n.moved {
		moved[s] = m
	}
	n.mu.Unlock()
	if len(moved) == 0 {
		return nil, nil
	}
	t, err := n.topology(ctx)
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
				n.opts.Log("nemesis: slot %d, moved by redline to %s, is now claimed by %s: left alone", s, mv.Dst, c)
			}
			continue
		}
		dst, ok := t.byID(mv.Dst)
		if !ok || !dst.Reachable || !dst.Primary {
			errs = append(errs, fmt.Errorf("slot %d: nobody claims it and its destination %s is not a reachable primary", s, mv.Dst))
			continue
		}
		seq, err := n.journal.Begin(clusteradmin.Step{Kind: "reassert", Slots: []int{s}, From: mv.Src, To: mv.Dst,
			Note: "redline moved this slot to its destination and no primary claims it any more"})
		if err == nil {
			_, err = n.admin.do(ctx, dst.Node.Addr, 3*time.Second, "cluster", "setslot", s, "importing", mv.Src)
		}
		if err == nil {
			_, err = n.admin.do(ctx, dst.Node.Addr, 3*time.Second, "cluster", "setslot", s, "node", dst.ID)
		}
		n.journal.End(seq, err)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, s)
	}
	if len(done) > 0 {
		n.opts.Log("nemesis: re-asserted %d slots redline had moved and the cluster had lost: %v", len(done), done)
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

// unaccounted compares the live topology with what this nemesis knows it
// did. found lists every open slot that is not one of its own migrations
// (the user's, or left from before the run); would lists the repairs the
// end phase would make. An empty found means the repairs may go ahead.
func (n *Nemesis) unaccounted(ctx context.Context) (found, would []string, err error) {
	n.mu.Lock()
	open := make(map[int]openSlot, len(n.open))
	for s, o := range n.open {
		open[s] = o
	}
	n.mu.Unlock()
	t, err := n.topology(ctx)
	if err != nil {
		return nil, nil, err
	}
	name := func(id string) string {
		if m, ok := t.byID(id); ok {
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
