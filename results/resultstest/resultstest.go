// Package resultstest writes synthetic runs into a results store, with the
// shapes real runs have (history, CLUSTER NODES snapshots, checker figures
// with anomalies), for the tests and benchmarks of reports and the results
// browser. Runs of any size are cheap: a 1M-op run takes seconds.
package resultstest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/results"
)

// Spec describes a synthetic run.
type Spec struct {
	Test    string
	Started time.Time
	Ops     int    // client ops (each an invocation and a completion)
	Target  string // "reference" by default
	// Invalid makes the checkers report anomalies: lost set elements during
	// a partition, a non-linearizable register key with its visualization
	// and a G-single cycle.
	Invalid bool
	// Lost plants that many lost adds acknowledged by the isolated
	// primary n2 during the partition (demoted by the failover at 40 s:
	// Redis Cluster's documented loss), two more acknowledged by n1
	// outside every fault (unexplained), the attribution of the first
	// ones (at most checker.MaxAttributions, as the attributor does) and
	// a key census at the end. Implies Invalid.
	Lost int
	Seed uint64
}

const (
	nodeCount = 6
	duration  = 60 * time.Second
)

func addr(i int) string { return fmt.Sprintf("10.0.0.%d:6379", i+2) }
func nodeID(i int) string {
	return fmt.Sprintf("%040x", i+1)
}

// clusterNodes renders CLUSTER NODES as node `self` sees it, with primaries
// p[0..2] serving the three thirds of the slots and the others replicas.
func clusterNodes(self int, primaries [3]int, failed map[int]bool) string {
	ranges := []string{"0-5460", "5461-10922", "10923-16383"}
	var s string
	for i := range nodeCount {
		flags := ""
		if i == self {
			flags = "myself,"
		}
		role, master, slots := "slave", "", ""
		for k, p := range primaries {
			if p == i {
				role, master, slots = "master", "-", " "+ranges[k]
			}
		}
		if role == "slave" {
			master = nodeID(primaries[i%3])
		}
		if failed[i] {
			role += ",fail"
		}
		s += fmt.Sprintf("%s %s@16379 %s%s %s 0 1700000000000 %d connected%s\n", nodeID(i), addr(i), flags, role, master, i+1, slots)
	}
	return s
}

// WriteRun writes a complete run (config, history, results, snapshots,
// report) under root and returns it.
func WriteRun(root string, s Spec) (*results.Run, error) {
	if s.Test == "" {
		s.Test = "synthetic"
	}
	if s.Started.IsZero() {
		s.Started = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	}
	if s.Target == "" {
		s.Target = "reference"
	}
	if s.Lost > 0 {
		s.Invalid = true
	}
	run, err := results.Store{Root: root}.NewRun(s.Test, s.Started)
	if err != nil {
		return nil, err
	}
	cfg := map[string]any{
		"test_name": s.Test, "target": s.Target, "workloads": []string{"register", "set"}, "nemesis": []string{"partition", "failover"},
		"time_limit": duration.String(), "concurrency": 10, "seed": s.Seed, "started": s.Started,
		"versions": map[string]any{"version": "7.2.4", "image": "redline/" + s.Target + ":test"},
	}
	if err := run.WriteJSON("config.json", cfg); err != nil {
		return nil, err
	}
	before := [3]int{0, 1, 2}
	after := [3]int{0, 4, 2} // n5 took over n2's slots in the failover
	for i := range nodeCount {
		if err := run.WriteFile(fmt.Sprintf("nodes/n%d/cluster-nodes-before.txt", i+1), []byte(clusterNodes(i, before, nil))); err != nil {
			return nil, err
		}
		if err := run.WriteFile(fmt.Sprintf("nodes/n%d/cluster-nodes-after.txt", i+1), []byte(clusterNodes(i, after, nil))); err != nil {
			return nil, err
		}
	}
	anomalies, err := writeHistory(run, s, before, after)
	if err != nil {
		return nil, err
	}
	if err := run.WriteJSON("results.json", summary(s, anomalies)); err != nil {
		return nil, err
	}
	if s.Invalid {
		page := "<!doctype html><html><head><title>porcupine</title></head><body><p>linearizability visualization of register:7</p></body></html>"
		if err := run.WriteFile("linearizable/register_7.html", []byte(page)); err != nil {
			return nil, err
		}
	}
	return run, results.WriteReport(run)
}

// planted are op indexes of the anomalies the history holds.
type planted struct {
	lostAdds   []map[string]any
	strayLost  []map[string]any // lost adds outside every fault window
	attrs      []checker.Attribution
	staleRead  int64
	cycle      []int64
	partitionS [2]float64
}

