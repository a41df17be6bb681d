package history

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// Partitions is a history split by key in one pass (Spill): the client
// ops of each partition in a compressed file of its own on disk, the
// entries that belong to every partition (RunWide: nemesis events,
// markers, the census; a few hundred in a run of hours) in memory. A
// checker whose verdict on a key depends only on that key's ops and the
// run-wide events then loads one partition at a time (Load), and its
// memory is that of the largest partition, not of the run.
type Partitions struct {
	// Read is what the scan of the history tolerated (a torn tail, the
	// entries counted), as ReadFile would report it; Read.Ops is nil.
	Read    ReadResult
	RunWide []Op
	// Paired says every completion followed an open invocation of its
	// process and no process invoked twice: the pairing of each partition
	// is then the whole history's, restricted to it.
	Paired bool
	// IndexesIncrease says every entry's index was above the one before
	// it: the order of the partitions' entries by index is the history's.
	IndexesIncrease bool
	// Latest is the latest time of any entry (0 for none or only earlier
	// ones), NextIndex one above the highest index (0 for none): what a
	// streaming check needs to know of the whole history before its pass
	// (the run's end, where an entry added after the last one goes).
	Latest, NextIndex int64
	dir               string
	parts             []partition
}

// partition is one partition's client entries: one file per family of
// its keys (SpillFamilies; a single one for Spill), so that a load of one
// workload's ops (a Filter of its key prefix) does not decode the others'
// (issue 42: a partition of a 150M-entry history was decoded whole by
// each of 15 checkers, each keeping a third of it).
type partition struct {
	subs []subPartition
}

// subPartition is the file of one family of a partition's keys.
type subPartition struct {
	family  int
	path    string
	entries int
	// kinds counts the partition's entries by their invocation's key
	// and f (a completion under its invocation's): LoadWhere sizes what
	// it keeps from them, so that a hot key's ops are allocated once, not
	// grown by copies that held up to twice them (issue 42). Bounded by
	// the keys, not by the run's length.
	kinds map[opKind]int
	// marks[j] says that runWide run-wide entries came before the
	// file's entry at: the original order of the two streams, kept
	// in one mark per change (at most one per run-wide entry) rather than
	// one per entry.
	marks []mark
}

type mark struct{ at, runWide int }

// opKind is what a Filter reads of an invocation: its key and f.
type opKind struct{ key, f string }

// spillFrameEntries is how many entries a partition's frame holds: about
// 1 MB of JSON lines in memory per partition while spilling.
const spillFrameEntries = 8000

// spillFrameBytes bounds a file's frame in memory while spilling: a
// partition has a file for each family of its keys.
const spillFrameBytes = 256 << 10

// Spill reads the history file at path once and writes its client ops to
// n partition files in dir (made if missing), the partition of an
// invocation chosen by partOf (0 <= partOf(op) < n) and every completion
// following its invocation (by process: the open ops, one per process,
// are all the scan keeps). Nemesis entries, and a completion no open
// invocation explains, are run-wide. It reads, tolerates and refuses as
// ReadFile does (Scan): a torn tail is in Read, never dropped silently.
// The files are written whole before Spill returns; Remove deletes them.
func Spill(path, dir string, n int, partOf func(op *Op) int) (*Partitions, error) {
	return SpillFamilies(path, dir, n, partOf, nil)
}

