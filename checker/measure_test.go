package checker

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/redline-dev/redline/history"
)

func TestWindows(t *testing.T) {
	ops := []history.Op{
		{Time: 1, Process: history.Nemesis, Type: history.Invoke, F: "start-partition"},
		{Time: 2, Process: history.Nemesis, Type: history.OK, F: "start-partition", Ext: history.NewExt(history.Ext{Nodes: []string{"a"}})},
		{Time: 3, Process: history.Nemesis, Type: history.Info, F: "start-kill", Ext: history.NewExt(history.Ext{Nodes: []string{"b"}})},
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
		{Time: 1, Process: history.Nemesis, Type: history.Info, F: "start-partition", Ext: history.NewExt(history.Ext{Detail: []byte(`{"mode":"one","skipped":"no primary"}`)})},
		{Time: 2, Process: history.Nemesis, Type: history.Invoke, F: "start-failover", Ext: history.NewExt(history.Ext{Nodes: []string{"a"}})},
		{Time: 3, Process: history.Nemesis, Type: history.Info, F: "start-failover", Ext: history.NewExt(history.Ext{Nodes: []string{"a"}, Detail: []byte(`{"mode":"x"}`)})},
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
		{Time: 1, Process: history.Nemesis, Type: history.Invoke, F: "start-migrate", Ext: history.NewExt(history.Ext{Nodes: []string{"a", "b", "c"}})},
		{Time: 2, Process: history.Nemesis, Type: history.Info, F: "start-migrate", Ext: history.NewExt(history.Ext{Nodes: []string{"a", "b", "c"}})},
		{Time: 5, Process: history.Nemesis, Type: history.Invoke, F: "start-migrate", Ext: history.NewExt(history.Ext{Nodes: []string{"a", "c"}})},
		{Time: 6, Process: history.Nemesis, Type: history.Info, F: "start-migrate", Ext: history.NewExt(history.Ext{Nodes: []string{"a", "c"}})},
		{Time: 8, Process: history.Nemesis, Type: history.Invoke, F: "stop-migrate", Ext: history.NewExt(history.Ext{Nodes: []string{"a", "c"}})},
		{Time: 9, Process: history.Nemesis, Type: history.Info, F: "stop-migrate", Ext: history.NewExt(history.Ext{Nodes: []string{"a", "c"}})},
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
	h.call(3, "read", "k", nil, 2600, 0, nil, 0)
	h.nemesis(1200, "start-kill", "n1")
	h.nemesis(2200, "stop-kill", "n1")
	r := check(t, Perf(), h.done())
	wantValid(t, r, Valid)
	f := typed[*PerfFigures](t, r)
	if f.BucketS != 1 {
		t.Fatalf("bucket %v", f.BucketS)
	}
	reads := f.Series["read"]
	ok := reads.OK
	if len(ok) != 3 || ok[0] != 3 || ok[1] != 0 {
		t.Fatalf("read ok series %v", ok)
	}
	p50 := reads.P50Ms
	if v := val(p50[0]).(float64); v < 19.9 || v > 20.1 || p50[1] != nil {
		t.Fatalf("p50 series %v", p50)
	}
	writes := f.Series["write"]
	if writes.Fail[1] != 1 || writes.Info[2] != 1 {
		t.Fatalf("write series %+v", writes)
	}
	tot := f.ByF["read"]
	if tot.OK != 3 || tot.Open != 1 {
		t.Fatalf("read totals %+v", tot)
	}
	if lat := val(tot.Latency.Max).(float64); lat < 29.9 || lat > 30.1 {
		t.Fatalf("latency %v", lat)
	}
	if fs := f.Faults; len(fs) != 1 || fs[0].StartS != 1.2 {
		t.Fatalf("faults %+v", fs)
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

// nodesEvent records the runner's name -> address map.
func (h *hist) nodesEvent(addrs map[string]string) {
	d, _ := json.Marshal(map[string]any{"addrs": addrs})
	h.ops = append(h.ops, history.Op{Time: 0, Process: history.Nemesis, Type: history.Info, F: history.NodesEvent, Ext: history.NewExt(history.Ext{Detail: d})})
}

// on sets the node that served the last completion.
func (h *hist) on(node string) { h.ops[len(h.ops)-1].Node = node }

const n1, n2 = "10.0.0.1:6379", "10.0.0.2:6379"

// RTO is per shard (the primary serving the slots at the fault's start):
// a key the workload stopped using does not stretch it (issue 10 class 9).
func TestRTOPerShard(t *testing.T) {
	var h hist
	h.nodesEvent(map[string]string{"n1": n1, "n2": n2})
	h.call(0, "write", "a", 1, 0, history.OK, nil, 10)
	h.on(n1)
	h.call(0, "write", "c", 1, 11, history.OK, nil, 20)
	h.on(n1)
	h.call(0, "write", "b", 1, 21, history.OK, nil, 30)
	h.on(n2)
	h.nemesis(100, "start-partition", "n1")
	h.call(0, "write", "a", 1, 110, history.OK, nil, 120)
	h.call(0, "write", "a", 1, 200, history.Fail, nil, 210)
	h.withErr("CLUSTERDOWN")
	h.call(0, "write", "a", 1, 500, history.Info, nil, 700)
	h.call(1, "write", "a", 1, 800, history.OK, nil, 900)
	h.on(n1)
	h.call(2, "write", "b", 1, 150, history.OK, nil, 160) // another shard
	h.on(n2)
	// c fails once and is never used again: its key envelope never ends,
	// the shard recovered at 900.
	h.call(3, "write", "c", 1, 300, history.Fail, nil, 310)
	h.nemesis(1000, "stop-partition", "n1")
	r := check(t, RTO(), h.done())
	wantValid(t, r, Valid)
	f := typed[*RTOFigures](t, r)
	if f.Affected != 1 || f.Unrecovered != 0 || f.AffectedKeys != 2 {
		t.Fatalf("figures %+v", f)
	}
	if q := f.RTOMs; val(q.Max) != 800.0 || q.Count != 1 {
		t.Fatalf("rto %+v", q)
	}
	if q := f.KeyRTOLowerMs; val(q.Max) != 600.0 || q.Count != 2 {
		t.Fatalf("key rto lower %+v", q)
	}
	w := f.PerWindow[0]
	if val(w.KeysOnTouchedNodes) != 2 || w.KeysActive != 3 {
		t.Fatalf("window %+v", w)
	}
	// Issue 23: the shard the fault did not stop has evidence too: RTO 0.
	if other := w.Shards[n2]; val(other.RTOMs) != 0.0 || !other.Unaffected || w.UnaffectedShards != 1 {
		t.Fatalf("untouched shard %+v (window %+v)", other, w)
	}
}

// An outage is charged to the fault that caused it: a slot still failing
// from the first fault does not make the second look like an outage.
func TestRTOChargesTheCausingFault(t *testing.T) {
	var h hist
	h.nodesEvent(map[string]string{"n1": n1, "n2": n2})
	h.call(0, "write", "a", 1, 0, history.OK, nil, 10)
	h.on(n1)
	h.call(0, "write", "b", 1, 11, history.OK, nil, 20)
	h.on(n2)
	h.nemesis(100, "start-kill", "n1")
	h.call(0, "write", "a", 1, 200, history.Fail, nil, 210)
	h.nemesis(300, "stop-kill", "n1")
	h.nemesis(600, "start-kill", "n2")
	h.call(0, "write", "a", 1, 650, history.Fail, nil, 660) // still from the first
	h.call(1, "write", "b", 1, 650, history.OK, nil, 660)
	h.on(n2)
	h.call(0, "write", "a", 1, 800, history.OK, nil, 900)
	h.on(n1)
	h.nemesis(1000, "stop-kill", "n2")
	r := check(t, RTO(), h.done())
	ws := typed[*RTOFigures](t, r).PerWindow
	if ws[0].AffectedShards != 1 || ws[1].AffectedShards != 0 {
		t.Fatalf("windows %+v", ws)
	}
	if val(ws[0].RTOMs.Max) != 800.0 {
		t.Fatalf("first window %+v", ws[0])
	}
	if val(ws[1].KeysOnTouchedNodes) != 1 {
		t.Fatalf("second window %+v", ws[1])
	}
}

// A fault whose start failed took no effect and opens no window.
func TestWindowOnlyWhenTheFaultTookEffect(t *testing.T) {
	var h hist
	h.ops = append(h.ops,
		history.Op{Time: 100 * msec, Process: history.Nemesis, Type: history.Invoke, F: "start-kill", Ext: history.NewExt(history.Ext{Nodes: []string{"n1"}})},
		history.Op{Time: 110 * msec, Process: history.Nemesis, Type: history.Info, F: "start-kill", Ext: history.NewExt(history.Ext{Nodes: []string{"n1"}, Detail: json.RawMessage(`{"error":"container not found"}`)})},
		history.Op{Time: 200 * msec, Process: history.Nemesis, Type: history.Invoke, F: "start-pause", Ext: history.NewExt(history.Ext{Nodes: []string{"n2"}})},
		history.Op{Time: 210 * msec, Process: history.Nemesis, Type: history.Info, F: "start-pause", Ext: history.NewExt(history.Ext{Nodes: []string{"n2"}, Detail: json.RawMessage(`{"took_ms":3}`)})},
	)
	ws := Windows(h.done())
	if len(ws) != 1 || ws[0].Fault != "pause" {
		t.Fatalf("windows %+v", ws)
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
	f := typed[*RPOFigures](t, r)
	if f.Kind != "set" || f.Lost != 4 {
		t.Fatalf("figures %+v", f)
	}
	w := f.PerWindow[0]
	// From the invocation of the first lost write (999) to the ack of the
	// last (1500); acks relative to the fault's start.
	if w.Lost != 3 || val(w.RPOMs) != 501.0 || w.WaitUnsatisfied != 1 || w.NoWait != 2 ||
		val(w.FirstLostAckMs) != -1.0 || val(w.LastLostAckMs) != 500.0 {
		t.Fatalf("window %+v", w)
	}
	if o := f.Outside; o.Lost != 1 || val(o.RPOMs) != 100.0 {
		t.Fatalf("outside %+v", o)
	}
	if val(f.RPOMs) != 501.0 {
		t.Fatalf("rpo_ms %v", val(f.RPOMs))
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
	f := typed[*RPOFigures](t, r)
	if f.Kind != "counter" || f.Lost != 2 {
		t.Fatalf("figures %+v", f)
	}
	// A counter only bounds RPO: from the first increment acknowledged in
	// the window (1200) to the read that revealed the loss (3100).
	w := f.PerWindow[0]
	if w.Lost != 2 || val(w.BoundMs) != 1900.0 || w.RPOMs != nil {
		t.Fatalf("window %+v", w)
	}
	if _, exact := r.Values()["rpo_ms"]; exact || val(f.BoundMs) != 1900.0 {
		t.Fatalf("figures %+v", f)
	}
}

// One lost write is a loss: rpo_ms is its own span, never 0 (issue 10
// class 9); the same from list appends.
func TestRPOOneLostWriteIsNotZero(t *testing.T) {
	var h hist
	h.nemesis(1000, "start-partition", "n1")
	h.call(0, "add", "s", 1, 1100, history.OK, nil, 1150)
	h.call(0, "add", "s", 2, 1200, history.OK, nil, 1250)
	h.nemesis(2000, "stop-partition", "n1")
	h.nemesis(3000, "final-reads")
	h.call(1, "read", "s", nil, 3100, history.OK, []int{2}, 3200)
	r := check(t, RPO(RPOOptions{Kind: "set"}), h.done())
	if f := typed[*RPOFigures](t, r); val(f.RPOMs) != 50.0 || f.Lost != 1 {
		t.Fatalf("figures %+v", f)
	}

	var g hist
	g.nemesis(1000, "start-partition", "n1")
	g.call(0, "txn", "{g}", [][]any{{"append", "x", 1}}, 1100, history.OK, [][]any{{"append", "x", 1}}, 1130)
	g.nemesis(2000, "stop-partition", "n1")
	g.call(0, "txn", "{g}", [][]any{{"append", "x", 2}}, 2100, history.OK, [][]any{{"append", "x", 2}}, 2120)
	g.nemesis(3000, "final-reads")
	g.call(1, "txn", "{g}", [][]any{{"r", "x", nil}}, 3100, history.OK, [][]any{{"r", "x", []int{}}}, 3200)
	r = check(t, RPO(), g.done())
	f := typed[*RPOFigures](t, r)
	if w := f.PerWindow[0]; f.Kind != "list-append" || w.Lost != 1 || val(w.RPOMs) != 30.0 {
		t.Fatalf("figures %+v", f)
	}
	if o := f.Outside; o.Lost != 1 || val(o.RPOMs) != 20.0 {
		t.Fatalf("outside %+v", o)
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
	w := typed[*RPOFigures](t, r).PerWindow
	if w[0].Lost != 0 || w[1].Lost != 2 || val(w[1].BoundMs) != 300.0 || w[1].NoWait != 2 {
		t.Fatalf("windows %+v", w)
	}
}

func TestPerfCountsRedirects(t *testing.T) {
	var h hist
	h.call(0, "read", "k", nil, 0, history.OK, 1, 10)
	h.call(1, "write", "k", 1, 20, history.OK, nil, 30)
	ops := h.done()
	for i := range ops {
		if ops[i].Type == history.OK {
			ops[i].SetRedirects(2) // e.g. a MOVED then an ASK
		}
	}
	r := check(t, Perf(), ops)
	f := typed[*PerfFigures](t, r)
	if f.Redirects != 4 {
		t.Fatalf("redirects = %v, want 4", f.Redirects)
	}
	if n := val(f.ByF["read"].Redirects); n != 2 {
		t.Fatalf("read redirects = %v", n)
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
			ops[i].SetError("cas-mismatch")
		}
	}
	r := check(t, RTO(), ops)
	if typed[*RTOFigures](t, r).Affected != 0 {
		t.Fatalf("a cas mismatch counted as an outage: %v", r.Figures)
	}
}
