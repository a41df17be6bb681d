package checker

import (
	"slices"
	"testing"

	"github.com/redline-dev/redline/history"
)

type mop = []any

func app(k string, v int) mop    { return mop{"append", k, v} }
func rd(k string, vs ...int) mop { return mop{"r", k, append([]int{}, vs...)} }

// txn records a list-append transaction; reads in `done` carry results,
// the invocation gets the same micro-ops with null reads.
func (h *hist) txn(p int, t0, t1 int64, typ history.Type, done ...mop) {
	inv := make([]mop, len(done))
	for i, m := range done {
		inv[i] = m
		if m[0] == "r" {
			inv[i] = mop{"r", m[1], nil}
		}
	}
	var out any = done
	if typ != history.OK {
		out = nil
	}
	h.call(p, "txn", "", inv, t0, typ, out, t1)
}

func laCheck(t *testing.T, build func(h *hist)) ([]string, Result) {
	t.Helper()
	var h hist
	build(&h)
	r := check(t, ListAppend(), h.done())
	return fig[[]string](t, r, "anomaly_types"), r
}

func TestListAppendClean(t *testing.T) {
	got, r := laCheck(t, func(h *hist) {
		h.txn(0, 0, 10, history.OK, app("x", 1), rd("y"))
		h.txn(1, 20, 30, history.OK, rd("x", 1), app("x", 2), rd("x", 1, 2), app("y", 1))
		h.txn(2, 5, 15, history.Fail, app("x", 9))
		h.txn(3, 5, 15, history.Info, app("y", 7))
		h.txn(0, 40, 50, history.OK, rd("x", 1, 2), rd("y", 1))
	})
	wantValid(t, r, Valid)
	if len(got) != 0 {
		t.Fatalf("anomalies %v: %v", got, r.Values()["anomalies"])
	}
	if !slices.Contains(fig[[]string](t, r, "detects"), "G-single") {
		t.Fatal("detects does not list G-single")
	}
}

func TestListAppendAnomalies(t *testing.T) {
	cases := []struct {
		name  string
		want  string
		build func(h *hist)
	}{
		{"G0 write cycle", "G0", func(h *hist) {
			h.txn(0, 0, 10, history.OK, app("x", 1), app("y", 1))
			h.txn(1, 0, 10, history.OK, app("x", 2), app("y", 2))
			h.txn(2, 20, 30, history.OK, rd("x", 1, 2), rd("y", 2, 1))
		}},
		{"G1c wr cycle", "G1c", func(h *hist) {
			h.txn(0, 0, 10, history.OK, app("x", 1), rd("y", 1))
			h.txn(1, 0, 10, history.OK, app("y", 1), rd("x", 1))
		}},
		{"G-single", "G-single", func(h *hist) {
			h.txn(0, 0, 10, history.OK, rd("x"), rd("y", 1))
			h.txn(1, 0, 10, history.OK, app("x", 1), app("y", 1))
			h.txn(2, 20, 30, history.OK, rd("x", 1))
		}},
		{"G2 write skew", "G2", func(h *hist) {
			h.txn(0, 0, 10, history.OK, rd("x"), app("y", 1))
			h.txn(1, 0, 10, history.OK, rd("y"), app("x", 1))
			h.txn(2, 20, 30, history.OK, rd("x", 1), rd("y", 1))
		}},
		{"G1a aborted read", "G1a", func(h *hist) {
			h.txn(0, 0, 10, history.Fail, app("x", 1))
			h.txn(1, 20, 30, history.OK, rd("x", 1))
		}},
		{"G1b intermediate read", "G1b", func(h *hist) {
			h.txn(0, 0, 10, history.OK, app("x", 1), app("x", 2))
			h.txn(1, 5, 8, history.OK, rd("x", 1))
		}},
		{"internal", "internal", func(h *hist) {
			h.txn(0, 0, 10, history.OK, rd("x"), app("x", 1), rd("x"))
		}},
		{"incompatible order", "incompatible-order", func(h *hist) {
			h.txn(0, 0, 10, history.OK, app("x", 1))
			h.txn(1, 0, 10, history.OK, app("x", 2))
			h.txn(2, 20, 30, history.OK, rd("x", 1, 2))
			h.txn(3, 20, 30, history.OK, rd("x", 2, 1))
		}},
		{"stale read after commit", "G-single-realtime", func(h *hist) {
			h.txn(0, 0, 10, history.OK, app("x", 1))
			h.txn(1, 20, 30, history.OK, rd("x")) // began after the append committed
			h.txn(2, 40, 50, history.OK, rd("x", 1))
		}},
		{"read from the future", "G1c-realtime", func(h *hist) {
			h.txn(0, 0, 10, history.OK, rd("x", 1))
			h.txn(1, 20, 30, history.OK, app("x", 1))
		}},
		{"garbage read", "garbage-read", func(h *hist) {
			h.txn(0, 0, 10, history.OK, rd("x", 42))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, r := laCheck(t, tc.build)
			wantValid(t, r, Invalid)
			if !slices.Contains(got, tc.want) {
				t.Fatalf("anomalies %v, want %s: %v", got, tc.want, r.Values()["anomalies"])
			}
			ex := fig[map[string]any](t, r, "anomalies")[tc.want].(map[string]any)["examples"].([]any)
			if len(ex) == 0 {
				t.Fatal("no example")
			}
		})
	}
}

