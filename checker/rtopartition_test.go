package checker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/redline-dev/redline/history"
)

// genRTO is a history of outages: four primaries (n1-n3 own the slots by
// slot mod 3; n4 takes n1's once n1 recovers, a failover), each fault
// window taking a node down for a while from a little after its start,
// longer than the fault or shorter, one (n3's, when down3Forever) never
// served again while its clients keep being told so. The ops fail
// (CLUSTERDOWN), time out told or are never answered while their slot's
// node is down; the others are served by it, some reads by a replica,
// some fails served (cas-mismatch). Times are in whole milliseconds, so
// that ops of several clients start together (the order of invocations
// decides). Keys "late" are used only from 12 s on, after the first fault
// started: their slots are in no shard of its view.
func genRTO(seed uint64, down3Forever bool) []history.Op {
	r := rand.New(rand.NewPCG(seed, 11))
	const s = int64(time.Second)
	ms := func(x int64) int64 { return x / int64(time.Millisecond) * int64(time.Millisecond) }
	addr := func(n string) string { return "10.0.0." + n[1:] + ":6379" }
	type down struct {
		node     string
		from, to int64
	}
	jit := func(base int64, spread int) int64 { return base + int64(r.IntN(spread))*int64(time.Millisecond) }
	n1Back := jit(18*s, 9000) // before or after its fault's end (20 s)
	downs := []down{
		{"n1", jit(10*s, 500), n1Back},
		{"n2", jit(30*s, 500), jit(31*s, 4000)},
		{"n3", jit(50*s, 300), jit(56*s, 2000)},
		{"n4", jit(45*s, 200), jit(46*s, 1500)},
		{"n2", jit(80*s, 100), jit(80*s+s/2, 300)},
	}
	if down3Forever {
		downs[2].to = inf
	}
	owner := func(slot int, t int64) string {
		n := fmt.Sprintf("n%d", slot%3+1)
		if n == "n1" && t >= n1Back {
			return "n4"
		}
		return n
	}
	isDown := func(n string, t int64) bool {
		return slices.ContainsFunc(downs, func(d down) bool { return d.node == n && d.from <= t && t < d.to })
	}
	var ops []history.Op
	nem := func(t int64, f string, typ history.Type, nodes ...string) {
		op := history.Op{Time: t, Process: history.Nemesis, Type: typ, F: f}
		op.SetNodes(nodes)
		ops = append(ops, op)
	}
	topo, _ := json.Marshal(history.NodesDetail{Addrs: map[string]string{"n1": addr("n1"), "n2": addr("n2"), "n3": addr("n3"), "n4": addr("n4")}})
	ops = append(ops, history.Op{Process: history.Nemesis, Type: history.Info, F: history.NodesEvent, Ext: history.NewExt(history.Ext{Detail: topo})})
	nem(10*s, history.StartOf("partition"), history.Info, "n1")
	nem(20*s, history.StopOf("partition"), history.Info, "n1")
	nem(30*s, history.StartOf("kill"), history.Info, "n2")
	nem(35*s, history.StopOf("kill"), history.Info, "n2")
	nem(50*s, history.StartOf("partition"), history.Info, "n3")
	nem(55*s, history.StopOf("partition"), history.Info, "n3")
	nem(45*s, history.StartOf("pause"), history.Info, "n4")
	nem(53*s, history.StopOf("pause"), history.Info, "n4")
	nem(70*s, history.StartOf("partition"), history.Info, "n2") // strikes no op
	nem(72*s, history.StopOf("partition"), history.Info, "n2")
	nem(80*s, history.StartOf("failover"), history.Info, "n2") // never stopped
	const end = 100 * s
	const gap = 50 * int64(time.Millisecond) // between a client's ops: about 8,000 ops
	proc := 0
	for c := range 8 {
		p := history.Process(proc)
		proc++
		t := jit(0, 50)
		for t < end {
			var key string
			switch x := r.IntN(100); {
			case x < 60:
				key = fmt.Sprintf("a:k%d", r.IntN(60))
			case x < 80 && t > 12*s:
				key = fmt.Sprintf("a:late%d", r.IntN(10))
			default:
				key = fmt.Sprintf("b:k%d", r.IntN(20))
			}
			f := "read"
			if r.IntN(2) == 0 {
				f = "write"
			}
			inv := history.Op{Time: ms(t), Process: p, Type: history.Invoke, F: f, Key: key}
			ret := ms(t) + jit(int64(time.Millisecond), 40)
			comp := history.Op{Time: ret, Process: p, Type: history.OK, F: f, Key: key}
			node := owner(history.Keyslot(key), t)
			ops = append(ops, inv)
			switch x := r.IntN(100); {
			case isDown(node, t) && x < 60:
				comp.Type = history.Fail
				comp.SetError("CLUSTERDOWN The cluster is down")
			case isDown(node, t) && x < 85:
				comp.Type = history.Info
				comp.SetError("i/o timeout")
			case isDown(node, t) || (x == 99 && c == 3):
				// Never answered: the client gives up on the process.
				p = history.Process(proc)
				proc++
				t = ret + jit(gap, 100)
				continue
			case f == "read" && x < 10:
				comp.Node = "10.0.0.9:6379"
				comp.SetReplica(true)
			case f == "write" && x < 4:
				comp.Type = history.Fail
				comp.SetError("cas-mismatch")
				comp.Node = addr(node)
			default:
				comp.Node = addr(node)
			}
			ops = append(ops, comp)
			t = ret + jit(gap, 100)
		}
	}
	nem(end+s, history.Heal, history.Invoke)
	nem(end+2*s, history.Heal, history.Info)
	return renumber(ops)
}

