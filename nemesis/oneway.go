package nemesis

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
)

// One-way partitions are study modes of partition (a schedule never draws
// them: appended to partition's schedule modes they would change every old
// partition seed's schedule). "one-way" draws one of the four variants
// from the step's own seed; each variant can be named as well.
const oneWay = "one-way"

var oneWayVariants = []string{
	"one-way-unheard",             // one node's packets to every peer dropped: it hears them, they do not hear it
	"one-way-deaf",                // every peer's packets to one node dropped: they hear it, it hears none
	"one-way-primary-to-replicas", // a primary's packets to its replicas dropped
	"one-way-replicas-to-primary", // a primary's replicas' packets to it dropped
}

func isOneWay(mode string) bool { return mode == oneWay || strings.HasPrefix(mode, oneWay+"-") }

// oneWayPlan says, for each node, the peers it drops the packets it sends
// to (never the reverse).
type oneWayPlan struct {
	Variant string              `json:"variant"`
	Drops   map[string][]string `json:"drops"`  // from -> to
	Struck  []string            `json:"struck"` // the node, or the primary and its replicas
}

// planOneWay resolves a one-way step: a pure function of the mode, the
// topology and the step's random source. With evidence the single node of
// unheard and deaf is a primary with slots.
func planOneWay(mode string, evidence bool, t *clusteradmin.Topology, rng *rand.Rand) (oneWayPlan, error) {
	if len(t.Members) < 2 {
		return oneWayPlan{}, fmt.Errorf("a one-way partition needs 2 nodes, the cluster has %d", len(t.Members))
	}
	if mode == oneWay {
		mode = oneWayVariants[rng.IntN(len(oneWayVariants))]
	}
	p := oneWayPlan{Variant: mode, Drops: map[string][]string{}}
	switch mode {
	case "one-way-unheard", "one-way-deaf":
		among := t.Members
		if prim := t.Primaries(); evidence && len(prim) > 0 {
			among = prim
		}
		x := pickOne(rng, among).Node.Name
		for _, m := range t.Members {
			if y := m.Node.Name; y != x {
				if mode == "one-way-unheard" {
					p.Drops[x] = insertSorted(p.Drops[x], y)
				} else {
					p.Drops[y] = []string{x}
				}
			}
		}
		p.Struck = []string{x}
	case "one-way-primary-to-replicas", "one-way-replicas-to-primary":
		var shards []clusteradmin.NodeState // primaries with slots and replicas
		for _, m := range t.Primaries() {
			if len(replicasOf(t, m)) > 0 {
				shards = append(shards, m)
			}
		}
		if len(shards) == 0 {
			return oneWayPlan{}, fmt.Errorf("%s needs a primary with slots and a replica; the cluster has none", mode)
		}
		prim := pickOne(rng, shards)
		reps := replicasOf(t, prim)
		for _, r := range reps {
			if mode == "one-way-primary-to-replicas" {
				p.Drops[prim.Node.Name] = insertSorted(p.Drops[prim.Node.Name], r)
			} else {
				p.Drops[r] = []string{prim.Node.Name}
			}
		}
		p.Struck = append([]string{prim.Node.Name}, reps...)
	default:
		return oneWayPlan{}, fmt.Errorf("unknown one-way mode %q", mode)
	}
	return p, nil
}

// replicasOf names the replicas of primary p, sorted.
func replicasOf(t *clusteradmin.Topology, p clusteradmin.NodeState) []string {
	var out []string
	for _, m := range t.Members {
		if !m.Primary && m.MasterID == p.ID && p.ID != "" {
			out = append(out, m.Node.Name)
		}
	}
	slices.SortFunc(out, cluster.CompareNames)
	return out
}
