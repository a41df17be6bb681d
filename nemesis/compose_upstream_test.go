package nemesis

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/history"
)

// TestComposeOrphanMigrationKill orphans a primary of a 7-node cluster
// (3 primaries, one of them with two replicas), waits for Redis's own
// replica migration and kills the orphaned primary during the migrant's
// first sync, on each build: the replicas kept down and the primary were
// killed, the migrant came from the two-replica shard, the kill came
// while its sync was in progress (Redis waits repl-diskless-sync-delay),
// the election in the orphan's shard and the slot's census were recorded,
// and every killed node came back. Who won is logged (the study's
// evidence), not asserted.
func TestComposeOrphanMigrationKill(t *testing.T) {
	for _, b := range composeBuilds(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			c := startLocalServer(t, 7, 1, b.argv)
			fillKeys(t, c, 2000)
			nem := newTestNemesis(t, []string{"member"}, procCluster{c})
			rec := &memRecorder{}
			a := nem.fire(ctx, rec, Step{Fault: "member", Mode: orphanMigrationKillMode, Seed: 1, Hold: 0.5})
			if a == nil {
				t.Fatal("orphan-migration-kill left nothing to stop: the killed nodes must be restarted")
			}
			d := detailOf(t, rec.Last("start-member", history.Info))
			if d["error"] != nil {
				t.Fatalf("orphan-migration-kill failed: %v (steps %v)", d["error"], d["steps"])
			}
			st := stepsOf(t, d)
			orphan := a.detail["orphaned"].(string)
			kept := a.detail["kept_down"].([]string)
			if len(kept) != 1 {
				t.Fatalf("kept down %v, want the orphan's one replica (the topology has primaries with one replica)", kept)
			}
			if !slices.Contains(a.detail["donors"].([]string), st["migrated"]["from"].(string)) {
				t.Fatalf("the migrant came from %v, not from a two-replica shard %v", st["migrated"]["from"], a.detail["donors"])
			}
			if st["kill"]["node"] != orphan || d["migrant"] != st["migrated"]["migrant"] {
				t.Fatalf("kill %v, migrated %v, orphan %s", st["kill"], st["migrated"], orphan)
			}
			t.Logf("%s: orphan %s, kept down %v, migrant %v from %v after %v ms; kill %v", b.name, orphan, kept,
				d["migrant"], st["migrated"]["from"], st["migrated"]["waited_ms"], st["kill"])
			// Redis waits repl-diskless-sync-delay (5 s) before a full sync;
			// the reference server syncs at once and may be done already.
			if b.name != "reference" && d["unsynced_at_kill"] != true {
				t.Errorf("the kill came after the migrant's first sync: %v", st["kill"])
			}
			for _, name := range append([]string{orphan}, kept...) {
				if err := pingNode(nodeAddr(c, name)); err == nil {
					t.Fatalf("killed %s still answers", name)
				}
			}
			time.Sleep(a.minHold) // the hold the schedule would give it
			nem.finish(ctx, rec, a)
			stop := detailOf(t, rec.Last("stop-member", history.Info))
			sst := stepsOf(t, stop)
			if sst["election"] == nil || sst["restart"] == nil || sst["after-restart"] == nil {
				t.Fatalf("stop did not record the election, the restart and the census: %v", stop["steps"])
			}
			if sst["restart"]["error"] != nil {
				t.Fatalf("restart: %v", sst["restart"])
			}
			t.Logf("%s: election %v; after restart: %v", b.name, sst["election"], sst["after-restart"]["summary"])
			for _, name := range append([]string{orphan}, kept...) {
				if err := pingNode(nodeAddr(c, name)); err != nil {
					t.Fatalf("restarted %s does not answer: %v", name, err)
				}
			}
			if n := len(rec.where(func(op history.Op) bool { return op.F == "compose" })); n != len(stop["steps"].([]any)) {
				t.Fatalf("%d compose entries for %d steps: the steps were not all recorded as they happened", n, len(stop["steps"].([]any)))
			}
			if err := nem.Heal(ctx, rec); err != nil {
				t.Logf("heal: %v", err)
			}
		})
	}
}

