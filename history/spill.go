package history

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

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

type partition struct {
	path    string
	entries int
	// kinds counts the partition's entries by their invocation's key
	// and f (a completion under its invocation's): LoadWhere sizes what
	// it keeps from them, so that a hot key's ops are allocated once, not
	// grown by copies that held up to twice them (issue 42). Bounded by
	// the keys, not by the run's length.
	kinds map[opKind]int
	// marks[j] says that runWide run-wide entries came before the
	// partition's entry at: the original order of the two streams, kept
	// in one mark per change (at most one per run-wide entry) rather than
	// one per entry.
	marks []mark
}

type mark struct{ at, runWide int }

// opKind is what LoadWhere's keep is asked of an invocation when it sizes
// a partition: its key and f.
type opKind struct{ key, f string }

// spillFrameEntries is how many entries a partition's frame holds: about
// 1 MB of JSON lines in memory per partition while spilling.
const spillFrameEntries = 8000

// Spill reads the history file at path once and writes its client ops to
// n partition files in dir (made if missing), the partition of an
// invocation chosen by partOf (0 <= partOf(op) < n) and every completion
// following its invocation (by process: the open ops, one per process,
// are all the scan keeps). Nemesis entries, and a completion no open
// invocation explains, are run-wide. It reads, tolerates and refuses as
// ReadFile does (Scan): a torn tail is in Read, never dropped silently.
// The files are written whole before Spill returns; Remove deletes them.
func Spill(path, dir string, n int, partOf func(op *Op) int) (*Partitions, error) {
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
	ws := make([]*spillWriter, n)
	defer func() {
		for _, w := range ws {
			if w != nil {
				w.f.Close()
			}
		}
	}()
	for i := range ws {
		p.parts[i].path = filepath.Join(dir, "part-"+strconv.Itoa(i)+".jsonl.zst")
		w, err := newSpillWriter(p.parts[i].path, enc)
		if err != nil {
			return nil, fmt.Errorf("spill: %w", err)
		}
		ws[i] = w
	}
	open := map[Process]int{}      // process -> partition of its open invocation
	kindOf := map[Process]opKind{} // process -> its open invocation's kind
	p.Paired, p.IndexesIncrease = true, true
	first, last := true, int64(0)
	p.Read, err = Scan(path, func(op *Op, raw []byte) error {
		if !first && op.Index <= last {
			p.IndexesIncrease = false
		}
		first, last = false, op.Index
		p.Latest, p.NextIndex = max(p.Latest, op.Time), max(p.NextIndex, op.Index+1)
		part := -1
		switch {
		case op.Process == Nemesis:
		case op.Type == Invoke:
			if q, busy := open[op.Process]; busy {
				// A second invocation while one is open: where the
				// first is, so that the pairing there refuses it as
				// the whole history's would.
				part = q
				p.Paired = false
				break
			}
			part = partOf(op)
			if part < 0 || part >= n {
				return fmt.Errorf("spill: entry %d: partition %d of %d", op.Index, part, n)
			}
			open[op.Process] = part
		default:
			if q, busy := open[op.Process]; busy {
				part = q
				delete(open, op.Process)
			} else {
				p.Paired = false
			}
		}
		if part < 0 {
			p.RunWide = append(p.RunWide, *op)
			return nil
		}
		if op.Type == Invoke {
			kindOf[op.Process] = opKind{op.Key, op.F}
		}
		pt := &p.parts[part]
		if pt.kinds == nil {
			pt.kinds = map[opKind]int{}
		}
		pt.kinds[kindOf[op.Process]]++
		if k := len(pt.marks); k == 0 && len(p.RunWide) > 0 || k > 0 && pt.marks[k-1].runWide != len(p.RunWide) {
			pt.marks = append(pt.marks, mark{pt.entries, len(p.RunWide)})
		}
		pt.entries++
		return ws[part].add(raw)
	})
	if err != nil {
		p.Remove()
		return nil, err
	}
	for i, w := range ws {
		if err := w.close(); err != nil {
			p.Remove()
			return nil, fmt.Errorf("spill: %s: %w", p.parts[i].path, err)
		}
		ws[i] = nil
	}
	return p, nil
}

// N is the number of partitions.
func (p *Partitions) N() int { return len(p.parts) }

// Entries is the number of client entries partition i holds.
func (p *Partitions) Entries(i int) int { return p.parts[i].entries }

// Load reads partition i back: its entries and the run-wide ones, in the
// order the history had them (a subsequence of it).
func (p *Partitions) Load(i int) ([]Op, error) { return p.LoadWhere(i, nil) }

// LoadWhere is Load keeping, of the partition's client ops, only those
// whose invocation keep accepts (their completions with them; nil keeps
// all): a checker of one workload's keys then holds its own ops, not the
// other workloads' that share its partition (a hot counter key beside a
// few register keys).
func (p *Partitions) LoadWhere(i int, keep func(inv *Op) bool) ([]Op, error) {
	pt := &p.parts[i]
	// Decoded straight into the result, interleaved as it comes: reading
	// the file whole first and then merging held the partition twice
	// (1.5 GB of RSS for a partition of 634 MB, 2026-12-05).
	out := make([]Op, 0, pt.kept(keep)+len(p.RunWide))
	kept := map[Process]bool{} // process -> its open invocation was kept
	rw, m, j := 0, 0, 0
	res, err := Scan(pt.path, func(op *Op, _ []byte) error {
		if m < len(pt.marks) && pt.marks[m].at == j {
			out = append(out, p.RunWide[rw:pt.marks[m].runWide]...)
			rw = pt.marks[m].runWide
			m++
		}
		j++
		if keep != nil {
			// Spill put every completion after its invocation, here.
			if op.Type == Invoke {
				kept[op.Process] = keep(op)
			}
			if !kept[op.Process] {
				return nil
			}
		}
		out = append(out, *op)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("partition %d: %w", i, err)
	}
	if res.TruncatedTail || j != pt.entries {
		// Spill wrote it whole: anything else is the disk's doing.
		return nil, fmt.Errorf("partition %d: %s holds %d entries, %d were written", i, pt.path, j, pt.entries)
	}
	return append(out, p.RunWide[rw:]...), nil
}

// kept is how many of the partition's entries keep keeps, asking it of an
// invocation of each key and f the partition holds: exact for a keep that
// reads no more of an invocation (every checker's: checker.Scope's key
// prefix, a workload's f), a capacity hint otherwise (what LoadWhere
// keeps is keep's word on each entry, whatever the hint said).
func (pt *partition) kept(keep func(inv *Op) bool) int {
	if keep == nil {
		return pt.entries
	}
	n := 0
	for k, c := range pt.kinds {
		if keep(&Op{Type: Invoke, F: k.f, Key: k.key}) {
			n += c
		}
	}
	return n
}

// Remove deletes the partition files.
func (p *Partitions) Remove() error {
	var errs []error
	for _, pt := range p.parts {
		if err := os.Remove(pt.path); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
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
	if w.n >= spillFrameEntries {
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
