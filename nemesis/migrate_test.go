package nemesis

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/history"
)

// slotKeys groups the test keys by slot.
func slotKeys(want map[string]string) map[int][]string {
	out := map[int][]string{}
	for k := range want {
		out[history.Keyslot(k)] = append(out[history.Keyslot(k)], k)
	}
	return out
}

func countKeys(t *testing.T, addr string, slot int) int64 {
	t.Helper()
	cl := cluster.AdminClient(addr)
	defer cl.Close()
	n, err := cl.ClusterCountKeysInSlot(context.Background(), slot).Result()
	if err != nil {
		t.Fatalf("COUNTKEYSINSLOT %d on %s: %v", slot, addr, err)
	}
	return n
}

func TestKeySlotMatchesServer(t *testing.T) {
	c := startLocal(t, 3, 0)
	cl := cluster.AdminClient(c.addrs()[0])
	defer cl.Close()
	for _, k := range []string{"a", "key:1", "key:4242", "{user1000}.following", "foo{}{bar}", "foo{{bar}}", "foo{bar}{zap}"} {
		want, err := cl.ClusterKeySlot(context.Background(), k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got := history.Keyslot(k); int64(got) != want {
			t.Errorf("history.Keyslot(%q) = %d, server says %d", k, got, want)
		}
	}
}

func TestMigrateMovesSlotAndKeys(t *testing.T) {
	c := startLocal(t, 6, 1)
	want := fillKeys(t, c, 3000)
	bySlot := slotKeys(want)
	nem := newTestNemesis(t, []string{"migrate"}, c)
	rec := &memRecorder{}
	ctx := context.Background()
	for seed := uint64(1); seed <= 3; seed++ {
		before, err := nem.topology(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if a := nem.fire(ctx, rec, Step{Fault: "migrate", Mode: "slot", Seed: seed, Hold: 0.5}); a != nil {
			t.Fatal("a finished slot move must leave nothing to stop")
		}
		ops := rec.all()
		inv, done := ops[len(ops)-2], ops[len(ops)-1]
		if inv.Type != history.Invoke || done.Type != history.Info || inv.F != "start-migrate" || done.F != "start-migrate" {
			t.Fatalf("recorded %+v then %+v", inv, done)
		}
		if e, ok := detailOf(t, done)["error"]; ok {
			t.Fatalf("migrate failed: %v", e)
		}
		moves := detailOf(t, inv)["moves"].([]any)
		mv := moves[0].(map[string]any)
		slot := int(mv["slot"].(float64))
		var src, dst clusteradmin.NodeState
		for _, m := range before.Members {
			if m.Node.Name == mv["from"] {
				src = m
			}
			if m.Node.Name == mv["to"] {
				dst = m
			}
		}
		if len(bySlot[slot]) == 0 {
			t.Fatalf("slot %d holds none of the test keys: migrate should prefer slots with keys", slot)
		}
		if src.ID == "" || dst.ID == "" || src.ID == dst.ID || !dst.Primary {
			t.Fatalf("bad move %v", mv)
		}
		moved := detailOf(t, done)["moved"].([]any)[0].(map[string]any)
		if int(moved["keys"].(float64)) != len(bySlot[slot]) {
			t.Fatalf("moved %v keys, slot %d holds %d test keys", moved["keys"], slot, len(bySlot[slot]))
		}
		// The placement record of the classic move: the keys on dst only.
		pl := detailOf(t, done)["placement"].([]any)[0].(map[string]any)
		if pl["method"] != "classic" || pl["state"] != "moved" || len(pl["src"].([]any)) != 0 ||
			len(pl["dst"].([]any)) != len(bySlot[slot]) || len(pl["before"].([]any)) != len(bySlot[slot]) {
			t.Fatalf("placement %v, want %d keys before and on the destination only", pl, len(bySlot[slot]))
		}
		// Every node, replicas included, ends up naming dst as the owner.
		eventually(t, 20*time.Second, func() string {
			vs, err := views(c)
			if err != nil {
				return err.Error()
			}
			for name, ls := range vs {
				if o := cluster.OwnerOf(ls, slot); o != dst.ID {
					return fmt.Sprintf("%s says slot %d belongs to %s, want %s (%s)", name, slot, o, dst.ID, dst.Node.Name)
				}
			}
			return ""
		})
		if n := countKeys(t, dst.Node.Addr, slot); n != int64(len(bySlot[slot])) {
			t.Fatalf("target %s holds %d keys of slot %d, want %d", dst.Node.Name, n, slot, len(bySlot[slot]))
		}
		if n := countKeys(t, src.Node.Addr, slot); n != 0 {
			t.Fatalf("source %s still holds %d keys of slot %d", src.Node.Name, n, slot)
		}
	}
	checkKeys(t, c, want)
}

func TestMigrateStormAndAbortsAreRepaired(t *testing.T) {
	c := startLocal(t, 6, 1)
	want := fillKeys(t, c, 3000)
	bySlot := slotKeys(want)
	nem := newTestNemesis(t, []string{"migrate"}, c)
	rec := &memRecorder{}
	ctx := context.Background()

	if a := nem.fire(ctx, rec, Step{Fault: "migrate", Mode: "storm", Seed: 9}); a != nil {
		t.Fatal("storm left something to stop")
	}
	last := rec.all()[len(rec.all())-1]
	if e, ok := detailOf(t, last)["error"]; ok {
		t.Fatalf("storm: %v", e)
	}
	if n := len(detailOf(t, last)["moved"].([]any)); n < 8 {
		t.Fatalf("storm moved %d slots, want at least 8", n)
	}

	// abort-half: the slot stays open while the fault is held.
	a := nem.fire(ctx, rec, Step{Fault: "migrate", Mode: "abort-half", Seed: 11})
	if a == nil {
		t.Fatal("abort-half must leave a migration to repair")
	}
	mv := a.detail["moves"].([]clusteradmin.SlotMove)[0]
	slot := mv.Slot
	srcNode, _ := c.node(mv.From)
	dstNode, _ := c.node(mv.To)
	tp, _ := nem.topology(ctx)
	var src, dst clusteradmin.NodeState
	for _, m := range tp.Members {
		if m.Node.Name == mv.From {
			src = m
		}
		if m.Node.Name == mv.To {
			dst = m
		}
	}
	if src.Migrating[slot] != dst.ID || dst.Importing[slot] != src.ID {
		t.Fatalf("slot %d is not open from %s to %s: %v %v", slot, mv.From, mv.To, src.Migrating, dst.Importing)
	}
	total := int64(len(bySlot[slot]))
	onDst := countKeys(t, dstNode.addr(), slot)
	if onDst == 0 || onDst > 10 || onDst+countKeys(t, srcNode.addr(), slot) != total {
		t.Fatalf("half-way: %d keys on target, %d total, want 1..10 on target and none lost", onDst, total)
	}
	// Heal finishes it.
	if err := nem.Heal(ctx, rec); err != nil {
		for _, nd := range c.Nodes() {
			text, _ := clusteradmin.ClusterNodesText(ctx, cluster.Credentials{}, nd.Addr)
			t.Logf("%s %s:\n%s", nd.Name, nd.Addr, text)
		}
		t.Fatalf("heal: %v", err)
	}
	vs, err := views(c)
	if err != nil {
		t.Fatal(err)
	}
	for name, ls := range vs {
		if o := cluster.OwnerOf(ls, slot); o != dst.ID {
			t.Fatalf("after heal %s says slot %d belongs to %s, want %s", name, slot, o, dst.ID)
		}
	}
	if n := countKeys(t, dstNode.addr(), slot); n != total {
		t.Fatalf("after heal the target holds %d of %d keys", n, total)
	}
	checkKeys(t, c, want)

	// abort-stable: stopping it leaves the slot where it was, stable.
	a = nem.fire(ctx, rec, Step{Fault: "migrate", Mode: "abort-stable", Seed: 12})
	if a == nil {
		t.Fatal("abort-stable must leave a migration to repair")
	}
	mv = a.detail["moves"].([]clusteradmin.SlotMove)[0]
	tp, _ = nem.topology(ctx)
	for _, m := range tp.Members {
		if m.Node.Name == mv.From {
			src = m
		}
	}
	if src.Migrating[mv.Slot] == "" {
		t.Fatalf("abort-stable did not open slot %d on %s", mv.Slot, mv.From)
	}
	if err := nem.finish(ctx, rec, a); err != nil {
		t.Fatal(err)
	}
	stop := rec.all()[len(rec.all())-1]
	if stop.F != "stop-migrate" || detailOf(t, stop)["repair"] != "stable" {
		t.Fatalf("stop recorded %s %s", stop.F, stop.DetailRaw())
	}
	if err := nem.waitConverged(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	vs, _ = views(c)
	for name, ls := range vs {
		if o := cluster.OwnerOf(ls, mv.Slot); o != src.ID {
			t.Fatalf("after STABLE %s says slot %d belongs to %s, want the source %s", name, mv.Slot, o, src.ID)
		}
	}
	checkKeys(t, c, want)
}

// TestHealLeavesSomeoneElsesOpenSlotAlone: a slot the user has open (their
// own resharding) is neither picked nor repaired; while it is open the end
// phase says what it found and what it would have done, and changes
// nothing, not even redline's own open slot. Once the user closes theirs,
// the end phase finishes redline's.
func TestHealLeavesSomeoneElsesOpenSlotAlone(t *testing.T) {
	c := startLocal(t, 6, 1)
	want := fillKeys(t, c, 2000)
	nem := newTestNemesis(t, []string{"migrate"}, c)
	rec := &memRecorder{}
	ctx := context.Background()
	a := nem.fire(ctx, rec, Step{Fault: "migrate", Mode: "abort-half", Seed: 11})
	if a == nil {
		t.Fatal("abort-half must leave a migration open")
	}
	ours := a.detail["moves"].([]clusteradmin.SlotMove)[0]

	// The user opens a slot of another primary pair by hand.
	tp, _ := nem.topology(ctx)
	prim := tp.Primaries()
	var from, to clusteradmin.NodeState
	for _, p := range prim {
		if p.Node.Name != ours.From && p.Node.Name != ours.To {
			from = p
		}
	}
	for _, p := range prim {
		if p.ID != from.ID {
			to = p
			break
		}
	}
	theirs := from.Slots[len(from.Slots)/2]
	admin := func(addr string, args ...any) { adminDo(t, addr, args...) }
	admin(to.Node.Addr, "cluster", "setslot", theirs, "importing", from.ID)
	admin(from.Node.Addr, "cluster", "setslot", theirs, "migrating", to.ID)

	// A new migrate never picks the user's open slot.
	for seed := uint64(20); seed < 26; seed++ {
		if b := nem.fire(ctx, rec, Step{Fault: "migrate", Mode: "storm", Seed: seed}); b != nil {
			t.Fatal("storm left something to stop")
		}
		for _, mv := range detailOf(t, rec.Last("start-migrate", history.Invoke))["moves"].([]any) {
			if s := int(mv.(map[string]any)["slot"].(float64)); s == theirs {
				t.Fatalf("storm %d picked slot %d, which the user has open", seed, s)
			}
		}
	}

	err := nem.Heal(ctx, rec)
	if err == nil || !strings.Contains(err.Error(), "cannot account for") || !strings.Contains(err.Error(), fmt.Sprintf("slot %d", theirs)) {
		t.Fatalf("heal: %v", err)
	}
	d := detailOf(t, rec.Last("heal", history.Info))
	if d["unaccounted"] == nil || !strings.Contains(fmt.Sprint(d["would_have"]), fmt.Sprintf("slot %d", ours.Slot)) {
		t.Fatalf("heal recorded %v", d)
	}
	tp, _ = nem.topology(ctx)
	for _, m := range tp.Members {
		if m.ID == from.ID && m.Migrating[theirs] != to.ID {
			t.Fatalf("the user's slot %d is no longer migrating on %s: %v", theirs, m.Node.Name, m.Migrating)
		}
		if m.Node.Name == ours.From && m.Migrating[ours.Slot] == "" {
			t.Fatalf("redline's slot %d was repaired although the end phase found a state it cannot account for", ours.Slot)
		}
	}

	// The user finishes theirs (undoes it); now the end phase repairs ours.
	admin(to.Node.Addr, "cluster", "setslot", theirs, "stable")
	admin(from.Node.Addr, "cluster", "setslot", theirs, "stable")
	if err := nem.Heal(ctx, rec); err != nil {
		t.Fatalf("second heal: %v", err)
	}
	checkKeys(t, c, want)
	if len(rec.journal()) == 0 {
		t.Fatal("no journal entries in the history")
	}
}

// adminDo sends one admin command and fails the test on an error.
func adminDo(t *testing.T, addr string, args ...any) {
	t.Helper()
	cl := cluster.AdminClient(addr)
	defer cl.Close()
	if err := cl.Do(context.Background(), args...).Err(); err != nil {
		t.Fatalf("%v on %s: %v", args, addr, err)
	}
}
