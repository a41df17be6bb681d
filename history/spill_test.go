package history

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
)

// mixedHistory is a history of procs client processes, each invoking
// and completing ops on keys of its choice (so that one process's ops
// fall into several partitions), with nemesis events between them, some
// ops left open (info) at the end. Seeded.
func mixedHistory(seed uint64, entries, procs, keys int) []Op {
	r := rand.New(rand.NewPCG(seed, 7))
	var ops []Op
	open := map[int]string{}
	for i := 0; len(ops) < entries; i++ {
		op := Op{Index: int64(len(ops)), Time: int64(len(ops)) * 1000}
		if r.IntN(50) == 0 {
			op.Process, op.Type, op.F = Nemesis, Info, "start-partition"
			ops = append(ops, op)
			continue
		}
		p := r.IntN(procs)
		op.Process = Process(p)
		if k, busy := open[p]; busy {
			op.Type, op.F, op.Key = []Type{OK, Fail, Info}[r.IntN(3)], "add", k
			delete(open, p)
		} else {
			op.Type, op.F, op.Key = Invoke, "add", fmt.Sprintf("k%d", r.IntN(keys))
			op.SetValue(r.IntN(9))
			open[p] = op.Key
		}
		ops = append(ops, op)
	}
	return ops
}

func keyPartition(n int) func(op *Op) int {
	return func(op *Op) int {
		var k int
		fmt.Sscanf(op.Key, "k%d", &k)
		return k % n
	}
}

// wantPartition is partition i of ops as Spill must give it: the client
// ops of its keys (a completion where its invocation went) and every
// nemesis entry, in the history's order.
func wantPartition(ops []Op, i int, partOf func(*Op) int) []Op {
	var out []Op
	open := map[Process]int{}
	for j := range ops {
		op := &ops[j]
		switch {
		case op.Process == Nemesis:
			out = append(out, *op)
		case op.Type == Invoke:
			open[op.Process] = partOf(op)
			if partOf(op) == i {
				out = append(out, *op)
			}
		default:
			if open[op.Process] == i {
				out = append(out, *op)
			}
			delete(open, op.Process)
		}
	}
	return out
}

