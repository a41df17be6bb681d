package nemesis

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/redline-dev/redline/cluster"
)

// A runtime that cannot cause a fault is found out before any cluster
// exists: the fault's own capability, or the one a mode borrows; a hook
// stands in for a hookable fault; "all" is never refused.
func TestUnsupported(t *testing.T) {
	docker := []cluster.Capability{cluster.CanKill, cluster.CanPause, cluster.CanPartition, cluster.CanClock, cluster.CanGrow}
	for _, c := range []struct {
		names []string
		caps  []cluster.Capability
		hooks []string
		want  []Unmet
	}{
		{[]string{"partition", "kill", "migrate", "failover", "all"}, docker, nil, nil},
		{[]string{"delay"}, docker, nil, []Unmet{{"delay", "delay", cluster.CanDelay, false}}},
		{[]string{"kill", "loss:primary"}, docker, nil, []Unmet{{"loss:primary", "loss", cluster.CanDrop, false}}},
		{[]string{"kill", "migrate", "failover", "all"}, nil, nil, []Unmet{{"kill", "kill", cluster.CanKill, true}}},
		{[]string{"kill"}, nil, []string{"kill"}, nil},
		{[]string{"member"}, nil, []string{"member"}, []Unmet{{"member", "member", cluster.CanGrow, false}}},
		{[]string{"migrate:atomic-kill-src"}, nil, nil, []Unmet{{"migrate:atomic-kill-src", "kill", cluster.CanKill, true}}},
		{[]string{"migrate:atomic-kill-src"}, nil, []string{"kill"}, nil},
		{[]string{"migrate:classic-partition", "failover:takeover-killed"}, []cluster.Capability{cluster.CanKill}, nil,
			[]Unmet{{"migrate:classic-partition", "partition", cluster.CanPartition, true}}},
		{[]string{"migrate:atomic-failover-dst", "migrate:slot"}, nil, nil, nil},
	} {
		if got := Unsupported(c.names, c.caps, c.hooks); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v on %v hooks %v: got %+v, want %+v", c.names, c.caps, c.hooks, got, c.want)
		}
	}
	if got := (Unmet{"migrate:atomic-kill-src", "kill", cluster.CanKill, true}).Words(); got != "cannot kill and restart nodes (the mode strikes with kill)" {
		t.Errorf("words: %q", got)
	}
}

// needs() agrees with what bind asks of the cluster: a cluster offering
// exactly one capability binds exactly the faults that need it (or
// nothing), so a runtime's capability list never promises what bind
// refuses, nor refuses what bind accepts.
func TestNeedsAgreesWithBind(t *testing.T) {
	for _, c := range []struct {
		cap cluster.Capability
		cl  cluster.Cluster
	}{
		{"", bare{}}, {cluster.CanKill, killer{}}, {cluster.CanPause, pauser{}}, {cluster.CanPartition, parter{}},
		{cluster.CanClock, clocker{}}, {cluster.CanShape, shaper{}}, {cluster.CanGrow, grower{}},
	} {
		got := cluster.CapabilitiesOf(c.cl)
		if c.cap != "" && (len(got) != 1 || got[0] != c.cap) && !slices.Contains(got, c.cap) {
			t.Fatalf("fake for %s offers %v", c.cap, got)
		}
		for _, mk := range registry {
			f := mk()
			e := &env{c: c.cl, bound: map[string]fault{}}
			err := f.bind(e, nil, false)
			want := f.needs() == "" || slices.Contains(got, f.needs())
			if (err == nil) != want {
				t.Errorf("%s on a cluster offering %q: bind error %v, but needs() is %q", f.name(), c.cap, err, f.needs())
			}
		}
	}
}

type killer struct{ bare }

func (killer) Kill(context.Context, string) error    { return nil }
func (killer) Restart(context.Context, string) error { return nil }

type pauser struct{ bare }

func (pauser) Pause(context.Context, string) error  { return nil }
func (pauser) Resume(context.Context, string) error { return nil }

type parter struct{ bare }

func (parter) Cut(context.Context, string, []string, bool) error { return nil }
func (parter) Heal(context.Context) error                        { return nil }

type clocker struct{ bare }

func (clocker) SetClockOffset(context.Context, string, time.Duration) error { return nil }

type shaper struct{ bare }

func (shaper) Delay(context.Context, string, time.Duration, time.Duration) error { return nil }
func (shaper) Loss(context.Context, string, int) error                           { return nil }

type grower struct{ bare }

func (grower) AddNode(context.Context) (cluster.Node, error) { return cluster.Node{}, nil }
func (grower) RemoveNode(context.Context, string) error      { return nil }
