package workloads

import (
	"slices"
	"testing"

	"github.com/redline-dev/redline/history"
)

// Every workload places its keys on every primary by default (issue 10
// class 10): key i on primary i mod P, for every generation of keys.
func TestKeysPlacedOnEveryPrimary(t *testing.T) {
	ctx, c := localClient(t)
	prims := c.Addrs()
	slices.Sort(prims)
	if len(prims) != 3 {
		t.Fatalf("primaries %v", prims)
	}
	for _, name := range NamesOf(History) {
		w, err := New(name, Config{Prefix: "p:"})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Setup(ctx, c); err != nil {
			t.Fatal(err)
		}
		// Keys of the ops of a few thousand generated ops, and the final
		// reads (every generation used).
		held := map[string]map[string]bool{}
		note := func(op history.Op) {
			keys := []string{op.Key}
			if op.F == "txn" {
				var mops [][]any
				_ = op.DecodeValue(&mops)
				keys = keys[:0]
				for _, m := range mops {
					keys = append(keys, m[1].(string))
				}
			}
			for _, k := range keys {
				p := c.Primary(Keyslot(k))
				if held[p] == nil {
					held[p] = map[string]bool{}
				}
				held[p][k] = true
			}
		}
		g := w.Generator(0, 1)
		for range 3000 {
			if op := g.Next(); op.F != "cross-slot" {
				note(op)
			}
		}
		for _, op := range w.FinalOps() {
			note(op)
		}
		for _, p := range prims {
			if len(held[p]) == 0 {
				t.Errorf("%s: no key on primary %s (%v)", name, p, held)
			}
		}
	}
	// Exactly: key i on primary i mod P, in every generation.
	cw, _ := New("counter", Config{Prefix: "p:"})
	sw, _ := New("set", Config{Prefix: "p:"})
	for _, w := range []Workload{cw, sw} {
		if err := w.Setup(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	for i := range counterKeys {
		for _, k := range []string{cw.(*counter).key(i), sw.(*set).key(0, i), sw.(*set).key(7, i)} {
			if got := c.Primary(Keyslot(k)); got != prims[i%len(prims)] {
				t.Errorf("key %s on %s, want %s", k, got, prims[i%len(prims)])
			}
		}
	}
}

func TestKeyCountCoversPrimaries(t *testing.T) {
	if keyCount(0, 5, 8) != 8 || keyCount(0, 5, 3) != 5 || keyCount(2, 5, 8) != 2 {
		t.Fatal("keyCount: the default rises to one key per primary; a chosen count stays")
	}
}

// fakeSlots is a slot map that a test can change, as a migration does.
type fakeSlots struct{ owner func(slot int) string }

func (f *fakeSlots) Addrs() []string {
	seen := map[string]bool{}
	var out []string
	for s := range 16384 {
		if a := f.owner(s); !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

func (f *fakeSlots) Primary(slot int) string { return f.owner(slot) }

// After slots move, a new generation of keys is placed on the new map
// (rotating workloads keep every primary holding its share); fixed keys
// keep their place.
func TestPlacementFollowsMigrations(t *testing.T) {
	m := &fakeSlots{owner: func(s int) string { return []string{"a", "b", "c"}[s*3/16384] }}
	w, _ := New("set", Config{Prefix: "p:"})
	sw := w.(*set)
	sw.keys = 3
	if err := sw.place.place(m, 3); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"a", "b", "c"} {
		if got := m.Primary(Keyslot(sw.key(0, i))); got != want {
			t.Fatalf("gen 0 key %d on %s, want %s", i, got, want)
		}
	}
	// Primary c takes over every slot of b but its first 100; a fourth
	// primary d appears at the end of the range.
	m.owner = func(s int) string {
		switch {
		case s < 16384/3:
			return "a"
		case s < 16384/3+100:
			return "b"
		case s < 16000:
			return "c"
		}
		return "d"
	}
	for i, want := range []string{"a", "b", "c"} {
		if got := m.Primary(Keyslot(sw.key(1, i))); got != want {
			t.Errorf("gen 1 key %d on %s, want %s", i, got, want)
		}
	}
	if sw.place.tag(0, 0) != sw.place.tag(1, 0) || sw.place.tag(1, 2) != sw.place.tag(2, 2) {
		t.Error("a tag that still lands on its primary is kept")
	}
}