// The same stale read between concurrent transactions is serializable and
// strict serializable: no anomaly.
func TestListAppendConcurrentIsFine(t *testing.T) {
	got, r := laCheck(t, func(h *hist) {
		h.txn(0, 0, 30, history.OK, app("x", 1))
		h.txn(1, 20, 40, history.OK, rd("x"))
		h.txn(2, 50, 60, history.OK, rd("x", 1))
	})
	wantValid(t, r, Valid)
	if len(got) != 0 {
		t.Fatalf("anomalies %v", got)
	}
}

func TestRealtimeEdges(t *testing.T) {
	mk := func(s, e int64) laVertex {
		return laVertex{start: s, end: e, status: history.OK}
	}
	// a [0,10], b [5,15], c [20,30], d [25,35], e [40,50]
	txns := []laVertex{mk(0, 10), mk(5, 15), mk(20, 30), mk(25, 35), mk(40, 50)}
	out := realtimeEdges(txns)
	reach := func(a, b int) bool {
		seen := map[int]bool{}
		var walk func(int) bool
		walk = func(v int) bool {
			if v == b {
				return true
			}
			for _, w := range out[v] {
				if !seen[int(w)] {
					seen[int(w)] = true
					if walk(int(w)) {
						return true
					}
				}
			}
			return false
		}
		return walk(a)
	}
	for i, x := range txns {
		for j, y := range txns {
			if want := x.end < y.start; i != j && reach(i, j) != want {
				t.Errorf("%d -> %d: reachable %v, want %v", i, j, reach(i, j), want)
			}
		}
	}
}

func TestListAppendCycleExample(t *testing.T) {
	_, r := laCheck(t, func(h *hist) {
		h.txn(0, 0, 10, history.OK, rd("x"), app("y", 1))
		h.txn(1, 0, 10, history.OK, rd("y"), app("x", 1))
		h.txn(2, 20, 30, history.OK, rd("x", 1), rd("y", 1))
	})
	an := fig[map[string]any](t, r, "anomalies")
	if _, ok := an["G-single"]; ok {
		t.Fatalf("write skew misread as G-single: %v", an)
	}
	cyc := an["G2"].(map[string]any)["examples"].([]any)[0].([]any)
	if len(cyc) != 2 {
		t.Fatalf("cycle %v", cyc)
	}
	for _, s := range cyc {
		if s.(map[string]any)["edge"] != "rw" {
			t.Fatalf("cycle %v", cyc)
		}
	}
}

