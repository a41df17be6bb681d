// Package faultfs is a loopback FUSE filesystem over a backing directory
// that remembers what has been written but not yet fsynced, so that a
// power loss can be simulated: Drop (or PowerCut) puts every file back as
// it was at its last fsync, and a torn mode keeps a prefix of each file's
// last unsynced write. It can also answer ENOSPC or EIO on writes and
// fsyncs for as long as a disk fault lasts (SetError).
//
// It follows Jepsen's LazyFS in what it models (unsynced data is lost on a
// power cut; an fsync makes a file's contents durable) but not in how:
// LazyFS keeps unsynced pages in a cache of its own and writes them to the
// backing filesystem only on fsync; faultfs writes through at once and
// keeps an undo log instead: before each unsynced change of a file it
// saves the bytes the change overwrites and the file's size, and a drop
// applies those records newest first. Reads are then plain passthrough,
// appends (what an AOF does) cost no copy at all, and a crash of redline
// itself leaves the backing directory with every write in it.
//
// What is tracked: file contents and sizes (write, truncate, fallocate,
// O_TRUNC). Names are not: a create, rename, link or unlink is durable at
// once, as a journalling filesystem commits it within seconds (ext4 every
// 5 s); a file created since its last fsync survives a drop, empty. An
// fsync or fdatasync of a file makes its contents durable; it is not
// passed to the backing disk (the simulated machine loses power, the host
// does not). Options.Writeback makes changes older than it durable, as the
// kernel writes dirty pages back after 30 s; zero keeps everything unsynced
// until an fsync, as LazyFS does.
//
// Files are opened with direct I/O, so one write(2) of up to MaxWrite bytes
// is one write here (what a torn write tears), and the kernel's page cache
// never serves what a drop took away.
//
// The mount needs /dev/fuse and either root (it mounts with mount(2)) or
// fusermount3 from Debian's fuse3 with user_allow_other in /etc/fuse.conf.
package faultfs

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// MaxWrite is the largest write the kernel hands the filesystem at once; a
// larger write(2) arrives as several. (At the kernel's limit of 1 MiB a
// request no longer fits the pipe go-fuse splices it through.)
const MaxWrite = 512 << 10

// Options configure a mount.
type Options struct {
	// Backing is the directory that holds the files; Mountpoint is where
	// they appear. Both must exist.
	Backing, Mountpoint string
	// AllowOther lets users other than the mounting one use the mount:
	// needed when a container's processes (or the Docker daemon bind
	// mounting it) use it.
	AllowOther bool
	// Writeback, when positive, makes a change durable once it is that
	// old, as the kernel's flusher does (dirty_expire_centisecs, 30 s by
	// default). Zero: only an fsync makes a change durable.
	Writeback time.Duration
	// Now is the clock Writeback reads (default time.Now).
	Now func() time.Time
	// Name is shown as the filesystem's source in /proc/mounts.
	Name string
}

// FS is a mounted faultfs.
type FS struct {
	opts   Options
	server *fuse.Server

	// mu is held shared by every operation and exclusively by a power
	// cut, so a cut sees no operation half done. gen counts the cuts
	// (bumped as each ends): an operation that waited through one is
	// refused (its process is dead).
	mu  sync.RWMutex
	gen atomic.Uint64

	errno atomic.Uint32 // the error writes and fsyncs answer now (0: none)

	tmu   sync.Mutex
	files map[uint64]*tracked // files with unsynced changes, by backing inode

	closed atomic.Bool
}

// tracked is one file's unsynced changes, oldest first, with a read-write
// descriptor of the backing file to undo them through (it also keeps the
// inode, and so its number, alive while it is tracked).
type tracked struct {
	mu   sync.Mutex
	f    *os.File
	path string // relative to the root, as last seen
	undo []change
}

// change is one unsynced change of a file: before it, the file was size
// bytes long and held old at off (old is clipped at size). n is how many
// bytes a write wrote (0 for a truncate or an allocation).
type change struct {
	at    time.Time
	size  int64
	off   int64
	old   []byte
	n     int
	write bool
}

