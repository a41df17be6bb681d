package workloads

import (
	"strings"
	"testing"
)

// Same seed and worker, same ops; another seed, other ops.
func TestGeneratorsAreSeeded(t *testing.T) {
	for _, name := range Names() {
		seq := func(seed int64, worker int) string {
			w, err := New(name, Config{Prefix: "p:"})
			if err != nil {
				t.Fatal(err)
			}
			g := w.Generator(worker, seed)
			var b strings.Builder
			for i := 0; i < 300; i++ {
				op := g.Next()
				b.WriteString(op.F + " " + op.Key + " " + string(op.Value) + "\n")
				if !w.Owns(&op) {
					t.Fatalf("%s: op on key %q it does not own", name, op.Key)
				}
			}
			return b.String()
		}
		if seq(1, 0) != seq(1, 0) {
			t.Errorf("%s: same seed gave different ops", name)
		}
		if seq(1, 0) == seq(2, 0) || seq(1, 0) == seq(1, 1) {
			t.Errorf("%s: different seeds or workers gave the same ops", name)
		}
	}
}

func TestKeyslot(t *testing.T) {
	for key, want := range map[string]int{
		"foo": 12182, "123456789": 12739, "{user1000}.following": Keyslot("{user1000}.followers"),
		"foo{}{bar}": Keyslot("foo{}{bar}"), "foo{{bar}}": Keyslot("{bar"), "a{b}c": Keyslot("b"),
	} {
		if got := Keyslot(key); got != want {
			t.Errorf("Keyslot(%q) = %d, want %d", key, got, want)
		}
	}
	if Keyslot("foo{}{bar}") == Keyslot("bar") {
		t.Error("an empty tag must hash the whole key")
	}
}

func TestUnknownWorkload(t *testing.T) {
	if _, err := New("nosuch", Config{}); err == nil || !strings.Contains(err.Error(), "register") {
		t.Fatalf("error should list the known workloads: %v", err)
	}
}