// Every partition loads back as the subsequence of the history it must
// be, from the compressed format and from the JSON lines of older runs;
// together they hold every client entry once.
func TestSpillPartitionsAreSubsequences(t *testing.T) {
	ops := mixedHistory(1, 5000, 12, 40)
	for _, format := range []string{FileName, JSONLinesName} {
		b := encodeAll(t, ops)
		if format == FileName {
			b = framed(t, ops, 700)
		}
		path := writeTemp(t, format, b)
		for _, n := range []int{1, 3, 8} {
			partOf := keyPartition(n)
			p, err := Spill(path, t.TempDir(), n, partOf)
			if err != nil {
				t.Fatal(err)
			}
			if p.Read.TruncatedTail || p.Read.Entries != len(ops) {
				t.Fatalf("%s: read %+v, want %d entries, none torn", format, p.Read, len(ops))
			}
			client := 0
			for i := range p.N() {
				got, err := p.Load(i)
				if err != nil {
					t.Fatal(err)
				}
				if want := wantPartition(ops, i, partOf); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s, %d partitions: partition %d has %d entries, want %d", format, n, i, len(got), len(want))
				}
				client += p.Entries(i)
			}
			if client+len(p.RunWide) != len(ops) {
				t.Fatalf("%d client + %d run-wide entries, the history has %d", client, len(p.RunWide), len(ops))
			}
			if err := p.Remove(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Partitions that no key went to give the run-wide entries alone.
	p, err := Spill(writeTemp(t, FileName, framed(t, ops, 700)), t.TempDir(), 3, func(*Op) int { return 0 })
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{1, 2} {
		got, err := p.Load(i)
		if err != nil || p.Entries(i) != 0 || !reflect.DeepEqual(got, p.RunWide) || len(got) == 0 {
			t.Fatalf("empty partition %d: %d entries (%v), want the %d run-wide ones", i, len(got), err, len(p.RunWide))
		}
	}
	// The old run kept as a fixture spills too, whole.
	old := readOld(t)
	p, err = Spill(oldFixture, t.TempDir(), 2, func(op *Op) int { return len(op.Key) % 2 })
	if err != nil {
		t.Fatal(err)
	}
	n := len(p.RunWide)
	for i := range p.N() {
		n += p.Entries(i)
	}
	if n != len(old) {
		t.Fatalf("old run: %d entries spilled, it has %d", n, len(old))
	}
}

// A history torn mid-frame (the run crashed) spills the entries of its
// whole frames and reports the tear exactly as ReadFile does: never a
// prefix taken silently.
func TestSpillTornTailIsReported(t *testing.T) {
	ops := mixedHistory(2, 900, 5, 10)
	b := framed(t, ops, 100)
	for _, cut := range []int{len(b) - 1, len(b) - 50, len(b) / 2} {
		path := writeTemp(t, FileName, b[:cut])
		want, err := ReadFile(path)
		if err != nil || !want.TruncatedTail {
			t.Fatalf("cut at %d: ReadFile %v, torn %v", cut, err, want.TruncatedTail)
		}
		p, err := Spill(path, t.TempDir(), 3, keyPartition(3))
		if err != nil {
			t.Fatal(err)
		}
		want.Entries, want.Ops = len(want.Ops), nil
		if !reflect.DeepEqual(p.Read, want) {
			t.Fatalf("cut at %d: Spill read %+v, ReadFile %+v", cut, p.Read, want)
		}
	}
	// A torn JSON line at the end: the same.
	jl := encodeAll(t, ops)
	path := writeTemp(t, JSONLinesName, jl[:len(jl)-3])
	want, _ := ReadFile(path)
	p, err := Spill(path, t.TempDir(), 2, keyPartition(2))
	if err != nil || !p.Read.TruncatedTail || p.Read.TornLine != want.TornLine || p.Read.TornText != want.TornText {
		t.Fatalf("torn line: Spill read %+v (%v), ReadFile torn line %d", p.Read, err, want.TornLine)
	}
}

// Garbage in the middle is the error ReadFile gives, naming the line; a
// partition that the disk changed after the spill is an error, not a
// shorter history.
func TestSpillRefusesWhatReadFileRefuses(t *testing.T) {
	ops := mixedHistory(3, 300, 4, 6)
	b := encodeAll(t, ops)
	lines := strings.SplitAfter(string(b), "\n")
	lines[100] = "{\"index\":100,\"garbage\n"
	path := writeTemp(t, JSONLinesName, []byte(strings.Join(lines, "")))
	_, want := ReadFile(path)
	_, err := Spill(path, t.TempDir(), 2, keyPartition(2))
	var perr *ParseError
	if !errors.As(err, &perr) || err.Error() != want.Error() {
		t.Fatalf("Spill: %v, ReadFile: %v", err, want)
	}

	p, err := Spill(writeTemp(t, FileName, framed(t, ops, 50)), t.TempDir(), 2, keyPartition(2))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Load(0); err == nil {
		t.Fatal("a removed partition loaded")
	}
	if _, err := Spill(writeTemp(t, FileName, framed(t, ops, 50)), t.TempDir(), 2, func(*Op) int { return 5 }); err == nil {
		t.Fatal("a partition out of range was taken")
	}
}

// Scan hands over every entry ReadFile decodes, equal, with its raw line.
func TestScanMatchesReadFile(t *testing.T) {
	ops := mixedHistory(4, 2000, 8, 20)
	path := writeTemp(t, FileName, framed(t, ops, 300))
	want, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []Op
	res, err := Scan(path, func(op *Op, raw []byte) error {
		if !strings.Contains(string(raw), fmt.Sprintf(`"index":%d,`, op.Index)) {
			return fmt.Errorf("entry %d came with line %s", op.Index, raw)
		}
		got = append(got, *op)
		return nil
	})
	if err != nil || !reflect.DeepEqual(got, want.Ops) || res.Entries != len(want.Ops) {
		t.Fatalf("Scan: %d entries (%v), ReadFile %d", len(got), err, len(want.Ops))
	}
	stop := errors.New("stop")
	if _, err := Scan(path, func(*Op, []byte) error { return stop }); err != stop {
		t.Fatalf("fn's error: %v", err)
	}
}

// Spill says whether a history pairs and its indexes increase: a checker
// that judges partitions one at a time needs both to say what it says of
// the whole history, and a history that lies in either is checked whole.
func TestSpillSaysWhetherPartitionsStandForTheWhole(t *testing.T) {
	for _, tc := range []struct {
		name            string
		change          func(ops []Op) []Op
		paired, ordered bool
	}{
		{"as recorded", func(ops []Op) []Op { return ops }, true, true},
		{"an index given twice", func(ops []Op) []Op { ops[40].Index = ops[39].Index; return ops }, true, false},
		{"indexes out of order", func(ops []Op) []Op { ops[40].Index, ops[41].Index = ops[41].Index, ops[40].Index; return ops }, true, false},
		{"a completion of nothing", func(ops []Op) []Op {
			return append(ops, Op{Index: int64(len(ops)), Process: 999, Type: OK, F: "add", Key: "k1"})
		}, false, true},
		{"an invocation while one is open", func(ops []Op) []Op {
			n := len(ops)
			return append(ops, Op{Index: int64(n), Process: 999, Type: Invoke, F: "add", Key: "k1"}, Op{Index: int64(n + 1), Process: 999, Type: Invoke, F: "add", Key: "k2"})
		}, false, true},
	} {
		ops := tc.change(mixedHistory(3, 300, 5, 10))
		p, err := Spill(writeTemp(t, FileName, framed(t, ops, 100)), t.TempDir(), 3, SlotPartition(3))
		if err != nil {
			t.Fatal(err)
		}
		if p.Paired != tc.paired || p.IndexesIncrease != tc.ordered {
			t.Fatalf("%s: paired %v, indexes increase %v; want %v, %v", tc.name, p.Paired, p.IndexesIncrease, tc.paired, tc.ordered)
		}
	}
}

// LoadWhere keeps the client ops whose invocation it is told to, with
// their completions, and every run-wide entry, in the history's order.
func TestSpillLoadWhereKeepsOpsWhole(t *testing.T) {
	ops := mixedHistory(4, 3000, 9, 30)
	partOf := keyPartition(4)
	p, err := Spill(writeTemp(t, FileName, framed(t, ops, 300)), t.TempDir(), 4, partOf)
	if err != nil {
		t.Fatal(err)
	}
	ones := &Filter{KeyPrefix: "k1"} // k1, k10 ... k19
	even := ones.Keeps
	for i := range p.N() {
		got, err := p.LoadWhere(i, ones)
		if err != nil {
			t.Fatal(err)
		}
		var want []Op
		kept := map[Process]bool{}
		for _, op := range wantPartition(ops, i, partOf) {
			if op.Process != Nemesis {
				if op.Type == Invoke {
					kept[op.Process] = even(&op)
				}
				if !kept[op.Process] {
					continue
				}
			}
			want = append(want, op)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("partition %d: %d entries kept, want %d", i, len(got), len(want))
		}
	}
}

// LoadWhere allocates what a Filter keeps once, at its size (a hot key's
// ops are not grown by copies). The history lies too: a process invokes
// twice and a completion comes with no invocation open.
func TestSpillLoadWhereSizesWhatItKeeps(t *testing.T) {
	ops := mixedHistory(5, 3000, 9, 30)
	ops = append(ops,
		Op{Index: 3000, Process: 3, Type: Invoke, F: "add", Key: "k7", Value: []byte("1")},
		Op{Index: 3001, Process: 3, Type: Invoke, F: "read", Key: "k8"},
		Op{Index: 3002, Process: 77, Type: OK, F: "add", Key: "k9"})
	partOf := keyPartition(4)
	p, err := Spill(writeTemp(t, FileName, framed(t, ops, 300)), t.TempDir(), 4, partOf)
	if err != nil {
		t.Fatal(err)
	}
	runWide := map[int64]bool{} // kept whatever keep says
	for _, op := range p.RunWide {
		runWide[op.Index] = true
	}
	for i := range p.N() {
		for name, keep := range map[string]*Filter{"adds of k2*": {KeyPrefix: "k2", Fs: []string{"add"}}, "reads": {Fs: []string{"read"}}, "k7": {KeyPrefix: "k7"}} {
			got, err := p.LoadWhere(i, keep)
			if err != nil {
				t.Fatal(err)
			}
			all, err := p.Load(i)
			if err != nil {
				t.Fatal(err)
			}
			var want []Op
			kept := map[Process]bool{}
			for _, op := range all {
				if !runWide[op.Index] {
					if op.Type == Invoke {
						kept[op.Process] = keep.Keeps(&op)
					}
					if !kept[op.Process] {
						continue
					}
				}
				want = append(want, op)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("partition %d, %s: %d entries kept, want %d", i, name, len(got), len(want))
			}
			if cap(got) != len(got) {
				t.Errorf("partition %d: %d entries kept in room for %d", i, len(got), cap(got))
			}
		}
		if all, _ := p.Load(i); cap(all) != len(all) {
			t.Errorf("partition %d whole: %d entries in room for %d", i, len(all), cap(all))
		}
	}
}

// A spill by families loads what a spill of one family loads, for every
// Filter: one family, several merged by index, none (the run-wide entries
// alone); a family the Filter keeps none of is not read at all (its file
// gone, the load the same); several families of a history whose indexes
// do not increase cannot be merged in its order and are an error, never a
// load in another order.
func TestSpillFamiliesLoadsAsOneFamily(t *testing.T) {
	ops := mixedHistory(6, 4000, 11, 60)
	path := writeTemp(t, FileName, framed(t, ops, 300))
	partOf := keyPartition(4)
	// k1*, k2* ... by their first digit: k1, k10 ... k19 are one family.
	family := func(op *Op) int { return int(op.Key[1] - '0') }
	one, err := Spill(path, t.TempDir(), 4, partOf)
	if err != nil {
		t.Fatal(err)
	}
	byFamily, err := SpillFamilies(path, t.TempDir(), 4, partOf, family)
	if err != nil {
		t.Fatal(err)
	}
	filters := map[string]*Filter{
		"all": nil, "every key": {}, "k1*": {KeyPrefix: "k1"}, "k2* and k20*": {KeyPrefix: "k2"},
		"reads": {Fs: []string{"read"}}, "adds of k3*": {KeyPrefix: "k3", Fs: []string{"add"}}, "no key": {KeyPrefix: "x"},
	}
	for i := range one.N() {
		if one.Entries(i) != byFamily.Entries(i) {
			t.Fatalf("partition %d: %d entries by family, %d in one", i, byFamily.Entries(i), one.Entries(i))
		}
		for name, f := range filters {
			want, err := one.LoadWhere(i, f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := byFamily.LoadWhere(i, f)
			if err != nil {
				t.Fatalf("partition %d, %s: %v", i, name, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("partition %d, %s: %d entries by family, %d from one file", i, name, len(got), len(want))
			}
			// ScanWhere hands on what LoadWhere returns, in its order,
			// from one family's file or several, and EntriesWhere counts
			// its client ops.
			for _, p := range []*Partitions{one, byFamily} {
				var scanned []Op
				if err := p.ScanWhere(i, f, func(op *Op) error { scanned = append(scanned, *op); return nil }); err != nil {
					t.Fatalf("partition %d, %s: %v", i, name, err)
				}
				if !reflect.DeepEqual(scanned, want) {
					t.Fatalf("partition %d, %s: scanned %d entries, loaded %d", i, name, len(scanned), len(want))
				}
				if n := p.EntriesWhere(i, f); n != len(want)-len(p.RunWide) {
					t.Fatalf("partition %d, %s: EntriesWhere %d, %d loaded", i, name, n, len(want)-len(p.RunWide))
				}
			}
		}
	}
	// The files of the families k1* keeps none of are not read.
	for i := range byFamily.parts {
		for _, sp := range byFamily.parts[i].subs {
			if sp.family != 1 {
				if err := os.Remove(sp.path); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for i := range one.N() {
		want, _ := one.LoadWhere(i, filters["k1*"])
		got, err := byFamily.LoadWhere(i, filters["k1*"])
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("partition %d: k1* read another family's file (%v)", i, err)
		}
		if _, err := byFamily.LoadWhere(i, nil); err == nil {
			t.Fatalf("partition %d: a load of every family without their files", i)
		}
	}

	// Indexes that go back: one family loads, several are refused.
	back := mixedHistory(7, 2000, 9, 60)
	back[1000].Index, back[1001].Index = back[1001].Index, back[1000].Index
	p, err := SpillFamilies(writeTemp(t, FileName, framed(t, back, 300)), t.TempDir(), 2, keyPartition(2), family)
	if err != nil {
		t.Fatal(err)
	}
	if p.IndexesIncrease {
		t.Fatal("indexes that go back said to increase")
	}
	for i := range p.N() {
		if _, err := p.LoadWhere(i, &Filter{KeyPrefix: "k1"}); err != nil {
			t.Errorf("partition %d: one family: %v", i, err)
		}
		if _, err := p.LoadWhere(i, nil); err == nil || !strings.Contains(err.Error(), "do not increase") {
			t.Errorf("partition %d: several families merged without increasing indexes: %v", i, err)
		}
	}
}
