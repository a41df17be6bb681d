package checker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/redline-dev/redline/history"
)

// plant is an anomaly (or a shape of evidence) written into a clean
// generated history; want is the verdict of the whole history then.
type plant struct {
	name  string
	plant func(ops []history.Op) []history.Op
	want  Validity
}

// okOf calls change on the ok completions of f on key for which pick says
// so (i counts them from 0), returning ops.
func okOf(ops []history.Op, key, f string, pick func(i int) bool, change func(op *history.Op)) []history.Op {
	n := 0
	for i := range ops {
		if op := &ops[i]; op.Key == key && op.Type == history.OK && op.F == f {
			if pick(n) {
				change(op)
			}
			n++
		}
	}
	return ops
}

func lastOf(ops []history.Op, key, f string) *history.Op {
	for i := len(ops) - 1; i >= 0; i-- {
		if op := &ops[i]; op.Key == key && op.Type == history.OK && op.F == f {
			return op
		}
	}
	return nil
}

// withFaults adds a fault window (a partition of two nodes, then its heal)
// and the nodes' addresses: run-wide entries every partition carries.
func withFaults(ops []history.Op) []history.Op {
	end := ops[len(ops)-1].Time
	var start history.Op
	start = history.Op{Time: end / 4, Process: history.Nemesis, Type: history.Info, F: "start-partition"}
	start.SetNodes([]string{"n1", "n2"})
	stop := history.Op{Time: end / 2, Process: history.Nemesis, Type: history.Info, F: "stop-partition"}
	return renumber(append(ops, start, stop))
}

// renumber orders entries by time (stably) and numbers them again.
func renumber(ops []history.Op) []history.Op {
	slices.SortStableFunc(ops, func(a, b history.Op) int { return cmpInt(a.Time, b.Time) })
	for i := range ops {
		ops[i].Index = int64(i)
	}
	return ops
}

// unanswered drops the completions of every 9th add: their outcome never
// known, their process's later ops another's (as a client does after an
// op of unknown outcome).
func unanswered(ops []history.Op) []history.Op {
	out := ops[:0]
	n := 0
	next := history.Process(100_000)
	renamed := map[history.Process]history.Process{}
	for _, op := range ops {
		if p, ok := renamed[op.Process]; ok {
			op.Process = p
		}
		if op.Type != history.Invoke && op.Process != history.Nemesis && op.F == "add" {
			if n++; n%9 == 0 {
				for orig, p := range renamed {
					if p == op.Process {
						delete(renamed, orig)
						op.Process = orig
					}
				}
				renamed[op.Process] = next
				next++
				continue
			}
		}
		out = append(out, op)
	}
	return renumber(out)
}

