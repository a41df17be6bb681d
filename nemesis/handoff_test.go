package nemesis

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/history"
)

func TestHandoffModes(t *testing.T) {
	modes := AllModes("migrate")
	for _, m := range []string{"atomic", "classic", "atomic-kill-src", "atomic-cancel-src", "atomic-concurrent-classic", "classic-partition"} {
		if !slices.Contains(modes, m) {
			t.Errorf("migrate has no mode %s", m)
		}
	}
	if slices.Contains(modes, "classic-cancel") {
		t.Error("classic-cancel: a classic move has no task to cancel")
	}
	// A random schedule never picks them: older seeds keep their faults.
	for _, st := range Plan([]string{"migrate"}, 7, 200) {
		if _, _, ok := splitHandoffMode(st.Mode); ok {
			t.Fatalf("a random schedule picked %s", st.Mode)
		}
	}
}

// quickSeed returns a seed whose strike comes within 3 ms of the move's
// start (the 0-150 ms wait is seeded), so the strike lands while an
// atomic task is young (its handoff needs the destination's next cron
// tick).
func quickSeed(t *testing.T) uint64 { return quickSeedAfter(t, 0) }

// quickSeedAfter is the first quick seed after seed.
func quickSeedAfter(t *testing.T, seed uint64) uint64 {
	for s := seed + 1; s < 10000; s++ {
		if strikeDelay(rand.New(rand.NewPCG(s, 0x68616e646f6666))) < 3*time.Millisecond {
			return s
		}
	}
	t.Fatal("no quick seed")
	return 0
}

// TestHandoffCompositionsOnReference fires each composition that local
// processes can cause on a cluster of reference servers and checks, from
// what the history recorded, that its fault took effect: a killed node
// refused connections and came back with a new run id, a paused one did
// not answer, the destination's replica was promoted, a cancel reached a
// task, a classic move ran beside the task. Every composition leaves a
// placement record and its steps in the history.
func TestHandoffCompositionsOnReference(t *testing.T) {
	bin := os.Getenv("REDLINE_BINARY")
	if bin == "" {
		t.Fatal("REDLINE_BINARY is not set: run `make build` and set it to bin/redline (make test does)")
	}
	ctx := context.Background()
	seed := quickSeed(t)
	// The classic compositions struck by a role change run in
	// TestClassicHandoffCompositions (classic-pause-src needed
	// the repair to re-home the import on the promoted source: issue 22).
	// atomic-failover-dst is left out too: on local processes it failed 2 of
	// 6 runs after the destination's replica was promoted mid-task (once not
	// promoted within 10 s, once after the task was gone); open finding, the
	// Docker studies run it.
	for _, mode := range []string{"atomic-cancel", "atomic-cancel-src", "atomic-pause-dst", "atomic-kill-src",
		"atomic-kill-dst", "atomic-concurrent-classic", "atomic"} {
		// Each composition gets a fresh cluster: what one leaves behind (a
		// killed primary's replica promoted, slots re-homed) must not decide
		// what the next one strikes.
		t.Run(mode, func(t *testing.T) {
			// A cancel races the task: a task on a quiet slot can end
			// within milliseconds of its start, before the cancel (the
			// reference's ended in 5 ms once, its cancel came at 7 ms).
			// The nemesis says so (reached false); the composition is then
			// run again on a fresh cluster with the next quick seed, and
			// one of three must reach its task.
			s := seed
			for try := 1; ; try++ {
				if handoffComposition(ctx, t, []string{bin, "server"}, mode, s) {
					return
				}
				if try == 3 {
					t.Fatalf("%s: the cancel came after the task ended in %d tries", mode, try)
				}
				s = quickSeedAfter(t, s)
			}
		})
	}
}

// TestClassicHandoffCompositions runs the classic moves struck
// by a role change on reference processes: the destination's shard failed
// over (issue 22's run), the source paused long enough for its replica to
// take over (the import left pointing at the old source: re-homed on the
// promoted one by the repair), the destination killed; on reference and
// redis-server processes.
func TestClassicHandoffCompositions(t *testing.T) {
	ctx := context.Background()
	seed := quickSeed(t)
	for name, server := range moverServers(t) {
		for _, mode := range []string{"classic-failover-dst", "classic-pause-src", "classic-kill-dst"} {
			t.Run(name+"/"+mode, func(t *testing.T) { handoffComposition(ctx, t, server, mode, seed) })
		}
	}
}

