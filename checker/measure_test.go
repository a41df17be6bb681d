package checker

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/redline-dev/redline/harness/history"
)

func TestWindows(t *testing.T) {
	ops := []history.Op{
		{Time: 1, Process: history.Nemesis, Type: history.Invoke, F: "start-partition"},
		{Time: 2, Process: history.Nemesis, Type: history.OK, F: "start-partition", Nodes: []string{"a"}},
		{Time: 3, Process: history.Nemesis, Type: history.Info, F: "start-kill", Nodes: []string{"b"}},
		{Time: 5, Process: history.Nemesis, Type: history.Invoke, F: "stop-partition"},
		{Time: 6, Process: history.Nemesis, Type: history.OK, F: "stop-partition"},
		{Time: 7, Process: history.Nemesis, Type: history.Invoke, F: "start-pause"},
		{Time: 8, Process: history.Nemesis, Type: history.Fail, F: "start-pause"}, // did not happen
		{Time: 9, Process: history.Nemesis, Type: history.Info, F: "stop-clock"},  // no start: ignored
		{Time: 10, Process: 0, Type: history.Invoke, F: "read"},
	}
	ws := Windows(ops)
	if len(ws) != 2 {
		t.Fatalf("windows %+v", ws)
	}
	if ws[0].Fault != "partition" || ws[0].Start != 1 || ws[0].End != 6 || ws[0].Open || len(ws[0].Nodes) != 1 {
		t.Fatalf("partition window %+v", ws[0])
	}
	// The unstopped kill runs to the next start (the pause invocation at 7,
	// although that one failed: the nemesis moved on).
	if ws[1].Fault != "kill" || ws[1].Start != 3 || ws[1].End != 7 || !ws[1].Open {
		t.Fatalf("kill window %+v", ws[1])
	}

	// A skipped fault opens nothing; a one-shot failover ends at heal.
	ops = []history.Op{
		{Time: 1, Process: history.Nemesis, Type: history.Info, F: "start-partition", Detail: []byte(`{"mode":"one","skipped":"no primary"}`)},
		{Time: 2, Process: history.Nemesis, Type: history.Invoke, F: "start-failover", Nodes: []string{"a"}},
		{Time: 3, Process: history.Nemesis, Type: history.Info, F: "start-failover", Nodes: []string{"a"}, Detail: []byte(`{"mode":"x"}`)},
		{Time: 8, Process: history.Nemesis, Type: history.Invoke, F: "heal"},
		{Time: 9, Process: history.Nemesis, Type: history.Info, F: "heal"},
		{Time: 20, Process: 0, Type: history.Invoke, F: "read"},
	}
	ws = Windows(ops)
	if len(ws) != 1 || ws[0].Fault != "failover" || ws[0].Start != 2 || ws[0].End != 8 || !ws[0].Open {
		t.Fatalf("windows %+v", ws)
	}

	// A one-shot migration followed by a stopped one: the stop belongs to
	// the second (same nodes); the first ends when the second starts.
	ops = []history.Op{
		{Time: 1, Process: history.Nemesis, Type: history.Invoke, F: "start-migrate", Nodes: []string{"a", "b", "c"}},
		{Time: 2, Process: history.Nemesis, Type: history.Info, F: "start-migrate", Nodes: []string{"a", "b", "c"}},
		{Time: 5, Process: history.Nemesis, Type: history.Invoke, F: "start-migrate", Nodes: []string{"a", "c"}},
		{Time: 6, Process: history.Nemesis, Type: history.Info, F: "start-migrate", Nodes: []string{"a", "c"}},
		{Time: 8, Process: history.Nemesis, Type: history.Invoke, F: "stop-migrate", Nodes: []string{"a", "c"}},
		{Time: 9, Process: history.Nemesis, Type: history.Info, F: "stop-migrate", Nodes: []string{"a", "c"}},
		{Time: 20, Process: 0, Type: history.Invoke, F: "read"},
	}
	ws = Windows(ops)
	if len(ws) != 2 || ws[0].Start != 1 || ws[0].End != 5 || !ws[0].Open || ws[1].Start != 5 || ws[1].End != 9 || ws[1].Open {
		t.Fatalf("windows %+v", ws)
	}
}