var counterPlants = []plant{
	{"clean", func(ops []history.Op) []history.Op { return ops }, Valid},
	{"fault window, unknown outcomes", func(ops []history.Op) []history.Op { return unanswered(withFaults(ops)) }, Valid},
	{"faults, losses revealed at several times", func(ops []history.Op) []history.Op { return counterLosses(faulted(ops)) }, Invalid},
	{"lost adds", func(ops []history.Op) []history.Op {
		// Final values short of what was acknowledged, on more keys than
		// the examples kept; one of them short of every increment (an
		// unexplained deficit), one of them earlier too (a backwards read).
		for i, key := range []string{"c7", "c2", "c11", "c5", "c13", "c0"} {
			lastOf(ops, key, "read").Value = rawInt(int64(i))
		}
		okOf(ops, "c9", "read", func(i int) bool { return i == 30 }, func(op *history.Op) { op.Value = rawInt(0) })
		return ops
	}, Invalid},
	{"reads above bound", func(ops []history.Op) []history.Op {
		for _, key := range []string{"c3", "c12", "c1", "c8"} {
			okOf(ops, key, "read", func(i int) bool { return i%5 == 2 }, func(op *history.Op) {
				n, _ := op.Int()
				op.Value = rawInt(n + 10_000)
			})
		}
		return ops
	}, Invalid},
	{"garbage replies", func(ops []history.Op) []history.Op {
		for _, key := range []string{"c4", "c14", "c6", "c10"} {
			okOf(ops, key, "read", func(i int) bool { return i%7 == 1 }, func(op *history.Op) { op.Value = json.RawMessage(`"x"`) })
		}
		return ops
	}, Invalid},
	{"replica reads", func(ops []history.Op) []history.Op {
		for _, key := range []string{"c1", "c6", "c12", "c3"} {
			okOf(ops, key, "read", func(i int) bool { return i%3 == 0 }, func(op *history.Op) {
				op.SetReplica(true)
				if op.Index%2 == 0 {
					op.Value = rawInt(0) // stale
				}
			})
		}
		okOf(ops, "c9", "read", func(i int) bool { return i == 5 }, func(op *history.Op) { op.SetReplica(true); op.Value = rawInt(-3) })
		return ops
	}, Invalid},
	{"resent adds", func(ops []history.Op) []history.Op {
		for _, key := range []string{"c2", "c13", "c4"} {
			okOf(ops, key, "add", func(i int) bool { return i%4 == 0 }, func(op *history.Op) { op.SetAttempts(2, 1) })
			lastOf(ops, key, "read").Value = rawInt(1 << 40)
		}
		return ops
	}, Invalid},
	{"no final read, malformed adds", func(ops []history.Op) []history.Op {
		out := ops[:0]
		for _, op := range ops {
			if op.Key == "c5" && op.F == "read" {
				continue
			}
			if op.Key == "c8" && op.Type == history.Invoke && op.F == "add" && op.Index%13 == 0 {
				op.Value = json.RawMessage(`"zz"`)
			}
			out = append(out, op)
		}
		return renumber(out)
	}, Invalid}, // the malformed adds' increments are read
	{"no final read", func(ops []history.Op) []history.Op {
		out := ops[:0]
		for _, op := range ops {
			if op.Key != "c5" || op.F != "read" {
				out = append(out, op)
			}
		}
		return renumber(out)
	}, Unknown},
}

// sameOnPartitions checks c whole and on 1, 3, 7 and 16 slot partitions of
// ops (samePartitioned: results.json byte for byte).
func sameOnPartitions(t *testing.T, what string, c Checker, ops []history.Op, want Validity) {
	t.Helper()
	for _, n := range []int{1, 3, 7, 16} {
		whole := samePartitioned(t, what, c, ops, spillOps(t, ops, n))
		if whole.Valid != want {
			t.Fatalf("%s: the whole history is %v (%s), want %v", what, whole.Valid, whole.Why(), want)
		}
	}
}

// The counter checker run partition by partition says what it says of the
// whole history: the same results.json, byte for byte, clean and with each
// kind of anomaly planted, examples capped or not.
func TestPartitionedCounterAgreesWithWhole(t *testing.T) {
	for _, pl := range counterPlants {
		ops := pl.plant(genCounter(7, 16, 120, 4, 0.05))
		for _, maxEx := range []int{2, 50} {
			sameOnPartitions(t, pl.name, Counter(Scope{MaxExamples: maxEx}), ops, pl.want)
		}
	}
}

