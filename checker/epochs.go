package checker

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ConfigEpochOptions tune the config-epoch checker.
type ConfigEpochOptions struct {
	Scope
	// Samples are the topology samples the runner took while the run
	// went on (topology.jsonl), in file order.
	Samples []TopologySample
	// Expected, when set, says why the run must carry topology samples:
	// none is then unknown, not "not applicable".
	Expected string
}

type configEpoch struct{ o ConfigEpochOptions }

// ConfigEpochs checks Redis Cluster's rule for slot ownership over the
// sampled topology: a primary takes a slot over only with a configEpoch
// above the one its previous owner held it with (an election winner sets
// its configEpoch to the election's epoch, a TAKEOVER or a slot import
// bumps its own; a claim with a lower or equal epoch is refused by every
// other node). Each sample holds every node's own CLUSTER NODES line; in
// time order, a primary claiming a slot that its previous claimants (the
// latest sample in which some primary claimed it) did not, with a
// configEpoch not above theirs, is a config-epoch-not-raised, invalid.
// Not a violation: a node claiming a slot again with the very epoch it
// held it with before (a restarted primary's stale view, until it learns
// of its successor), or a node that the sample before described as
// failed, unreachable or absent coming back.
//
// The samples are a witness: a line that is no CLUSTER NODES line (an
// epoch or slot that is no number, a line cut short), samples of one
// instant that differ, or samples out of time order make the verdict
// unknown, named, unless a violation already makes it invalid (judged in
// time order, contradicting instants left out). No samples are not
// applicable, or unknown when Expected; samples in which no slot changed
// owner are not applicable.
func ConfigEpochs(o ConfigEpochOptions) Checker {
	o.Scope = o.Scope.withDefaults()
	return configEpoch{o}
}

func (c configEpoch) Name() string { return c.o.name("config-epoch") }

// EpochNotRaised is the config-epoch checker's anomaly class.
const EpochNotRaised = "config-epoch-not-raised"

// nodeLine is one parsed CLUSTER NODES line.
type nodeLine struct {
	id, addr string
	flags    []string
	master   string // "-" for none
	epoch    uint64
	ranges   [][2]int
}

func (l nodeLine) has(flag string) bool { return slices.Contains(l.flags, flag) }

// parseSample parses a sample's CLUSTER NODES text; bad says why a line
// is no CLUSTER NODES line ("" when every line is one).
func parseSample(text string) (lines []nodeLine, bad string) {
	for _, raw := range strings.Split(text, "\n") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		f := strings.Fields(raw)
		if len(f) < 8 {
			return nil, fmt.Sprintf("the line %q has %d fields, fewer than CLUSTER NODES' 8", capRaw(raw), len(f))
		}
		l := nodeLine{id: f[0], flags: strings.Split(f[2], ","), master: f[3]}
		l.addr, _, _ = strings.Cut(f[1], "@")
		e, err := strconv.ParseUint(f[6], 10, 64)
		if err != nil {
			return nil, fmt.Sprintf("the line of %s gives the configEpoch %q, which is no number", l.id, f[6])
		}
		l.epoch = e
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				continue // a slot MIGRATING or IMPORTING
			}
			lo, hi, isRange := strings.Cut(r, "-")
			a, err1 := strconv.Atoi(lo)
			b := a
			var err2 error
			if isRange {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 != nil || err2 != nil || a < 0 || b > 16383 || a > b {
				return nil, fmt.Sprintf("the line of %s serves %q, which is no slot range", l.id, r)
			}
			l.ranges = append(l.ranges, [2]int{a, b})
		}
		lines = append(lines, l)
	}
	return lines, ""
}

// slotClaim is one primary's claim of a slot in a sample.
type slotClaim struct {
	id    string
	epoch uint64
}