// SpillFamilies is Spill writing each partition's ops as one file per
// family of their invocations, familyOf(op) (a small number, at least 0;
// nil: one family): a load whose Filter keeps none of a family's keys and
// fs does not read its file. A load of several families of a partition
// merges them by index, so it needs a history whose indexes increase
// (IndexesIncrease): one that does not is refused there.
func SpillFamilies(path, dir string, n int, partOf, familyOf func(op *Op) int) (*Partitions, error) {
	if n < 1 {
		return nil, fmt.Errorf("spill: %d partitions; at least one", n)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	p := &Partitions{dir: dir, parts: make([]partition, n)}
	// One encoder for every partition: EncodeAll keeps no state between
	// frames, and an encoder each cost 290 MB of RSS for 64 partitions
	// (a 10M-entry spill, 2026-12-05).
	enc, err := newFrameEncoder()
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	defer enc.Close()
	// ws[i][k] writes p.parts[i].subs[k], made at its first entry.
	ws := make([][]*spillWriter, n)
	defer func() {
		for _, pw := range ws {
			for _, w := range pw {
				if w != nil {
					w.f.Close()
				}
			}
		}
	}()
	// subOf is the file of partition part for an invocation's family.
	subOf := func(part, family int) (int, error) {
		pt := &p.parts[part]
		for k := range pt.subs {
			if pt.subs[k].family == family {
				return k, nil
			}
		}
		name := "part-" + strconv.Itoa(part)
		if familyOf != nil {
			name += "-" + strconv.Itoa(family)
		}
		sub := subPartition{family: family, path: filepath.Join(dir, name+".jsonl.zst")}
		w, err := newSpillWriter(sub.path, enc)
		if err != nil {
			return 0, err
		}
		pt.subs = append(pt.subs, sub)
		ws[part] = append(ws[part], w)
		return len(pt.subs) - 1, nil
	}
	type place struct{ part, sub int }
	open := map[Process]place{}    // process -> file of its open invocation
	kindOf := map[Process]opKind{} // process -> its open invocation's kind
	p.Paired, p.IndexesIncrease = true, true
	first, last := true, int64(0)
	p.Read, err = scanFile(path, func(op *Op, raw []byte) error {
		if !first && op.Index <= last {
			p.IndexesIncrease = false
		}
		first, last = false, op.Index
		p.Latest, p.NextIndex = max(p.Latest, op.Time), max(p.NextIndex, op.Index+1)
		at, client := place{}, false
		switch {
		case op.Process == Nemesis:
		case op.Type == Invoke:
			if q, busy := open[op.Process]; busy {
				// A second invocation while one is open: where the
				// first is, so that the pairing there refuses it as
				// the whole history's would.
				at, client = q, true
				p.Paired = false
				break
			}
			part, family := partOf(op), 0
			if part < 0 || part >= n {
				return fmt.Errorf("spill: entry %d: partition %d of %d", op.Index, part, n)
			}
			if familyOf != nil {
				if family = familyOf(op); family < 0 {
					return fmt.Errorf("spill: entry %d: family %d", op.Index, family)
				}
			}
			k, err := subOf(part, family)
			if err != nil {
				return fmt.Errorf("spill: %w", err)
			}
			at, client = place{part, k}, true
			open[op.Process] = at
		default:
			if q, busy := open[op.Process]; busy {
				at, client = q, true
				delete(open, op.Process)
			} else {
				p.Paired = false
			}
		}
		if !client {
			p.RunWide = append(p.RunWide, *op)
			return nil
		}
		if op.Type == Invoke {
			kindOf[op.Process] = opKind{op.Key, op.F}
		}
		sp := &p.parts[at.part].subs[at.sub]
		if sp.kinds == nil {
			sp.kinds = map[opKind]int{}
		}
		sp.kinds[kindOf[op.Process]]++
		if k := len(sp.marks); k == 0 && len(p.RunWide) > 0 || k > 0 && sp.marks[k-1].runWide != len(p.RunWide) {
			sp.marks = append(sp.marks, mark{sp.entries, len(p.RunWide)})
		}
		sp.entries++
		return ws[at.part][at.sub].add(raw)
	}, scanWorkers())
	if err != nil {
		p.Remove()
		return nil, err
	}
	for i, pw := range ws {
		for k, w := range pw {
			if err := w.close(); err != nil {
				p.Remove()
				return nil, fmt.Errorf("spill: %s: %w", p.parts[i].subs[k].path, err)
			}
			pw[k] = nil
		}
	}
	return p, nil
}

// N is the number of partitions.
func (p *Partitions) N() int { return len(p.parts) }

// Entries is the number of client entries partition i holds.
func (p *Partitions) Entries(i int) int {
	n := 0
	for _, sp := range p.parts[i].subs {
		n += sp.entries
	}
	return n
}

// Load reads partition i back: its entries and the run-wide ones, in the
// order the history had them (a subsequence of it).
func (p *Partitions) Load(i int) ([]Op, error) { return p.LoadWhere(i, nil) }

// LoadWhere is Load keeping, of the partition's client ops, only those
// whose invocation keep keeps (their completions with them; nil keeps
// all): a checker of one workload's keys then holds its own ops, not the
// other workloads' that share its partition (a hot counter key beside a
// few register keys), and reads no file of a family it keeps none of.
func (p *Partitions) LoadWhere(i int, keep *Filter) ([]Op, error) {
	var subs []*subPartition
	var sizes []int // what each of subs keeps
	size := 0
	for k := range p.parts[i].subs {
		sp := &p.parts[i].subs[k]
		if n := sp.kept(keep); n > 0 {
			subs, sizes = append(subs, sp), append(sizes, n)
			size += n
		}
	}
	// Allocated once at the size kept: a hot key's ops grown by append
	// held up to twice them (issue 42).
	out := make([]Op, 0, size+len(p.RunWide))
	switch len(subs) {
	case 0:
		return append(out, p.RunWide...), nil
	case 1:
		out, err := subs[0].load(i, keep, p.RunWide, out)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	if !p.IndexesIncrease {
		return nil, fmt.Errorf("partition %d: its %d families cannot be merged in the history's order: its indexes do not increase", i, len(subs))
	}
	lists := make([][]Op, len(subs)+1)
	for k, sp := range subs {
		l, err := sp.load(i, keep, nil, make([]Op, 0, sizes[k]))
		if err != nil {
			return nil, err
		}
		lists[k] = l
	}
	lists[len(subs)] = p.RunWide
	return mergeByIndex(out, lists), nil
}

// ScanWhere hands fn, in the history's order, what LoadWhere(i, keep)
// returns, without holding it: the ops of a partition's one family of
// keep are decoded and handed on one at a time (a compact partition of a
// hot counter key is built from them as they come, issue 42). A load of
// several families is merged by index first (LoadWhere), held while fn
// reads it. op is only valid during the call, as in Scan.
func (p *Partitions) ScanWhere(i int, keep *Filter, fn func(op *Op) error) error {
	var subs []*subPartition
	for k := range p.parts[i].subs {
		if sp := &p.parts[i].subs[k]; sp.kept(keep) > 0 {
			subs = append(subs, sp)
		}
	}
	var ops []Op
	switch len(subs) {
	case 0:
		ops = p.RunWide
	case 1:
		return subs[0].scan(i, keep, p.RunWide, fn)
	default:
		var err error
		if ops, err = p.LoadWhere(i, keep); err != nil {
			return err
		}
	}
	for k := range ops {
		if err := fn(&ops[k]); err != nil {
			return err
		}
	}
	return nil
}

// EntriesWhere is how many of partition i's client entries keep keeps
// (LoadWhere returns them and the run-wide entries).
func (p *Partitions) EntriesWhere(i int, keep *Filter) int {
	n := 0
	for k := range p.parts[i].subs {
		n += p.parts[i].subs[k].kept(keep)
	}
	return n
}

// mergeByIndex appends to out the entries of lists, each in increasing
// index order, in increasing index order.
func mergeByIndex(out []Op, lists [][]Op) []Op {
	at := make([]int, len(lists))
	for {
		best := -1
		for k, l := range lists {
			if at[k] < len(l) && (best < 0 || l[at[k]].Index < lists[best][at[best]].Index) {
				best = k
			}
		}
		if best < 0 {
			return out
		}
		out = append(out, lists[best][at[best]])
		at[best]++
	}
}

// load appends to out the file's client ops that keep keeps, with the
// run-wide entries interleaved in the history's order (runWide nil: none).
func (sp *subPartition) load(i int, keep *Filter, runWide []Op, out []Op) ([]Op, error) {
	// Decoded straight into the result, interleaved as it comes: reading
	// the file whole first and then merging held the partition twice
	// (1.5 GB of RSS for a partition of 634 MB, 2026-12-05).
	err := sp.scan(i, keep, runWide, func(op *Op) error {
		out = append(out, *op)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scan hands fn the file's client ops that keep keeps, with the run-wide
// entries interleaved in the history's order (runWide nil: none).
func (sp *subPartition) scan(i int, keep *Filter, runWide []Op, fn func(op *Op) error) error {
	kept := map[Process]bool{} // process -> its open invocation was kept
	rw, m, j := 0, 0, 0
	each := func(ops []Op) error {
		for k := range ops {
			if err := fn(&ops[k]); err != nil {
				return err
			}
		}
		return nil
	}
	res, err := Scan(sp.path, func(op *Op, _ []byte) error {
		if m < len(sp.marks) && sp.marks[m].at == j {
			if runWide != nil {
				if err := each(runWide[rw:sp.marks[m].runWide]); err != nil {
					return err
				}
			}
			rw = sp.marks[m].runWide
			m++
		}
		j++
		if keep != nil {
			// Spill put every completion after its invocation, here.
			if op.Type == Invoke {
				kept[op.Process] = keep.Keeps(op)
			}
			if !kept[op.Process] {
				return nil
			}
		}
		return fn(op)
	})
	if err != nil {
		return fmt.Errorf("partition %d: %w", i, err)
	}
	if res.TruncatedTail || j != sp.entries {
		// Spill wrote it whole: anything else is the disk's doing.
		return fmt.Errorf("partition %d: %s holds %d entries, %d were written", i, sp.path, j, sp.entries)
	}
	if runWide != nil {
		return each(runWide[rw:])
	}
	return nil
}

// kept is how many of the file's entries keep keeps: exact, as a Filter
// reads no more of an invocation than its key and f.
func (sp *subPartition) kept(keep *Filter) int {
	if keep == nil {
		return sp.entries
	}
	n := 0
	for k, c := range sp.kinds {
		if keep.Keeps(&Op{Type: Invoke, F: k.f, Key: k.key}) {
			n += c
		}
	}
	return n
}

// Remove deletes the partition files.
func (p *Partitions) Remove() error {
	var errs []error
	for _, pt := range p.parts {
		for _, sp := range pt.subs {
			if err := os.Remove(sp.path); err != nil && !os.IsNotExist(err) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// RemoveAll deletes the partition files and the directory they are in,
// with whatever else it holds: for a directory made for the spill alone.
func (p *Partitions) RemoveAll() error {
	return os.RemoveAll(p.dir)
}

// spillWriter writes one partition's raw lines as frames of the
// compressed history format, so that Load reads them with ReadFile.
type spillWriter struct {
	f   *os.File
	bw  *bufio.Writer
	fw  *FrameWriter
	buf []byte
	n   int
}

func newSpillWriter(path string, enc *zstd.Encoder) (*spillWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	return &spillWriter{f: f, bw: bw, fw: &FrameWriter{w: bw, enc: enc}}, nil
}

func (w *spillWriter) add(raw []byte) error {
	w.buf = append(append(w.buf, raw...), '\n')
	w.n++
	if w.n >= spillFrameEntries || len(w.buf) >= spillFrameBytes {
		return w.flush()
	}
	return nil
}

func (w *spillWriter) flush() error {
	if w.n == 0 {
		return nil
	}
	err := w.fw.WriteFrame(w.buf, w.n)
	w.buf, w.n = w.buf[:0], 0
	return err
}

func (w *spillWriter) close() error {
	err := errors.Join(w.flush(), w.bw.Flush())
	return errors.Join(err, w.f.Close())
}

// Filter picks a partition's client ops by their invocation's key and f:
// all a load is told, so that the spill can say, from the keys and fs it
// counted in each file, which files hold none of them and how many
// entries a load keeps, without reading them.
type Filter struct {
	// KeyPrefix is the prefix of the keys kept ("" keeps every key).
	KeyPrefix string
	// Fs are the fs kept (none: every f).
	Fs []string
}

// Keeps says whether f keeps the client op of invocation inv.
func (f *Filter) Keeps(inv *Op) bool {
	if f == nil {
		return true
	}
	if !strings.HasPrefix(inv.Key, f.KeyPrefix) {
		return false
	}
	return len(f.Fs) == 0 || slices.Contains(f.Fs, inv.F)
}