// writeHistory writes Ops client ops from 10 processes over 60 s with a
// partition of n2 from 15 to 25 s and a failover of n2 to n5 at 40 s.
func writeHistory(run *results.Run, s Spec, before, after [3]int) (planted, error) {
	var p planted
	f, err := os.Create(run.Path("history.jsonl"))
	if err != nil {
		return p, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(s.Seed, 1))
	var idx int64
	emit := func(op history.Op) error {
		op.Index = idx
		idx++
		return history.Encode(w, &op)
	}
	nem := func(t time.Duration, typ history.Type, fn string, nodes []string, detail map[string]any) error {
		b, _ := json.Marshal(detail)
		return emit(history.Op{Time: int64(t), Process: history.Nemesis, Type: typ, F: fn, Ext: history.NewExt(history.Ext{Nodes: nodes, Detail: b})})
	}
	partFrom, partTo := 15*time.Second, 25*time.Second
	failoverAt := 40 * time.Second
	p.partitionS = [2]float64{partFrom.Seconds(), partTo.Seconds()}
	events := []struct {
		t  time.Duration
		fn func() error
	}{
		{partFrom, func() error {
			if err := nem(partFrom, history.Invoke, "start-partition", []string{"n2"}, map[string]any{"mode": "isolate-primary", "cluster_nodes_before": clusterNodes(0, before, nil)}); err != nil {
				return err
			}
			return nem(partFrom+50*time.Millisecond, history.Info, "start-partition", []string{"n2"}, map[string]any{"mode": "isolate-primary", "took_ms": 50})
		}},
		{partTo, func() error {
			if err := nem(partTo, history.Invoke, "stop-partition", []string{"n2"}, map[string]any{"mode": "isolate-primary"}); err != nil {
				return err
			}
			return nem(partTo+30*time.Millisecond, history.Info, "stop-partition", []string{"n2"}, map[string]any{"mode": "isolate-primary", "cluster_nodes_after": clusterNodes(0, before, map[int]bool{1: true})})
		}},
		{failoverAt, func() error {
			if err := nem(failoverAt, history.Invoke, "start-failover", []string{"n5"}, map[string]any{"mode": "replica-of-n2", "cluster_nodes_before": clusterNodes(0, before, nil)}); err != nil {
				return err
			}
			return nem(failoverAt+800*time.Millisecond, history.Info, "start-failover", []string{"n5"}, map[string]any{"mode": "replica-of-n2", "took_ms": 800, "cluster_nodes_after": clusterNodes(0, after, nil)})
		}},
	}
	const procs = 10
	step := duration / time.Duration(max(1, s.Ops/procs))
	ev := 0
	lostWanted := 0
	if s.Invalid {
		lostWanted = 3
	}
	if s.Lost > 0 {
		lostWanted = s.Lost
	}
	for i := 0; i < s.Ops; i++ {
		t := time.Duration(i/procs)*step + time.Duration(i%procs)*step/procs
		for ev < len(events) && events[ev].t <= t {
			if err := events[ev].fn(); err != nil {
				return p, err
			}
			ev++
		}
		proc := history.Process(i % procs)
		inPartition := t >= partFrom && t < partTo
		// Latencies spread over four decades, with every op type ending
		// in every outcome: the worst case for the report's scatter.
		lat := time.Duration(math.Exp(rng.NormFloat64()*1.4) * float64(300*time.Microsecond))
		out := history.OK
		switch {
		case inPartition && rng.IntN(3) == 0:
			out, lat = history.Fail, time.Duration(rng.IntN(2000))*time.Microsecond
		case inPartition && rng.IntN(50) == 0:
			out, lat = history.Info, time.Second
		case rng.IntN(200) == 0:
			out = history.Fail
		case rng.IntN(2000) == 0:
			out, lat = history.Info, time.Second
		}
		node := addr(rng.IntN(3))
		var inv, comp history.Op
		if i%2 == 0 {
			key := fmt.Sprintf("register:%d", rng.IntN(20))
			if rng.IntN(2) == 0 {
				inv = history.Op{Time: int64(t), Process: proc, Type: history.Invoke, F: "read", Key: key}
				comp = history.Op{Time: int64(t + lat), Process: proc, Type: out, F: "read", Key: key, Node: node}
				comp.SetValue(rng.IntN(5))
			} else {
				inv = history.Op{Time: int64(t), Process: proc, Type: history.Invoke, F: "write", Key: key}
				inv.SetValue(rng.IntN(5))
				comp = inv
				comp.Type, comp.Time, comp.Node = out, int64(t+lat), node
			}
		} else {
			f := []string{"add", "incr", "cas", "txn"}[(i/2)%4]
			key := fmt.Sprintf("%s:%d", f, rng.IntN(50))
			inv = history.Op{Time: int64(t), Process: proc, Type: history.Invoke, F: f, Key: key}
			inv.SetValue(i)
			comp = inv
			comp.Type, comp.Time, comp.Node = out, int64(t+lat), node
		}
		if out == history.Fail {
			comp.SetError("CLUSTERDOWN The cluster is down")
		} else if out == history.Info {
			comp.SetError("i/o timeout")
		}
		if err := emit(inv); err != nil {
			return p, err
		}
		if inv.F == "add" && out == history.OK && inPartition && len(p.lostAdds) < lostWanted && t > partFrom+2*time.Second {
			if s.Lost > 0 {
				comp.Node = addr(1) // the isolated primary acknowledged it
			}
			p.lostAdds = append(p.lostAdds, map[string]any{"key": inv.Key, "element": i, "ack_s": round3(time.Duration(comp.Time).Seconds()),
				"node": addr(1), "wait": "no_wait", "index": idx - 1})
			p.attribute(s, inv, comp, idx-1, "n2 (10.0.0.3:6379)", "partition 15-25.03s on n2")
		}
		if s.Lost > 0 && inv.F == "add" && out == history.OK && t > 5*time.Second && t < 10*time.Second && len(p.strayLost) < 2 {
			comp.Node = addr(0)
			p.strayLost = append(p.strayLost, map[string]any{"key": inv.Key, "element": i, "ack_s": round3(time.Duration(comp.Time).Seconds()),
				"node": addr(0), "wait": "no_wait", "index": idx - 1})
			p.attribute(s, inv, comp, idx-1, "n1 (10.0.0.2:6379)", "")
		}
		if s.Invalid && p.staleRead == 0 && inv.F == "read" && out == history.OK && t > partFrom+3*time.Second {
			p.staleRead = idx - 1
		}
		if s.Invalid && len(p.cycle) < 2 && inv.F == "write" && out == history.OK && t > 30*time.Second {
			p.cycle = append(p.cycle, idx-1)
		}
		if err := emit(comp); err != nil {
			return p, err
		}
	}
	for ev < len(events) {
		if err := events[ev].fn(); err != nil {
			return p, err
		}
		ev++
	}
	if s.Lost > 0 {
		// The census at the end: n5 serves n2's slots, n2 is its replica.
		c := history.Census{Prefix: "", WallStart: s.Started}
		for i := range nodeCount {
			role, primary := "replica", nodeID(after[i%3])
			if slices.Contains(after[:], i) {
				role, primary = "primary", ""
			}
			c.Nodes = append(c.Nodes, history.CensusNode{Name: fmt.Sprintf("n%d", i+1), Addr: addr(i), ID: nodeID(i), Role: role, Primary: primary})
		}
		b, _ := json.Marshal(c)
		if err := emit(history.Op{Time: int64(duration), Process: history.Nemesis, Type: history.Info, F: history.CensusEvent, Ext: history.NewExt(history.Ext{Detail: b})}); err != nil {
			return p, err
		}
	}
	return p, w.Flush()
}