func TestBank(t *testing.T) {
	var h hist
	h.call(0, "init", "{t}", map[string]int{"{t}a": 50, "{t}b": 50}, 0, history.OK, nil, 1)
	h.call(0, "transfer", "{t}", map[string]any{"from": "{t}a", "to": "{t}b", "amount": 5}, 10, history.OK, nil, 20)
	h.call(1, "read-all", "{t}", nil, 30, history.OK, map[string]int{"{t}a": 45, "{t}b": 55}, 40)
	h.call(2, "transfer", "{t}", map[string]any{"from": "{t}b", "to": "{t}a", "amount": 5}, 50, history.Info, nil, 60)
	h.call(1, "read-all", "{t}", nil, 70, history.OK, map[string]int{"{t}a": 50, "{t}b": 50}, 80)
	ops := h.done()
	wantValid(t, check(t, Bank(0), ops), Valid)
	wantValid(t, check(t, Bank(100), ops), Valid)

	h.call(1, "read-all", "{t}", nil, 90, history.OK, map[string]int{"{t}a": 45, "{t}b": 50}, 95) // half a transfer
	r := check(t, Bank(0), h.done())
	wantValid(t, r, Invalid)
	if typed[*BankFigures](t, r).WrongTotal != 1 {
		t.Fatalf("figures %v", r.Figures)
	}
	// No total anywhere: unknown.
	var h2 hist
	h2.call(1, "read-all", "{t}", nil, 0, history.OK, map[string]int{"{t}a": 1}, 1)
	wantValid(t, check(t, Bank(0), h2.done()), Unknown)
}

func TestCrossSlot(t *testing.T) {
	var h hist
	h.call(0, "cross-slot", "a", nil, 0, history.Fail, nil, 1)
	h.withErr("CROSSSLOT Keys in request don't hash to the same slot")
	h.call(0, "cross-slot", "a", nil, 2, history.Fail, nil, 3)
	h.withErr("CLUSTERDOWN The cluster is down")
	r := check(t, CrossSlot(), h.done())
	wantValid(t, r, Valid)
	if typed[*CrossSlotFigures](t, r).RefusedCrossslot != 1 || typed[*CrossSlotFigures](t, r).OtherOutcome != 1 {
		t.Fatalf("figures %v", r.Figures)
	}
	h.call(0, "cross-slot", "a", nil, 4, history.OK, nil, 5)
	wantValid(t, check(t, CrossSlot(), h.done()), Invalid)
}

func TestParseTxnFastMatchesSlow(t *testing.T) {
	for _, s := range []string{
		`[]`,
		`[["append","k",1]]`,
		`[["append", "x", -7], ["r","y",null], ["r", "x", [1, 2,3]], ["r","z",[]]]`,
		` [ ["r","k",[5]] ] `,
		`[["append","k\"q",1]]`, // escape: slow path
		`[["r","k",[1.5]]]`,     // not an int: slow path error
		`[["append","k",1],]`,   // malformed
		`[["append",3,1]]`,      // numeric key
	} {
		slow, errSlow := slowTxn([]byte(s))
		fast, ok := fastTxn([]byte(s))
		if ok {
			if errSlow != nil {
				t.Errorf("%s: fast path accepted what encoding/json rejects: %v", s, errSlow)
				continue
			}
			if len(fast) != len(slow) {
				t.Errorf("%s: fast %v slow %v", s, fast, slow)
				continue
			}
			for i := range fast {
				if fast[i].append != slow[i].append || fast[i].k != slow[i].k || fast[i].v != slow[i].v ||
					fast[i].known != slow[i].known || !slices.Equal(fast[i].list, slow[i].list) {
					t.Errorf("%s: micro-op %d: fast %+v slow %+v", s, i, fast[i], slow[i])
				}
			}
		}
	}
	if _, ok := fastTxn([]byte(`[["append","k",1]]`)); !ok {
		t.Error("fast path refused the plain shape")
	}
}