func TestPerf(t *testing.T) {
	var h hist
	// 3 reads in second 0 (latencies 10, 20, 30 ms), one failed write in
	// second 1, an info write in second 2, one open read.
	h.call(0, "read", "k", nil, 0, history.OK, 1, 10)
	h.call(0, "read", "k", nil, 100, history.OK, 1, 120)
	h.call(0, "read", "k", nil, 200, history.OK, 1, 230)
	h.call(1, "write", "k", 1, 1000, history.Fail, nil, 1500)
	h.call(2, "write", "k", 1, 2000, history.Info, nil, 2500)
	h.call(3, "read", "k", nil, 2600, "", nil, 0)
	h.nemesis(1200, "start-kill", "n1")
	h.nemesis(2200, "stop-kill", "n1")
	r := check(t, Perf(), h.done())
	wantValid(t, r, Valid)
	if fig[float64](t, r, "bucket_s") != 1 {
		t.Fatalf("bucket %v", r.Figures["bucket_s"])
	}
	reads := fig[map[string]any](t, r, "series")["read"].(map[string]any)
	ok := reads["ok"].([]int)
	if len(ok) != 3 || ok[0] != 3 || ok[1] != 0 {
		t.Fatalf("read ok series %v", ok)
	}
	p50 := reads["p50_ms"].([]any)
	if v := p50[0].(float64); v < 19.9 || v > 20.1 || p50[1] != nil {
		t.Fatalf("p50 series %v", p50)
	}
	writes := fig[map[string]any](t, r, "series")["write"].(map[string]any)
	if writes["fail"].([]int)[1] != 1 || writes["info"].([]int)[2] != 1 {
		t.Fatalf("write series %v", writes)
	}
	tot := fig[map[string]any](t, r, "by_f")["read"].(map[string]any)
	if tot["ok"] != 3 || tot["open"] != 1 {
		t.Fatalf("read totals %v", tot)
	}
	if lat := tot["latency_ms"].(map[string]any); lat["max"].(float64) < 29.9 || lat["max"].(float64) > 30.1 {
		t.Fatalf("latency %v", lat)
	}
	if f := fig[[]map[string]any](t, r, "faults"); len(f) != 1 || f[0]["start_s"] != 1.2 {
		t.Fatalf("faults %v", f)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Fatal(err)
	}
}

func TestBucketWidthAdaptive(t *testing.T) {
	cases := map[time.Duration]time.Duration{
		time.Minute:       time.Second,
		599 * time.Second: time.Second,
		time.Hour:         10 * time.Second,
		24 * time.Hour:    5 * time.Minute,
		1000 * time.Hour:  2 * time.Hour,
	}
	for run, want := range cases {
		if got := BucketWidth(run, 600); got != want {
			t.Errorf("BucketWidth(%v) = %v, want %v", run, got, want)
		}
	}
}

func TestRTO(t *testing.T) {
	var h hist
	h.call(0, "write", "a", 1, 0, history.OK, nil, 10)
	h.nemesis(100, "start-partition", "n1")
	// a: ok right after the fault (served by the isolated primary), then
	// errors, then ok again at 900.
	h.call(0, "write", "a", 1, 110, history.OK, nil, 120)
	h.call(0, "write", "a", 1, 200, history.Fail, nil, 210)
	h.withErr("CLUSTERDOWN")
	h.call(0, "write", "a", 1, 500, history.Info, nil, 700)
	h.call(1, "write", "a", 1, 800, history.OK, nil, 900)
	// b: never affected.
	h.call(2, "write", "b", 1, 150, history.OK, nil, 160)
	// c: fails and never recovers.
	h.call(3, "write", "c", 1, 300, history.Fail, nil, 310)
	h.nemesis(1000, "stop-partition", "n1")
	r := check(t, RTO(), h.done())
	wantValid(t, r, Valid)
	if fig[int](t, r, "affected") != 2 || fig[int](t, r, "unrecovered") != 1 {
		t.Fatalf("figures %v", r.Figures)
	}
	if q := fig[map[string]any](t, r, "rto_ms"); q["max"] != 800.0 {
		t.Fatalf("rto %v", q)
	}
	// Lower bounds: a's last failure ended at 700, c's at 310.
	if q := fig[map[string]any](t, r, "rto_lower_ms"); q["max"] != 600.0 || q["count"] != 2 {
		t.Fatalf("rto lower %v", q)
	}
	if w := fig[[]map[string]any](t, r, "per_window")[0]; w["unavailable_ms"] != 600.0 {
		t.Fatalf("window %v", w)
	}
}