// manyWindows lays 205 short windows of a fault over ops, more than the
// per-window figures keep (200).
func manyWindows(ops []history.Op) []history.Op {
	end := runEnd(ops)
	for i := range int64(205) {
		at := end / 2 * i / 205
		for _, f := range []string{history.StartOf("pause"), history.StopOf("pause")} {
			op := history.Op{Time: at, Process: history.Nemesis, Type: history.Info, F: f}
			op.SetNodes([]string{"n2"})
			ops = append(ops, op)
			at += end / 2 / 205 / 2
		}
	}
	return renumber(ops)
}

// rtoLies are lies told of a history that stay a history the partitions
// take (paired, indexes increasing: renumbered), so that the partitioned
// form judges them too.
func rtoLies(ops []history.Op, seed uint64) []namedOps {
	r := rand.New(rand.NewPCG(seed, 13))
	var comps []int
	for i := range ops {
		if ops[i].Process != history.Nemesis && ops[i].Type != history.Invoke {
			comps = append(comps, i)
		}
	}
	pick := func() int { return comps[r.IntN(len(comps))] }
	var out []namedOps
	mutate := func(name string, f func(ops []history.Op) []history.Op) {
		out = append(out, namedOps{name, f(slices.Clone(ops))})
	}
	mutate("completions before their invocations in time", func(ops []history.Op) []history.Op {
		for range 30 {
			ops[pick()].Time -= int64(r.IntN(3000)) * int64(time.Millisecond)
		}
		return ops
	})
	mutate("garbage completions", func(ops []history.Op) []history.Op {
		for k := range 40 {
			op := &ops[pick()]
			switch k % 5 {
			case 0:
				op.Time = -op.Time
			case 1:
				op.Value = []byte(`{"garbage":[1]}`)
			case 2:
				op.F, op.Key, op.Node = "", "", ""
			case 3:
				op.SetError("ERR what")
			case 4:
				op.Node = "not an address"
			}
		}
		return ops
	})
	mutate("a nemesis entry of garbage", func(ops []history.Op) []history.Op {
		g := history.Op{Time: ops[pick()].Time, Process: history.Nemesis, Type: history.Info, F: history.StartOf("partition"),
			Ext: history.NewExt(history.Ext{Detail: json.RawMessage(`{"nodes":`)})}
		stop := history.Op{Time: g.Time - int64(time.Second), Process: history.Nemesis, Type: 42, F: history.StopOf("kill")}
		return renumber(append(ops, g, stop))
	})
	mutate("completions dropped", func(ops []history.Op) []history.Op {
		// The process of a dropped completion invokes no more (the
		// history pairs): its op was never answered.
		var out []history.Op
		gone := map[history.Process]bool{}
		for _, op := range ops {
			if gone[op.Process] {
				continue
			}
			if op.Process != history.Nemesis && op.Type != history.Invoke && r.IntN(200) == 0 {
				gone[op.Process] = true
				continue
			}
			out = append(out, op)
		}
		return renumber(out)
	})
	return out
}

