package store

import (
	"testing"
	"time"
)

// NowMsAt extrapolates the wall clock from a monotonic reading: it must
// stay within a millisecond or two of time.Now across rebases, apply the
// offset, and read an injected time source as NowMs does.
func TestClockNowMsAt(t *testing.T) {
	mono := nanotime
	c := NewClock(nil)
	c.SetOffset(5000)
	for i := 0; i < 8; i++ {
		got := c.NowMsAt(mono())
		want := time.Now().UnixMilli() + 5000
		if d := want - got; d < -2 || d > 2 {
			t.Fatalf("round %d: NowMsAt = %d, time.Now gives %d", i, got, want)
		}
		time.Sleep(40 * time.Millisecond) // crosses rebaseEvery every few rounds
	}
	// A reading older than the base (another caller's, taken before a
	// rebase) is placed at its own instant.
	if got, want := c.NowMsAt(mono()-int64(time.Second)), time.Now().UnixMilli()+5000-1000; got-want < -2 || got-want > 2 {
		t.Fatalf("older reading: NowMsAt = %d, want %d", got, want)
	}
	fixed := time.UnixMilli(1_700_000_000_000)
	f := NewClock(func() time.Time { return fixed })
	if got := f.NowMsAt(mono()); got != fixed.UnixMilli() {
		t.Fatalf("injected clock: NowMsAt = %d, want %d", got, fixed.UnixMilli())
	}
}
