package ttl

import (
	"github.com/redline-dev/redline/checker/checkertest"
	"strings"
	"testing"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

// ttlH builds ttl histories: times in ms; every op on node A unless set.
type ttlH struct {
	checkertest.Hist
	field string
	node  string
}

func (h *ttlH) n() string {
	if h.node == "" {
		return "A"
	}
	return h.node
}

func (h *ttlH) set(p int, key, val string, ttl, t0 int64, typ history.Type, t1 int64) *ttlH {
	in := map[string]any{"value": val, "ttl_ms": ttl}
	if h.field != "" {
		in["field"] = h.field
	}
	if c := h.Call(p, "set", key, in, t0, typ, in, t1); c != nil {
		c.Node = h.n()
	}
	return h
}

func (h *ttlH) cmd(p int, f, key string, ttl, t0 int64, typ history.Type, reply int64, t1 int64) *ttlH {
	in := map[string]any{}
	if ttl > 0 {
		in["ttl_ms"] = ttl
	}
	if h.field != "" {
		in["field"] = h.field
	}
	out := map[string]any{"reply": reply}
	for k, v := range in {
		out[k] = v
	}
	if c := h.Call(p, f, key, in, t0, typ, out, t1); c != nil {
		c.Node = h.n()
	}
	return h
}

// read: got "" means no key (pttl must be -2 for a consistent read).
func (h *ttlH) read(p int, f, key string, t0 int64, got string, pttl int64, t1 int64) *ttlH {
	in := map[string]any{}
	if h.field != "" {
		in["field"] = h.field
	}
	out := map[string]any{"pttl": pttl}
	if got != "" {
		out["got"] = got
	}
	if c := h.Call(p, f, key, in, t0, history.OK, out, t1); c != nil {
		c.Node = h.n()
	}
	return h
}

// base: v1 set with ttl 100 ms at 0-1, read at 10-11 with 90 ms left.
func ttlBase() *ttlH {
	h := &ttlH{}
	h.set(0, "k", "v1", 100, 0, history.OK, 1)
	h.read(0, "read", "k", 10, "v1", 90, 11)
	return h
}

func TestTTLValid(t *testing.T) {
	h := ttlBase()
	h.read(0, "read", "k", 120, "", -2, 121) // expired at 100-101
	h.set(0, "k", "v2", 0, 130, history.OK, 131)
	h.read(0, "read", "k", 140, "v2", -1, 141)
	h.cmd(0, "pexpire", "k", 50, 150, history.OK, 1, 151)
	h.read(0, "read", "k", 160, "v2", 40, 161)
	h.cmd(0, "persist", "k", 0, 170, history.OK, 1, 171)
	h.read(0, "read", "k", 500, "v2", -1, 501)
	h.read(9, "final", "k", 600, "v2", -1, 601)
	r := checkertest.Check(t, Checker(), h.Done())
	checkertest.WantValid(t, r, checker.Valid)
	if checkertest.Fig[int](t, r, "pairs_judged") < 6 || !strings.Contains(r.Why(), "not applicable") {
		t.Fatalf("figures %v", r.Figures)
	}
}

func TestTTLAnomalies(t *testing.T) {
	cases := map[string]*ttlH{
		"read-after-deadline": ttlBase().read(0, "read", "k", 120, "v1", 0, 121),
		"expired-early":       ttlBase().read(0, "read", "k", 50, "", -2, 51),
		"ttl-grew":            ttlBase().read(0, "read", "k", 20, "v1", 500, 21),
		"value-changed":       ttlBase().read(0, "read", "k", 20, "v0", 70, 21).set(1, "k", "v0", 0, 0, history.Info, 0),
		"resurrected":         ttlBase().read(0, "read", "k", 120, "", -2, 121).read(0, "read", "k", 130, "v1", 10, 131),
		"gone-after-persist": ttlBase().cmd(0, "persist", "k", 0, 20, history.OK, 1, 21).
			read(0, "read", "k", 500, "", -2, 501),
		"gone-without-expiry": (&ttlH{}).set(0, "k", "v1", 0, 0, history.OK, 1).read(0, "read", "k", 10, "", -2, 11),
		"unexpected":          ttlBase().read(0, "read", "k", 20, "zzz", 70, 21),
	}
	// ttl-grew: the expiry vanished without a PERSIST.
	cases["ttl-grew (no expiry)"] = ttlBase().read(0, "read", "k", 20, "v1", -1, 21)
	for name, h := range cases {
		r := checkertest.Check(t, Checker(), h.Done())
		class, _, _ := strings.Cut(name, " ")
		if r.Valid != checker.Invalid || checkertest.Fig[map[string]any](t, r, "anomalies")[class] == nil {
			t.Errorf("%s: %v %v", name, r.Valid, r.Figures)
		}
	}
	// The value-changed case's set of v0 was indeterminate and began at 0:
	// it may have landed after the first read; the lie is elsewhere. A
	// value never written at all is unexpected there.
}

// Within the invoke-completion window and the clock slack: valid.
func TestTTLWindowAndSlack(t *testing.T) {
	h := &ttlH{}
	h.set(0, "k", "v1", 100, 0, history.OK, 30) // expiry in [100, 130]
	h.read(0, "read", "k", 133, "v1", 0, 134)   // 3 ms past 130: within the 5 ms slack
	checkertest.WantValid(t, checkertest.Check(t, Checker(), h.Done()), checker.Valid)
	h = &ttlH{}
	h.set(0, "k", "v1", 100, 0, history.OK, 30)
	h.read(0, "read", "k", 137, "v1", 0, 138) // 7 ms past: broken
	checkertest.WantValid(t, checkertest.Check(t, Checker(), h.Done()), checker.Invalid)
	h = &ttlH{}
	h.set(0, "k", "v1", 100, 0, history.OK, 30)
	h.read(0, "read", "k", 60, "", -2, 96) // gone 4 ms before 100: within the slack
	checkertest.WantValid(t, checkertest.Check(t, Checker(), h.Done()), checker.Valid)
}

// A write that may have run between two observations: not judged.
func TestTTLConcurrentWriteIsNotJudged(t *testing.T) {
	h := ttlBase()
	h.cmd(1, "pexpire", "k", 5000, 50, 0, 0, 0) // never completed: may land any time
	h.read(0, "read", "k", 120, "v1", 4000, 121)
	r := checkertest.Check(t, Checker(), h.Done())
	checkertest.WantValid(t, r, checker.Valid)
	if checkertest.Fig[int](t, r, "pairs_skipped_concurrent_write") != 1 {
		t.Fatalf("figures %v", r.Figures)
	}
	// Only a write with nothing else judged: unknown.
	h = &ttlH{}
	h.set(0, "k", "v1", 100, 0, history.Info, 0)
	h.read(1, "read", "k", 10, "v1", 90, 11)
	checkertest.WantValid(t, checkertest.Check(t, Checker(), h.Done()), checker.Unknown)
}

// Classification: a clock fault in between, a failover to another node,
// a power cut of a node that served them, or nothing.
func TestTTLClassification(t *testing.T) {
	build := func(fault string, node2 string) checker.Result {
		h := ttlBase()
		if fault != "" {
			h.Nemesis(40, "start-"+fault, "A")
			h.Nemesis(60, "stop-"+fault, "A")
		}
		h.node = node2
		h.read(0, "read", "k", 120, "v1", 10, 121)
		return checkertest.Check(t, Checker(), h.Done())
	}
	// A clock fault on a node that served neither observation explains nothing.
	h := ttlBase()
	h.Nemesis(40, "start-clock", "C")
	h.Nemesis(60, "stop-clock", "C")
	h.read(0, "read", "k", 120, "v1", 10, 121)
	if r := checkertest.Check(t, Checker(), h.Done()); r.Valid != checker.Invalid || checkertest.Fig[int](t, r, "anomalies_unexplained") != 1 {
		t.Errorf("clock on another node: %v %v", r.Valid, r.Figures)
	}
	for _, c := range []struct {
		fault, node, figure string
	}{{"clock", "A", "anomalies_clock"}, {"kill", "B", "anomalies_after_failover"}, {"kill", "A", "anomalies_after_failover"}, {"", "B", "anomalies_unexplained"},
		// A power cut of the node that served both: it lost what it had
		// not fsynced (documented); a kill of it loses nothing.
		{"power", "A", "anomalies_after_power_loss"}} {
		r := build(c.fault, c.node)
		if r.Valid != checker.Invalid || checkertest.Fig[int](t, r, c.figure) != 1 {
			t.Errorf("%+v: %v %v", c, r.Valid, r.Figures)
		}
	}
}

// Hash fields are judged like keys, per field; the probe says when the
// server lacks them.
func TestTTLHashFields(t *testing.T) {
	h := &ttlH{field: "f"}
	h.set(0, "h", "v1", 100, 0, history.OK, 1)
	h.read(0, "read", "h", 120, "v1", 0, 121)
	r := checkertest.Check(t, Checker(), h.Done())
	if r.Valid != checker.Invalid || r.Values()["anomalies"].(map[string]any)["read-after-deadline"] == nil {
		t.Fatalf("%v %v", r.Valid, r.Figures)
	}
	probe := func(h *ttlH, has bool) *ttlH {
		out := map[string]any{"hash_field_expiry": has}
		if !has {
			out["missing"] = []string{"HPEXPIRE", "HPERSIST", "HPTTL"}
		}
		h.Call(50, "probe", "k", nil, 0, history.OK, out, 0)
		return h
	}
	r = checkertest.Check(t, Checker(), probe(ttlBase(), false).Done())
	checkertest.WantValid(t, r, checker.Valid)
	if !strings.HasPrefix(r.Values()["hash_field_expiry"].(string), "not applicable") || !strings.Contains(r.Why(), "HPEXPIRE") {
		t.Fatalf("figures %v", r.Figures)
	}
	// Hash-field ops although the probe found none: a contradiction.
	h = probe(&ttlH{field: "f"}, false)
	h.set(0, "h", "v1", 100, 0, history.OK, 1).read(0, "read", "h", 10, "v1", 90, 11)
	checkertest.WantValid(t, checkertest.Check(t, Checker(), h.Done()), checker.Unknown)
}

// Every lie is invalid or unknown, never valid.
func TestTTLLiesAreNeverValid(t *testing.T) {
	raw := func(f string, in, out any) *ttlH {
		h := ttlBase()
		h.Call(5, f, "k", in, 30, history.OK, out, 31)
		return h
	}
	cases := map[string]struct {
		h    *ttlH
		want checker.Validity
	}{
		"read without a pttl":           {raw("read", nil, map[string]any{"got": "v1"}), checker.Invalid},
		"a value beside pttl -2":        {raw("read", nil, map[string]any{"got": "v1", "pttl": -2}), checker.Invalid},
		"no value beside pttl 50":       {raw("read", nil, map[string]any{"pttl": 50}), checker.Invalid},
		"pttl -7":                       {raw("read", nil, map[string]any{"pttl": -7}), checker.Invalid},
		"read reply not an object":      {raw("read", nil, "abc"), checker.Invalid},
		"pexpire reply 5":               {raw("pexpire", map[string]any{"ttl_ms": 10}, map[string]any{"reply": 5}), checker.Invalid},
		"persist reply missing":         {raw("persist", nil, map[string]any{}), checker.Invalid},
		"value of a failed set":         {ttlBase().set(1, "k", "vf", 0, 20, history.Fail, 21).read(0, "read", "k", 30, "vf", -1, 31), checker.Invalid},
		"value read before its set":     {ttlBase().read(0, "read", "k", 20, "v9", -1, 21).set(1, "k", "v9", 0, 30, history.OK, 31), checker.Invalid},
		"probe garbage":                 {func() *ttlH { h := ttlBase(); h.Call(50, "probe", "k", nil, 0, history.OK, "yes", 0); return h }(), checker.Invalid},
		"set without a value":           {raw("set", map[string]any{"ttl_ms": 5}, nil), checker.Unknown},
		"value set twice":               {ttlBase().set(1, "k", "v1", 0, 20, history.OK, 21), checker.Unknown},
		"pexpire ttl 0":                 {raw("pexpire", map[string]any{"ttl_ms": 0}, map[string]any{"reply": 1}), checker.Unknown},
		"an op after the final":         {ttlBase().read(9, "final", "k", 40, "v1", 60, 41).read(0, "read", "k", 50, "v1", 50, 51), checker.Unknown},
		"another op":                    {raw("incr", map[string]any{}, nil), checker.Unknown},
		"set invocation not an object":  {raw("set", "abc", nil), checker.Unknown},
		"completion before invocation":  {ttlBase().read(0, "read", "k", 50, "v1", 50, 40), checker.Unknown},
		"only writes, nothing observed": {(&ttlH{}).set(0, "k", "v1", 100, 0, history.Info, 0), checker.Unknown},
	}
	for name, c := range cases {
		r := checkertest.Check(t, Checker(), c.h.Done())
		if r.Valid != c.want {
			t.Errorf("%s: %v, want %v; %v", name, r.Valid, c.want, r.Figures)
		}
		if r.Valid != checker.Valid && r.Why() == "" {
			t.Errorf("%s: no why", name)
		}
	}
}

func TestTTLBrokenHistoriesAreNeverValid(t *testing.T) {
	ops := ttlBase().read(0, "read", "k", 120, "", -2, 121).Done()
	if r := checkertest.Check(t, Checker(), ops); r.Valid != checker.Valid {
		t.Fatalf("the base history: %v %v", r.Valid, r.Figures)
	}
	dup := append([]history.Op(nil), ops...)
	dup[2].Index = dup[0].Index
	if r := checkertest.Check(t, Checker(), dup); r.Valid == checker.Valid {
		t.Errorf("duplicated index: %v", r.Figures)
	}
	twice := append(append([]history.Op(nil), ops...), ops[len(ops)-1])
	if r := checkertest.Check(t, Checker(), twice); r.Valid == checker.Valid {
		t.Errorf("duplicated completion: %v", r.Figures)
	}
	swapped := append([]history.Op(nil), ops...)
	swapped[0], swapped[1] = swapped[1], swapped[0]
	if r := checkertest.Check(t, Checker(), swapped); r.Valid == checker.Valid {
		t.Errorf("swapped: %v", r.Figures)
	}
	// Torn: only the set and its ack.
	if r := checkertest.Check(t, Checker(), ops[:2]); r.Valid != checker.Unknown {
		t.Errorf("torn: %v %v", r.Valid, r.Figures)
	}
	if r := checkertest.Check(t, Checker(), nil); r.Valid != checker.Unknown {
		t.Errorf("empty: %v", r.Figures)
	}
	// A final retried after one that failed is no contradiction.
	h := ttlBase()
	h.Call(9, "final", "k", nil, 40, history.Fail, nil, 41)
	h.read(10, "final", "k", 50, "v1", 50, 51)
	checkertest.WantValid(t, checkertest.Check(t, Checker(), h.Done()), checker.Valid)
	if checker.DescribeFigure("anomalies_unexplained") == "" || checker.DescribeFigure("pairs_judged") == "" {
		t.Fatal("the ttl checker's figures have no explanation")
	}
}