// rtoCases are the histories the RTO differential tests run on: the
// streaming tests' (stored runs, generated runs with faults, lies), and
// generated outages with lies told of them.
func rtoCases(t *testing.T) []namedOps {
	cases := streamCases(t)
	for seed := range uint64(4) {
		ops := genRTO(seed, seed%2 == 0)
		cases = append(cases, namedOps{fmt.Sprintf("outages %d", seed), ops})
		var told []namedOps
		switch seed {
		case 0: // not recovered: invalid
			told = append(rtoLies(ops, seed), lies(ops, seed)...)
		case 1: // recovered: valid
			told = rtoLies(ops, seed)
		}
		for _, l := range told {
			cases = append(cases, namedOps{fmt.Sprintf("outages %d: %s", seed, l.name), l.ops})
		}
	}
	cases = append(cases, namedOps{"outages, 205 windows", manyWindows(genRTO(7, true))})
	for _, h := range storedHistories(t) {
		if h.name == "reference-counter-failover" || h.name == "../history/testdata/gen-6k/history.jsonl.zst" {
			for _, l := range rtoLies(h.ops, 3) {
				cases = append(cases, namedOps{h.name + ": " + l.name, l.ops})
			}
		}
	}
	return cases
}

var rtoScopes = []Scope{{}, {KeyPrefix: "a:", MaxExamples: 1, Name: "rto-1"}}

// Check gives on every history what it gave before it judged partitions
// (rtoReference), byte for byte: the RTO figures are the same numbers read
// another way.
func TestRTOAgreesWithReference(t *testing.T) {
	seen := map[string]int{}
	for _, h := range rtoCases(t) {
		for _, o := range rtoScopes {
			c := rto{o}
			whole := guarded(func() Result { return c.Check(context.Background(), NewHistory(h.ops)) })
			ref := guarded(func() Result { return rtoReference(c, NewHistory(h.ops)) })
			if w, g := resultBytes(t, ref), resultBytes(t, whole); w != g {
				t.Fatalf("%s, %+v:\nreference %s\nnow       %s", h.name, o, w, g)
			}
			v := whole.Valid.String()
			if whole.NotApplicable != "" {
				v = "not applicable"
			}
			seen[v]++
		}
	}
	// The cases reach every verdict: measured, not recovered, not
	// applicable (no fault, no op) and a history that does not pair.
	for _, v := range []string{"valid", "invalid", "not applicable"} {
		if seen[v] == 0 {
			t.Errorf("no case is %v: %v", v, seen)
		}
	}
}

