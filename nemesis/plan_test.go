package nemesis

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/history"
)

func TestPlanIsAPureFunctionOfFaultsAndSeed(t *testing.T) {
	faults := []string{"partition", "kill", "migrate", "failover"}
	a := Plan(faults, 42, 200)
	b := Plan([]string{"failover", "migrate", "kill", "partition", "kill"}, 42, 200)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same faults in another order and the same seed gave different plans")
	}
	if len(a) != 200 {
		t.Fatalf("got %d steps, want 200", len(a))
	}
	if c := Plan(faults, 43, 200); reflect.DeepEqual(a, c) {
		t.Fatal("seeds 42 and 43 gave the same plan")
	}
	// A prefix of a longer plan is the shorter plan.
	if !reflect.DeepEqual(a[:50], Plan(faults, 42, 50)) {
		t.Fatal("the first 50 steps depend on the plan length")
	}
	seen := map[string]bool{}
	for _, s := range a {
		if !slices.Contains(faults, s.Fault) {
			t.Fatalf("step %+v: fault not asked for", s)
		}
		if !slices.Contains(Modes(s.Fault), s.Mode) {
			t.Fatalf("step %+v: mode not a mode of its fault", s)
		}
		if s.Hold < 0.5 || s.Hold >= 0.75 {
			t.Fatalf("step %+v: hold outside [0.5, 0.75)", s)
		}
		seen[s.Fault+"/"+s.Mode] = true
	}
	for _, f := range faults {
		for _, m := range Modes(f) {
			if !seen[f+"/"+m] {
				t.Errorf("200 steps never chose %s/%s", f, m)
			}
		}
	}
	if Plan([]string{"none"}, 1, 10) != nil || Plan(nil, 1, 10) != nil {
		t.Fatal("a plan without faults must be empty")
	}
}

// fakeTopo builds a topology of 3 primaries (n1-n3) and 3 replicas (n4-n6,
// replica of n(i-3)), listed in the given order.
func fakeTopo(order []int) *clusteradmin.Topology {
	t := &clusteradmin.Topology{}
	for _, i := range order {
		m := clusteradmin.NodeState{Node: cluster.Node{Name: fmt.Sprintf("n%d", i), Addr: fmt.Sprintf("127.0.0.1:%d", 7000+i)},
			ID: fmt.Sprintf("id%d", i), Reachable: true}
		m.Announce = m.Node.Addr
		if i <= 3 {
			m.Primary = true
			for s := (i - 1) * 5461; s < min(i*5461, 16384); s++ {
				m.Slots = append(m.Slots, s)
			}
		} else {
			m.MasterID = fmt.Sprintf("id%d", i-3)
		}
		t.Members = append(t.Members, m)
	}
	slices.SortFunc(t.Members, func(a, b clusteradmin.NodeState) int { return cluster.CompareNames(a.Node.Name, b.Node.Name) })
	return t
}

func TestTargetsDependOnSeedAndTopologyOnly(t *testing.T) {
	steps := Plan([]string{"partition", "kill", "pause"}, 7, 300)
	t1 := fakeTopo([]int{1, 2, 3, 4, 5, 6})
	t2 := fakeTopo([]int{6, 4, 2, 5, 1, 3})
	differ := 0
	var first []string
	for i, st := range steps {
		r1, r2 := resolvePure(t, st, t1), resolvePure(t, st, t2)
		if r1 != r2 {
			t.Fatalf("step %d %+v: targets differ with node order: %s vs %s", i, st, r1, r2)
		}
		if i < 20 {
			first = append(first, r1)
		}
		if r1 != resolvePure(t, Step{Fault: st.Fault, Mode: st.Mode, Seed: st.Seed + 1}, t1) {
			differ++
		}
	}
	if differ == 0 {
		t.Fatal("targets never depend on the step seed")
	}
	// Resolving twice gives the same answer (no hidden state).
	for i, st := range steps[:20] {
		if got := resolvePure(t, st, t1); got != first[i] {
			t.Fatalf("step %d resolved differently the second time", i)
		}
	}
}

