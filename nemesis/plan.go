package nemesis

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/redline-dev/redline/harness/history"
)

// Step is one scheduled fault. Targets are not part of a step: they are
// resolved from the live topology when the step fires, with a random source
// seeded by Seed, over nodes sorted by name. Same topology, same targets.
type Step struct {
	Fault string  `json:"fault"`
	Mode  string  `json:"mode"`
	Seed  uint64  `json:"seed"` // seeds target choice and parameters (slots, offsets) when the step fires
	Hold  float64 `json:"hold"` // how long the fault is held, as a fraction of the interval, in [0.5, 0.75)
}

// Plan returns the first n steps of the schedule for faults and seed. It is
// a pure function: same faults (in any order, duplicates ignored) and seed,
// same steps. Unknown names and "none" are ignored.
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
}

func newPlanner(faults []string, seed int64) *planner {
	fs := canonical(faults)
	if len(fs) == 0 {
		return nil
	}
	return &planner{faults: fs, rng: rand.New(rand.NewPCG(uint64(seed), 0x6e656d65736973))}
}

func (p *planner) next() Step {
	f := p.faults[p.rng.IntN(len(p.faults))]
	modes := Modes(f)
	if m := p.only[f]; len(m) > 0 {
		modes = m
	}
	return Step{
		Fault: f,
		Mode:  modes[p.rng.IntN(len(modes))],
		Seed:  p.rng.Uint64(),
		Hold:  0.5 + 0.25*p.rng.Float64(),
	}
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
		if op.Process != history.Nemesis || !strings.HasPrefix(op.F, "start-") || len(op.DetailRaw()) == 0 {
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
