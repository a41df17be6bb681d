package nemesis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
)

// squeezing is an external-like cluster that caps a node's rate and CPU
// (as docker does), recording each call, and answers Probe from probe.
type squeezing struct {
	bare
	mu    sync.Mutex
	calls []string
	probe map[string]error
}

func (s *squeezing) record(c string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
	return nil
}

func (s *squeezing) Throttle(_ context.Context, node string, bps int64) error {
	return s.record(fmt.Sprintf("throttle %s %d", node, bps))
}
func (s *squeezing) LimitCPU(_ context.Context, node string, cpus float64) error {
	return s.record(fmt.Sprintf("cpu %s %g", node, cpus))
}
func (s *squeezing) Delay(_ context.Context, node string, l, j time.Duration) error {
	return s.record(fmt.Sprintf("delay %s %s %s", node, l, j))
}
func (s *squeezing) Loss(_ context.Context, node string, p int) error {
	return s.record(fmt.Sprintf("loss %s %d", node, p))
}
func (s *squeezing) Probe(_ context.Context, kind string) error { return s.probe[kind] }

func (s *squeezing) took() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

var twoNodes = &clusteradmin.Topology{Members: []clusteradmin.NodeState{
	{Node: cluster.Node{Name: "n1"}, Primary: true, Slots: []int{0}},
	{Node: cluster.Node{Name: "n2"}, MasterID: "x"},
}}

