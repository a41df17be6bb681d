package nemesis

import (
	"math/rand/v2"
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
