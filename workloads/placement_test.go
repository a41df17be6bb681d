package workloads

import (
	"slices"
	"testing"

	"github.com/redline-dev/redline/harness/history"
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
	for _, name := range Names() {
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