// TestComposeKillAfterReconfigure tells a replica of a two-replica shard
// (7 nodes) to replicate another primary and kills it as soon as it
// answers, on each build: the reconfiguration was journalled and answered,
// the node was killed and came back as a replica of its old or its new
// primary, its shard ids were read (or the build has none), and the undo
// put it back under its old primary. Which primary it came back with is
// logged (the study's evidence).
func TestComposeKillAfterReconfigure(t *testing.T) {
	for _, b := range composeBuilds(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			c := startLocalServer(t, 7, 1, b.argv)
			fillKeys(t, c, 500)
			nem := newTestNemesis(t, []string{"member"}, procCluster{c})
			rec := &memRecorder{}
			a := nem.fire(ctx, rec, Step{Fault: "member", Mode: killAfterReconfigureMode, Seed: 1, Hold: 0.5})
			if a == nil {
				t.Fatal("kill-after-reconfigure left nothing to stop: the killed replica must be restarted")
			}
			d := detailOf(t, rec.Last("start-member", history.Info))
			if d["error"] != nil {
				t.Fatalf("kill-after-reconfigure failed: %v (steps %v)", d["error"], d["steps"])
			}
			x, old := a.detail["node"].(string), a.detail["old_primary"].(string)
			if a.detail["orphans_old_primary"] != false {
				t.Fatalf("picked a replica whose primary has no other (the topology has a two-replica shard): %v", a.detail)
			}
			st := stepsOf(t, d)
			if st["reconfigure-kill"] == nil || st["reconfigure-kill"]["error"] != nil {
				t.Fatalf("reconfigure-kill: %v", d["steps"])
			}
			replicate := 0
			for _, op := range rec.journal() {
				if strings.Contains(string(op.DetailRaw()), `"replicate"`) {
					replicate++
				}
			}
			if replicate == 0 {
				t.Fatalf("the reconfiguration is not in the journal: %v", rec.journal())
			}
			if err := pingNode(nodeAddr(c, x)); err == nil {
				t.Fatalf("killed %s still answers", x)
			}
			time.Sleep(a.minHold) // the hold the schedule would give it
			nem.finish(ctx, rec, a)
			stop := detailOf(t, rec.Last("stop-member", history.Info))
			sst := stepsOf(t, stop)
			t.Logf("%s: %v; restart %v; converge %v; undo %v", b.name, st["reconfigure-kill"], sst["restart"], sst["converge"], sst["undo"])
			if came := stop["came_back_with"]; came != "new" && came != "old" {
				t.Fatalf("%s came back with %v, want its old or its new primary", x, came)
			}
			ids, _ := sst["restart"]["shard_ids"].(map[string]any)
			if ids == nil || ids["supported"] == nil {
				t.Fatalf("the restart did not record the shard ids: %v", sst["restart"])
			}
			if stop["primary_after_undo"] != old || sst["undo"]["error"] != nil {
				t.Fatalf("undo: %s replicates %v, want its old primary %s (%v)", x, stop["primary_after_undo"], old, sst["undo"])
			}
			if err := nem.Heal(ctx, rec); err != nil {
				t.Logf("heal: %v", err)
			}
		})
	}
}

// TestComposeEpochBumpUnheard kills a replica, bumps its primary's config
// epoch, kills the primary, restarts the replica and asks it to fail over,
// on each build: the bump was heard by every other primary, the replica
// came back with the epoch before the bump, and whether the failover was
// refused is recorded with its reason; on Redis 7.0.15 it checks that a
// voter logged the denial for the stale epoch (redis/redis#9548). Every
// killed node comes back on stop.
func TestComposeEpochBumpUnheard(t *testing.T) {
	for _, b := range composeBuilds(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			c := startLocalServer(t, 6, 1, b.argv)
			fillKeys(t, c, 500)
			nem := newTestNemesis(t, []string{"failover"}, procCluster{c})
			rec := &memRecorder{}
			a := nem.fire(ctx, rec, Step{Fault: "failover", Mode: epochBumpUnheardMode, Seed: 1, Hold: 0.5})
			if a == nil {
				t.Fatal("epoch-bump-unheard left nothing to stop: the killed primary must be restarted")
			}
			d := detailOf(t, rec.Last("start-failover", history.Info))
			if d["error"] != nil {
				t.Fatalf("epoch-bump-unheard failed: %v (steps %v)", d["error"], d["steps"])
			}
			st := stepsOf(t, d)
			t.Logf("%s: bump %v; restart-replica %v; failover %v; refused %v: %v", b.name, st["bumpepoch"], st["restart-replica"],
				st["failover"], d["refused"], d["why"])
			bumped := d["bumped_epoch"].(float64)
			for name, e := range st["bumpepoch"]["voters_know"].(map[string]any) {
				if e.(float64) < bumped {
					t.Fatalf("%s did not learn the bumped epoch %v: %v", name, bumped, e)
				}
			}
			if seen := d["replica_sees_epoch"].(float64); seen >= bumped {
				t.Fatalf("the restarted replica already knows epoch %v (bumped %v): nothing unheard", seen, bumped)
			}
			if d["refused"] == nil || (d["refused"] == true && d["why"] == nil) {
				t.Fatalf("the failover's outcome or its reason is not recorded: %v", d)
			}
			if b.name == "redis" {
				if d["refused"] != true {
					t.Errorf("Redis 7.0.15 promoted a replica with a stale config epoch: %v", st["failover"])
				}
				denied := false
				for _, nd := range c.nodes {
					log, _ := os.ReadFile(nd.dir + "/redis.log")
					for _, l := range strings.Split(string(log), "\n") {
						if strings.Contains(l, "Failover auth denied") && strings.Contains(l, "epoch") {
							denied = true
							t.Logf("%s: %s", nd.name, l)
						}
					}
				}
				if !denied {
					t.Errorf("no voter logged a denial for the stale epoch")
				}
			}
			time.Sleep(a.minHold) // the hold the schedule would give it
			nem.finish(ctx, rec, a)
			stop := detailOf(t, rec.Last("stop-failover", history.Info))
			t.Logf("%s: stop %v", b.name, stepsOf(t, stop)["restart"])
			for _, name := range []string{a.detail["primary"].(string), a.detail["replica"].(string)} {
				if err := pingNode(nodeAddr(c, name)); err != nil {
					t.Fatalf("%s does not answer after the stop: %v", name, err)
				}
			}
			if err := nem.Heal(ctx, rec); err != nil {
				t.Logf("heal: %v", err)
			}
		})
	}
}