// attribute adds the attribution of a planted lost add, as the attributor
// writes it for a key on no node at the end.
func (p *planted) attribute(s Spec, inv, comp history.Op, index int64, node, fault string) {
	if s.Lost == 0 || len(p.attrs) >= checker.MaxAttributions {
		return
	}
	a := checker.Attribution{Checker: "set/set", Kind: "lost-write", Key: inv.Key, Slot: history.Keyslot(inv.Key), Verdict: checker.ServerLost,
		Ack: &checker.AttrOp{Index: index, F: inv.F, TimeS: round3(time.Duration(comp.Time).Seconds()), Node: node, Value: string(inv.Value)},
		Why: fmt.Sprintf("the key is on no node at the end and no journalled step touched slot %d in between", history.Keyslot(inv.Key))}
	if fault != "" {
		a.Faults = []string{fault}
	}
	p.attrs = append(p.attrs, a)
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// summary is the results.json the checkers would write for the history.
func summary(s Spec, p planted) checker.Summary {
	res := func(v checker.Validity, f map[string]any) checker.Result {
		return checker.Result{Valid: v, Figures: checker.Map(f)}
	}
	lost := len(p.lostAdds)
	lostRows := make([]any, 0, lost+len(p.strayLost))
	for _, r := range p.strayLost {
		lostRows = append(lostRows, r)
	}
	for _, r := range p.lostAdds {
		lostRows = append(lostRows, r)
	}
	stray := len(p.strayLost)
	setValid, linValid, laValid := checker.Valid, checker.Valid, checker.Valid
	anomalous := []any{}
	anomalies := map[string]any{}
	if s.Invalid {
		setValid, linValid, laValid = checker.Invalid, checker.Invalid, checker.Invalid
		anomalous = []any{"register:7"}
		if len(p.cycle) == 2 {
			anomalies["G-single"] = map[string]any{"count": 1, "examples": []any{[]any{
				map[string]any{"index": p.cycle[0], "process": "2", "status": "ok", "edge": "rw", "key": "list:1", "value": 4},
				map[string]any{"index": p.cycle[1], "process": "4", "status": "ok", "edge": "wr", "key": "list:1", "value": 5},
			}}}
		}
	}
	window := checker.RPOWindow{Window: 0, Fault: "partition", StartS: p.partitionS[0], EndS: p.partitionS[1], Nodes: []string{"n2"},
		RPOLosses: checker.RPOLosses{Lost: int64(lost), Keys: lost, WaitSplit: checker.WaitSplit{NoWait: int64(lost)}}}
	if lost > 0 {
		window.AckedFromS = ptr(p.lostAdds[0]["ack_s"].(float64))
		window.AckedToS = ptr(p.lostAdds[lost-1]["ack_s"].(float64))
	}
	rto := checker.Quantiles{Count: 12, P50: ptr(10400.0), P95: ptr(11000.0), P99: ptr(11020.0), Max: ptr(11020.0)}
	lin := map[string]any{"anomalous_keys": anomalous, "unknown_keys": []any{}, "stale_reads": 0, "keys": 20, "ops": s.Ops / 2}
	if s.Invalid && p.staleRead > 0 {
		lin["stale_reads"] = 1
		lin["reasons"] = []any{fmt.Sprintf("key register:7: read at op %d returned 3 although the write of 4 had completed before it began", p.staleRead)}
		lin["first_instances"] = []any{map[string]any{"key": "register:7", "index": p.staleRead, "kind": "stale read"}}
	}
	return checker.Summary{Valid: checker.Merge(setValid, linValid, laValid), Checkers: map[string]checker.Result{
		"set/set": res(setValid, map[string]any{"lost": lost + stray, "unexpected": 0, "recovered": 0, "stale_reads": 0,
			"lost_elements": lostRows, "wait_satisfied": 0, "wait_unsatisfied": 0, "no_wait": lost + stray}),
		"set/rpo": {Valid: checker.Valid, Figures: &checker.RPOFigures{Measurement: true, Kind: "set", Lost: int64(lost + stray), Windows: 2,
			PerWindow: []checker.RPOWindow{window}, Outside: checker.RPOLosses{Lost: int64(stray)}, RPOMs: ptr(120.5)}},
		"set/rto": {Valid: checker.Valid, Figures: &checker.RTOFigures{Measurement: true, Windows: 2, Affected: 12, AffectedKeys: 12, RTOMs: rto,
			PerWindow: []checker.RTOWindow{{Window: 0, Fault: "partition", StartS: p.partitionS[0], EndS: p.partitionS[1], Nodes: []string{"n2"},
				AffectedShards: 1, AffectedKeys: 12, RTOMs: rto, UnmeasuredShards: []string{}, UnrecoveredShards: []string{},
				Shards: map[string]checker.RTOShard{addr(1): {RTOMs: ptr(11020.0)}}}}}},
		"register/linearizable": res(linValid, lin),
		"txn/list-append":       res(laValid, map[string]any{"anomalies": anomalies, "anomaly_types": len(anomalies)}),
	}, Attribution: p.attrs}
}

// WriteStore writes a small store of three runs a minute apart: a valid
// reference run, an invalid redis run, and another valid reference run of
// the same test. ops scales each run's size.
func WriteStore(root string, ops int) ([]*results.Run, error) {
	start := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	var runs []*results.Run
	for i, s := range []Spec{
		{Test: "reference-register-none", Ops: ops, Seed: 1},
		{Test: "redis-set-partition", Ops: 2 * ops, Target: "redis", Invalid: true, Seed: 2},
		{Test: "reference-register-none", Ops: ops + ops/2, Seed: 3},
	} {
		s.Started = start.Add(time.Duration(i) * time.Minute)
		r, err := WriteRun(root, s)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

func ptr[T any](v T) *T { return &v }
