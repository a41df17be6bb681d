package checker

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/history"
)

func TestLinearizableClean(t *testing.T) {
	var h hist
	h.call(0, "read", "k", nil, 0, history.OK, nil, 5) // missing key
	h.call(0, "write", "k", 1, 10, history.OK, nil, 20)
	h.call(1, "read", "k", nil, 25, history.OK, 1, 30)
	h.call(0, "cas", "k", []int{1, 2}, 40, history.OK, nil, 50)
	h.call(1, "cas", "k", []int{1, 3}, 55, history.Fail, nil, 58)
	h.withErr("cas-mismatch")
	h.call(1, "read", "k", nil, 60, history.OK, 2, 70)
	// Concurrent write and read: either value is fine.
	h.call(0, "write", "k", 3, 80, history.OK, nil, 100)
	h.call(1, "read", "k", nil, 85, history.OK, 2, 90)
	h.call(1, "read", "k", nil, 91, history.OK, 3, 95)
	// A failed write certainly did not happen.
	h.call(2, "write", "k", 9, 101, history.Fail, nil, 102)
	h.withErr("CLUSTERDOWN")
	h.call(1, "read", "k", nil, 110, history.OK, 3, 120)
	r := check(t, Linearizable(), h.done())
	wantValid(t, r, Valid)
	if got := fig[[]string](t, r, "anomalous_keys"); len(got) != 0 {
		t.Fatalf("anomalous_keys = %v", got)
	}
	if fig[int](t, r, "ops") != 10 || fig[int](t, r, "keys") != 1 {
		t.Fatalf("figures %v", r.Figures)
	}
	if len(r.Files) != 0 {
		t.Fatalf("files for a valid history: %v", r.Files)
	}
}

func TestLinearizableIndeterminate(t *testing.T) {
	var h hist
	h.call(0, "write", "k", 1, 0, history.OK, nil, 10)
	// An info write may land any time after its call, even much later.
	h.call(1, "write", "k", 5, 20, history.Info, nil, 30)
	h.withErr("i/o timeout")
	h.call(0, "read", "k", nil, 40, history.OK, 1, 50)
	h.call(0, "read", "k", nil, 100, history.OK, 5, 110)
	// A write that never completed (history ended) is indeterminate too.
	h.call(2, "write", "k", 7, 120, 0, nil, 0)
	h.call(0, "read", "k", nil, 130, history.OK, 7, 140)
	// An indeterminate cas: took effect (7 -> 8) later.
	h.call(3, "cas", "k", []int{7, 8}, 150, history.Info, nil, 160)
	h.call(0, "read", "k", nil, 170, history.OK, 7, 180)
	h.call(0, "read", "k", nil, 190, history.OK, 8, 200)
	// An indeterminate read constrains nothing.
	h.call(4, "read", "k", nil, 210, history.Info, nil, 220)
	r := check(t, Linearizable(), h.done())
	wantValid(t, r, Valid)
	if fig[int](t, r, "indeterminate") != 3 {
		t.Fatalf("indeterminate = %v", r.Values()["indeterminate"])
	}
}

