package checker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/history"
)

// txnRun is a generated history of the txn workload and the lists' final
// state, for plants that write after its end.
type txnRun struct {
	ops   []history.Op
	lists map[string][]int64
}

// laGroup and bankGroup are the keys of group g: the op's key, its hash
// tag shared by the lists and accounts it names.
func laGroup(g int) string   { return fmt.Sprintf("{la%d}", g) }
func bankGroup(g int) string { return fmt.Sprintf("{bank%d}", g) }

// genTxn simulates clients running the txn workload's ops against a
// strictly serializable store: list-append transactions on a group's
// lists, bank transfers and reads of a group's accounts, cross-slot MSETs
// refused; each op takes effect at a point inside its interval. A share
// infoFrac of them never complete (their process retires), taking effect
// or not. Then every group is read once more.
func genTxn(seed uint64, clients, opsPerClient, groups int, infoFrac float64) txnRun {
	return genTxnGenerations(seed, clients, opsPerClient, groups, infoFrac, 0)
}

// genTxnGenerations is genTxn whose list-append groups are new every
// perGen ops of a client (0: never), as the workload's generations are:
// the lists, and what a read carries, stay short however long the run.
func genTxnGenerations(seed uint64, clients, opsPerClient, groups int, infoFrac float64, perGen int) txnRun {
	laKey := func(g, n int) string {
		if perGen == 0 {
			return laGroup(g)
		}
		return fmt.Sprintf("{la%d.%d}", g, n/perGen)
	}
	var laGroups []string
	seenGroup := map[string]bool{}
	r := rand.New(rand.NewPCG(seed, seed^0x7a))
	type sim struct {
		simOp
		mops   [][]any
		from   string
		to     string
		amount int64
	}
	var all []*sim
	proc := clients
	for g := range groups {
		bal := map[string]int64{}
		for a := range 5 {
			bal[fmt.Sprintf("%s:acct%d", bankGroup(g), a)] = 100
		}
		in, _ := json.Marshal(bal)
		all = append(all, &sim{simOp: simOp{proc: g, f: BankInit, key: bankGroup(g), in: in, call: int64(g), lin: int64(g) + 1, ret: int64(g) + 2,
			typ: history.OK, applied: true, completion: true}})
	}
	next := int64(1)
	var end int64
	for c := range clients {
		p, now := c, int64(groups+10)
		for n := range opsPerClient {
			now += r.Int64N(5)
			s := &sim{simOp: simOp{proc: p, call: now, ret: now + 1 + r.Int64N(20), typ: history.OK, applied: true, completion: true}}
			s.lin = s.call + r.Int64N(s.ret-s.call+1)
			switch k := r.IntN(100); {
			case k < 2:
				s.f, s.key = CrossSlotTxn, "{cross-a}"
				s.in, _ = json.Marshal([]string{"{cross-a}x", "{cross-b}y"})
			case k < 27:
				s.f, s.key = BankTransfer, bankGroup(r.IntN(groups))
				from := r.IntN(5)
				s.from = fmt.Sprintf("%s:acct%d", s.key, from)
				s.to = fmt.Sprintf("%s:acct%d", s.key, (from+1+r.IntN(4))%5)
				s.amount = 1 + r.Int64N(30)
				s.in, _ = json.Marshal(map[string]any{"from": s.from, "to": s.to, "amount": s.amount})
			case k < 40:
				s.f, s.key = BankReadAll, bankGroup(r.IntN(groups))
			default:
				s.f, s.key = ListAppendTxn, laKey(r.IntN(groups), n)
				if !seenGroup[s.key] {
					seenGroup[s.key] = true
					laGroups = append(laGroups, s.key)
				}
				for range 1 + r.IntN(4) {
					k := fmt.Sprintf("%s:l%d", s.key, r.IntN(4))
					if r.IntN(2) == 0 {
						s.mops = append(s.mops, []any{"r", k, nil})
					} else {
						s.mops = append(s.mops, []any{"append", k, next})
						next++
					}
				}
				s.in, _ = json.Marshal(s.mops)
			}
			if r.Float64() < infoFrac && s.f != CrossSlotTxn {
				s.typ, s.completion, s.applied = history.Info, false, r.IntN(2) == 0
				proc++
				p = proc + clients
			}
			all = append(all, s)
			now = s.ret
		}
		end = max(end, now)
	}
	// The final reads, one process, one group after another.
	if perGen == 0 {
		laGroups = laGroups[:0]
		for g := range groups {
			laGroups = append(laGroups, laGroup(g))
		}
	}
	for i, group := range laGroups {
		end += 10
		mops := [][]any{}
		for l := range 4 {
			mops = append(mops, []any{"r", fmt.Sprintf("%s:l%d", group, l), nil})
		}
		in, _ := json.Marshal(mops)
		all = append(all, &sim{simOp: simOp{proc: 10_000, f: ListAppendTxn, key: group, in: in, call: end, lin: end + 1, ret: end + 2, typ: history.OK, applied: true, completion: true}, mops: mops})
		end += 2
		if i < groups {
			all = append(all, &sim{simOp: simOp{proc: 10_000, f: BankReadAll, key: bankGroup(i), call: end + 1, lin: end + 2, ret: end + 3, typ: history.OK, applied: true, completion: true}})
			end += 3
		}
	}
	// Take effect in the order of the points.
	byLin := slices.Clone(all)
	slices.SortStableFunc(byLin, func(a, b *sim) int { return cmpInt(a.lin, b.lin) })
	lists := map[string][]int64{}
	bal := map[string]int64{}
	for _, s := range byLin {
		switch s.f {
		case CrossSlotTxn:
			s.typ, s.err = history.Fail, "CROSSSLOT Keys in request don't hash to the same slot"
		case BankInit:
			var m map[string]int64
			_ = json.Unmarshal(s.in, &m)
			for k, v := range m {
				bal[k] = v
			}
		case BankTransfer:
			switch {
			case bal[s.from] < s.amount:
				if s.completion {
					s.typ, s.err = history.Fail, "insufficient-funds"
				}
			case s.applied:
				bal[s.from] -= s.amount
				bal[s.to] += s.amount
			}
			if s.typ == history.OK {
				s.out = s.in
			}
		case BankReadAll:
			m := map[string]int64{}
			for a := range 5 {
				k := fmt.Sprintf("%s:acct%d", s.key, a)
				m[k] = bal[k]
			}
			s.out, _ = json.Marshal(m)
		case ListAppendTxn:
			if !s.applied {
				continue
			}
			done := make([][]any, len(s.mops))
			for i, m := range s.mops {
				k := m[1].(string)
				if m[0] == "append" {
					lists[k] = append(lists[k], m[2].(int64))
					done[i] = m
					continue
				}
				done[i] = []any{"r", k, append([]int64{}, lists[k]...)}
			}
			s.out, _ = json.Marshal(done)
		}
	}
	sims := make([]simOp, len(all))
	for i, s := range all {
		sims[i] = s.simOp
	}
	return txnRun{ops: emit(sims), lists: lists}
}

