package nemesis

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/history"
)

// composeBuild is one server build a composition test runs on: nil argv is
// Debian's redis-server.
type composeBuild struct {
	name string
	argv []string
}

// composeBuilds are the builds on this machine: redis-server always, the
// reference server when REDLINE_BINARY is set, Valkey when
// REDLINE_VALKEY_SERVER names a valkey-server binary.
func composeBuilds(t *testing.T) []composeBuild {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server is not installed (not in PATH): install it with `apt-get install redis-server`")
	}
	bs := []composeBuild{{name: "redis"}}
	if bin := os.Getenv("REDLINE_BINARY"); bin != "" {
		bs = append(bs, composeBuild{name: "reference", argv: []string{bin, "server"}})
	}
	if v := os.Getenv("REDLINE_VALKEY_SERVER"); v != "" {
		bs = append(bs, composeBuild{name: "valkey", argv: []string{v}})
	}
	return bs
}

// stepsOf returns the compose steps of a completion by name (the last of
// each name).
func stepsOf(t *testing.T, d map[string]any) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	ss, _ := d["steps"].([]any)
	for _, s := range ss {
		m := s.(map[string]any)
		out[m["step"].(string)] = m
	}
	return out
}

// logUnpromoted logs every server's lines about manual failovers and
// elections when one of the steps' CLUSTER FAILOVER ended unpromoted
// (awaitPromotion's evidence), and what each step waited for before it
// sent one (manualFailoverReady).
func logUnpromoted(t *testing.T, c *localCluster, steps ...map[string]any) {
	t.Helper()
	unpromoted := false
	for _, st := range steps {
		if st != nil && st["waited"] != nil {
			t.Logf("%v waited before CLUSTER FAILOVER: %v", st["step"], st["waited"])
		}
		if st != nil && st["unpromoted_evidence"] != nil {
			unpromoted = true
		}
	}
	if !unpromoted {
		return
	}
	t.Logf("a manual failover ended unpromoted; the servers' failover lines:")
	for _, nd := range c.nodes {
		log, _ := os.ReadFile(nd.dir + "/redis.log")
		for _, l := range strings.Split(string(log), "\n") {
			low := strings.ToLower(l)
			if strings.Contains(low, "failover") || strings.Contains(low, "election") || strings.Contains(low, "paused") {
				t.Logf("%s: %s", nd.name, l)
			}
		}
	}
}

// TestComposeCliAbortFailoverSrc runs the two-step case on a fresh 6-node
// cluster of each build and checks that every step took effect: keys were
// migrated, the destination's replica was promoted, the former destination
// refused SETSLOT NODE, the source's replica was promoted, and the census
// was taken. On Redis 7.0 (which does not replicate SETSLOT) it also checks
// the finding: no node shows the slot open, the slot's owner holds none of
// its keys, another primary holds them, and `redis-cli --cluster check`
// passes.
func TestComposeCliAbortFailoverSrc(t *testing.T) {
	for _, b := range composeBuilds(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			c := startLocalServer(t, 6, 1, b.argv)
			want := fillKeys(t, c, 3000)
			nem := newTestNemesis(t, []string{"migrate"}, procCluster{c})
			rec := &memRecorder{}
			a := nem.fire(ctx, rec, Step{Fault: "migrate", Mode: cliAbortMode, Seed: 3, Hold: 0.5})
			if a == nil {
				t.Fatal("the two-step case left nothing to stop: its slot must be repaired when it stops")
			}
			d := detailOf(t, rec.Last("start-migrate", history.Info))
			if d["error"] != nil {
				t.Fatalf("two-step case failed: %v (steps %v)", d["error"], d["steps"])
			}
			st := stepsOf(t, d)
			if k, _ := d["keys"].(float64); k == 0 {
				t.Fatalf("no key was migrated: %v", d)
			}
			logUnpromoted(t, c, st["failover-dst"], st["failover-src"])
			for _, s := range []string{"failover-dst", "failover-src"} {
				if st[s]["promoted"] != true {
					t.Fatalf("%s: replica not promoted: %v", s, st[s])
				}
			}
			if st["setslot-node-dst"]["refused"] != true {
				t.Fatalf("the former destination (now a replica) took SETSLOT NODE: %v", st["setslot-node-dst"])
			}
			census, _ := d["census"].(map[string]any)
			t.Logf("%s census: %v\n%v", b.name, census["summary"], census["nodes"])
			if len(rec.where(func(op history.Op) bool { return op.F == "compose" })) != len(d["steps"].([]any)) {
				t.Fatal("the steps were not all recorded as they happened")
			}
			check := ""
			if _, err := exec.LookPath("redis-cli"); err == nil {
				out, err := exec.Command("redis-cli", "--cluster", "check", c.addrs()[0]).CombinedOutput()
				check = string(out)
				t.Logf("redis-cli --cluster check (err %v):\n%s", err, out)
				if b.name == "redis" && (err != nil || strings.Contains(check, "[ERR]") || strings.Contains(check, "[WARNING]")) {
					t.Errorf("redis-cli --cluster check did not pass after the two-step case on Redis 7.0 (the finding says it does)")
				}
			}
			if b.name == "redis" {
				if census["open_states"] != float64(0) || census["owner"] == "" || census["stray_primaries"] != float64(1) {
					t.Errorf("Redis 7.0: expected the slot stable on a primary without its keys, got %v", census)
				}
			}
			// Stop repairs the slot; the keys' fate is logged (the repair of a
			// move whose shards both failed over is issue 22's item 2).
			nem.finish(ctx, rec, a)
			stop := detailOf(t, rec.Last("stop-migrate", history.Info))
			sc, _ := stop["census"].(map[string]any)
			t.Logf("%s after stop: repair %v error %v; %v", b.name, stop["repair"], stop["error"], sc["summary"])
			if err := nem.Heal(ctx, rec); err != nil {
				t.Logf("heal: %v", err)
			}
			// The servers' own words about keys they dropped (evidence for
			// the finding's attribution).
			for _, nd := range c.nodes {
				log, _ := os.ReadFile(nd.dir + "/redis.log")
				for _, l := range strings.Split(string(log), "\n") {
					if strings.Contains(l, "Deleted") || strings.Contains(l, "keys") && strings.Contains(l, "slot") {
						t.Logf("%s %s: %s", b.name, nd.name, l)
					}
				}
			}
			_ = want
		})
	}
}