func TestLinearizableAnomalies(t *testing.T) {
	cases := map[string]func(h *hist){
		"read of a value never written": func(h *hist) {
			h.call(0, "write", "k", 1, 0, history.OK, nil, 10)
			h.call(1, "write", "k", 2, 0, history.Info, nil, 10)
			h.call(0, "read", "k", nil, 20, history.OK, 3, 30)
		},
		"stale read": func(h *hist) {
			h.call(0, "write", "k", 1, 0, history.OK, nil, 10)
			h.call(0, "write", "k", 2, 20, history.OK, nil, 30)
			h.call(1, "read", "k", nil, 40, history.OK, 1, 50)
		},
		"missing key after a write": func(h *hist) {
			h.call(0, "write", "k", 1, 0, history.OK, nil, 10)
			h.call(1, "read", "k", nil, 40, history.OK, nil, 50)
		},
		"cas mismatch that should have matched": func(h *hist) {
			h.call(0, "write", "k", 1, 0, history.OK, nil, 10)
			h.call(1, "cas", "k", []int{1, 2}, 20, history.Fail, nil, 30)
			h.withErr("cas-mismatch")
		},
		"cas ok on the wrong value": func(h *hist) {
			h.call(0, "write", "k", 1, 0, history.OK, nil, 10)
			h.call(1, "cas", "k", []int{4, 2}, 20, history.OK, nil, 30)
		},
		"indeterminate cas undone": func(h *hist) {
			h.call(0, "write", "k", 1, 0, history.OK, nil, 10)
			h.call(1, "cas", "k", []int{1, 2}, 20, history.Info, nil, 30)
			h.call(0, "read", "k", nil, 40, history.OK, 2, 50)
			h.call(0, "read", "k", nil, 60, history.OK, 1, 70)
		},
		"info write read before its call": func(h *hist) {
			h.call(0, "read", "k", nil, 0, history.OK, 5, 10)
			h.call(1, "write", "k", 5, 20, history.Info, nil, 30)
		},
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			var h hist
			// A clean second key must not be reported.
			h.call(7, "write", "other", 1, 0, history.OK, nil, 5)
			h.call(7, "read", "other", nil, 6, history.OK, 1, 8)
			build(&h)
			h.nemesis(1, "start-partition", "n1")
			h.nemesis(45, "stop-partition", "n1")
			r := check(t, Linearizable(), h.done())
			wantValid(t, r, Invalid)
			if got := fig[[]string](t, r, "anomalous_keys"); !slices.Equal(got, []string{"k"}) {
				t.Fatalf("anomalous_keys = %v", got)
			}
			page, ok := r.Files["linearizable/k.html"]
			if !ok || !bytes.Contains(page, []byte("<html")) {
				t.Fatalf("no visualization for k: %v", keysOf(r.Files))
			}
			if !bytes.Contains(page, []byte("partition")) {
				t.Fatalf("visualization lacks the nemesis annotation")
			}
			if !bytes.Contains(page, []byte("index ")) {
				t.Fatalf("visualization lacks the op metadata")
			}
		})
	}
}

func TestLinearizableStaleReadsFigure(t *testing.T) {
	var h hist
	h.call(0, "write", "k", 1, 0, history.OK, nil, 10)
	h.call(0, "write", "k", 2, 20, history.OK, nil, 30)
	h.call(1, "read", "k", nil, 40, history.OK, 1, 50) // stale
	h.call(3, "read", "k", nil, 25, history.OK, 1, 28) // concurrent with write 2: not stale
	h.call(2, "write", "j", 1, 0, history.Info, nil, 10)
	h.call(2, "write", "j", 2, 20, history.OK, nil, 30)
	h.call(4, "read", "j", nil, 40, history.OK, 1, 50) // info write of 1 may land late: not stale
	r := check(t, Linearizable(LinearizableOptions{NoVisualization: true}), h.done())
	wantValid(t, r, Invalid)
	if got := fig[int](t, r, "stale_reads"); got != 1 {
		t.Fatalf("stale_reads = %d, want 1", got)
	}
	if len(r.Files) != 0 {
		t.Fatal("visualization written although disabled")
	}
}

func TestLinearizableTimeoutIsUnknown(t *testing.T) {
	var h hist
	h.call(0, "write", "k", 1, 0, history.OK, nil, 10)
	h.call(1, "read", "k", nil, 20, history.OK, 1, 30)
	r := check(t, Linearizable(LinearizableOptions{Timeout: time.Nanosecond}), h.done())
	wantValid(t, r, Unknown)
	if got := fig[[]string](t, r, "unknown_keys"); !slices.Equal(got, []string{"k"}) {
		t.Fatalf("unknown_keys = %v", got)
	}
}

func TestLinearizableKeyPrefix(t *testing.T) {
	var h hist
	h.call(0, "write", "reg:1", 1, 0, history.OK, nil, 10)
	h.call(0, "read", "reg:1", nil, 20, history.OK, 1, 30)
	h.call(1, "read", "ctr:1", nil, 20, history.OK, 99, 30) // another workload's key
	r := check(t, Linearizable(LinearizableOptions{Scope: Scope{KeyPrefix: "reg:"}}), h.done())
	wantValid(t, r, Valid)
	if fig[int](t, r, "keys") != 1 {
		t.Fatalf("keys = %v", r.Values()["keys"])
	}
}

func keysOf[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func TestSafeFileName(t *testing.T) {
	if got := safeFileName("k-1.x_y"); got != "k-1.x_y" {
		t.Errorf("plain key changed: %q", got)
	}
	a, b := safeFileName("run:register:1"), safeFileName("run_register_1")
	if a == b || strings.ContainsAny(a, ":%/") {
		t.Errorf("%q vs %q", a, b)
	}
}