var setPlants = []plant{
	{"clean", func(ops []history.Op) []history.Op { return ops }, Valid},
	{"fault window, unknown outcomes", func(ops []history.Op) []history.Op { return unanswered(withFaults(ops)) }, Valid},
	{"faults, losses from several times on", func(ops []history.Op) []history.Op { return setLosses(faulted(ops)) }, Invalid},
	{"lost adds", func(ops []history.Op) []history.Op {
		// Each final read misses its first elements; a middle read misses
		// one it is known to hold (stale).
		for _, key := range []string{"s7", "s2", "s11", "s5", "s13", "s0"} {
			fin := lastOf(ops, key, "read")
			vals, _ := fin.Ints()
			fin.SetValue(vals[min(3, len(vals)):])
		}
		okOf(ops, "s9", "read", func(i int) bool { return i == 20 }, func(op *history.Op) {
			vals, _ := op.Ints()
			op.SetValue(vals[1:])
		})
		return ops
	}, Invalid},
	{"unexpected elements", func(ops []history.Op) []history.Op {
		for i, key := range []string{"s3", "s12", "s1", "s8"} {
			okOf(ops, key, "read", func(k int) bool { return k%5 == 2 }, func(op *history.Op) {
				vals, _ := op.Ints()
				op.SetValue(append(vals, int64(1_000_000+i*10+j(op)), 2_000_000))
			})
		}
		return ops
	}, Invalid},
	{"garbage replies", func(ops []history.Op) []history.Op {
		for _, key := range []string{"s4", "s14", "s6", "s10"} {
			okOf(ops, key, "read", func(i int) bool { return i%7 == 1 }, func(op *history.Op) { op.Value = json.RawMessage(`[1,"x"]`) })
			okOf(ops, key, "read", func(i int) bool { return i%7 == 3 }, func(op *history.Op) { op.Value = json.RawMessage(`[5,5]`) })
		}
		return ops
	}, Invalid},
	{"never read, duplicates, malformed", func(ops []history.Op) []history.Op {
		out := ops[:0]
		for _, op := range ops {
			if op.Key == "s5" && op.F == "read" {
				continue
			}
			if op.Key == "s8" && op.Type == history.Invoke && op.F == "add" && op.Index%13 == 0 {
				op.Value = json.RawMessage(`"zz"`)
			}
			out = append(out, op)
		}
		// Another add of an element already added on s1.
		var first *history.Op
		for i := range out {
			if op := &out[i]; op.Key == "s1" && op.Type == history.Invoke && op.F == "add" {
				first = op
				break
			}
		}
		end := out[len(out)-1].Time
		out = append(out,
			history.Op{Time: end + 1, Process: 900, Type: history.Invoke, F: "add", Key: "s1", Value: first.Value},
			history.Op{Time: end + 2, Process: 900, Type: history.OK, F: "add", Key: "s1", Value: first.Value})
		return renumber(out)
	}, Invalid}, // the malformed adds' elements are read
	{"never read", func(ops []history.Op) []history.Op {
		out := ops[:0]
		for _, op := range ops {
			if op.Key != "s5" || op.F != "read" {
				out = append(out, op)
			}
		}
		return renumber(out)
	}, Unknown},
}

// j is a stable number of an op for the planted elements.
func j(op *history.Op) int { return int(op.Index % 7) }

// The set checker run partition by partition says what it says of the
// whole history: the same results.json, byte for byte.
func TestPartitionedSetAgreesWithWhole(t *testing.T) {
	for _, pl := range setPlants {
		ops := pl.plant(genSet(5, 16, 90, 4, 0.05, 0.3))
		for _, maxEx := range []int{2, 50} {
			sameOnPartitions(t, pl.name, Set(Scope{MaxExamples: maxEx}), ops, pl.want)
		}
	}
}

