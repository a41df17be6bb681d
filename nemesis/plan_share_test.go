package nemesis

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// legacyPlan is the single draw per step the schedule made before kinds got
// their shares: a single-kind plan must still be exactly this, so that old
// seeds replay.
func legacyPlan(faults []string, seed int64, n int) []Step {
	fs := canonical(faults)
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6e656d65736973))
	var out []Step
	for range n {
		f := fs[rng.IntN(len(fs))]
		modes := Modes(f)
		out = append(out, Step{Fault: f, Mode: modes[rng.IntN(len(modes))], Seed: rng.Uint64(), Hold: 0.5 + 0.25*rng.Float64()})
	}
	return out
}

func TestSingleKindPlansReplayOldSeeds(t *testing.T) {
	for _, f := range Faults() {
		for seed := range int64(30) {
			if got, want := Plan([]string{f}, seed, 40), legacyPlan([]string{f}, seed, 40); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s seed %d: the plan changed:\n got %+v\nwant %+v", f, seed, got[:3], want[:3])
			}
		}
	}
}

// Property: with several kinds, every prefix of a plan gives each kind its
// share (n/k rounded down or up), each kind appears within the first k
// steps, and exactly each kind's first step asks for evidence; over many
// seeds and every subset of 2-4 kinds.
func TestPlanGivesEachKindItsShare(t *testing.T) {
	all := Faults()
	var sets [][]string
	for i := range all {
		for j := i + 1; j < len(all); j++ {
			sets = append(sets, []string{all[i], all[j]})
			for k := j + 1; k < len(all); k++ {
				sets = append(sets, []string{all[i], all[j], all[k]})
			}
		}
	}
	sets = append(sets, all[:4], all)
	orders := map[string]bool{}
	for _, set := range sets {
		k := len(set)
		for seed := range int64(50) {
			plan := Plan(set, seed, 60)
			count := map[string]int{}
			for n, st := range plan {
				if st.Evidence != (count[st.Fault] == 0) {
					t.Fatalf("%v seed %d step %d %+v: evidence must be set on exactly each kind's first step", set, seed, n, st)
				}
				count[st.Fault]++
				for _, f := range set {
					if c, lo := count[f], (n+1)/k; c < lo || c > lo+1 {
						t.Fatalf("%v seed %d: after %d steps %s has %d, want %d or %d", set, seed, n+1, f, c, lo, lo+1)
					}
				}
			}
			if k == 2 {
				orders[fmt.Sprint(set, plan[0].Fault)] = true
			}
		}
	}
	// The order within a round is seeded, not fixed.
	if len(orders) < 2*len(all)*(len(all)-1)/2 {
		t.Fatalf("the first kind of a 2-kind plan never varies with the seed: %d orders", len(orders))
	}
	// The run: partition,kill at 8 s over 40 s is 5 windows, 3 and 2.
	for seed := range int64(200) {
		c := map[string]int{}
		for _, st := range Plan([]string{"partition", "kill"}, seed, 5) {
			c[st.Fault]++
		}
		if min(c["partition"], c["kill"]) != 2 {
			t.Fatalf("seed %d: %v", seed, c)
		}
	}
}

// A step that asks for evidence hits a primary with slots where its mode
// would pick any node.
func TestEvidenceStepsHitPrimaries(t *testing.T) {
	tp := fakeTopo([]int{1, 2, 3, 4, 5, 6})
	isPrimary := func(name string) bool { return slices.Contains([]string{"n1", "n2", "n3"}, name) }
	replicaOnly := map[string]int{}
	for seed := range uint64(200) {
		for _, mode := range []string{"one"} {
			for _, ev := range []bool{false, true} {
				st := Step{Fault: "kill", Mode: mode, Seed: seed, Evidence: ev}
				ms, err := killTargets(evidenceMode(st), tp, stepRand(st))
				if err != nil {
					t.Fatal(err)
				}
				if !isPrimary(ms[0].Node.Name) {
					if ev {
						t.Fatalf("kill one with evidence hit replica %s", ms[0].Node.Name)
					}
					replicaOnly["kill one"]++
				}
			}
		}
		for _, mode := range []string{"isolate-one", "halves"} {
			for _, ev := range []bool{false, true} {
				st := Step{Fault: "partition", Mode: mode, Seed: seed, Evidence: ev}
				p, err := planPartition(evidenceMode(st), tp, stepRand(st))
				if err != nil {
					t.Fatal(err)
				}
				if !slices.ContainsFunc(p.Minority, isPrimary) {
					if ev {
						t.Fatalf("partition %s with evidence cut off only %v", mode, p.Minority)
					}
					replicaOnly["partition "+mode]++
				}
				if mode == "halves" && len(p.Minority) != 2 {
					t.Fatalf("halves minority %v", p.Minority)
				}
			}
		}
	}
	// Without the ask, these modes do pick replicas only (the test would
	// prove nothing otherwise).
	for _, m := range []string{"kill one", "partition isolate-one", "partition halves"} {
		if replicaOnly[m] == 0 {
			t.Errorf("%s never cut only replicas in 200 seeds without the evidence ask", m)
		}
	}
}