// A slow-link step caps one node's rate at a seeded 128k-4M bit/s, a slow
// step its CPU at a seeded 2-20%; each stop lifts the cap (zero) and the
// end phase lifts what a step still holds.
func TestSlowLinkAndSlowStartStopAndHeal(t *testing.T) {
	s := &squeezing{bare: newBare()}
	n, err := New([]string{"slow-link", "slow"}, s, opts())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, f := range []string{"slow-link", "slow"} {
		st := Step{Fault: f, Mode: "primary", Seed: 11}
		a, err := n.resolve(ctx, st, twoNodes)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.nodes, []string{"n1"}) {
			t.Fatalf("%s:primary struck %v", f, a.nodes)
		}
		if _, err := a.start(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := a.stop(ctx); err != nil {
			t.Fatal(err)
		}
		a, _ = n.resolve(ctx, st, twoNodes) // left in force for the end phase
		if _, err := a.start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	h := &healing{res: map[string]any{}, scheduled: map[string]bool{"slow-link": true, "slow": true}}
	n.bound["slow-link"].heal(ctx, h)
	n.bound["slow"].heal(ctx, h)
	calls := s.took()
	if len(calls) != 8 {
		t.Fatalf("calls %q, want 8", calls)
	}
	var bps int64
	var cpus float64
	if _, err := fmt.Sscanf(calls[0], "throttle n1 %d", &bps); err != nil || bps < minLinkRate || bps > maxLinkRate {
		t.Errorf("throttle call %q: want 128k-4M bit/s", calls[0])
	}
	if _, err := fmt.Sscanf(calls[3], "cpu n1 %g", &cpus); err != nil || cpus < 0.02 || cpus > 0.2 {
		t.Errorf("cpu call %q: want 2-20%%", calls[3])
	}
	want := []string{calls[0], "throttle n1 0", calls[0], calls[3], "cpu n1 0", calls[3], "throttle n1 0", "cpu n1 0"}
	if !slices.Equal(calls, want) {
		t.Errorf("calls %q\nwant  %q", calls, want)
	}
	if h.res["rate_cap_removed"] == nil || h.res["unslowed"] == nil || len(h.errs) > 0 {
		t.Errorf("heal reported %v, errors %v", h.res, h.errs)
	}
	// Rates are drawn log-uniformly: about as many below 716 kbit/s (the
	// geometric middle) as above.
	low := 0
	for seed := range uint64(400) {
		if linkRate(stepRand(Step{Seed: seed})) < 716_000 {
			low++
		}
	}
	if low < 150 || low > 250 {
		t.Errorf("%d of 400 rates below the geometric middle, want about 200", low)
	}
}

// pausing is an external-like cluster that can only pause and resume,
// recording when.
type pausing struct {
	bare
	mu     sync.Mutex
	events []string
	paused bool
}

func (p *pausing) Pause(context.Context, string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events, p.paused = append(p.events, "pause"), true
	return nil
}

func (p *pausing) Resume(context.Context, string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events, p.paused = append(p.events, "resume"), false
	return nil
}

// Without a CPU cap, slow pauses and resumes the node in a duty cycle
// while it is held, and its stop (or the end phase) leaves it running.
func TestSlowIsAPauseDutyCycleWithoutACPUCap(t *testing.T) {
	p := &pausing{bare: newBare()}
	n, err := New([]string{"slow"}, p, opts())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := n.resolve(ctx, Step{Fault: "slow", Mode: "one", Seed: 5}, twoNodes)
	if err != nil {
		t.Fatal(err)
	}
	if a.detail["how"] != "pause-duty-cycle" {
		t.Fatalf("detail %v", a.detail)
	}
	if _, err := a.start(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3*dutyPeriod + dutyPeriod/2)
	if _, err := a.stop(ctx); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	ev, paused := slices.Clone(p.events), p.paused
	p.mu.Unlock()
	pauses := strings.Count(strings.Join(ev, " "), "pause")
	if pauses < 3 || pauses > 4 || paused || ev[0] != "pause" || ev[len(ev)-1] != "resume" {
		t.Fatalf("over 3.5 periods: %v (paused at the end: %v); want 3-4 pauses, each resumed", ev, paused)
	}
	// Held at the end of a run: the end phase stops the cycle.
	a, _ = n.resolve(ctx, Step{Fault: "slow", Mode: "one", Seed: 5}, twoNodes)
	a.start(ctx)
	time.Sleep(dutyPeriod)
	h := &healing{res: map[string]any{}, scheduled: map[string]bool{"slow": true}}
	n.bound["slow"].heal(ctx, h)
	p.mu.Lock()
	paused = p.paused
	p.mu.Unlock()
	if paused || h.res["unslowed"] == nil || len(h.errs) > 0 {
		t.Fatalf("after the end phase paused=%v, heal %v %v", paused, h.res, h.errs)
	}
}

// What the host cannot do is refused before the run, with the probe's
// reason (docker on a kernel without sch_netem: delay), and "all" leaves
// it out quietly; a target with neither a CPU cap nor pause cannot slow.
func TestProbedFaultsAreRefusedBeforeTheRun(t *testing.T) {
	s := &squeezing{bare: newBare(), probe: map[string]error{cluster.ProbeDelay: errors.New("this kernel has no sch_netem")}}
	if _, err := New([]string{"delay"}, s, opts()); !errHas(err, "delay", "netem", "this kernel has no sch_netem", "drop it from --nemesis") {
		t.Fatalf("delay without netem: %v", err)
	}
	n, err := New([]string{"all"}, s, opts())
	if err != nil || !slices.Equal(n.Faults(), []string{"migrate", "failover", "loss", "slow-link", "slow"}) {
		t.Fatalf("all where delay cannot be done = %v, %v", n.Faults(), err)
	}
	if _, err := New([]string{"slow"}, newBare(), opts()); !errHas(err, "slow", "cannot pause and resume nodes") {
		t.Fatalf("slow on a target that can neither cap CPU nor pause: %v", err)
	}
	hooked := Options{Interval: time.Second, Hooks: map[string]string{"pause": "true"}}
	if n, err := New([]string{"slow"}, newBare(), hooked); err != nil || n.bound["slow"].(*slowFault).pauser == nil {
		t.Fatalf("slow with a pause hook: %v", err)
	}
}

// probeAnswers is a runtime's Prober before any cluster exists.
type probeAnswers map[string]error

func (p probeAnswers) Probe(_ context.Context, kind string) error { return p[kind] }

// CheckHost answers for a runtime before a cluster starts, from the same
// registry: what a named fault needs of the host, and nothing for what
// needs none (or can do without: slow falls back on pausing).
func TestCheckHostBeforeAnyClusterStarts(t *testing.T) {
	ctx := context.Background()
	none := errors.New("this kernel has no sch_netem")
	bare := probeAnswers{cluster.ProbeDelay: none, cluster.ProbeOneWay: errors.New("no nf_tables"),
		cluster.ProbeThrottle: errors.New("no sch_tbf"), cluster.ProbeLoss: errors.New("no numgen"), cluster.ProbeCPU: errors.New("no CFS")}
	for names, want := range map[string]string{
		"kill,delay":            "sch_netem",
		"partition:one-way":     "no nf_tables",
		"slow-link":             "no sch_tbf",
		"loss:primary":          "no numgen",
		"partition,slow,kill":   "",
		"partition:isolate-one": "",
		"all":                   "",
		"none":                  "",
	} {
		err := CheckHost(ctx, strings.Split(names, ","), bare)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v, want no refusal", names, err)
		case want != "" && !errHas(err, want, "drop it from --nemesis"):
			t.Errorf("%s: %v, want a refusal naming %q", names, err, want)
		}
	}
	if err := CheckHost(ctx, []string{"delay", "loss", "slow-link", "partition:one-way-deaf"}, probeAnswers{}); err != nil {
		t.Errorf("a host that can: %v", err)
	}
}