// Mount mounts a faultfs of opts.Backing at opts.Mountpoint and serves it
// until Unmount.
func Mount(opts Options) (*FS, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Name == "" {
		opts.Name = "redline-faultfs"
	}
	for _, d := range []string{opts.Backing, opts.Mountpoint} {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("faultfs: %s is not a directory (%v)", d, err)
		}
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return nil, fmt.Errorf("faultfs: no /dev/fuse (%v): the kernel's FUSE module is needed (modprobe fuse; in a container, --device /dev/fuse)", err)
	}
	f := &FS{opts: opts, files: map[uint64]*tracked{}}
	rootLN, err := fs.NewLoopbackRoot(opts.Backing)
	if err != nil {
		return nil, fmt.Errorf("faultfs: %w", err)
	}
	ln := rootLN.(*fs.LoopbackNode)
	root := &node{LoopbackNode: ln, ffs: f}
	ln.RootData.RootNode = root
	zero := time.Duration(0)
	server, err := fs.Mount(opts.Mountpoint, root, &fs.Options{
		MountOptions: fuse.MountOptions{
			AllowOther:  opts.AllowOther,
			FsName:      opts.Name,
			Name:        "faultfs",
			DirectMount: true, // as root, mount(2) itself; else fusermount3
			MaxWrite:    MaxWrite,
		},
		// Nothing cached in the kernel: a drop changes files behind its
		// back, and a node restarted after one must see what is left.
		EntryTimeout:    &zero,
		AttrTimeout:     &zero,
		NegativeTimeout: &zero,
	})
	if err != nil {
		return nil, fmt.Errorf("faultfs: mounting %s at %s: %w (needs /dev/fuse and root, or fusermount3 from Debian's fuse3: scripts/install-deps)", opts.Backing, opts.Mountpoint, err)
	}
	f.server = server
	return f, nil
}

// Mountpoint is where the files appear.
func (f *FS) Mountpoint() string { return f.opts.Mountpoint }

// Backing is the directory that holds them.
func (f *FS) Backing() string { return f.opts.Backing }

// Unmount unmounts the filesystem (lazily when it is busy) and forgets
// what was unsynced: the backing files keep every write.
func (f *FS) Unmount() error {
	if f.closed.Swap(true) {
		return nil
	}
	err := f.server.Unmount()
	if err != nil {
		// Busy (a process still has a file open there): detach it; the
		// kernel finishes when the last user is gone.
		if derr := syscall.Unmount(f.opts.Mountpoint, syscall.MNT_DETACH); derr == nil {
			err = nil
		} else {
			err = fmt.Errorf("faultfs: unmounting %s: %v (detach: %v)", f.opts.Mountpoint, err, derr)
		}
	}
	f.tmu.Lock()
	for ino, t := range f.files {
		t.f.Close()
		delete(f.files, ino)
	}
	f.tmu.Unlock()
	return err
}

// SetError makes writes, truncates, fallocates, creates and fsyncs answer
// errno (syscall.ENOSPC: a full disk; syscall.EIO: a failing one) until
// SetError(0). Reads, renames and unlinks still work.
func (f *FS) SetError(errno syscall.Errno) { f.errno.Store(uint32(errno)) }

// Error is the error SetError set (0: none).
func (f *FS) Error() syscall.Errno { return syscall.Errno(f.errno.Load()) }

// injected is the disk fault's answer, 0 when there is none.
func (f *FS) injected() syscall.Errno { return syscall.Errno(f.errno.Load()) }

// begin admits an operation that changes files: it holds the cut lock
// shared until end is called, and refuses (EIO) an operation that waited
// through a power cut.
func (f *FS) begin() (end func(), errno syscall.Errno) {
	g := f.gen.Load()
	f.mu.RLock()
	if f.gen.Load() != g {
		f.mu.RUnlock()
		return nil, syscall.EIO
	}
	return f.mu.RUnlock, 0
}

// Loss says how a power cut treats unsynced changes.
type Loss struct {
	// Torn keeps every unsynced change of a file but its last write, and
	// of that write a prefix shorter than it: the power failed while the
	// write was on its way to the disk. Without Torn every unsynced
	// change is lost.
	Torn bool
	// Rand picks the torn prefix's length (default: a fixed seed).
	Rand *rand.Rand
}

// FileLoss is what a cut did to one file.
type FileLoss struct {
	Path      string `json:"path"`
	Changes   int    `json:"changes"`            // unsynced changes undone (the torn write counted)
	SizeAt    int64  `json:"size_at_cut"`        // the file's size when the power failed
	SizeAfter int64  `json:"size_after"`         // and after the loss
	TornKept  int    `json:"torn_kept,omitzero"` // bytes of the torn write kept
	TornOf    int    `json:"torn_of,omitzero"`   // of how many
}

