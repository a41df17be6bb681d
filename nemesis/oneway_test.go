package nemesis

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/redline-dev/redline/cluster"
)

// Each one-way variant drops in one direction only: no pair of nodes drops
// each other's packets, the struck node (or shard) is named, and "one-way"
// draws every variant over a few seeds, each a pure function of the seed.
func TestOneWayPlans(t *testing.T) {
	topo := fakeTopo([]int{1, 2, 3, 4, 5, 6})
	oneWays := func(p oneWayPlan) {
		t.Helper()
		for from, tos := range p.Drops {
			for _, to := range tos {
				if slices.Contains(p.Drops[to], from) {
					t.Fatalf("%s: %s and %s drop each other's packets: %v", p.Variant, from, to, p.Drops)
				}
			}
		}
	}
	for seed := range uint64(20) {
		p, err := planOneWay("one-way-unheard", false, topo, stepRand(Step{Seed: seed}))
		if err != nil || len(p.Struck) != 1 || len(p.Drops) != 1 || len(p.Drops[p.Struck[0]]) != 5 {
			t.Fatalf("unheard seed %d: %+v %v; want one node dropping what it sends to the 5 others", seed, p, err)
		}
		oneWays(p)
		p, err = planOneWay("one-way-deaf", true, topo, stepRand(Step{Seed: seed}))
		x := p.Struck[0]
		if err != nil || len(p.Drops) != 5 || !slices.Contains([]string{"n1", "n2", "n3"}, x) {
			t.Fatalf("deaf seed %d with evidence: %+v %v; want a primary every other node stops sending to", seed, p, err)
		}
		for from, tos := range p.Drops {
			if from == x || !slices.Equal(tos, []string{x}) {
				t.Fatalf("deaf: %s drops %v, want only %s", from, tos, x)
			}
		}
		oneWays(p)
		p, err = planOneWay("one-way-primary-to-replicas", false, topo, stepRand(Step{Seed: seed}))
		if err != nil || len(p.Struck) != 2 || len(p.Drops) != 1 || !slices.Equal(p.Drops[p.Struck[0]], p.Struck[1:]) {
			t.Fatalf("primary-to-replicas seed %d: %+v %v", seed, p, err)
		}
		if prim, rep := p.Struck[0], p.Struck[1]; fmt.Sprintf("n%c", prim[1]+3) != rep {
			t.Fatalf("primary-to-replicas: %s is not the replica of %s in fakeTopo", rep, prim)
		}
		q, err := planOneWay("one-way-replicas-to-primary", false, topo, stepRand(Step{Seed: seed}))
		if err != nil || !slices.Equal(q.Struck, p.Struck) || !slices.Equal(q.Drops[q.Struck[1]], q.Struck[:1]) || len(q.Drops) != 1 {
			t.Fatalf("replicas-to-primary seed %d: %+v %v; want the same shard as primary-to-replicas, reversed", seed, q, err)
		}
		oneWays(q)
	}
	drawn := map[string]bool{}
	for seed := range uint64(40) {
		p, err := planOneWay(oneWay, false, topo, stepRand(Step{Seed: seed}))
		if err != nil {
			t.Fatal(err)
		}
		again, _ := planOneWay(oneWay, false, topo, stepRand(Step{Seed: seed}))
		if fmt.Sprint(p) != fmt.Sprint(again) {
			t.Fatalf("seed %d resolved twice differently: %+v vs %+v", seed, p, again)
		}
		drawn[p.Variant] = true
	}
	for _, v := range oneWayVariants {
		if !drawn[v] {
			t.Errorf("40 seeds of one-way never drew %s", v)
		}
	}
	// No replica: the shard variants have nothing to cut.
	if _, err := planOneWay("one-way-primary-to-replicas", false, fakeTopo([]int{1, 2, 3}), stepRand(Step{Seed: 1})); !errHas(err, "replica") {
		t.Fatalf("primary-to-replicas without replicas: %v", err)
	}
}

// oneWayCluster is an external-like cluster that partitions both ways and
// one way, recording each call, and may say through Probe that it cannot.
type oneWayCluster struct {
	bare
	mu    sync.Mutex
	calls []string
	probe map[string]error
}

func (c *oneWayCluster) Cut(_ context.Context, node string, peers []string, _ bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, fmt.Sprintf("cut %s %v", node, peers))
	return nil
}

func (c *oneWayCluster) CutOneWay(_ context.Context, from string, to []string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, fmt.Sprintf("one-way %s %v", from, to))
	return nil
}

func (c *oneWayCluster) Heal(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, "heal")
	return nil
}

func (c *oneWayCluster) Probe(_ context.Context, kind string) error { return c.probe[kind] }

func (c *oneWayCluster) took() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.calls)
}

// partitionOnly partitions both ways and no other way.
type partitionOnly struct {
	bare
	c *oneWayCluster
}

func (p partitionOnly) Cut(ctx context.Context, node string, peers []string, clients bool) error {
	return p.c.Cut(ctx, node, peers, clients)
}
func (p partitionOnly) Heal(ctx context.Context) error { return p.c.Heal(ctx) }

// A one-way mode is refused before the run where the target cannot filter
// one way (a two-way partitioner, a partition hook, a host whose probe says
// no), while the partition's other modes stay available there; where it
// can, a one-way step cuts one way only and its stop heals.
func TestOneWayModesNeedAOneWayPartitioner(t *testing.T) {
	two := partitionOnly{newBare(), &oneWayCluster{bare: newBare()}}
	var _ cluster.Partitioner = two
	if _, err := New([]string{"partition:one-way"}, two, opts()); !errHas(err, "partition", "one direction", "cannot") {
		t.Fatalf("one-way on a two-way partitioner: %v", err)
	}
	if _, err := New([]string{"partition"}, two, opts()); err != nil {
		t.Fatalf("partition on a two-way partitioner: %v", err)
	}
	hooked := Options{Interval: opts().Interval, Hooks: map[string]string{"partition": "true"}}
	if _, err := New([]string{"partition:one-way-deaf"}, newBare(), hooked); !errHas(err, "one direction", "--nemesis-hook") {
		t.Fatalf("one-way with a partition hook: %v", err)
	}
	no := &oneWayCluster{bare: newBare(), probe: map[string]error{cluster.ProbeOneWay: fmt.Errorf("no nf_tables here")}}
	if _, err := New([]string{"partition:one-way-unheard"}, no, opts()); !errHas(err, "no nf_tables here") {
		t.Fatalf("one-way where the probe says no: %v", err)
	}

	c := &oneWayCluster{bare: newBare()}
	n, err := New([]string{"partition:one-way-replicas-to-primary"}, c, opts())
	if err != nil {
		t.Fatal(err)
	}
	if st := n.planner.next(); st.Fault != "partition" || st.Mode != "one-way-replicas-to-primary" {
		t.Fatalf("the schedule drew %+v", st)
	}
	ctx := context.Background()
	a, err := n.resolve(ctx, Step{Fault: "partition", Mode: "one-way-replicas-to-primary", Seed: 3}, fakeTopo([]int{1, 2, 3, 4, 5, 6}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.stop(ctx); err != nil {
		t.Fatal(err)
	}
	prim, rep := a.nodes[0], a.nodes[1]
	if want := []string{fmt.Sprintf("one-way %s [%s]", rep, prim), "heal"}; !slices.Equal(c.took(), want) {
		t.Fatalf("calls %q, want %q", c.took(), want)
	}
	if a.detail["variant"] != "one-way-replicas-to-primary" || a.detail["roles"].(map[string]string)[prim] != "primary" {
		t.Fatalf("detail %v", a.detail)
	}
}
