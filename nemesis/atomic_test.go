package nemesis

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

// TestMigrateAtomicOnReference: the reference server supports CLUSTER
// MIGRATION, so slot steps whose seed picks it move the slot atomically:
// the history carries the task's final STATUS (done, write pause), the
// journal a migrate step, and the keys end on the destination only.
func TestMigrateAtomicOnReference(t *testing.T) {
	bin := os.Getenv("REDLINE_BINARY")
	if bin == "" {
		t.Fatal("REDLINE_BINARY is not set: run `make build` and set it to bin/redline (make test does); " +
			"this test runs a cluster of reference servers, which support CLUSTER MIGRATION")
	}
	c := startLocalServer(t, 6, 1, []string{bin, "server"})
	want := fillKeys(t, c, 3000)
	bySlot := slotKeys(want)
	nem := newTestNemesis(t, []string{"migrate"}, c)
	rec := &memRecorder{}
	ctx := context.Background()
	atomic := 0
	for seed := uint64(1); seed <= 8 && atomic < 2; seed++ {
		if a := nem.fire(ctx, rec, Step{Fault: "migrate", Mode: "slot", Seed: seed, Hold: 0.5}); a != nil {
			t.Fatal("a finished slot move must leave nothing to stop")
		}
		ops := rec.all()
		done := ops[len(ops)-1]
		if done.Type != history.Info || done.F != "start-migrate" {
			t.Fatalf("recorded %+v", done)
		}
		d := detailOf(t, done)
		if e, ok := d["error"]; ok {
			t.Fatalf("seed %d: migrate failed: %v", seed, e)
		}
		if d["method"] != "atomic" {
			continue
		}
		atomic++
		task := d["tasks"].([]any)[0].(map[string]any)
		t.Logf("seed %d: atomic task %v, write pause %v ms", seed, task["id"], task["write_pause_ms"])
		if task["state"] != "done" || task["source_state"] != "done" || task["write_pause_ms"] == nil {
			t.Fatalf("seed %d: task status %v", seed, task)
		}
		mv := d["moved"].([]any)[0].(map[string]any)
		slot := int(mv["slot"].(float64))
		if int(mv["keys"].(float64)) != len(bySlot[slot]) {
			t.Fatalf("moved %v keys, slot %d holds %d test keys", mv["keys"], slot, len(bySlot[slot]))
		}
		var dst, src string
		for _, n := range c.Nodes() {
			if n.Name == mv["to"] {
				dst = n.Addr
			}
			if n.Name == mv["from"] {
				src = n.Addr
			}
		}
		// The placement record: every key of the slot on the destination
		// only, read after both sides ended the task.
		pl := d["placement"].([]any)[0].(map[string]any)
		if pl["method"] != "atomic" || pl["state"] != "done" || pl["error"] != nil || len(pl["src"].([]any)) != 0 ||
			len(pl["dst"].([]any)) != len(bySlot[slot]) || len(pl["before"].([]any)) != len(bySlot[slot]) {
			t.Fatalf("seed %d: placement %v, want %d keys before and on the destination only", seed, pl, len(bySlot[slot]))
		}
		if r := checker.Handoff().Check(ctx, checker.NewHistory(ops)); r.Valid != checker.Valid {
			t.Fatalf("handoff checker on a clean atomic move: %v %v", r.Valid, r.Figures)
		}
		eventually(t, 20*time.Second, func() string {
			if n := countKeys(t, dst, slot); n != int64(len(bySlot[slot])) {
				return fmt.Sprintf("target holds %d keys of slot %d, want %d", n, slot, len(bySlot[slot]))
			}
			if n := countKeys(t, src, slot); n != 0 {
				return fmt.Sprintf("source still holds %d keys of slot %d", n, slot)
			}
			return ""
		})
	}
	if atomic == 0 {
		t.Fatal("no seed in 1..8 chose the atomic migration on a target that supports it")
	}
	journalled := false
	for _, s := range nem.journal.Steps() {
		journalled = journalled || (s.Kind == "migrate" && s.Note == "atomic" && s.State == "done")
	}
	if !journalled {
		t.Fatal("no atomic migrate step in the journal")
	}
	checkKeys(t, c, want)
}

// TestMigrateAtomicNotAssumed: Redis 7 has no CLUSTER MIGRATION; the
// detection says so and every slot step takes the classic way.
func TestMigrateAtomicNotAssumed(t *testing.T) {
	c := startLocal(t, 3, 0)
	nem := newTestNemesis(t, []string{"migrate"}, c)
	ctx := context.Background()
	tp, err := nem.topology(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if nem.mover.AtomicCapable(ctx, tp.Primaries()) {
		t.Fatal("redis-server 7 detected as supporting CLUSTER MIGRATION")
	}
}