// handoffComposition runs one handoff composition on a fresh 6-node
// cluster (server: nil for redis-server) and checks that its fault took effect and, without a
// kill, that every key ends on exactly one side. It returns false when a
// cancel strike came after its task had ended (the strike's "reached":
// false), having checked that it canceled nothing and was said so.
func handoffComposition(ctx context.Context, t *testing.T, server []string, mode string, seed uint64) (reached bool) {
	reached = true
	c := startLocalServer(t, 6, 1, server)
	fillKeys(t, c, 3000)
	nem := newTestNemesis(t, []string{"migrate"}, procCluster{c})
	{
		rec := &memRecorder{}
		runIDs := map[string]string{}
		for _, nd := range c.Nodes() {
			runIDs[nd.Name] = runID(t, nd.Addr)
		}
		if a := nem.fire(ctx, rec, Step{Fault: "migrate", Mode: mode, Seed: seed, Hold: 0.5}); a != nil {
			t.Fatalf("%s left something to stop", mode)
		}
		ops := rec.all()
		d := detailOf(t, ops[len(ops)-1])
		if d["skipped"] != nil {
			t.Fatalf("%s skipped: %v", mode, d["skipped"])
		}
		var strike map[string]any
		names := []string{}
		for _, s := range d["steps"].([]any) {
			m := s.(map[string]any)
			names = append(names, m["step"].(string))
			if m["step"] == "strike" {
				strike = m
			}
		}
		// The steps were also recorded as they happened.
		if got := len(rec.where(func(op history.Op) bool { return op.F == "handoff" })); got != len(names) {
			t.Fatalf("%s: %d handoff entries in the history, %d steps", mode, got, len(names))
		}
		if len(d["placement"].([]any)) != 1 {
			t.Fatalf("%s: placement %v", mode, d["placement"])
		}
		state := ""
		if ts, ok := d["tasks"].([]any); ok {
			state, _ = ts[0].(map[string]any)["state"].(string)
		}
		t.Logf("%s: steps %v; strike %v; task %s; error %v", mode, names, strike, state, d["error"])
		_, strikeName, _ := splitHandoffMode(mode)
		switch {
		case mode == "atomic":
			if strike != nil || state != "done" {
				t.Fatalf("atomic baseline: strike %v, state %q", strike, state)
			}
		case strikeName == "concurrent-classic":
			if !slices.Contains(names, "classic-start") || !slices.Contains(names, "classic-end") {
				t.Fatalf("%s: no classic move beside the task: %v", mode, names)
			}
		case strike == nil || strike["error"] != nil:
			t.Fatalf("%s: strike %v", mode, strike)
		case strings.HasPrefix(strikeName, "cancel"):
			on := d["placement"].([]any)[0].(map[string]any)["from"]
			if strikeName == "cancel" {
				on = d["placement"].([]any)[0].(map[string]any)["to"]
			}
			if strike["reached"] == false {
				if strike["canceled"] != float64(0) || strike["why"] == nil {
					t.Fatalf("%s: a cancel that came late canceled %v (why %v)", mode, strike["canceled"], strike["why"])
				}
				t.Logf("%s: the cancel came after the task ended: %v", mode, strike["why"])
				reached = false
				break
			}
			if strike["on"] != on || strike["canceled"] != float64(1) {
				t.Fatalf("%s: CANCEL on %v canceled %v, want 1 task on %v (the strike came at state %v)", mode, strike["on"], strike["canceled"], on, strike["task_state"])
			}
			if strikeName == "cancel" && state != "canceled" {
				t.Fatalf("%s: final state %q", mode, state)
			}
		case strings.HasPrefix(strikeName, "kill"):
			node := strike["node"].(string)
			if p, _ := strike["probe"].(string); !strings.Contains(p, "refused") {
				t.Fatalf("%s: probe of the killed %s: %q", mode, node, p)
			}
			if addr := nodeAddr(c, node); runID(t, addr) == runIDs[node] {
				t.Fatalf("%s: %s has the same run id after the kill", mode, node)
			}
		case strings.HasPrefix(strikeName, "pause"):
			if p, _ := strike["probe"].(string); p == "PONG" || p == "" {
				t.Fatalf("%s: the paused %v answered: %q", mode, strike["node"], p)
			}
		case strikeName == "failover-dst":
			if strike["promoted"] != true {
				t.Fatalf("%s: replica not promoted: %v", mode, strike)
			}
		}
		if err := nem.Heal(ctx, rec); err != nil {
			t.Fatalf("heal after %s: %v", mode, err)
		}
		// The end phase left every moved slot closed on one owner holding
		// all its keys (issue 22).
		if r := checker.EndPhase().Check(ctx, checker.NewHistory(rec.all())); r.Valid != checker.Valid {
			t.Fatalf("%s: end phase %v %v", mode, r.Valid, r.Figures)
		}
		r := checker.Handoff().Check(ctx, checker.NewHistory(rec.all()))
		t.Logf("%s: handoff checker %v %v", mode, r.Valid, r.Figures)
		if !strings.HasPrefix(strikeName, "kill") && r.Valid != checker.Valid {
			// Without a kill (no data lost with a restarted process) every
			// key must be on exactly one side.
			t.Fatalf("%s: handoff anomalies %v", mode, r.Figures)
		}
	}
	return reached
}

func runID(t *testing.T, addr string) string {
	t.Helper()
	c := (&clusteradmin.Admin{}).Client(addr)
	defer c.Close()
	info, err := c.Info(context.Background(), "server").Result()
	if err != nil {
		t.Fatalf("INFO of %s: %v", addr, err)
	}
	v, _ := clusteradmin.InfoField(info, "run_id")
	return v
}

func nodeAddr(c *localCluster, name string) string {
	for _, n := range c.Nodes() {
		if n.Name == name {
			return n.Addr
		}
	}
	return ""
}
