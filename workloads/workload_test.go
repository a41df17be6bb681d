package workloads

import (
	"slices"
	"strings"
	"testing"
)

// Same seed and worker, same ops; another seed, other ops.
func TestGeneratorsAreSeeded(t *testing.T) {
	for _, name := range NamesOf(History) {
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

func TestUnknownWorkload(t *testing.T) {
	if _, err := New("nosuch", Config{}); err == nil || !strings.Contains(err.Error(), "register") {
		t.Fatalf("error should list the known workloads: %v", err)
	}
}

// Each workload brings its checkers, filtered by its key prefix and named
// "<workload>/<aspect>" when several share a run.
func TestWorkloadCheckers(t *testing.T) {
	want := map[string][]string{
		"register": {"linearizable", "perf", "rto", "write-pause", "handoff"},
		"counter":  {"counter", "rpo", "default-failover", "wait-probe", "perf", "rto", "write-pause", "handoff"},
		"set":      {"set", "rpo", "default-failover", "wait-probe", "perf", "rto", "write-pause", "handoff"},
		"txn":      {"bank", "list-append", "cross-slot", "rpo", "default-failover", "perf", "rto", "write-pause", "handoff"},
		"lock":     {"lock", "perf", "rto", "write-pause", "handoff"},
		"queue":    {"queue", "perf", "rto", "write-pause", "handoff"},
		"ttl":      {"ttl", "perf", "rto", "write-pause", "handoff"},
	}
	for w, names := range want {
		cs, err := Checkers(w, Config{Prefix: "p:"}, CheckOptions{}, false)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range cs {
			got = append(got, c.Name())
		}
		if !slices.Equal(got, names) {
			t.Errorf("%s: %v, want %v", w, got, names)
		}
	}
	cs, _ := Checkers("set", Config{Prefix: "p:"}, CheckOptions{Name: "set"}, false)
	if cs[1].Name() != "set/rpo" {
		t.Errorf("prefixed name %q", cs[1].Name())
	}
	if cs, _ := Checkers("set", Config{}, CheckOptions{}, true); len(cs) != 4 || cs[0].Name() != "perf" {
		t.Errorf("measures %v", cs)
	}
	if _, err := Checkers("nope", Config{}, CheckOptions{}, false); err == nil {
		t.Error("unknown workload accepted")
	}
	// The checkers see only the workload's keys.
	w, _ := New("counter", Config{Prefix: "p:"})
	if w.KeyPrefix() != "p:counter:" {
		t.Errorf("key prefix %q", w.KeyPrefix())
	}
}

// kv is in the one registry as the Load workload: listed with the others,
// carried by the load driver (no Workload value, no checkers of a
// history), and every other workload is a History one.
func TestKindsInTheRegistry(t *testing.T) {
	if k, err := KindOf("kv"); err != nil || k != Load {
		t.Fatalf("kv: kind %v, %v", k, err)
	}
	if !slices.Contains(Names(), "kv") || !slices.Equal(NamesOf(Load), []string{"kv"}) {
		t.Fatalf("names %v, load %v", Names(), NamesOf(Load))
	}
	if _, err := New("kv", Config{}); err == nil || !strings.Contains(err.Error(), "redline bench") {
		t.Fatalf("New(kv): %v", err)
	}
	if cs, err := Checkers("kv", Config{}, CheckOptions{}, false); err != nil || len(cs) != 0 {
		t.Fatalf("Checkers(kv): %d, %v", len(cs), err)
	}
	for _, n := range NamesOf(History) {
		if _, err := New(n, Config{}); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	if _, err := KindOf("nosuch"); err == nil {
		t.Fatal("KindOf(nosuch): no error")
	}
}
