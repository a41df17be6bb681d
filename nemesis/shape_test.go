package nemesis

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
)

// shaping is an external-like cluster that can also shape packets (as the
// kubernetes runtime with Chaos Mesh does); it records each call.
type shaping struct {
	bare
	mu    sync.Mutex
	calls []string
}

func (s *shaping) Delay(_ context.Context, node string, latency, jitter time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, fmt.Sprintf("delay %s %s %s", node, latency, jitter))
	return nil
}

func (s *shaping) Loss(_ context.Context, node string, percent int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, fmt.Sprintf("loss %s %d", node, percent))
	return nil
}

func (s *shaping) took() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// A target without a Shaper (docker's nodes, an external cluster, a
// kubernetes cluster without Chaos Mesh) cannot delay or drop packets and
// says what it lacks: asking for either is an error, "all" leaves them
// out. (Which runtimes can is cmd's to say, from the runtimes' own
// capabilities, before anything starts.)
func TestDelayAndLossNeedAShaper(t *testing.T) {
	for f, words := range map[string]string{"delay": "cannot delay the packets a node sends", "loss": "cannot drop a share of the packets a node sends"} {
		if _, err := New([]string{f}, newBare(), opts()); !errHas(err, f, "external", words, "drop it from --nemesis") {
			t.Errorf("%s on a target without a Shaper: %v", f, err)
		}
	}
	s := &shaping{bare: newBare()}
	n, err := New([]string{"all"}, s, opts())
	if err != nil || !slices.Equal(n.Faults(), []string{"migrate", "failover", "delay", "loss"}) {
		t.Fatalf("all on a shaping target = %v, %v; want migrate, failover, delay, loss", n.Faults(), err)
	}
}

// A delay or loss step hits one node with seeded figures, its stop
// removes them (zero), and the end phase removes what a step still holds.
func TestDelayAndLossStartStopAndHeal(t *testing.T) {
	s := &shaping{bare: newBare()}
	n, err := New([]string{"delay", "loss"}, s, opts())
	if err != nil {
		t.Fatal(err)
	}
	topo := &clusteradmin.Topology{Members: []clusteradmin.NodeState{
		{Node: cluster.Node{Name: "n1"}, Primary: true, Slots: []int{0}},
		{Node: cluster.Node{Name: "n2"}, MasterID: "x"},
	}}
	ctx := context.Background()
	for _, f := range []string{"delay", "loss"} {
		st := Step{Fault: f, Mode: "primary", Seed: 7}
		a, err := n.resolve(ctx, st, topo)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.nodes, []string{"n1"}) {
			t.Fatalf("%s:primary struck %v, want the primary n1", f, a.nodes)
		}
		if _, err := a.start(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := a.stop(ctx); err != nil {
			t.Fatal(err)
		}
		// The same step's figures again, left in force for the end phase.
		a, _ = n.resolve(ctx, st, topo)
		if _, err := a.start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	h := &healing{res: map[string]any{}, scheduled: map[string]bool{"delay": true, "loss": true}}
	n.bound["delay"].heal(ctx, h)
	n.bound["loss"].heal(ctx, h)
	calls := s.took()
	if len(calls) != 8 {
		t.Fatalf("calls = %q, want 8", calls)
	}
	d, l := calls[0], calls[3]
	var pct int
	fs := strings.Fields(d)
	lat, err1 := time.ParseDuration(fs[len(fs)-2])
	jit, err2 := time.ParseDuration(fs[len(fs)-1])
	if err1 != nil || err2 != nil || fs[1] != "n1" || lat < 20*time.Millisecond || lat > 400*time.Millisecond || jit != lat/10 {
		t.Errorf("delay call %q: want 20-400ms with a tenth of it as jitter", d)
	}
	if _, err := fmt.Sscanf(l, "loss n1 %d", &pct); err != nil || pct < 5 || pct > 50 {
		t.Errorf("loss call %q: want 5-50%%", l)
	}
	// Start, stop, start again of each; then the heal's removals in
	// registry order.
	if want := []string{d, "delay n1 0s 0s", d, l, "loss n1 0", l, "delay n1 0s 0s", "loss n1 0"}; !slices.Equal(calls, want) {
		t.Errorf("calls = %q\nwant    %q", calls, want)
	}
	if h.res["undelayed"] == nil || h.res["loss_removed"] == nil || len(h.errs) > 0 {
		t.Errorf("heal reported %v, errors %v", h.res, h.errs)
	}
}
