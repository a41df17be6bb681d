package bench

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestBuildLoad: two shards, shard 0 owns slots 0-8191; slot 5 is hot.
// Shares, skews and the hot-slot order are exact.
func TestBuildLoad(t *testing.T) {
	ops := make([]int64, numSlots)
	byt := make([]int64, numSlots)
	shard := make([]uint16, numSlots)
	for s := 8192; s < numSlots; s++ {
		shard[s] = 1
	}
	ops[5], byt[5] = 600, 6000
	ops[7], byt[7] = 100, 1000
	ops[9000], byt[9000] = 200, 2000
	ops[9001] = 100
	r := buildLoad(ops, byt, shard, []string{"a:1", "b:2"}, 10)
	if r.SlotsTouched != 4 || len(r.Shards) != 2 || r.Shards[0].Shard != "a:1" || r.Shards[0].Ops != 700 || r.Shards[0].Slots != 8192 ||
		r.Shards[0].SlotsTouched != 2 || r.Shards[1].Ops != 300 {
		t.Fatalf("shards %+v", r.Shards)
	}
	if r.Shards[0].OpsPerS != 70 || r.Shards[0].Share != 0.7 || r.Shards[0].Bytes != 7000 {
		t.Fatalf("shard a %+v", r.Shards[0])
	}
	if r.ShardSkew != 1.4 || r.SlotSkew != 2.4 {
		t.Fatalf("skew shard %v slot %v, want 1.4 and 2.4 (600 / (1000/4))", r.ShardSkew, r.SlotSkew)
	}
	var order []int
	for _, s := range r.TopSlots {
		order = append(order, s.Slot)
	}
	if len(order) != 4 || order[0] != 5 || order[1] != 9000 || order[2] != 7 || order[3] != 9001 {
		t.Fatalf("top slots %v, want 5 9000 7 9001 (ties by slot number)", order)
	}
	// The server's figures beside them.
	entry := func(slot int64, kv ...any) any { return []any{slot, kv} }
	r.mergeServer([]string{"a:1", "b:2", "c:3"}, map[string][]any{
		"a:1": {entry(5, "key-count", int64(3), "cpu-usec", int64(900), "memory-bytes", int64(10), "network-bytes-in", int64(50), "network-bytes-out", int64(60)),
			entry(7, "key-count", int64(1), "cpu-usec", int64(100), "memory-bytes", int64(1), "network-bytes-in", int64(5), "network-bytes-out", int64(6))},
		"b:2": {entry(9000, "key-count", int64(2), "cpu-usec", int64(300), "memory-bytes", int64(2), "network-bytes-in", int64(7), "network-bytes-out", int64(8))},
	}, map[string]error{"c:3": errors.New("ERR unknown subcommand 'slot-stats'")})
	if len(r.Server) != 3 || !r.Server[0].Counted || r.Server[0].CPUUsec != 1000 || r.Server[0].KeyCount != 4 || r.Server[2].Supported {
		t.Fatalf("server shards %+v", r.Server)
	}
	if ss := r.TopSlots[0].Server; ss == nil || ss.CPUUsec != 900 || ss.Node != "a:1" {
		t.Fatalf("hot slot 5 server figures %+v", ss)
	}
	if len(r.ServerTop) != 3 || r.ServerTop[0].Slot != 5 || r.ServerTop[1].Slot != 9000 {
		t.Fatalf("server top %+v", r.ServerTop)
	}
	if !strings.Contains(r.ServerNote, "2 of 3") {
		t.Fatalf("note %q", r.ServerNote)
	}
	var out bytes.Buffer
	r.print(&out)
	for _, want := range []string{"busiest shard 1.40x", "a:1", "900", "server CLUSTER SLOT-STATS per primary", "server's hottest slots: 5 (a:1)"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("summary lacks %q:\n%s", want, out.String())
		}
	}
	if h := r.html("run"); !strings.Contains(h, "hot slots") || !strings.Contains(h, "a:1") {
		t.Fatalf("html %s", h)
	}
	// Redis 7: no SLOT-STATS anywhere.
	r2 := buildLoad(ops, byt, shard, []string{"a:1", "b:2"}, 10)
	r2.mergeServer([]string{"a:1"}, nil, map[string]error{"a:1": errors.New("ERR unknown subcommand")})
	if r2.Server != nil || !strings.Contains(r2.ServerNote, "no primary supports") {
		t.Fatalf("redis 7: %+v %q", r2.Server, r2.ServerNote)
	}
}

