package nemesis

import (
	"encoding/json"
	"math/rand/v2"
	"slices"

	"github.com/redline-dev/redline/history"
)

// Step is one scheduled fault. Targets are not part of a step: they are
// resolved from the live topology when the step fires, with a random source
// seeded by Seed, over nodes sorted by name. Same topology, same targets.
type Step struct {
	Fault string  `json:"fault"`
	Mode  string  `json:"mode"`
	Seed  uint64  `json:"seed"` // seeds target choice and parameters (slots, offsets) when the step fires
	Hold  float64 `json:"hold"` // how long the fault is held, as a fraction of the interval, in [0.5, 0.75)
	// Slots is a planned reshard's slot count (changes.go); 0 otherwise.
	Slots int `json:"slots,omitempty"`
	// Evidence asks a mode that may pick any node (kill/pause "one",
	// partition "isolate-one" and "halves", clock) to hit a primary with
	// slots, so that the step can produce evidence: a fault on replicas
	// only leaves the checkers nothing to judge. Plans of several kinds set
	// it on each kind's first step (evidenceMode).
	Evidence bool `json:"evidence,omitempty"`
}

// Plan returns the first n steps of the schedule for faults and seed. It is
// a pure function: same faults (in any order, duplicates ignored) and seed,
// same steps. Unknown names and "none" are ignored.
//
// With one fault kind every step is of that kind, drawn as ever (old seeds
// replay). With several, each kind gets its share: the steps come in
// rounds, each round every kind once in a seeded random order, so that any
// prefix of n steps holds each kind n/k times, rounded down or up (a draw
// of a kind per step left a 40 s run with 4 kills and 1 partition); and
// each kind's first step asks for targets that can produce evidence
// (Step.Evidence).
func Plan(faults []string, seed int64, n int) []Step {
	p := newPlanner(faults, seed)
	if p == nil {
		return nil
	}
	steps := make([]Step, 0, n)
	for range n {
		steps = append(steps, p.next())
	}
	return steps
}

type planner struct {
	faults []string
	rng    *rand.Rand
	only   map[string][]string // fault -> the modes "fault:mode" names allowed
	round  []string            // the rest of the current round (several kinds)
	seen   map[string]bool     // kinds already scheduled once
}

func newPlanner(faults []string, seed int64) *planner {
	fs := canonical(faults)
	if len(fs) == 0 {
		return nil
	}
	return &planner{faults: fs, rng: rand.New(rand.NewPCG(uint64(seed), 0x6e656d65736973))}
}

func (p *planner) next() Step {
	var f string
	first := false
	if len(p.faults) == 1 {
		// The draw of the single-kind schedule as it always was: it
		// consumes the random source, and old seeds must replay.
		f = p.faults[p.rng.IntN(1)]
	} else {
		if len(p.round) == 0 {
			for _, i := range p.rng.Perm(len(p.faults)) {
				p.round = append(p.round, p.faults[i])
			}
		}
		f, p.round = p.round[0], p.round[1:]
		if p.seen == nil {
			p.seen = map[string]bool{}
		}
		first = !p.seen[f]
		p.seen[f] = true
	}
	modes := Modes(f)
	if m := p.only[f]; len(m) > 0 {
		modes = m
	}
	return Step{
		Fault:    f,
		Mode:     modes[p.rng.IntN(len(modes))],
		Seed:     p.rng.Uint64(),
		Hold:     0.5 + 0.25*p.rng.Float64(),
		Evidence: first,
	}
}

// evidenceMode is the mode a step resolves with: a step asking for
// evidence turns a mode that may pick any node into its primary-only twin
// (kill/pause/delay/loss/power/slow-link/slow one -> primary, partition isolate-one -> isolate-primary,
// halves -> halves with a primary on the smaller side); other modes already
// hit primaries, or name their targets themselves.
func evidenceMode(st Step) string {
	if !st.Evidence {
		return st.Mode
	}
	switch st.Fault + ":" + st.Mode {
	case "kill:one", "pause:one", "delay:one", "loss:one", "power:one", "slow-link:one", "slow:one":
		return "primary"
	case "partition:isolate-one":
		return "isolate-primary"
	case "partition:halves":
		return halvesWithPrimary
	}
	return st.Mode
}

// stepRand is the random source a step uses when it fires.
func stepRand(s Step) *rand.Rand {
	return rand.New(rand.NewPCG(s.Seed, 0x746172676574))
}

// ScheduledStep is a step at its place on the timeline: it starts at slot
// K, (K+1/2) intervals after traffic starts. Nodes are the nodes it struck
// when it was recorded (a replay compares, see Options.Script).
type ScheduledStep struct {
	Step
	K     int      `json:"k"`
	Nodes []string `json:"nodes,omitempty"`
}

// Schedule returns the first n steps of the plan at their slots: what
// Plan gives, placed as Run places them.
func Schedule(faults []string, seed int64, n int) []ScheduledStep {
	var out []ScheduledStep
	for k, st := range Plan(faults, seed, n) {
		out = append(out, ScheduledStep{Step: st, K: k})
	}
	return out
}

// ScheduleOf reads the schedule a run followed from its history: each
// fault start (recorded with its step since the schedule was recorded;
// older histories give nothing) in slot order, with the nodes it struck.
// A start that was skipped is kept: a replay tries it again.
func ScheduleOf(ops []history.Op) []ScheduledStep {
	var out []ScheduledStep
	seen := map[int]int{} // slot -> position in out
	for i := range ops {
		op := &ops[i]
		if _, isStart := history.StartedFault(op.F); op.Process != history.Nemesis || !isStart || len(op.DetailRaw()) == 0 {
			continue
		}
		var d struct {
			Step *ScheduledStep `json:"step"`
		}
		if json.Unmarshal(op.DetailRaw(), &d) != nil || d.Step == nil || d.Step.Fault == "" {
			continue
		}
		st := *d.Step
		st.Nodes = op.NodeList()
		if j, ok := seen[st.K]; ok {
			if len(st.Nodes) > 0 {
				out[j].Nodes = st.Nodes // the start's completion names what it struck
			}
			continue
		}
		seen[st.K] = len(out)
		out = append(out, st)
	}
	slices.SortStableFunc(out, func(a, b ScheduledStep) int { return a.K - b.K })
	return out
}