// TestComposeTwoReplicaManual fails over the two-replica shard of a
// 7-node cluster with a default CLUSTER FAILOVER while the sibling
// replica is paused, on each build: the failover was journalled, the
// replica promoted, the old primary demoted under it, the sibling
// resumed, and each node's own account (CLUSTER NODES and ROLE) recorded
// right after and after convergence. Whether the sibling was left a
// replica of a replica is logged (the study's evidence), and when it is,
// the end phase must name it.
func TestComposeTwoReplicaManual(t *testing.T) {
	for _, b := range composeBuilds(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			c := startLocalServer(t, 7, 1, b.argv)
			fillKeys(t, c, 500)
			nem := newTestNemesis(t, []string{"failover"}, procCluster{c})
			rec := &memRecorder{}
			a := nem.fire(ctx, rec, Step{Fault: "failover", Mode: twoReplicaManualMode, Seed: 1, Hold: 0.5})
			if a == nil {
				t.Fatal("two-replica-manual left nothing to stop")
			}
			d := detailOf(t, rec.Last("start-failover", history.Info))
			if d["error"] != nil {
				t.Fatalf("two-replica-manual failed: %v (steps %v)", d["error"], d["steps"])
			}
			st := stepsOf(t, d)
			t.Logf("%s: failover %v", b.name, st["failover"])
			t.Logf("%s: right after: %v", b.name, st["hear-sibling"]["accounts"])
			t.Logf("%s: after convergence: %v; sibling replicates %v right after, %v after; chain %v, %v", b.name,
				st["after-convergence"]["accounts"], d["sibling_replicates_right_after"], d["sibling_replicates_after"],
				d["chain_right_after"], d["chain_after"])
			if d["promoted"] != true || d["primary_demoted"] != true {
				t.Fatalf("the failover did not take: %v", st["failover"])
			}
			failovers := 0
			for _, op := range rec.journal() {
				if strings.Contains(string(op.DetailRaw()), `"failover"`) {
					failovers++
				}
			}
			if failovers == 0 {
				t.Fatalf("the failover is not in the journal: %v", rec.journal())
			}
			sibling := a.detail["sibling"].(string)
			if err := pingNode(nodeAddr(c, sibling)); err != nil {
				t.Fatalf("the sibling %s does not answer once resumed: %v", sibling, err)
			}
			for _, when := range []string{"hear-sibling", "after-convergence"} {
				acc, _ := st[when]["accounts"].(map[string]any)
				sib, _ := acc["sibling"].(map[string]any)
				if sib == nil || sib["replicates"] == nil || sib["role"] == nil {
					t.Fatalf("%s: the sibling's own account is not recorded: %v", when, acc)
				}
			}
			if _, ok := d["chain_after"].(bool); !ok {
				t.Fatalf("no judgement of the chain after convergence: %v", d)
			}
			nem.finish(ctx, rec, a)
			stop := detailOf(t, rec.Last("stop-failover", history.Info))
			if _, ok := stop["chain_at_stop"].(bool); !ok {
				t.Fatalf("the stop did not record the roles: %v", stop)
			}
			if err := nem.Heal(ctx, rec); err != nil {
				t.Logf("heal: %v", err)
			}
			heal := detailOf(t, rec.Last("heal", history.Info))
			end, _ := heal["end_phase"].(map[string]any)
			named := strings.Contains(fmt.Sprint(end["problems"]), "replica-of-replica")
			if stop["chain_at_stop"] == true && !named {
				t.Errorf("the sibling was left a replica of a replica, the end phase did not name it: %v", end)
			}
			t.Logf("%s: end phase %v", b.name, end)
		})
	}
}

