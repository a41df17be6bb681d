package cluster

import (
	"context"
	"slices"
	"testing"
	"time"
)

type killShaper struct{}

func (*killShaper) Nodes() []Node                                                     { return nil }
func (*killShaper) Close(context.Context) error                                       { return nil }
func (*killShaper) Kill(context.Context, string) error                                { return nil }
func (*killShaper) Restart(context.Context, string) error                             { return nil }
func (*killShaper) Delay(context.Context, string, time.Duration, time.Duration) error { return nil }
func (*killShaper) Loss(context.Context, string, int) error                           { return nil }

// A runtime's capabilities are its cluster type's methods, read off a
// typed nil before any cluster exists.
func TestCapabilitiesOfATypedNil(t *testing.T) {
	got := CapabilitiesOf((*killShaper)(nil))
	// A Shaper is a Delayer and a Dropper: it offers those two as well.
	if want := []Capability{CanKill, CanShape, CanDelay, CanDrop}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := CapabilitiesOf(struct{}{}); len(got) != 0 {
		t.Errorf("a type without fault methods: %v", got)
	}
}
