package nemesis

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/history"
)

// TestKillAdoptsTheImportsItsRestartOpens: a primary that holds keys of a
// slot another primary owns sets that slot IMPORTING from the owner itself
// when it starts (Redis 7.0's verifyClusterConfigWithData). The CI run of
// TestHealAfterKillOfStormDestination met it: a TAKEOVER left n5 a
// primary of the slots it had just been given, with stale keys of the
// ones it lost; the kill of a majority restarted it, and the end phase
// stopped at hundreds of slots "IMPORTING on n5 from n2, not by redline".
// The kill fault must adopt exactly those states, and the end phase close
// them with the owner keeping the slot and both copies of a key kept. On
// redis-server and on the reference server (which does the same check).
func TestKillAdoptsTheImportsItsRestartOpens(t *testing.T) {
	for name, server := range moverServers(t) {
		t.Run(name, func(t *testing.T) { killAdoptsRestartImports(t, server) })
	}
}

func killAdoptsRestartImports(t *testing.T, server []string) {
	c := startLocalServer(t, 3, 0, server)
	pc := procCluster{c}
	nem := newTestNemesis(t, []string{"kill"}, pc)
	ctx := context.Background()
	tp, err := nem.topology(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const conflict, only = "{adopt}k1", "{adopt}k2"
	slot := history.Keyslot(conflict)
	var owner, holder *cluster.Node
	var ownerID string
	for _, m := range tp.Members {
		n := m.Node
		switch {
		case slices.Contains(m.Slots, slot):
			owner, ownerID = &n, m.ID
		case holder == nil:
			holder = &n
		}
	}
	if owner == nil || holder == nil {
		t.Fatalf("slot %d: no owner and other primary in %v", slot, tp.Names())
	}
	oc, hc := cluster.AdminClient(owner.Addr), cluster.AdminClient(holder.Addr)
	defer oc.Close()
	defer hc.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// The holder gets keys of the slot it does not own (as a stale copy
	// and a key only it has), then closes the state again: after that,
	// only its restart can open it.
	must(oc.Set(ctx, conflict, "owner's", 0).Err())
	must(hc.Do(ctx, "cluster", "setslot", slot, "importing", ownerID).Err())
	pipe := hc.Pipeline()
	pipe.Do(ctx, "asking")
	pipe.Set(ctx, conflict, "stale", 0)
	pipe.Do(ctx, "asking")
	pipe.Set(ctx, only, "only the holder's", 0)
	_, err = pipe.Exec(ctx)
	must(err)
	must(hc.Do(ctx, "cluster", "setslot", slot, "stable").Err())

	kf := nem.bound["kill"].(*killFault)
	must(kf.strikeNode(ctx, holder.Name))
	must(kf.healNode(ctx, holder.Name))
	st, err := nem.mover.OpenStates(ctx, holder.Addr, 2*time.Second)
	must(err)
	if o, ok := st[slot]; !ok || o.Migrating || o.Peer != ownerID {
		t.Fatalf("after its restart %s shows %v for slot %d, want IMPORTING from the owner %s (Redis's start-up check)", holder.Name, st, slot, owner.Name)
	}
	if len(st) != 1 {
		t.Fatalf("after its restart %s shows states %v, want slot %d alone", holder.Name, st, slot)
	}
	var adopted bool
	for _, s := range nem.journal.Steps() {
		if s.Kind == "adopt" && slices.Equal(s.Slots, []int{slot}) && s.State == "done" {
			adopted = true
		}
	}
	if !adopted {
		t.Fatalf("journal has no adopt step of slot %d: %+v", slot, nem.journal.Steps())
	}
	if found, _, err := nem.mover.Unaccounted(ctx); err != nil || len(found) > 0 {
		t.Fatalf("Unaccounted after the adoption: %v %v", found, err)
	}

	rec := &memRecorder{}
	must(nem.Heal(ctx, rec))
	vs, err := views(c)
	must(err)
	for name, ls := range vs {
		if o := cluster.OwnerOf(ls, slot); o != ownerID {
			t.Fatalf("after heal %s says slot %d belongs to %s, want its owner %s", name, slot, o, owner.Name)
		}
		for _, l := range ls {
			if l.Myself() && len(l.Open) > 0 {
				t.Fatalf("after heal %s still shows %v", name, l.Open)
			}
		}
	}
	if n := countKeys(t, holder.Addr, slot); n != 0 {
		t.Fatalf("after heal %s still holds %d keys of slot %d", holder.Name, n, slot)
	}
	for key, want := range map[string]string{
		conflict: "owner's", only: "only the holder's",
		history.AsideName(conflict, holder.Name): "stale",
	} {
		if v, err := oc.Get(ctx, key).Result(); err != nil || v != want {
			t.Fatalf("after heal the owner's %s is %q (%v), want %q", key, v, err, want)
		}
	}
}
