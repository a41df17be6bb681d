package nemesis

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

var addSchedules = flag.Bool("add-schedules", false, "append to "+schedulesPath+" the plans of faults it does not hold yet (never rewrites a recorded one)")

const schedulesPath = "testdata/schedules.json"

// recordedPlan is a plan as it was when it was recorded: the faults asked
// for, the seed and the steps drawn.
type recordedPlan struct {
	Faults []string `json:"faults"`
	Seed   int64    `json:"seed"`
	Steps  []string `json:"steps"` // "fault:mode seed hold", one per step
}

func stepLine(s Step) string {
	ev := ""
	if s.Evidence {
		ev = " evidence"
	}
	return fmt.Sprintf("%s:%s %d %.6f%s", s.Fault, s.Mode, s.Seed, s.Hold, ev)
}

func planLines(faults []string, seed int64, n int) []string {
	var out []string
	for _, s := range Plan(faults, seed, n) {
		out = append(out, stepLine(s))
	}
	return out
}

// TestOldSeedsReplayTheirSchedules holds every recorded plan to the steps
// it drew when it was recorded: the faults and modes a seed picks, each
// step's own seed and hold. TestSingleKindPlansReplayOldSeeds checks the
// single-kind draw against its own formula over today's modes, so it
// cannot see a mode appended to a fault's schedule (IntN(6) and IntN(7)
// draw different modes from one source): this test can. A fault added to
// the registry gets its plans appended with -add-schedules; a plan once
// recorded is never rewritten, so a change that alters an old seed's
// schedule fails here until it is undone.
func TestOldSeedsReplayTheirSchedules(t *testing.T) {
	b, err := os.ReadFile(schedulesPath)
	if err != nil {
		t.Fatal(err)
	}
	var recorded []recordedPlan
	if err := json.Unmarshal(b, &recorded); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, r := range recorded {
		have[strings.Join(r.Faults, ",")] = true
		got := planLines(r.Faults, r.Seed, len(r.Steps))
		for i := range r.Steps {
			if got[i] != r.Steps[i] {
				t.Errorf("--nemesis %s --seed %d: step %d is now %q, it was %q: an old seed's schedule changed (append new faults to the registry, new modes as study modes)",
					strings.Join(r.Faults, ","), r.Seed, i, got[i], r.Steps[i])
				break
			}
		}
	}
	var missing []string
	for _, f := range Faults() {
		if !have[f] {
			missing = append(missing, f)
		}
	}
	if len(missing) == 0 {
		return
	}
	if !*addSchedules {
		t.Fatalf("no recorded schedule of %v: run go test ./nemesis -run TestOldSeedsReplayTheirSchedules -add-schedules", missing)
	}
	for _, f := range missing {
		for _, seed := range []int64{1, 7, 42} {
			recorded = append(recorded, recordedPlan{Faults: []string{f}, Seed: seed, Steps: planLines([]string{f}, seed, 12)})
		}
	}
	// Every fault known now, together: the plan of that set stays as
	// recorded even as later faults join the registry.
	all := Faults()
	if !have[strings.Join(all, ",")] {
		for _, seed := range []int64{1, 7} {
			recorded = append(recorded, recordedPlan{Faults: all, Seed: seed, Steps: planLines(all, seed, 3*len(all))})
		}
	}
	out, err := json.MarshalIndent(recorded, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(schedulesPath, append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded the schedules of %v", missing)
}

// The recorded plans name every fault of the registry in registry order
// (a new fault is appended, never inserted).
func TestRecordedSchedulesFollowTheRegistryOrder(t *testing.T) {
	b, err := os.ReadFile(schedulesPath)
	if err != nil {
		t.Fatal(err)
	}
	var recorded []recordedPlan
	if err := json.Unmarshal(b, &recorded); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range recorded {
		if len(r.Faults) == 1 && !slices.Contains(order, r.Faults[0]) {
			order = append(order, r.Faults[0])
		}
	}
	if fs := Faults(); len(fs) < len(order) || !slices.Equal(fs[:len(order)], order) {
		t.Fatalf("the registry is %v; the faults were recorded in the order %v: a fault was inserted or removed, not appended", fs, order)
	}
}