func TestRPOSet(t *testing.T) {
	var h hist
	h.call(0, "add", "s", 1, 0, history.OK, nil, 10) // before any fault: survives
	h.nemesis(1000, "start-partition", "n1")
	h.call(0, "add", "s", 2, 1100, history.OK, nil, 1200) // lost, in window
	h.withWait(1, 0)
	h.call(0, "add", "s", 3, 1300, history.OK, nil, 1500) // lost, in window
	h.nemesis(3000, "stop-partition", "n1")
	h.call(0, "add", "s", 4, 3100, history.OK, nil, 3200) // lost, outside
	h.call(0, "add", "s", 5, 999, history.OK, nil, 999)   // lost, within the slack before the window
	h.nemesis(4000, "final-reads")
	h.call(1, "read", "s", nil, 4100, history.OK, []int{1}, 4200)
	r := check(t, RPO(), h.done())
	wantValid(t, r, Valid)
	if fig[string](t, r, "kind") != "set" || fig[int64](t, r, "lost") != 4 {
		t.Fatalf("figures %v", r.Figures)
	}
	w := fig[[]map[string]any](t, r, "per_window")[0]
	if w["lost"] != int64(3) || w["span_ms"] != 501.0 || w["wait_unsatisfied"] != int64(1) || w["no_wait"] != int64(2) {
		t.Fatalf("window %v", w)
	}
	if o := fig[map[string]any](t, r, "outside_windows"); o["lost"] != int64(1) {
		t.Fatalf("outside %v", o)
	}
	if fig[float64](t, r, "rpo_ms") != 501 {
		t.Fatalf("rpo_ms %v", r.Figures["rpo_ms"])
	}
}

func TestRPOCounter(t *testing.T) {
	var h hist
	h.call(0, "add", "c", 1, 0, history.OK, nil, 10)
	h.nemesis(1050, "start-partition", "n1")
	h.call(0, "add", "c", 1, 1100, history.OK, nil, 1200)
	h.call(0, "add", "c", 1, 1300, history.OK, nil, 1400)
	h.nemesis(2000, "stop-partition", "n1")
	h.nemesis(3000, "final-reads")
	h.call(1, "read", "c", nil, 3100, history.OK, 1, 3200)
	r := check(t, RPO(), h.done())
	if fig[string](t, r, "kind") != "counter" || fig[int64](t, r, "lost") != 2 {
		t.Fatalf("figures %v", r.Figures)
	}
	w := fig[[]map[string]any](t, r, "per_window")[0]
	if w["lost"] != int64(2) || w["span_ms"] != 200.0 {
		t.Fatalf("window %v", w)
	}
}

// Two windows; only the second loses increments: the loss is charged to it
// alone, although the first also saw increments acknowledged.
func TestRPOCounterTwoWindows(t *testing.T) {
	var h hist
	h.nemesis(1000, "start-partition", "n1")
	h.call(0, "add", "c", 1, 1100, history.OK, nil, 1200)
	h.nemesis(2000, "stop-partition", "n1")
	h.call(1, "read", "c", nil, 2500, history.OK, 1, 2600) // all there
	h.nemesis(5000, "start-kill", "n2")
	h.call(0, "add", "c", 1, 5100, history.OK, nil, 5200)
	h.call(0, "add", "c", 1, 5300, history.OK, nil, 5400)
	h.call(1, "read", "c", nil, 5500, history.OK, 1, 5600) // two gone
	h.nemesis(6000, "stop-kill", "n2")
	h.nemesis(7000, "final-reads")
	h.call(1, "read", "c", nil, 7100, history.OK, 1, 7200)
	r := check(t, RPO(), h.done())
	w := fig[[]map[string]any](t, r, "per_window")
	if w[0]["lost"] != int64(0) || w[1]["lost"] != int64(2) || w[1]["span_ms"] != 200.0 || w[1]["no_wait"] != int64(2) {
		t.Fatalf("windows %v", w)
	}
}

func TestPerfCountsRedirects(t *testing.T) {
	var h hist
	h.call(0, "read", "k", nil, 0, history.OK, 1, 10)
	h.call(1, "write", "k", 1, 20, history.OK, nil, 30)
	ops := h.done()
	for i := range ops {
		if ops[i].Type == history.OK {
			ops[i].Redirects = 2 // e.g. a MOVED then an ASK
		}
	}
	r := check(t, Perf(), ops)
	if r.Figures["redirects"] != 4 {
		t.Fatalf("redirects = %v, want 4", r.Figures["redirects"])
	}
	byF := r.Figures["by_f"].(map[string]any)
	if byF["read"].(map[string]any)["redirects"] != 2 {
		t.Fatalf("read redirects = %v", byF["read"])
	}
}

// A cas whose compare failed was served: it is no outage.
func TestRTOIgnoresServedFailures(t *testing.T) {
	var h hist
	h.nemesis(100, "start-kill", "n1")
	h.call(0, "cas", "k", []int{1, 2}, 200, history.Fail, nil, 210)
	h.call(0, "read", "k", nil, 5000, history.OK, 1, 5010)
	h.nemesis(6000, "stop-kill", "n1")
	ops := h.done()
	for i := range ops {
		if ops[i].F == "cas" && ops[i].Type == history.Fail {
			ops[i].Error = "cas-mismatch"
		}
	}
	r := check(t, RTO(), ops)
	if r.Figures["affected"] != 0 {
		t.Fatalf("a cas mismatch counted as an outage: %v", r.Figures)
	}
}
