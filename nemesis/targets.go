package nemesis

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
)

// Target resolution: pure functions of a member list (sorted by name) and a
// step's random source. Nothing here talks to a node.

// pickOne returns a random member; ms must not be empty.
func pickOne(rng *rand.Rand, ms []clusteradmin.NodeState) clusteradmin.NodeState {
	return ms[rng.IntN(len(ms))]
}

// pickN returns k distinct random members, sorted by name.
func pickN(rng *rand.Rand, ms []clusteradmin.NodeState, k int) []clusteradmin.NodeState {
	k = min(k, len(ms))
	perm := rng.Perm(len(ms))
	out := make([]clusteradmin.NodeState, 0, k)
	for _, i := range perm[:k] {
		out = append(out, ms[i])
	}
	slices.SortFunc(out, func(a, b clusteradmin.NodeState) int { return cluster.CompareNames(a.Node.Name, b.Node.Name) })
	return out
}

func memberNames(ms []clusteradmin.NodeState) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Node.Name)
	}
	return out
}

// killTargets resolves the nodes a kill or pause step hits.
func killTargets(mode string, t *clusteradmin.Topology, rng *rand.Rand) ([]clusteradmin.NodeState, error) {
	all, prim := t.Members, t.Primaries()
	switch mode {
	case "one":
		return []clusteradmin.NodeState{pickOne(rng, all)}, nil
	case "primary", "primary-long":
		if len(prim) == 0 {
			return nil, fmt.Errorf("no primary with slots is known")
		}
		return []clusteradmin.NodeState{pickOne(rng, prim)}, nil
	case "majority-primaries":
		if len(prim) == 0 {
			return nil, fmt.Errorf("no primary with slots is known")
		}
		return pickN(rng, prim, len(prim)/2+1), nil
	case "all":
		return slices.Clone(all), nil
	}
	return nil, fmt.Errorf("unknown mode %q", mode)
}

// halvesWithPrimary is halves with a primary on the smaller side: what a
// "halves" step asking for evidence resolves to (evidenceMode). Not a mode
// a user names.
const halvesWithPrimary = "halves-with-primary"

func isPrimaryWithSlots(m clusteradmin.NodeState) bool { return m.Primary && len(m.Slots) > 0 }

// cutPlan says, for each node name, which peers it drops.
type cutPlan struct {
	Cuts     map[string][]string `json:"cuts"`
	Groups   [][]string          `json:"groups,omitempty"`
	Minority []string            `json:"minority,omitempty"` // cut from clients too with --partition-clients
}