// editTxn rewrites the micro-ops of a txn entry.
func editTxn(op *history.Op, edit func(mops [][]any)) {
	d := json.NewDecoder(bytes.NewReader(op.Value))
	d.UseNumber()
	var mops [][]any
	if err := d.Decode(&mops); err != nil {
		panic(err)
	}
	edit(mops)
	op.SetValue(mops)
}

// withTxns appends list-append transactions after the run's end: each
// [process, start, end (0: never completes), micro-ops as completed].
func withTxns(ops []history.Op, group string, txns ...[]any) []history.Op {
	end := ops[len(ops)-1].Time
	for _, t := range txns {
		p, start, stop, done := t[0].(int), t[1].(int64), t[2].(int64), t[3].([][]any)
		inv := make([][]any, len(done))
		for i, m := range done {
			inv[i] = m
			if m[0] == "r" {
				inv[i] = []any{"r", m[1], nil}
			}
		}
		key := group
		if len(t) > 4 {
			key = t[4].(string)
		}
		in := history.Op{Time: end + start, Process: history.Process(p), Type: history.Invoke, F: ListAppendTxn, Key: key}
		in.SetValue(inv)
		ops = append(ops, in)
		if stop > 0 {
			out := history.Op{Time: end + stop, Process: history.Process(p), Type: history.OK, F: ListAppendTxn, Key: key}
			out.SetValue(done)
			ops = append(ops, out)
		}
	}
	return renumber(ops)
}