func resolvePure(t *testing.T, st Step, tp *clusteradmin.Topology) string {
	t.Helper()
	rng := stepRand(st)
	switch st.Fault {
	case "partition":
		p, err := planPartition(st.Mode, tp, rng)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(p.Cuts, p.Minority)
	default:
		ms, err := killTargets(st.Mode, tp, rng)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(memberNames(ms), ",")
	}
}

func TestPartitionPlans(t *testing.T) {
	tp := fakeTopo([]int{1, 2, 3, 4, 5, 6})
	for _, mode := range Modes("partition") {
		for seed := range uint64(50) {
			p, err := planPartition(mode, tp, stepRand(Step{Seed: seed}))
			if err != nil {
				t.Fatalf("%s: %v", mode, err)
			}
			// Cuts are symmetric and never a node with itself.
			for a, peers := range p.Cuts {
				for _, b := range peers {
					if a == b {
						t.Fatalf("%s: %s cuts itself", mode, a)
					}
					if !slices.Contains(p.Cuts[b], a) {
						t.Fatalf("%s: %s drops %s but not the other way", mode, a, b)
					}
				}
			}
			if len(p.Cuts) == 0 {
				t.Fatalf("%s seed %d: nothing is cut", mode, seed)
			}
			sees := func(a string) int { return 6 - len(p.Cuts[a]) } // itself included
			switch mode {
			case "isolate-one", "isolate-primary":
				if len(p.Minority) != 1 || len(p.Cuts[p.Minority[0]]) != 5 {
					t.Fatalf("%s: %+v", mode, p)
				}
				if mode == "isolate-primary" && !slices.Contains([]string{"n1", "n2", "n3"}, p.Minority[0]) {
					t.Fatalf("isolate-primary isolated replica %s", p.Minority[0])
				}
			case "halves":
				if len(p.Minority) != 2 {
					t.Fatalf("halves of 6 should isolate 2 nodes, got %v", p.Minority)
				}
			case "ring":
				for _, m := range tp.Members {
					if sees(m.Node.Name) < 4 {
						t.Fatalf("ring: %s sees %d nodes, fewer than a majority", m.Node.Name, sees(m.Node.Name))
					}
				}
			case "bridge":
				bridges := 0
				for _, m := range tp.Members {
					if len(p.Cuts[m.Node.Name]) == 0 {
						bridges++
					}
				}
				if bridges != 1 {
					t.Fatalf("bridge: %d nodes see everyone, want 1: %v", bridges, p.Cuts)
				}
			case "primaries-replicas":
				if !reflect.DeepEqual(p.Cuts["n1"], []string{"n4", "n5", "n6"}) {
					t.Fatalf("primaries-replicas: n1 cuts %v", p.Cuts["n1"])
				}
			}
		}
	}
}

func TestKillTargets(t *testing.T) {
	tp := fakeTopo([]int{1, 2, 3, 4, 5, 6})
	for seed := range uint64(30) {
		rng := stepRand(Step{Seed: seed})
		ms, _ := killTargets("majority-primaries", tp, rng)
		if len(ms) != 2 || !ms[0].Primary || !ms[1].Primary || ms[0].ID == ms[1].ID {
			t.Fatalf("majority of 3 primaries: %v", memberNames(ms))
		}
		ms, _ = killTargets("primary", tp, rng)
		if len(ms) != 1 || !ms[0].Primary {
			t.Fatalf("primary: %v", memberNames(ms))
		}
		ms, _ = killTargets("all", tp, rng)
		if len(ms) != 6 {
			t.Fatalf("all: %v", memberNames(ms))
		}
	}
}

func TestKeySlot(t *testing.T) {
	// Values from the Redis Cluster specification and redis-cli CLUSTER KEYSLOT.
	for key, want := range map[string]int{"123456789": 0x31C3 & 16383, "foo": 12182, "bar": 5061,
		"{user1000}.following": history.Keyslot("user1000"), "foo{}{bar}": history.Keyslot("foo{}{bar}"), "foo{{bar}}": history.Keyslot("{bar")} {
		if got := history.Keyslot(key); got != want {
			t.Errorf("history.Keyslot(%q) = %d, want %d", key, got, want)
		}
	}
}