// TestComposeEmptiedReplicaKill empties a primary of an 8-node cluster
// (4 primaries), lets it become the replica of the primary that took its
// last slot and kills that primary during the full sync, on each build:
// every slot left the emptied node, it replicated the target, the kill
// came while its sync was in progress, and the target came back. Who won
// the election is logged (the finding's evidence).
func TestComposeEmptiedReplicaKill(t *testing.T) {
	for _, b := range composeBuilds(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			c := startLocalServer(t, 8, 1, b.argv)
			fillKeys(t, c, 2000)
			nem := newTestNemesis(t, []string{"member"}, procCluster{c})
			rec := &memRecorder{}
			a := nem.fire(ctx, rec, Step{Fault: "member", Mode: emptiedReplicaKillMode, Seed: 2, Hold: 0.5})
			if a == nil {
				t.Fatal("emptied-replica-kill left nothing to stop: the killed primary must be restarted")
			}
			d := detailOf(t, rec.Last("start-member", history.Info))
			if e, _ := d["error"].(string); b.name == "valkey" && strings.Contains(e, "NOREPLICAS") {
				// Seen here: Valkey 8.0.1 refused SETSLOT NODE of a slot
				// leaving the primary being emptied (it replicates SETSLOT
				// and waits for its replicas); the mover's business (issue 22).
				t.Skipf("valkey refused to empty the primary: %v", e)
			}
			if d["error"] != nil {
				t.Fatalf("emptied-replica-kill failed: %v (steps %v)", d["error"], d["steps"])
			}
			st := stepsOf(t, d)
			if n, _ := d["slots_moved"].(float64); n < 4000 {
				t.Fatalf("moved %v slots, want every slot of a 4-primary cluster's primary (4096)", d["slots_moved"])
			}
			if e, _ := st["replicate"]["emptied"].(map[string]any); e["role"] != "slave" {
				t.Fatalf("the emptied primary does not replicate: %v", st["replicate"])
			}
			t.Logf("%s: replicate %v; kill %v", b.name, st["replicate"], st["kill"])
			// Redis and Valkey wait repl-diskless-sync-delay (5 s) before a
			// full sync, so the kill lands before it is done; the reference
			// server syncs at once and may be done already (then the emptied
			// node competes with all the data: logged, not a failure).
			if b.name != "reference" && d["unsynced_at_kill"] != true {
				t.Errorf("the kill came after the full sync: %v", st["kill"])
			}
			if err := pingNode(nodeAddr(c, a.detail["killed"].(string))); err == nil {
				t.Fatalf("killed primary %v still answers", a.detail["killed"])
			}
			time.Sleep(a.minHold)
			nem.finish(ctx, rec, a)
			stop := detailOf(t, rec.Last("stop-member", history.Info))
			t.Logf("%s: election winner %v (emptied node won: %v), emptied %v, dbsize %v", b.name, stop["winner"], stop["emptied_won"], a.detail["emptied"], stop["dbsize"])
			if err := pingNode(nodeAddr(c, a.detail["killed"].(string))); err != nil {
				t.Fatalf("restarted %v does not answer: %v", a.detail["killed"], err)
			}
			if err := nem.Heal(ctx, rec); err != nil {
				t.Logf("heal: %v", err)
			}
		})
	}
}

func pingNode(addr string) error {
	cl := (&clusteradmin.Admin{}).Client(addr)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	return cl.Ping(ctx).Err()
}

// TestHandoffClassicFailoverSrc strikes a classic move with a failover of
// the source's shard, on each build: the struck replica is the source's,
// and it was promoted while the move was under way. Finishing the move on
// the shard's new primary is issue 22's item 2, not tested here.
func TestHandoffClassicFailoverSrc(t *testing.T) {
	for _, b := range composeBuilds(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			c := startLocalServer(t, 6, 1, b.argv)
			fillKeys(t, c, 3000)
			nem := newTestNemesis(t, []string{"migrate"}, procCluster{c})
			rec := &memRecorder{}
			if a := nem.fire(ctx, rec, Step{Fault: "migrate", Mode: "classic-failover-src", Seed: quickSeed(t), Hold: 0.5}); a != nil {
				t.Fatal("classic-failover-src left something to stop")
			}
			d := detailOf(t, rec.Last("start-migrate", history.Info))
			st := stepsOf(t, d)
			strike, from := st["strike"], st["classic-start"]["from"]
			place := d["placement"].([]any)[0].(map[string]any)
			logUnpromoted(t, c, strike)
			if strike == nil || strike["promoted"] != true || strike["primary"] != from {
				t.Fatalf("strike %v, want the source %v's replica promoted", strike, from)
			}
			// The placement reads the source's shard at its new primary.
			if place["from"] != strike["replica"] {
				t.Fatalf("placement read the source side at %v, want the promoted %v", place["from"], strike["replica"])
			}
			// No Heal here: on Redis 7.0 and the reference it cannot finish
			// this move yet and waits ~30 s for a convergence that does not
			// come (docs/findings/F007); the cluster is thrown away.
			t.Logf("%s: strike %v; move error %v; placement %v", b.name, strike, d["error"], place)
		})
	}
}