// TestComposeClassicReplicaFullSync moves a slot with its keys the
// classic way and sends the final SETSLOTs while the destination's
// replica, just restarted, does a full sync, then fails the destination's
// shard over to that replica, on each build: the keys moved, the replica
// came back, the SETSLOTs found it not online on Redis (which waits
// repl-diskless-sync-delay before a full sync), the failover promoted it,
// and its view of the slot was recorded after its sync and once promoted.
// Whether it owns the slot, and keeps it open, is logged (the study's
// evidence; valkey-io/valkey#998 is Valkey's).
func TestComposeClassicReplicaFullSync(t *testing.T) {
	for _, b := range composeBuilds(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			c := startLocalServer(t, 6, 1, b.argv)
			fillKeys(t, c, 1000)
			admin := &clusteradmin.Admin{}
			if b.name == "redis" {
				// As the docker redis flavour: no delay before a full sync,
				// which the composition raises to 5 s and restores.
				for _, n := range c.Nodes() {
					if _, err := admin.Do(ctx, n.Addr, 2*time.Second, "config", "set", "repl-diskless-sync-delay", "0"); err != nil {
						t.Fatal(err)
					}
				}
			}
			nem := newTestNemesis(t, []string{"migrate"}, procCluster{c})
			rec := &memRecorder{}
			a := nem.fire(ctx, rec, Step{Fault: "migrate", Mode: classicReplicaFullSyncMode, Seed: 1, Hold: 0.5})
			if a == nil {
				t.Fatal("classic-replica-full-sync left nothing to stop")
			}
			d := detailOf(t, rec.Last("start-migrate", history.Info))
			st := stepsOf(t, d)
			t.Logf("%s: restart %v", b.name, st["restart-replica"])
			t.Logf("%s: setslot %v", b.name, st["setslot-node"])
			t.Logf("%s: synced %v", b.name, st["replica-synced"])
			t.Logf("%s: after failover %v; owns %v, open %v", b.name, st["after-failover"], d["promoted_owns_slot"], d["promoted_slot_open"])
			if d["error"] != nil {
				t.Fatalf("classic-replica-full-sync failed: %v (steps %v)", d["error"], d["steps"])
			}
			if k, _ := d["keys"].(float64); k == 0 {
				t.Fatalf("no key moved: the slot had none (%v)", st["open-and-migrate"])
			}
			if b.name == "redis" {
				if d["replica_not_online_at_setslot"] != true {
					t.Errorf("the final SETSLOTs found the replica online: %v", st["setslot-node"])
				}
				if w := st["widen-sync-delay"]; w == nil || w["was"] != "0" || w["error"] != nil || st["restore-sync-delay"] != nil {
					t.Errorf("the sync delay was not raised and restored: widen %v, restore %v", w, st["restore-sync-delay"])
				}
				v, err := admin.Do(ctx, nodeAddr(c, d["to"].(string)), 2*time.Second, "config", "get", "repl-diskless-sync-delay")
				if kv, _ := v.([]any); err != nil || len(kv) != 2 || kv[1] != "0" {
					t.Errorf("the destination's repl-diskless-sync-delay after the move: %v %v, want 0 again", v, err)
				}
			}
			if st["failover-dst"]["promoted"] != true {
				t.Fatalf("the destination's replica was not promoted: %v", st["failover-dst"])
			}
			if _, ok := d["promoted_owns_slot"].(bool); !ok || st["replica-synced"]["replica_view"] == nil {
				t.Fatalf("the replica's view of the slot is not recorded: %v", d)
			}
			if err := pingNode(nodeAddr(c, a.detail["replica"].(string))); err != nil {
				t.Fatalf("the restarted replica does not answer: %v", err)
			}
			nem.finish(ctx, rec, a)
			if err := nem.Heal(ctx, rec); err != nil {
				t.Logf("heal: %v", err)
			}
			heal := detailOf(t, rec.Last("heal", history.Info))
			t.Logf("%s: end phase %v", b.name, heal["end_phase"])
		})
	}
}