// Report lists the files a cut changed, by path.
type Report struct {
	Files []FileLoss `json:"files"`
}

// LostBytes is how many bytes shorter the files are after the cut, summed
// (a rough measure: overwritten bytes restored count nothing).
func (r Report) LostBytes() int64 {
	var n int64
	for _, fl := range r.Files {
		if fl.SizeAt > fl.SizeAfter {
			n += fl.SizeAt - fl.SizeAfter
		}
	}
	return n
}

// PowerCut simulates a power failure at one instant: from the moment it is
// called no operation on the filesystem completes (each waits, and is
// refused once the cut is over: its process is meant to be dead by then);
// during runs (the SIGKILL of the processes using the mount, say), then
// every file loses its unsynced changes as loss says, and operations
// resume. A during that fails is reported, the loss happens all the same.
func (f *FS) PowerCut(loss Loss, during func() error) (Report, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	// Bumped last: an operation that arrives during the cut read the
	// old count before it waited, and is refused when it gets in.
	defer f.gen.Add(1)
	var err error
	if during != nil {
		err = during()
	}
	rep, lerr := f.lose(loss)
	return rep, errors.Join(err, lerr)
}

// Drop is a power cut with nothing to kill: every file goes back to its
// last synced state.
func (f *FS) Drop() (Report, error) { return f.PowerCut(Loss{}, nil) }

// Tear is a torn power cut with nothing to kill.
func (f *FS) Tear(rng *rand.Rand) (Report, error) {
	return f.PowerCut(Loss{Torn: true, Rand: rng}, nil)
}

// Checkpoint makes everything written so far durable, as if every file had
// been fsynced (LazyFS's cache checkpoint): a runtime calls it once its
// cluster is formed, so that a power cut takes what came after.
func (f *FS) Checkpoint() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tmu.Lock()
	defer f.tmu.Unlock()
	for ino, t := range f.files {
		t.f.Close()
		delete(f.files, ino)
	}
}

// Unsynced lists the files with unsynced changes and what a cut would
// leave of them now (without Torn), by path.
func (f *FS) Unsynced() Report {
	f.mu.Lock()
	defer f.mu.Unlock()
	var rep Report
	for _, t := range f.snapshot() {
		t.mu.Lock()
		t.expire(f.opts)
		if len(t.undo) > 0 {
			at, _ := fileSize(t.f)
			rep.Files = append(rep.Files, FileLoss{Path: t.path, Changes: len(t.undo), SizeAt: at, SizeAfter: t.undo[0].size})
		}
		t.mu.Unlock()
	}
	sortReport(&rep)
	return rep
}

func (f *FS) snapshot() []*tracked {
	f.tmu.Lock()
	defer f.tmu.Unlock()
	out := make([]*tracked, 0, len(f.files))
	for _, t := range f.files {
		out = append(out, t)
	}
	return out
}

// lose undoes the unsynced changes of every file (f.mu held exclusively).
func (f *FS) lose(loss Loss) (Report, error) {
	rng := loss.Rand
	if rng == nil {
		rng = rand.New(rand.NewPCG(1, 2))
	}
	f.tmu.Lock()
	inos := make([]uint64, 0, len(f.files))
	for ino := range f.files {
		inos = append(inos, ino)
	}
	f.tmu.Unlock()
	// The same files in the same order: a seeded tear tears the same way.
	sort.Slice(inos, func(i, j int) bool { return inos[i] < inos[j] })
	var rep Report
	var errs []error
	for _, ino := range inos {
		f.tmu.Lock()
		t := f.files[ino]
		delete(f.files, ino)
		f.tmu.Unlock()
		fl, err := t.lose(f.opts, loss.Torn, rng)
		t.f.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("faultfs: undoing %s: %w", t.path, err))
		}
		if fl.Changes > 0 {
			rep.Files = append(rep.Files, fl)
		}
	}
	sortReport(&rep)
	return rep, errors.Join(errs...)
}

func sortReport(r *Report) {
	sort.Slice(r.Files, func(i, j int) bool { return r.Files[i].Path < r.Files[j].Path })
}

