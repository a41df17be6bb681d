package adversary

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// The topology samples (topology.jsonl) as the config-epoch checker reads
// them: each sample every node's own CLUSTER NODES line.

type topologySample struct {
	Time         int64  `json:"time"`
	ClusterNodes string `json:"cluster_nodes"`
}

func (r *Run) topologySamples() []topologySample {
	var out []topologySample
	for _, l := range r.topologyLines() {
		var s topologySample
		if json.Unmarshal(l, &s) == nil {
			out = append(out, s)
		}
	}
	return out
}

func (r *Run) setTopologySamples(ss []topologySample) {
	ls := make([][]byte, len(ss))
	for i, s := range ss {
		ls[i], _ = json.Marshal(s)
	}
	r.setTopologyLines(ls)
}

// lineFields splits a sample's text into its lines' fields.
func lineFields(text string) [][]string {
	var out [][]string
	for _, l := range strings.Split(text, "\n") {
		if f := strings.Fields(l); len(f) >= 8 {
			out = append(out, f)
		}
	}
	return out
}

func joinLines(ls [][]string) string {
	var b strings.Builder
	for _, f := range ls {
		b.WriteString(strings.Join(f, " ") + "\n")
	}
	return b.String()
}

// promotions are the samples (index i, line j) where a node that was a
// replica in sample i-1 is a primary serving slots in sample i, with the
// epoch its former primary had in sample i-1.
func promotions(ss []topologySample) (out [][2]int, formerEpoch []string) {
	for i := 1; i < len(ss); i++ {
		before := map[string][]string{}
		for _, f := range lineFields(ss[i-1].ClusterNodes) {
			before[f[0]] = f
		}
		for j, f := range lineFields(ss[i].ClusterNodes) {
			b, ok := before[f[0]]
			if !ok || !strings.Contains(b[2], "slave") || !strings.Contains(f[2], "master") || len(f) < 9 {
				continue
			}
			if m, ok := before[b[3]]; ok {
				out = append(out, [2]int{i, j})
				formerEpoch = append(formerEpoch, m[6])
			}
		}
	}
	return out, formerEpoch
}

var topologyMutations = []Mutation{
	{
		Name: "promotion-keeps-epoch", Kind: Anomaly, Checker: "config-epoch", Figure: class("config-epoch-not-raised"),
		Class: "a promoted replica serves its primary's slots with its primary's configEpoch, not a higher one",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			ss := r.topologySamples()
			ps, epochs := promotions(ss)
			if len(ps) == 0 {
				return "", ErrNotApplicable
			}
			k := rng.IntN(len(ps))
			i, j := ps[k][0], ps[k][1]
			ls := lineFields(ss[i].ClusterNodes)
			was := ls[j][6]
			ls[j][6] = epochs[k]
			ss[i].ClusterNodes = joinLines(ls)
			r.setTopologySamples(ss)
			return fmt.Sprintf("topology sample %d: %s promoted with configEpoch %s (was %s)", i+1, ls[j][0], epochs[k], was), nil
		},
	},
	{
		Name: "topology-epoch-garbage", Kind: Lie, Checker: "config-epoch",
		Class: "a topology sample gives a primary a configEpoch that is no number",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			ss := r.topologySamples()
			if len(ss) == 0 {
				return "", ErrNotApplicable
			}
			i := rng.IntN(len(ss))
			ls := lineFields(ss[i].ClusterNodes)
			if len(ls) == 0 {
				return "", ErrNotApplicable
			}
			j := rng.IntN(len(ls))
			ls[j][6] = "epoch?"
			ss[i].ClusterNodes = joinLines(ls)
			r.setTopologySamples(ss)
			return fmt.Sprintf("topology sample %d: %s's configEpoch made garbage", i+1, ls[j][0]), nil
		},
	},
	{
		Name: "topology-sample-torn", Kind: Lie, Checker: "config-epoch",
		Class: "a topology sample's CLUSTER NODES text is cut short mid-line",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			ss := r.topologySamples()
			if len(ss) == 0 {
				return "", ErrNotApplicable
			}
			i := rng.IntN(len(ss))
			t := strings.TrimRight(ss[i].ClusterNodes, "\n")
			last := strings.LastIndexByte(t, '\n')
			cut := last + 1 + len(strings.Join(strings.Fields(t[last+1:])[:3], " "))
			ss[i].ClusterNodes = t[:cut]
			r.setTopologySamples(ss)
			return fmt.Sprintf("topology sample %d cut after its last line's third field", i+1), nil
		},
	},
	{
		Name: "topology-contradiction", Kind: Lie, Checker: "config-epoch",
		Class: "two topology samples of one instant differ",
		Apply: func(r *Run, rng *rand.Rand) (string, error) {
			ss := r.topologySamples()
			if len(ss) < 2 {
				return "", ErrNotApplicable
			}
			i := 1 + rng.IntN(len(ss)-1)
			twin := topologySample{Time: ss[i].Time, ClusterNodes: ss[i-1].ClusterNodes}
			ss = append(ss[:i+1], append([]topologySample{twin}, ss[i+1:]...)...)
			r.setTopologySamples(ss)
			return fmt.Sprintf("topology sample %d given a twin of its instant with sample %d's text", i+1, i), nil
		},
	},
}