// The RTO checker run on 1, 3, 7 and 16 slot partitions says what Check
// says of the whole history, byte for byte, on every history the
// partitions take (paired, indexes increasing); on the others `redline
// check` reads the history whole, and the whole check is not valid when
// the history does not pair.
func TestRTOPartitionedAgreesWithWhole(t *testing.T) {
	partitioned, whole, unwritable := 0, 0, 0
	for _, h := range rtoCases(t) {
		path, err := writeHistory(t, h.ops)
		if err != nil {
			unwritable++
			continue // not JSON: no history file holds it
		}
		for _, n := range []int{1, 3, 7, 16} {
			p, err := history.Spill(path, t.TempDir(), n, history.SlotPartition(n))
			if err != nil {
				unwritable++
				break // a type that is none: `redline check` takes no such file
			}
			if !p.Paired || !p.IndexesIncrease {
				res := RTO().Check(context.Background(), NewHistory(h.ops))
				if !p.Paired && res.Valid == Valid {
					t.Fatalf("%s: does not pair, yet valid: %s", h.name, resultBytes(t, res))
				}
				whole++
				continue
			}
			partitioned++
			for _, o := range rtoScopes {
				c := rto{o}
				w := guarded(func() Result { return c.Check(context.Background(), NewHistory(h.ops)) })
				g := guarded(func() Result {
					res, err := c.CheckPartitions(WithHistoryEnd(context.Background(), p.Latest), p.N(), p.LoadWhere)
					if err != nil {
						t.Fatal(err)
					}
					return res
				})
				if wb, gb := resultBytes(t, w), resultBytes(t, g); wb != gb {
					t.Fatalf("%s, %d partitions, %+v:\nwhole       %s\npartitioned %s", h.name, n, o, wb, gb)
				}
			}
		}
	}
	if partitioned == 0 || whole == 0 {
		t.Fatalf("%d cases partitioned, %d read whole: want both", partitioned, whole)
	}
	t.Logf("%d partitioned, %d read whole, %d not written (not JSON, or a type that is none)", partitioned, whole, unwritable)
}

// The generated outages reach what they are made for: shards recovered
// and not, keys recovered, outages charged to the fault before (busy),
// unknown shards, unaffected ones.
func TestRTOOutagesAreMeasured(t *testing.T) {
	for seed, want := range []Validity{Invalid, Valid} {
		ops := genRTO(uint64(seed), seed == 0)
		res := RTO().Check(context.Background(), NewHistory(ops))
		if res.Valid != want {
			t.Fatalf("seed %d: %v, want %v: %s", seed, res.Valid, want, resultBytes(t, res))
		}
		f, ok := FiguresAs[*RTOFigures](res)
		if !ok {
			t.Fatalf("figures %T", res.Figures)
		}
		unaffected, unknown := 0, 0
		for _, w := range f.PerWindow {
			unaffected += w.UnaffectedShards
			if _, ok := w.Shards["unknown"]; ok {
				unknown++
			}
		}
		if f.Windows != 6 || f.Affected < 4 || f.AffectedKeys < 20 || f.RTOMs.Count < 3 || unaffected == 0 || unknown == 0 {
			t.Fatalf("seed %d: windows %d, affected %d shards %d keys, rto count %d, unaffected %d, unknown %d", seed, f.Windows, f.Affected, f.AffectedKeys, f.RTOMs.Count, unaffected, unknown)
		}
		if want == Invalid && (f.NotRecovered == 0 || f.First == "") {
			t.Fatalf("seed %d: n3 never recovered, yet %d not recovered (%q)", seed, f.NotRecovered, f.First)
		}
	}
}

// A partition that cannot be loaded, in either load, is an error (the
// caller's unknown), and without the history's end the windows cannot be
// told: an error, not a verdict.
func TestRTOPartitionedLoadError(t *testing.T) {
	ops := genRTO(1, false)
	p := spillOps(t, ops, 4)
	ctx := WithHistoryEnd(context.Background(), p.Latest)
	for _, failAt := range []int{2, 4 + 2} {
		loads := 0
		load := func(i int, keep *history.Filter) ([]history.Op, error) {
			if loads++; loads > failAt {
				return nil, errors.New("lost")
			}
			return p.LoadWhere(i, keep)
		}
		if _, err := RTO().(PartitionChecker).CheckPartitions(ctx, p.N(), load); err == nil {
			t.Fatalf("load %d lost: no error", failAt+1)
		}
	}
	if _, err := RTO().(PartitionChecker).CheckPartitions(context.Background(), p.N(), p.LoadWhere); err == nil {
		t.Fatal("no history end: no error")
	}
}