// planPartition resolves a partition step into cuts. All members take part.
func planPartition(mode string, t *clusteradmin.Topology, rng *rand.Rand) (cutPlan, error) {
	all := t.Members
	n := len(all)
	if n < 2 {
		return cutPlan{}, fmt.Errorf("a partition needs at least 2 nodes, the cluster has %d", n)
	}
	perm := func() []clusteradmin.NodeState {
		out := make([]clusteradmin.NodeState, n)
		for i, j := range rng.Perm(n) {
			out[i] = all[j]
		}
		return out
	}
	split := func(side []clusteradmin.NodeState) [][]clusteradmin.NodeState {
		var rest []clusteradmin.NodeState
		for _, m := range all {
			if !slices.ContainsFunc(side, func(s clusteradmin.NodeState) bool { return s.Node.Name == m.Node.Name }) {
				rest = append(rest, m)
			}
		}
		return [][]clusteradmin.NodeState{side, rest}
	}
	switch mode {
	case "isolate-one":
		return groupsPlan(split([]clusteradmin.NodeState{pickOne(rng, all)})), nil
	case "isolate-primary":
		prim := t.Primaries()
		if len(prim) == 0 {
			return cutPlan{}, fmt.Errorf("no primary with slots is known")
		}
		return groupsPlan(split([]clusteradmin.NodeState{pickOne(rng, prim)})), nil
	case "halves", halvesWithPrimary:
		p := perm()
		k := max(1, (n-1)/2)
		if mode == halvesWithPrimary && !slices.ContainsFunc(p[:k], isPrimaryWithSlots) {
			// The smaller side is the one cut off: put the first primary
			// of the permutation on it.
			if i := slices.IndexFunc(p, isPrimaryWithSlots); i >= 0 {
				p[0], p[i] = p[i], p[0]
			}
		}
		return groupsPlan(split(p[:k])), nil
	case "primary-minority":
		// A primary on the minority side without any replica of its
		// own, filled up with other replicas, so the majority keeps a
		// majority of primaries and can promote its replica.
		prim := t.Primaries()
		if len(prim) == 0 {
			return cutPlan{}, fmt.Errorf("no primary with slots is known")
		}
		p := pickOne(rng, prim)
		side := []clusteradmin.NodeState{p}
		for _, m := range perm() {
			if len(side) >= max(1, (n-1)/2) {
				break
			}
			if !m.Primary && m.MasterID != "" && m.MasterID != p.ID {
				side = append(side, m)
			}
		}
		return groupsPlan(split(side)), nil
	case "primaries-replicas":
		prim, repl := t.Primaries(), t.Replicas()
		if len(prim) == 0 || len(repl) == 0 {
			return cutPlan{}, fmt.Errorf("needs primaries and replicas, have %d and %d", len(prim), len(repl))
		}
		return groupsPlan(split(prim)), nil
	case "bridge":
		if n < 3 {
			return groupsPlan(split([]clusteradmin.NodeState{pickOne(rng, all)})), nil
		}
		p := perm()
		a, b := p[1:1+(n-1)/2], p[1+(n-1)/2:]
		plan := cutPlan{Cuts: map[string][]string{}, Groups: [][]string{
			sortedNames(append(slices.Clone(a), p[0])), sortedNames(append(slices.Clone(b), p[0])),
		}}
		cutBetween(plan.Cuts, a, b)
		return plan, nil
	case "ring":
		if n < 4 {
			return groupsPlan(split([]clusteradmin.NodeState{pickOne(rng, all)})), nil
		}
		p := perm()
		// Each node keeps the nodes within distance h on the ring, which
		// with itself is at least a majority; farther pairs are cut.
		h := (n / 2) / 2
		if 2*h+1 < n/2+1 {
			h++
		}
		plan := cutPlan{Cuts: map[string][]string{}}
		for i := range n {
			for j := i + 1; j < n; j++ {
				d := min(j-i, n-(j-i))
				if d > h {
					cutBetween(plan.Cuts, p[i:i+1], p[j:j+1])
				}
			}
		}
		for i := range n {
			var g []clusteradmin.NodeState
			for k := -h; k <= h; k++ {
				g = append(g, p[((i+k)%n+n)%n])
			}
			plan.Groups = append(plan.Groups, sortedNames(g))
		}
		return plan, nil
	}
	return cutPlan{}, fmt.Errorf("unknown mode %q", mode)
}

// groupsPlan cuts every link between two groups; the strictly smaller one
// is the minority.
func groupsPlan(groups [][]clusteradmin.NodeState) cutPlan {
	plan := cutPlan{Cuts: map[string][]string{}}
	for i := range groups {
		plan.Groups = append(plan.Groups, sortedNames(groups[i]))
		for j := i + 1; j < len(groups); j++ {
			cutBetween(plan.Cuts, groups[i], groups[j])
		}
	}
	if len(groups) == 2 && len(groups[0]) != len(groups[1]) {
		small := groups[0]
		if len(groups[1]) < len(small) {
			small = groups[1]
		}
		plan.Minority = sortedNames(small)
	}
	return plan
}

func cutBetween(cuts map[string][]string, a, b []clusteradmin.NodeState) {
	for _, x := range a {
		for _, y := range b {
			cuts[x.Node.Name] = insertSorted(cuts[x.Node.Name], y.Node.Name)
			cuts[y.Node.Name] = insertSorted(cuts[y.Node.Name], x.Node.Name)
		}
	}
}

func insertSorted(s []string, v string) []string {
	i, found := slices.BinarySearchFunc(s, v, cluster.CompareNames)
	if found {
		return s
	}
	return slices.Insert(s, i, v)
}

func sortedNames(ms []clusteradmin.NodeState) []string {
	out := memberNames(ms)
	slices.SortFunc(out, cluster.CompareNames)
	return out
}