func (c configEpoch) Check(_ context.Context, in *History) Result {
	if len(c.o.Samples) == 0 {
		if c.o.Expected != "" {
			return Result{Valid: Unknown, Figures: &Verdict{Reason: fmt.Sprintf("no topology sample although the runner samples the topology through every run (%s): no configEpoch was judged", c.o.Expected)}}
		}
		return NotApplicable("no topology samples (topology.jsonl): no configEpoch to judge")
	}
	var unknown []string
	out, contra := topologyDisorder(c.o.Samples)
	if len(out) > 0 {
		unknown = append(unknown, fmt.Sprintf("the topology samples are out of time order (sample %d)", out[0]+1))
	}
	skip := map[int64]bool{}
	for _, p := range contra {
		skip[c.o.Samples[p[0]].Time] = true
	}
	if len(contra) > 0 {
		unknown = append(unknown, fmt.Sprintf("samples %d and %d are of one instant (%ss) and differ: neither is believed", contra[0][0]+1, contra[0][1]+1, trimS(sec(c.o.Samples[contra[0][0]].Time))))
	}
	samples := slices.Clone(c.o.Samples)
	slices.SortStableFunc(samples, func(x, y TopologySample) int { return cmpInt(x.Time, y.Time) })
	names := map[string]string{}
	for n, a := range in.nodeAddrsOf() {
		names[a] = n
	}
	name := func(l nodeLine) string {
		if n := names[l.addr]; n != "" {
			return n
		}
		return l.addr
	}
	var prev [16384][]slotClaim    // the latest claimants of each slot
	held := map[slotClaim][]int{}  // (node, epoch) -> ranges it claimed, flattened start/end pairs
	var before map[string]nodeLine // the previous judged sample's lines by id
	changes, judged, violations := 0, 0, 0
	var examples []map[string]any
	first := ""
	heldBefore := func(cl slotClaim, slot int) bool {
		rs := held[cl]
		for i := 0; i+1 < len(rs); i += 2 {
			if slot >= rs[i] && slot <= rs[i+1] {
				return true
			}
		}
		return false
	}
	for si, smp := range samples {
		if skip[smp.Time] {
			continue
		}
		lines, bad := parseSample(smp.ClusterNodes)
		if bad != "" {
			unknown = append(unknown, fmt.Sprintf("the sample at %ss is no CLUSTER NODES output: %s", trimS(sec(smp.Time)), bad))
			continue
		}
		judged++
		byID := map[string]nodeLine{}
		cur := map[int][]slotClaim{}
		for _, l := range lines {
			byID[l.id] = l
			if !l.has("master") {
				continue
			}
			for _, r := range l.ranges {
				for s := r[0]; s <= r[1]; s++ {
					cur[s] = append(cur[s], slotClaim{l.id, l.epoch})
				}
			}
		}
		type gain struct {
			id               string
			epoch, prevEpoch uint64
			prevOwner        string
		}
		gains := map[gain][]int{}
		for s, claims := range cur {
			old := prev[s]
			if len(old) > 0 && before != nil {
				var top slotClaim
				for _, o := range old {
					if o.epoch >= top.epoch {
						top = o
					}
				}
				for _, cl := range claims {
					if slices.ContainsFunc(old, func(o slotClaim) bool { return o.id == cl.id }) {
						continue
					}
					changes++
					if cl.epoch > top.epoch || heldBefore(cl, s) {
						continue
					}
					if b, ok := before[cl.id]; !ok || b.has("fail") || b.has("noaddr") || b.has("handshake") {
						continue // coming back: its view is stale until it learns
					}
					gains[gain{cl.id, cl.epoch, top.epoch, top.id}] = append(gains[gain{cl.id, cl.epoch, top.epoch, top.id}], s)
				}
			}
			prev[s] = claims
		}
		for _, l := range lines {
			if !l.has("master") {
				continue
			}
			k := slotClaim{l.id, l.epoch}
			for _, r := range l.ranges {
				held[k] = append(held[k], r[0], r[1])
			}
		}
		keys := make([]gain, 0, len(gains))
		for g := range gains {
			keys = append(keys, g)
		}
		slices.SortFunc(keys, func(a, b gain) int { return strings.Compare(a.id+a.prevOwner, b.id+b.prevOwner) })
		for _, g := range keys {
			slots := gains[g]
			slices.Sort(slots)
			violations++
			b := before[g.id]
			was := "a primary"
			if b.has("slave") {
				was = "a replica (a promotion)"
			}
			who, prevWho := name(byID[g.id]), g.prevOwner
			if l, ok := byID[g.prevOwner]; ok {
				prevWho = name(l)
			} else if l, ok := before[g.prevOwner]; ok {
				prevWho = name(l)
			}
			what := fmt.Sprintf("at %ss %s claims %d slots (%s) with configEpoch %d, not above the configEpoch %d their previous owner %s held them with; in the sample before (%ss) it was %s",
				trimS(sec(smp.Time)), who, len(slots), slotRanges(slots), g.epoch, g.prevEpoch, prevWho, trimS(sec(samples[max(0, si-1)].Time)), was)
			if first == "" {
				first = what
			}
			if len(examples) < c.o.MaxExamples {
				examples = append(examples, map[string]any{"time_s": sec(smp.Time), "node": who, "epoch": g.epoch, "previous_owner": prevWho,
					"previous_epoch": g.prevEpoch, "slots": len(slots), "what": what})
			}
		}
		before = byID
	}
	fig := &EpochFigures{Samples: len(c.o.Samples), SamplesJudged: judged, OwnerChanges: changes, Violations: violations}
	if violations > 0 {
		invalidOne(&fig.OneClass, &fig.Verdict, EpochNotRaised, violations, examples, first, unknown)
		return Result{Valid: Invalid, Figures: fig}
	}
	if len(unknown) > 0 {
		fig.Unjudged = unknown
		fig.Reason = "the topology samples cannot all be believed: " + strings.Join(unknown, "; ")
		return Result{Valid: Unknown, Figures: fig}
	}
	if changes == 0 {
		return NotApplicable(fmt.Sprintf("no slot changed owner in the %d topology samples: no configEpoch to judge", len(c.o.Samples)))
	}
	return Result{Valid: Valid, Figures: fig}
}

// EpochFigures are the config-epoch checker's figures.
type EpochFigures struct {
	Samples       int `json:"samples"`
	SamplesJudged int `json:"samples_judged"`
	OwnerChanges  int `json:"owner_changes"`
	Violations    int `json:"violations"`
	OneClass
	Verdict
}

// slotRanges writes sorted slots as ranges: "0-5460, 6000".
func slotRanges(slots []int) string {
	var parts []string
	for i := 0; i < len(slots); {
		j := i
		for j+1 < len(slots) && slots[j+1] == slots[j]+1 {
			j++
		}
		if i == j {
			parts = append(parts, strconv.Itoa(slots[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", slots[i], slots[j]))
		}
		i = j + 1
	}
	if len(parts) > 4 {
		return strings.Join(parts[:4], ", ") + fmt.Sprintf(" and %d more ranges", len(parts)-4)
	}
	return strings.Join(parts, ", ")
}

// The figures this checker explains (describe.go).
var _ = ExplainFigures(map[string]string{
	"violations": "a primary took slots over without a configEpoch above the one their previous owner held them with, in the topology sampled through the run: Redis Cluster's rule for slot ownership broken",
})