// The stored histories: the old run's JSON lines and gen-6k, every one of
// their counter and set keys, by every checker of the two workloads that
// judges partitions.
func TestPartitionedCounterSetStoredHistories(t *testing.T) {
	for _, tc := range []struct{ path, counter, set string }{
		{"../history/testdata/old-run-history.jsonl", "r:counter:", "r:set:"},
		{"../history/testdata/gen-6k/history.jsonl.zst", "gen:counter:", "gen:set:"},
	} {
		res, err := history.ReadFile(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		cs, ss := Scope{KeyPrefix: tc.counter}, Scope{KeyPrefix: tc.set}
		for _, c := range []Checker{Counter(cs), Set(ss), Counter(Scope{KeyPrefix: tc.counter, MaxExamples: 1}),
			RPO(RPOOptions{Scope: cs, Kind: "counter"}), RPO(RPOOptions{Scope: ss, Kind: "set"}),
			DefaultFailover(RPOOptions{Scope: cs, Kind: "counter"}), DefaultFailover(RPOOptions{Scope: ss, Kind: "set"}),
			WaitProbe(ProbeAtLeast, cs), WaitProbe(ProbeMember, ss)} {
			for _, n := range []int{1, 4, 16} {
				samePartitioned(t, tc.path, c, res.Ops, spillFile(t, tc.path, n))
			}
		}
	}
}

// A partition that cannot be loaded is an error (the caller's unknown),
// never a verdict on what was loaded. (The default-failover checker of a
// run without a default failover says so from the first partition: its
// run-wide entries are the whole's.)
func TestPartitionedCounterSetLoadError(t *testing.T) {
	ops := faulted(genCounter(7, 4, 20, 2, 0))
	p := spillOps(t, ops, 3)
	broken := func(i int, keep *history.Filter) ([]history.Op, error) {
		if i == 2 {
			return nil, errors.New("gone")
		}
		return p.LoadWhere(i, keep)
	}
	for _, c := range []Checker{Counter(), Set(), RPO(RPOOptions{Kind: "counter"}), RPO(RPOOptions{Kind: "set"}),
		DefaultFailover(RPOOptions{Kind: "counter"}), DefaultFailover(RPOOptions{Kind: "set"}), WaitProbe(ProbeAtLeast), WaitProbe(ProbeMember)} {
		if _, err := c.(PartitionChecker).CheckPartitions(WithHistoryEnd(context.Background(), p.Latest), p.N(), broken); err == nil {
			t.Fatalf("%s: no error from a partition that cannot be loaded", c.Name())
		}
	}
}

// withProbes gives the acknowledged adds WAIT probes: all holding the
// write when clean, else with every kind of answer the checker tells
// apart (a replica lacking it, a failed probe, garbage, fewer probes than
// WAIT counted, probes beside a WAIT that counted none).
func withProbes(ops []history.Op, kind ProbeKind, clean bool) []history.Op {
	holds, lacks := "10", "9"
	if kind == ProbeMember {
		holds, lacks = "1", "0"
	}
	probe := func(v string) history.WaitProbe { return history.WaitProbe{Node: "10.0.0.9:6379", Value: &v} }
	n := 0
	for i := range ops {
		op := &ops[i]
		if op.Type != history.OK || op.F != "add" {
			continue
		}
		n++
		w := &history.Wait{Want: 1, Acked: 1, Reply: "10", Probes: []history.WaitProbe{probe(holds)}}
		switch {
		case n%3 == 0:
			w = nil // no WAIT
		case clean:
		case n%11 == 1:
			w.Probes[0] = probe(lacks)
		case n%13 == 1:
			w.Probes[0].Value, w.Probes[0].Error = nil, "i/o timeout"
		case n%17 == 1:
			w.Probes[0] = probe("x")
		case n%19 == 1:
			w.Acked = 2
		case n%23 == 1:
			w.Acked = 0
		}
		op.SetWait(w)
	}
	return ops
}

// The WAIT probe checker, for a counter's probes and a set's, run
// partition by partition says what it says of the whole history.
func TestPartitionedWaitProbeAgreesWithWhole(t *testing.T) {
	for _, tc := range []struct {
		kind ProbeKind
		ops  func() []history.Op
	}{
		{ProbeAtLeast, func() []history.Op { return genCounter(7, 16, 120, 4, 0.05) }},
		{ProbeMember, func() []history.Op { return genSet(5, 16, 90, 4, 0.05, 0.3) }},
	} {
		for _, pl := range []struct {
			name string
			ops  []history.Op
			want Validity
		}{
			{"no probes", tc.ops(), NotApplicable("").Valid},
			{"holding", withProbes(tc.ops(), tc.kind, true), Valid},
			{"every answer", withProbes(tc.ops(), tc.kind, false), Invalid},
			{"every answer, fault window, unknown outcomes", unanswered(withFaults(withProbes(tc.ops(), tc.kind, false))), Invalid},
		} {
			for _, maxEx := range []int{2, 50} {
				sameOnPartitions(t, pl.name, WaitProbe(tc.kind, Scope{MaxExamples: maxEx}), pl.ops, pl.want)
			}
		}
	}
}

// faulted stretches ops to seconds (the RPO's slack, the failover's
// grace), has each op served by its slot's primary of three, and adds the
// run-wide entries the RPO and default-failover checkers read: the nodes'
// addresses, a partition, a kill, a default failover and a takeover; and
// a last op of another workload.
func faulted(ops []history.Op) []history.Op {
	addrs := map[string]string{"n1": "10.0.0.2:6379", "n2": "10.0.0.3:6379", "n3": "10.0.0.4:6379"}
	for i := range ops {
		op := &ops[i]
		op.Time *= 1000
		if op.Process != history.Nemesis && op.Type != history.Invoke {
			op.Node = addrs[[]string{"n1", "n2", "n3"}[history.Keyslot(op.Key)%3]]
		}
	}
	end := ops[len(ops)-1].Time
	ev := func(at int64, typ history.Type, f string, nodes []string, detail string) history.Op {
		op := history.Op{Time: end * at / 100, Process: history.Nemesis, Type: typ, F: f}
		op.SetNodes(nodes)
		if detail != "" {
			op.SetDetail(json.RawMessage(detail))
		}
		return op
	}
	addrsJSON, _ := json.Marshal(map[string]any{"addrs": addrs})
	return renumber(append(ops,
		ev(0, history.Info, history.NodesEvent, nil, string(addrsJSON)),
		ev(20, history.Info, "start-partition", []string{"n1"}, ""),
		ev(40, history.Info, "stop-partition", []string{"n1"}, ""),
		ev(50, history.Info, "start-kill", []string{"n2"}, ""),
		ev(60, history.Info, "stop-kill", []string{"n2"}, ""),
		ev(70, history.Invoke, "start-failover", []string{"n3", "n1"}, `{"mode":"default"}`),
		ev(71, history.Info, "start-failover", []string{"n3", "n1"}, `{"mode":"default","promoted":true}`),
		ev(80, history.Invoke, "start-failover", []string{"n2", "n3"}, `{"mode":"takeover"}`),
		ev(81, history.Info, "start-failover", []string{"n2", "n3"}, `{"mode":"takeover","promoted":true}`),
		// Another workload's op, the history's last entry, in one
		// partition: the takeover's window, never closed, ends there.
		history.Op{Time: end + 1e9, Process: 999_999, Type: history.Invoke, F: "write", Key: "x:other", Value: rawInt(1)},
		history.Op{Time: end + 2e9, Process: 999_999, Type: history.OK, F: "write", Key: "x:other", Value: rawInt(1)},
	))
}

// counterLosses lowers the reads of many keys from several times on
// (before the faults, in the partition, after each failover): losses that
// the final reads show, revealed at those times.
func counterLosses(ops []history.Op) []history.Op {
	end := ops[len(ops)-1].Time
	for i, key := range []string{"c1", "c2", "c3", "c4", "c6", "c8", "c9", "c11", "c12", "c14"} {
		at := end * int64([]int{10, 30, 55, 75, 85, 99}[i%6]) / 100
		d := int64(-1) // what is lost: half of what the first read after at holds
		for j := range ops {
			if op := &ops[j]; op.Key == key && op.Type == history.OK && op.F == "read" && op.Time >= at {
				n, _ := op.Int()
				if d < 0 {
					d = n/2 + int64(i)
				}
				op.Value = rawInt(max(0, n-d))
			}
		}
	}
	return ops
}

// setLosses drops elements from many keys' reads from some point on.
func setLosses(ops []history.Op) []history.Op {
	end := ops[len(ops)-1].Time
	for i, key := range []string{"s1", "s2", "s3", "s4", "s6", "s8", "s9", "s11", "s12", "s14"} {
		at := end * int64([]int{10, 30, 55, 75, 85, 99}[i%6]) / 100
		var drop map[int64]bool
		for j := range ops {
			op := &ops[j]
			if op.Key != key || op.Type != history.OK || op.F != "read" || op.Time < at {
				continue
			}
			vals, _ := op.Ints()
			if drop == nil {
				drop = map[int64]bool{}
				for _, v := range vals[:min(2+i%3, len(vals))] {
					drop[v] = true
				}
			}
			op.SetValue(slices.DeleteFunc(vals, func(v int64) bool { return drop[v] }))
		}
	}
	return ops
}

// The RPO and default-failover checkers of a counter and of a set, run
// partition by partition, say what they say of the whole history: with
// and without fault windows, failovers and losses.
func TestPartitionedRPOAndDefaultFailoverAgreeWithWhole(t *testing.T) {
	for _, tc := range []struct {
		kind string
		ops  func() []history.Op
		lose func([]history.Op) []history.Op
	}{
		{"counter", func() []history.Op { return genCounter(7, 16, 120, 4, 0.05) }, counterLosses},
		{"set", func() []history.Op { return genSet(5, 16, 90, 4, 0.05, 0.3) }, setLosses},
	} {
		for _, h := range []struct {
			name     string
			ops      []history.Op
			lost     bool
			defaults bool
		}{
			{"no fault", tc.ops(), false, false},
			{"faults, nothing lost", faulted(tc.ops()), false, true},
			{"faults, losses", tc.lose(faulted(tc.ops())), true, true},
			{"faults, losses, unknown outcomes", unanswered(tc.lose(faulted(tc.ops()))), true, true},
		} {
			for _, maxEx := range []int{2, 50} {
				o := RPOOptions{Scope: Scope{MaxExamples: maxEx}, Kind: tc.kind, Slack: 100 * time.Millisecond}
				for _, c := range []Checker{RPO(o), DefaultFailover(o)} {
					for _, n := range []int{1, 3, 7, 16} {
						whole := samePartitioned(t, tc.kind+" "+h.name, c, h.ops, spillOps(t, h.ops, n))
						b, _ := json.Marshal(whole)
						switch name := c.Name(); {
						case name == "rpo" && h.lost && !bytes.Contains(b, []byte(`"lost":`)) || name == "rpo" && h.lost && bytes.Contains(b, []byte(`,"lost":0,"per_window"`)):
							t.Fatalf("%s %s: %s lost nothing: %s", tc.kind, h.name, name, b)
						case name == "default-failover" && h.defaults != bytes.Contains(b, []byte(`"default_failovers":1`)):
							t.Fatalf("%s %s: %s: %s", tc.kind, h.name, name, b)
						case name == "default-failover" && h.lost && bytes.Contains(b, []byte(`"lost_by_default_failover":0,"lost_explained_by_no_fault":0,"lost_explained_by_others":0`)):
							t.Fatalf("%s %s: %s judged no loss: %s", tc.kind, h.name, name, b)
						}
					}
				}
			}
		}
	}
}

// The fault windows of a partition end where the whole history's do, which
// the RPO and default-failover checkers need to be told (WithHistoryEnd):
// without it, no verdict.
func TestPartitionedRPONeedsTheHistorysEnd(t *testing.T) {
	ops := setLosses(faulted(genSet(5, 16, 90, 4, 0.05, 0.3)))
	p := spillOps(t, ops, 7)
	for _, c := range []Checker{RPO(RPOOptions{Kind: "set"}), DefaultFailover(RPOOptions{Kind: "set"})} {
		if _, err := c.(PartitionChecker).CheckPartitions(context.Background(), p.N(), p.LoadWhere); err == nil {
			t.Fatalf("%s: a verdict without the history's end", c.Name())
		}
	}
}