func plus(l []int64, v ...int64) []int64 { return append(slices.Clone(l), v...) }

// txnPlants are anomalies and lies written into a clean txn history; want
// is the verdict of the whole history by each checker then (list-append,
// bank, cross-slot).
type txnPlant struct {
	name  string
	plant func(run txnRun) []history.Op
	want  [3]Validity
}

var txnPlants = []txnPlant{
	{"clean", func(run txnRun) []history.Op { return run.ops }, [3]Validity{Valid, Valid, Valid}},
	{"lost appends", func(run txnRun) []history.Op {
		// Elements dropped from every read of several lists: acknowledged
		// appends the final reads lack.
		for i, k := range []string{"{la1}:l2", "{la4}:l0", "{la6}:l3", "{la0}:l1", "{la3}:l3"} {
			l := run.lists[k]
			drop := map[string]bool{}
			for _, at := range []int{10, 55, 85} {
				drop[fmt.Sprint(l[len(l)*(at+i)/100])] = true
			}
			for j := range run.ops {
				if op := &run.ops[j]; op.F == ListAppendTxn && op.Type == history.OK {
					editTxn(op, func(mops [][]any) {
						for _, m := range mops {
							if vs, ok := m[2].([]any); ok && m[0] == "r" && m[1] == k {
								m[2] = slices.DeleteFunc(vs, func(v any) bool { return drop[fmt.Sprint(v)] })
							}
						}
					})
				}
			}
		}
		return run.ops
	}, [3]Validity{Invalid, Valid, Valid}},
	{"G1c, and a future read around a transaction of another group", func(run txnRun) []history.Op {
		l0, l1, l2 := "{la0}:l0", "{la0}:l1", "{la2}:l0"
		return withTxns(run.ops, "{la0}",
			// Each reads the other's append: a G1c cycle.
			[]any{8001, int64(100), int64(200), [][]any{{"append", l0, 900001}, {"r", l1, plus(run.lists[l1], 900002)}}},
			[]any{8002, int64(110), int64(190), [][]any{{"append", l1, 900002}, {"r", l0, plus(run.lists[l0], 900001)}}},
			// A read of an append made after it committed, the real-time
			// path through a transaction of another group: G1c-realtime.
			[]any{8003, int64(300), int64(310), [][]any{{"r", l2, plus(run.lists[l2], 900003)}}, "{la2}"},
			[]any{8004, int64(320), int64(330), [][]any{{"r", "{la3}:l1", run.lists["{la3}:l1"]}}, "{la3}"},
			[]any{8005, int64(340), int64(350), [][]any{{"append", l2, 900003}}, "{la2}"},
			// Read back, so that no append is left unread.
			[]any{8006, int64(400), int64(410), [][]any{{"r", l0, plus(run.lists[l0], 900001)}, {"r", l1, plus(run.lists[l1], 900002)}}},
			[]any{8007, int64(420), int64(430), [][]any{{"r", l2, plus(run.lists[l2], 900003)}}, "{la2}"},
		)
	}, [3]Validity{Invalid, Valid, Valid}},
	{"transactions naming keys of other slots", func(run txnRun) []history.Op {
		// No workload sends one, but a history may hold it: the
		// partitions of {la0}, {la3} and {la4} are analysed together.
		return withTxns(run.ops, "{la0}",
			[]any{8101, int64(100), int64(110), [][]any{{"append", "{la3}:l1", 777777}, {"r", "{la4}:l2", run.lists["{la4}:l2"]}}},
			[]any{8102, int64(120), int64(130), [][]any{{"r", "{la3}:l1", plus(run.lists["{la3}:l1"], 777777)}}, "{la6}"},
		)
	}, [3]Validity{Valid, Valid, Valid}},
	{"bank totals wrong, negative and missing accounts", func(run txnRun) []history.Op {
		for _, g := range []int{1, 5, 2} {
			okOf(run.ops, bankGroup(g), BankReadAll, func(i int) bool { return i%4 == 1 }, func(op *history.Op) {
				var m map[string]int64
				_ = json.Unmarshal(op.Value, &m)
				m[bankGroup(g)+":acct0"]++
				if op.Index%3 == 0 {
					m[bankGroup(g)+":acct1"] = -m[bankGroup(g)+":acct0"]
				}
				if op.Index%5 == 0 {
					delete(m, bankGroup(g)+":acct4")
				}
				op.SetValue(m)
			})
		}
		return run.ops
	}, [3]Validity{Valid, Invalid, Valid}},
	{"cross-slot replies", func(run txnRun) []history.Op {
		n := 0
		for i := range run.ops {
			if op := &run.ops[i]; op.F == CrossSlotTxn && op.Type == history.Fail {
				if n++; n%3 == 0 {
					op.Type, op.Ext = history.OK, nil
				}
			}
		}
		// And CROSSSLOT refusals of ops meant to share a slot.
		okOf(run.ops, laGroup(3), ListAppendTxn, func(i int) bool { return i == 2 }, func(op *history.Op) {
			op.Type, op.Value = history.Fail, nil
			op.SetError("CROSSSLOT Keys in request don't hash to the same slot")
		})
		return run.ops
	}, [3]Validity{Invalid, Valid, Invalid}}, // list-append: a read of the refused txn's appends (G1a)
	{"garbage replies", func(run txnRun) []history.Op {
		for _, g := range []int{2, 6, 1} {
			okOf(run.ops, laGroup(g), ListAppendTxn, func(i int) bool { return i%9 == 4 }, func(op *history.Op) { op.Value = json.RawMessage(`"garbage"`) })
			okOf(run.ops, laGroup(g), ListAppendTxn, func(i int) bool { return i%9 == 6 }, func(op *history.Op) {
				editTxn(op, func(mops [][]any) {
					for _, m := range mops {
						if m[0] == "r" {
							m[2] = []any{"x"}
						}
					}
				})
			})
			okOf(run.ops, bankGroup(g), BankReadAll, func(i int) bool { return i%5 == 2 }, func(op *history.Op) { op.Value = json.RawMessage(`{"a":"b"}`) })
			okOf(run.ops, bankGroup(g), BankTransfer, func(i int) bool { return i%6 == 3 }, func(op *history.Op) { op.Value = json.RawMessage(`7`) })
		}
		return run.ops
	}, [3]Validity{Invalid, Invalid, Valid}},
	{"torn: the last 30% lost", func(run txnRun) []history.Op {
		return run.ops[:len(run.ops)*7/10]
	}, [3]Validity{Unknown, Valid, Valid}},
	{"no final reads", func(run txnRun) []history.Op {
		cut := slices.IndexFunc(run.ops, func(op history.Op) bool { return op.Process == 10_000 })
		return run.ops[:cut]
	}, [3]Validity{Unknown, Valid, Valid}},
}