func TestMemberModeKeepsThreePrimaries(t *testing.T) {
	n := &memberFault{origNodes: 6}
	tp := fakeTopo([]int{1, 2, 3, 4, 5, 6})
	a, err := n.resolve(context.Background(), Step{Fault: "member", Mode: "remove"}, tp, stepRand(Step{}))
	if err != nil || a.detail["effective"] != "add" {
		t.Fatalf("remove with 3 primaries: %v %v", a.detail, err)
	}
	// Two more primaries: add turns into remove.
	for i := 7; i <= 8; i++ {
		tp.Members = append(tp.Members, clusteradmin.NodeState{Node: cluster.Node{Name: fmt.Sprintf("n%d", i)}, ID: fmt.Sprintf("id%d", i),
			Primary: true, Reachable: true, Slots: []int{16000 + i}})
	}
	a, err = n.resolve(context.Background(), Step{Fault: "member", Mode: "add"}, tp, stepRand(Step{}))
	if err != nil || a.detail["effective"] != "remove" || len(a.nodes) != 1 {
		t.Fatalf("add after growing by two: %v %v %v", a.detail, a.nodes, err)
	}
}

// "fault:mode" narrows a fault to the modes named and nothing else.
func TestPlannerOnlyModes(t *testing.T) {
	p := newPlanner([]string{"partition", "kill"}, 7)
	p.only = map[string][]string{"partition": {"isolate-primary"}}
	seen := map[string]bool{}
	for range 200 {
		st := p.next()
		if st.Fault == "partition" && st.Mode != "isolate-primary" {
			t.Fatalf("partition mode %s, want only isolate-primary", st.Mode)
		}
		seen[st.Fault+" "+st.Mode] = true
	}
	if !seen["partition isolate-primary"] || len(seen) < 3 {
		t.Fatalf("modes seen: %v", seen)
	}
}

// primary-minority puts one primary and no replica of its own on the
// minority side; it is only reachable as partition:primary-minority.
func TestPrimaryMinorityPlan(t *testing.T) {
	if slices.Contains(Modes("partition"), "primary-minority") || !slices.Contains(AllModes("partition"), "primary-minority") {
		t.Fatal("primary-minority must be a study mode, never picked by a schedule")
	}
	tp := fakeTopo([]int{1, 2, 3, 4, 5, 6})
	for seed := range uint64(50) {
		p, err := planPartition("primary-minority", tp, stepRand(Step{Seed: seed}))
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Minority) != 2 {
			t.Fatalf("minority %v, want 2 of 6", p.Minority)
		}
		var prim, own int
		for _, name := range p.Minority {
			i := int(name[1] - '0')
			if i <= 3 {
				prim = i
			}
		}
		for _, name := range p.Minority {
			if i := int(name[1] - '0'); i > 3 && i-3 == prim {
				own++
			}
		}
		if prim == 0 || own != 0 {
			t.Fatalf("seed %d: minority %v (want a primary without its replica)", seed, p.Minority)
		}
	}
}

// Faults sit on a fixed timeline from the traffic start: fault k at
// (k+1/2) intervals whatever earlier faults cost, and a start past its
// slot is late by exactly the overrun.
func TestTimelineSlotsAreFixed(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tl := timeline{t0: t0, interval: 10 * time.Second}
	for k, want := range []time.Duration{5 * time.Second, 15 * time.Second, 25 * time.Second, 105 * time.Second} {
		if k == 3 {
			k = 10
		}
		if got := tl.slot(k).Sub(t0); got != want {
			t.Fatalf("slot %d at %s, want %s", k, got, want)
		}
	}
	if l := tl.late(1, t0.Add(15*time.Second+5*time.Millisecond)); l != 0 {
		t.Fatalf("timer slack counted as late: %s", l)
	}
	if l := tl.late(1, t0.Add(17300*time.Millisecond)); l != 2300*time.Millisecond {
		t.Fatalf("late %s, want 2.3s", l)
	}
}
