package nemesis

import (
	"context"
	"slices"
	"testing"
	"time"
)

// A run records its schedule (each start carries its step and slot), and
// a nemesis given that schedule as a script, less one step and under
// another seed, fires exactly the remaining steps at their slots and
// strikes the same nodes: what `run --replay` and `shrink` rely on.
func TestScriptReplaysARecordedSchedule(t *testing.T) {
	c := startLocal(t, 6, 1)
	rc := &recordingCluster{localCluster: c, cuts: map[string][]string{}, clients: map[string]bool{}, offsets: map[string][]time.Duration{}}
	names := []string{"partition", "clock"}
	record := func(seed int64, script []ScheduledStep) []ScheduledStep {
		t.Helper()
		nem, err := New(names, rc, Options{Interval: 400 * time.Millisecond, Seed: seed, NodeTimeout: testNodeTimeout, Log: t.Logf, Script: script})
		if err != nil {
			t.Fatal(err)
		}
		rec := &memRecorder{}
		ctx, cancel := context.WithTimeout(context.Background(), 2600*time.Millisecond)
		defer cancel()
		if err := nem.Run(ctx, rec); err != nil {
			t.Fatal(err)
		}
		if err := nem.Heal(context.Background(), rec); err != nil {
			t.Fatalf("heal: %v", err)
		}
		return ScheduleOf(rec.all())
	}
	first := record(7, nil)
	if len(first) < 4 {
		t.Fatalf("only %d steps recorded in 2.6 s at 400 ms: %+v", len(first), first)
	}
	struck := 0
	for i, st := range Schedule(names, 7, len(first)) {
		got := first[i]
		if got.Step != st.Step || got.K != st.K {
			t.Fatalf("recorded step %d is %+v, the plan says %+v", i, got, st)
		}
		if len(got.Nodes) > 0 { // a step skipped (a node slow to answer) names none
			struck++
		}
	}
	if struck < 3 {
		t.Fatalf("only %d recorded steps name the nodes they struck: %+v", struck, first)
	}
	script := slices.Delete(slices.Clone(first), 1, 2)
	again := record(12345, script)
	if len(again) < len(script)-1 {
		t.Fatalf("replay fired %d of %d scripted steps: %+v", len(again), len(script), again)
	}
	same := 0
	for i := range again {
		w, g := script[i], again[i]
		if g.Step != w.Step || g.K != w.K {
			t.Fatalf("replayed step %d is %+v, the script says %+v", i, g, w)
		}
		if len(g.Nodes) > 0 && len(w.Nodes) > 0 {
			if !slices.Equal(g.Nodes, w.Nodes) {
				t.Fatalf("replayed step %d struck %v, the recorded run %v: same seed, same topology", i, g.Nodes, w.Nodes)
			}
			same++
		}
	}
	if same < 2 {
		t.Fatalf("only %d replayed steps could be compared: %+v vs %+v", same, again, script)
	}
}