// txnMissingEvidence are the plants that take away list-append's evidence:
// unknown, or invalid where a transaction that read a key, appended to it
// and read it again is the key's last reader (lostAppends takes its first
// read for the latest, a false lost-append of the whole check, kept as
// it is here: this test compares the two paths).
var txnMissingEvidence = []string{"torn: the last 30% lost", "no final reads"}

// sameTxnCheckers checks each of the txn workload's checkers whole and on
// 1, 3, 7 and 16 slot partitions of ops (samePartitioned: results.json
// byte for byte) and returns the whole's verdicts.
func sameTxnCheckers(t *testing.T, what string, ops []history.Op, checkers []Checker) []Validity {
	t.Helper()
	var out []Validity
	for _, n := range []int{1, 3, 7, 16} {
		p := spillOps(t, ops, n)
		for i, c := range checkers {
			whole := samePartitioned(t, what+" "+c.Name(), c, ops, p)
			if n == 1 {
				out = append(out, whole.Valid)
			} else if whole.Valid != out[i] {
				t.Fatalf("%s: %s", what, c.Name())
			}
		}
	}
	return out
}

// The list-append, bank and cross-slot checkers run partition by
// partition say what they say of the whole history: the same
// results.json, byte for byte, clean and with each kind of anomaly and
// lie planted, examples capped or not.
func TestPartitionedTxnAgreesWithWhole(t *testing.T) {
	for _, pl := range txnPlants {
		ops := pl.plant(genTxn(3, 8, 150, 8, 0.04))
		var checkers []Checker
		for _, maxEx := range []int{2, 50} {
			o := Scope{MaxExamples: maxEx}
			checkers = append(checkers, ListAppend(o), Bank(0, o), CrossSlot(o))
		}
		all := sameTxnCheckers(t, pl.name, ops, checkers)
		for got := range slices.Chunk(all, 3) {
			if slices.Contains(txnMissingEvidence, pl.name) && got[0] == Invalid {
				got[0] = Unknown
			}
			if !slices.Equal(got, pl.want[:]) {
				t.Fatalf("%s: the whole history is %v, want %v", pl.name, got, pl.want)
			}
		}
	}
}