// expire forgets changes older than the writeback delay: they reached the
// disk. Undo records apply newest first, so forgetting the oldest keeps
// the rest exact. t.mu held.
func (t *tracked) expire(o Options) {
	if o.Writeback <= 0 {
		return
	}
	limit := o.Now().Add(-o.Writeback)
	k := 0
	for k < len(t.undo) && t.undo[k].at.Before(limit) {
		k++
	}
	if k > 0 {
		t.undo = append(t.undo[:0:0], t.undo[k:]...)
	}
}

// lose undoes t's unsynced changes, newest first; torn keeps a prefix of
// the last one when it is a write, and the changes before it.
func (t *tracked) lose(o Options, torn bool, rng *rand.Rand) (FileLoss, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.expire(o)
	fl := FileLoss{Path: t.path, Changes: len(t.undo)}
	if len(t.undo) == 0 {
		return fl, nil
	}
	var err error
	fl.SizeAt, err = fileSize(t.f)
	if err != nil {
		return fl, err
	}
	undo := t.undo
	if torn {
		last := undo[len(undo)-1]
		if !last.write || last.n == 0 {
			fl.Changes = 0 // the last change was no write: nothing to tear
			fl.SizeAfter = fl.SizeAt
			t.undo = nil
			return fl, nil
		}
		keep := rng.IntN(last.n)
		fl.TornKept, fl.TornOf, fl.Changes = keep, last.n, 1
		// Undo the write's tail: what it overwrote past the kept
		// prefix comes back, and the file is as long as before it or
		// as the prefix, whichever is longer.
		cut := last.off + int64(keep)
		if rel := cut - last.off; rel < int64(len(last.old)) {
			if _, err := t.f.WriteAt(last.old[rel:], cut); err != nil {
				return fl, err
			}
		}
		if err := t.f.Truncate(max(last.size, cut)); err != nil {
			return fl, err
		}
		fl.SizeAfter, _ = fileSize(t.f)
		t.undo = nil
		return fl, nil
	}
	for i := len(undo) - 1; i >= 0; i-- {
		c := undo[i]
		if len(c.old) > 0 {
			if _, err := t.f.WriteAt(c.old, c.off); err != nil {
				return fl, err
			}
		}
		if err := t.f.Truncate(c.size); err != nil {
			return fl, err
		}
	}
	fl.SizeAfter = undo[0].size
	t.undo = nil
	return fl, nil
}

func fileSize(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// track returns the tracked state of the file with backing inode ino,
// opening it for the undo log with open when it has none.
func (f *FS) track(ino uint64, path string, open func() (*os.File, error)) (*tracked, error) {
	f.tmu.Lock()
	defer f.tmu.Unlock()
	if t := f.files[ino]; t != nil {
		if path != "" {
			t.path = path
		}
		return t, nil
	}
	fd, err := open()
	if err != nil {
		return nil, err
	}
	t := &tracked{f: fd, path: path}
	f.files[ino] = t
	return t, nil
}

// synced makes the file with inode ino durable: its changes are forgotten.
func (f *FS) synced(ino uint64) {
	f.tmu.Lock()
	t := f.files[ino]
	delete(f.files, ino)
	f.tmu.Unlock()
	if t != nil {
		t.mu.Lock()
		t.undo = nil
		t.f.Close()
		t.mu.Unlock()
	}
}

// forget drops the state of an inode whose last name is gone.
func (f *FS) forget(ino uint64) { f.synced(ino) }

// record runs do (a write, truncate or allocation of [off, off+n) on
// the file open as t) after saving what it overwrites and the file's size.
// n < 0 means "to the end of the file" (a truncate saves what it cuts).
func (t *tracked) record(o Options, off int64, n int64, write bool, do func() (int, syscall.Errno)) (int, syscall.Errno) {
	t.mu.Lock()
	defer t.mu.Unlock()
	size, err := fileSize(t.f)
	if err != nil {
		return 0, fs.ToErrno(err)
	}
	end := size
	if n >= 0 {
		end = min(off+n, size)
	}
	var old []byte
	if off < end {
		old = make([]byte, end-off)
		if _, err := t.f.ReadAt(old, off); err != nil {
			return 0, fs.ToErrno(err)
		}
	}
	done, errno := do()
	if errno != 0 && done == 0 {
		return done, errno
	}
	t.undo = append(t.undo, change{at: o.Now(), size: size, off: off, old: old, n: done, write: write})
	t.expire(o)
	return done, errno
}

// relPath is a node's path below the root.
func relPath(n *fs.Inode) string {
	p := n.Path(nil)
	if p == "" {
		return "."
	}
	return filepath.Clean(p)
}