// TestRecordCountsPerSlot: the engine's record adds ok ops and key+value
// bytes to the slot's counts; failed ops count nowhere.
func TestRecordCountsPerSlot(t *testing.T) {
	a := scriptedNode(t, func(cmd []string, asking bool) string { return "+OK\r\n" })
	o := Options{KV: testKV(), Concurrency: 1, Duration: time.Hour, OpTimeout: time.Second}
	rt := staticRouter(a)
	rt.lastRefresh.Store(time.Now().Add(time.Hour).UnixNano())
	e := newEngine(o, rt)
	e.clock = realClock{start: time.Now()}
	w := e.workers[0]
	var slot int
	var keyLen int
	for i := 0; i < 3; i++ {
		batch := []pending{{op: w.gen.Next()}}
		batch[0].op.Set, batch[0].op.Size = true, 8
		e.exec(w, context.Background(), batch, e.clock)
		batch[0].slot = 42
		slot, keyLen = batch[0].slot, len(batch[0].key)
		w.record(batch)
	}
	w.record([]pending{{slot: 43, out: outError}})
	r := e.loadReport(time.Second)
	if by := w.stats.slots.byNode; len(by) != 1 || by[0] != 3 {
		t.Fatalf("ok ops by answering node %v, want 3 on node 0", by)
	}
	if r.SlotsTouched != 1 || r.TopSlots[0].Slot != slot || r.TopSlots[0].Ops != 3 || r.TopSlots[0].Bytes != int64(3*(keyLen+8)) {
		t.Fatalf("load %+v", r.TopSlots)
	}
}

// TestServedAfterAScaleOut: when a scale-out moved 4,096 slots to a node
// added during the run, the load names the node that answered each op
// and every node's slots at the start and at the end, the added node
// (which was no shard at the start) included; without a move it adds
// nothing.
func TestServedAfterAScaleOut(t *testing.T) {
	start := make([]string, numSlots)
	end := make([]string, numSlots)
	for s := range start {
		start[s], end[s] = "a:1", "a:1"
		if s >= 8192 {
			start[s], end[s] = "b:2", "b:2"
		}
		if s < 2048 || (s >= 8192 && s < 10240) {
			end[s] = "c:3"
		}
	}
	names := map[string]string{"a:1": "n1", "b:2": "n2", "c:3": "n10"}
	name := func(a string) string { return names[a] }
	r := &LoadReport{Shards: []ShardLoad{{Shard: "n1"}}}
	r.addServed(start, end, map[string]int64{"a:1": 500, "b:2": 400, "c:3": 100}, name, 10)
	if r.SlotsMoved != 4096 || len(r.Nodes) != 3 {
		t.Fatalf("moved %d, nodes %+v", r.SlotsMoved, r.Nodes)
	}
	want := []NodeServed{
		{Node: "n1", Addr: "a:1", SlotsStart: 8192, SlotsEnd: 6144, Ops: 500, OpsPerS: 50, Share: 0.5},
		{Node: "n2", Addr: "b:2", SlotsStart: 8192, SlotsEnd: 6144, Ops: 400, OpsPerS: 40, Share: 0.4},
		{Node: "n10", Addr: "c:3", SlotsStart: 0, SlotsEnd: 4096, Ops: 100, OpsPerS: 10, Share: 0.1},
	}
	for i, w := range want {
		if r.Nodes[i] != w {
			t.Errorf("node %d: %+v, want %+v", i, r.Nodes[i], w)
		}
	}
	var out bytes.Buffer
	r.print(&out)
	if !strings.Contains(out.String(), "4,096 slots changed primary") || !strings.Contains(out.String(), "n10   c:3") {
		t.Errorf("summary:\n%s", out.String())
	}
	if h := r.nodesHTML("A"); !strings.Contains(h, "id='nodes-served'") || !strings.Contains(h, "<td>4,096</td>") {
		t.Errorf("report:\n%s", h)
	}

	still := &LoadReport{Shards: []ShardLoad{{Shard: "n1"}}}
	still.addServed(start, start, map[string]int64{"a:1": 500}, name, 10)
	out.Reset()
	still.print(&out)
	if still.SlotsMoved != 0 || still.Nodes != nil || strings.Contains(out.String(), "changed primary") {
		t.Errorf("no slot moved, yet: %+v\n%s", still, out.String())
	}
}