// The plants find what they plant (not some other anomaly that makes the
// verdict by chance), and the cross-slot one takes the path that analyses
// several partitions together.
func TestPartitionedTxnPlants(t *testing.T) {
	classes := func(ops []history.Op) []string {
		r := ListAppend().Check(context.Background(), NewHistory(ops))
		return r.Figures.(*ListAppendFigures).AnomalyTypes
	}
	for name, want := range map[string][]string{
		// Dropped from every read, an append is missing from its own
		// transaction's reads too (internal), from its block of appends
		// (fractured), and the read before it ends another's (G1b).
		"lost appends": {"G1b", "internal", "lost-append", "fractured-appends"},
		"G1c, and a future read around a transaction of another group": {"G1c", "G1c-realtime"},
	} {
		i := slices.IndexFunc(txnPlants, func(p txnPlant) bool {
			return p.name == name
		})
		if got := classes(txnPlants[i].plant(genTxn(3, 8, 150, 8, 0.04))); !slices.Equal(got, want) {
			t.Fatalf("%s: classes %v, want %v", name, got, want)
		}
	}
	// The future read's cycle goes through {la3}'s transaction, of another
	// partition at every n: the real-time edges of every partition are
	// in one graph.
	for _, n := range []int{3, 7, 16} {
		slot := func(k string) int { return history.Keyslot(k) % n }
		if slot("{la2}") == slot("{la3}") {
			t.Fatalf("%d partitions: {la2} and {la3} share one", n)
		}
	}
	// A key named by transactions of two partitions makes txnUnits
	// analyse them as one.
	i := slices.IndexFunc(txnPlants, func(p txnPlant) bool {
		return strings.HasPrefix(p.name, "transactions naming")
	})
	ops := txnPlants[i].plant(genTxn(3, 8, 150, 8, 0.04))
	for _, n := range []int{3, 7, 16} {
		p := spillOps(t, ops, n)
		keep := &history.Filter{Fs: []string{ListAppendTxn}}
		units, _, err := txnUnits(n, p.LoadWhere, keep, func(ops []history.Op) (int, []uint64, error) {
			calls, err := Scope{}.calls(NewHistory(ops))
			if err != nil {
				return 0, nil, err
			}
			txns, _ := parseListAppend(calls, &anomalyLog{count: map[string]int{}, examples: map[string][]any{}})
			return len(txns), txnKeyHashes(txns), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(units) >= n {
			t.Fatalf("%d partitions: %d units, none analysed together", n, len(units))
		}
	}
}

// Lies the spill itself tells apart (a completion missing mid-run, a
// completion before its invocation, indexes out of order) send the
// history down the whole path; the whole is then never valid where the
// lie hides the evidence, and the partitions, if asked anyway, never
// valid either.
func TestPartitionedTxnLies(t *testing.T) {
	run := genTxn(5, 6, 100, 5, 0.03)
	missing := slices.Clone(run.ops)
	for i := len(missing) / 2; ; i++ {
		// A completion whose process invokes again.
		op := missing[i]
		if op.F == ListAppendTxn && op.Type == history.OK && slices.ContainsFunc(missing[i+1:], func(o history.Op) bool {
			return o.Process == op.Process && o.Type == history.Invoke
		}) {
			missing = renumber(slices.Delete(missing, i, i+1))
			break
		}
	}
	swapped := slices.Clone(run.ops)
	for i := len(swapped) / 3; ; i++ {
		if op := swapped[i]; op.F == BankTransfer && op.Type == history.Invoke {
			// Its completion first.
			for j := i + 1; ; j++ {
				if swapped[j].Process == op.Process {
					swapped[i].Index, swapped[j].Index = swapped[j].Index, swapped[i].Index
					swapped[i], swapped[j] = swapped[j], swapped[i]
					break
				}
			}
			break
		}
	}
	unordered := slices.Clone(run.ops)
	unordered[10].Index, unordered[11].Index = unordered[11].Index, unordered[10].Index
	// seen are the checkers that load the ops the lie is told of (the
	// others keep only their own ops of each partition).
	for _, lie := range []struct {
		name   string
		ops    []history.Op
		paired bool
		seen   []string
	}{
		{"a completion missing", missing, false, []string{"list-append", "rpo", "default-failover"}},
		{"a completion before its invocation", swapped, false, []string{"bank", "cross-slot", "rpo", "default-failover"}},
		{"indexes out of order", unordered, true, nil},
	} {
		for _, c := range []Checker{ListAppend(), Bank(0), CrossSlot(), RPO(RPOOptions{Kind: "list-append"}), DefaultFailover(RPOOptions{Kind: "list-append"})} {
			whole := c.Check(context.Background(), NewHistory(lie.ops))
			if !lie.paired && whole.Valid == Valid {
				t.Fatalf("%s: %s says valid", lie.name, c.Name())
			}
			for _, n := range []int{1, 3, 7} {
				p := spillOpsAny(t, lie.ops, n)
				if p.Paired && p.IndexesIncrease {
					t.Fatalf("%s: the spill takes it for a history a partitioned check takes", lie.name)
				}
				res, err := c.(PartitionChecker).CheckPartitions(WithHistoryEnd(context.Background(), p.Latest), p.N(), p.LoadWhere)
				if err == nil && slices.Contains(lie.seen, c.Name()) && res.Valid == Valid {
					t.Fatalf("%s, %d partitions: %s says valid", lie.name, n, c.Name())
				}
			}
		}
	}
}

// spillOpsAny is spillOps of a history the partitioned check may refuse.
func spillOpsAny(t *testing.T, ops []history.Op, n int) *history.Partitions {
	t.Helper()
	var lines bytes.Buffer
	for i := range ops {
		if err := history.Encode(&lines, &ops[i]); err != nil {
			t.Fatal(err)
		}
	}
	path := t.TempDir() + "/" + history.JSONLinesName
	if err := os.WriteFile(path, lines.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := history.Spill(path, t.TempDir(), n, history.SlotPartition(n))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The RPO and default-failover checkers of list-append run partition by
// partition say what they say of the whole history: with and without
// fault windows, failovers and lost appends, and with transactions naming
// keys of other slots.
func TestPartitionedTxnRPOAndDefaultFailover(t *testing.T) {
	lost, cross := txnPlants[1].plant, txnPlants[3].plant
	for _, h := range []struct {
		name string
		ops  []history.Op
	}{
		{"no fault", genTxn(7, 8, 150, 8, 0.04).ops},
		{"faults, nothing lost", faulted(genTxn(7, 8, 150, 8, 0.04).ops)},
		{"faults, lost appends", faulted(lost(genTxn(7, 8, 150, 8, 0.04)))},
		{"faults, lost appends, keys of other slots", faulted(cross(txnRun{ops: lost(genTxn(7, 8, 150, 8, 0.04)), lists: genTxn(7, 8, 150, 8, 0.04).lists}))},
		{"bank only", faulted(slices.DeleteFunc(genTxn(7, 8, 150, 8, 0.04).ops, func(op history.Op) bool { return op.F == ListAppendTxn }))},
	} {
		for _, maxEx := range []int{2, 50} {
			o := RPOOptions{Scope: Scope{MaxExamples: maxEx}, Kind: "list-append", Slack: 100 * time.Millisecond}
			for _, n := range []int{1, 3, 7, 16} {
				ops := renumber(slices.Clone(h.ops))
				p := spillOps(t, ops, n)
				for _, c := range []Checker{RPO(o), DefaultFailover(o)} {
					whole := samePartitioned(t, h.name+" "+c.Name(), c, ops, p)
					if b, _ := json.Marshal(whole); strings.HasPrefix(h.name, "faults, lost") && c.Name() == "rpo" && bytes.Contains(b, []byte(`"kind":"list-append","lost":0,`)) {
						t.Fatalf("%s: rpo lost nothing: %s", h.name, b)
					}
				}
			}
		}
	}
}

// The stored histories (the adversary's corpus, with runs of the txn
// workload under kills, partitions and failovers; gen-6k; the old run):
// each txn checker on 1, 3, 7 and 16 partitions says what it says whole.
func TestPartitionedTxnStoredHistories(t *testing.T) {
	for _, h := range storedHistories(t) {
		for _, n := range []int{1, 3, 7, 16} {
			p := spillOpsAny(t, h.ops, n)
			if !p.Paired || !p.IndexesIncrease {
				t.Fatalf("%s: not a history the partitioned check takes", h.name)
			}
			for _, c := range []Checker{ListAppend(), Bank(0), CrossSlot(), ListAppend(Scope{MaxExamples: 1}),
				RPO(RPOOptions{Kind: "list-append"}), DefaultFailover(RPOOptions{Kind: "list-append"})} {
				samePartitioned(t, h.name+" "+c.Name(), c, h.ops, p)
			}
		}
	}
}

// A partition that cannot be loaded is an error (the caller's unknown),
// never a verdict on what was loaded.
func TestPartitionedTxnLoadError(t *testing.T) {
	ops := faulted(genTxn(9, 4, 60, 4, 0).ops)
	p := spillOps(t, ops, 3)
	broken := func(i int, keep *history.Filter) ([]history.Op, error) {
		if i == 2 {
			return nil, fmt.Errorf("gone")
		}
		return p.LoadWhere(i, keep)
	}
	for _, c := range []Checker{ListAppend(), Bank(0), CrossSlot(), RPO(RPOOptions{Kind: "list-append"}), DefaultFailover(RPOOptions{Kind: "list-append"})} {
		if _, err := c.(PartitionChecker).CheckPartitions(WithHistoryEnd(context.Background(), p.Latest), p.N(), broken); err == nil {
			t.Fatalf("%s: no error from a partition that cannot be loaded", c.Name())
		}
	}
	for _, c := range []Checker{RPO(RPOOptions{Kind: "list-append"}), DefaultFailover(RPOOptions{Kind: "list-append"})} {
		if _, err := c.(PartitionChecker).CheckPartitions(context.Background(), p.N(), p.LoadWhere); err == nil {
			t.Fatalf("%s: a verdict without the history's end", c.Name())
		}
	}
}

// unionOps keeps every client op of the partitions it joins and one copy
// of each run-wide entry, even where a census appended to one partition
// (redline check's census.json) has the index of another's client op.
func TestUnionOps(t *testing.T) {
	nem := func(i int64, f string) history.Op {
		return history.Op{Index: i, Process: history.Nemesis, Type: history.Info, F: f}
	}
	cl := func(i int64, p history.Process, typ history.Type) history.Op {
		return history.Op{Index: i, Process: p, Type: typ, F: ListAppendTxn}
	}
	a := []history.Op{nem(0, "nodes"), cl(1, 1, history.Invoke), cl(2, 1, history.OK), nem(5, "start-kill"), nem(6, history.CensusEvent)}
	b := []history.Op{nem(0, "nodes"), cl(3, 2, history.Invoke), cl(4, 2, history.OK), nem(5, "start-kill"), cl(6, 2, history.Invoke), cl(7, 2, history.OK), nem(8, history.CensusEvent)}
	var got []string
	for _, op := range unionOps([][]history.Op{a, b}) {
		got = append(got, fmt.Sprintf("%d:%d", op.Index, op.Process))
	}
	want := []string{"0:-1", "1:1", "2:1", "3:2", "4:2", "5:-1", "6:-1", "6:2", "7:2", "8:-1"}
	if !slices.Equal(got, want) {
		t.Fatalf("union %v, want %v", got, want)
	}
}
