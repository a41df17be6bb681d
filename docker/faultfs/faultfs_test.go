package faultfs

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// mount mounts a faultfs over a fresh directory. A machine that cannot
// mount fails the test: CI has FUSE, and a skipped power test would pass
// a build in which power loss loses nothing.
func mount(t *testing.T, opts Options) *FS {
	t.Helper()
	dir := t.TempDir()
	opts.Backing, opts.Mountpoint = filepath.Join(dir, "backing"), filepath.Join(dir, "mnt")
	for _, d := range []string{opts.Backing, opts.Mountpoint} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f, err := Mount(opts)
	if err != nil {
		t.Fatalf("cannot mount a faultfs, so power loss cannot be tested here: %v", err)
	}
	t.Cleanup(func() {
		if err := f.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	return f
}

func (f *FS) path(name string) string { return filepath.Join(f.Mountpoint(), name) }

func write(t *testing.T, f *os.File, s string) {
	t.Helper()
	if _, err := f.WriteString(s); err != nil {
		t.Fatalf("write %q: %v", s, err)
	}
}

func contents(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func open(t *testing.T, path string, flag int) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// A power cut takes every write since the file's last fsync: appends, an
// overwrite of synced bytes, a truncate and what was written after it, and
// a new file's contents (its name stays: names are durable at once).
func TestDropLosesWhatWasNotFsynced(t *testing.T) {
	ffs := mount(t, Options{})
	a := open(t, ffs.path("a"), os.O_CREATE|os.O_RDWR|os.O_APPEND)
	write(t, a, "synced line\n")
	if err := a.Sync(); err != nil {
		t.Fatal(err)
	}
	write(t, a, "unsynced line\n")
	// Overwrite synced bytes in place.
	if _, err := open(t, ffs.path("a"), os.O_RDWR).WriteAt([]byte("SYNCED"), 0); err != nil {
		t.Fatal(err)
	}
	b := open(t, ffs.path("b"), os.O_CREATE|os.O_RDWR)
	write(t, b, "never synced\n")
	c := open(t, ffs.path("c"), os.O_CREATE|os.O_RDWR)
	write(t, c, strings.Repeat("x", 100))
	if err := c.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := c.Truncate(10); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteAt([]byte("yyyyyyyyyyyyyyyyyyyy"), 0); err != nil {
		t.Fatal(err)
	}
	if got := contents(t, ffs.path("a")); got != "SYNCED line\nunsynced line\n" {
		t.Fatalf("before the cut a holds %q", got)
	}
	if u := ffs.Unsynced(); len(u.Files) != 3 {
		t.Fatalf("unsynced before the cut: %+v, want a, b and c", u)
	}

	rep, err := ffs.Drop()
	if err != nil {
		t.Fatal(err)
	}
	if got := contents(t, ffs.path("a")); got != "synced line\n" {
		t.Fatalf("after the cut a holds %q, want only its synced line", got)
	}
	if got := contents(t, ffs.path("b")); got != "" {
		t.Fatalf("after the cut b holds %q, want it empty", got)
	}
	if got := contents(t, ffs.path("c")); got != strings.Repeat("x", 100) {
		t.Fatalf("after the cut c holds %q, want its 100 synced bytes", got)
	}
	// Through a descriptor opened before the cut too (direct I/O: no
	// page cache hands back what the cut took).
	buf := make([]byte, 64)
	n, _ := a.ReadAt(buf, 0)
	if string(buf[:n]) != "synced line\n" {
		t.Fatalf("an old descriptor reads %q after the cut", buf[:n])
	}
	want := map[string]FileLoss{
		"a": {Path: "a", Changes: 2, SizeAt: 26, SizeAfter: 12},
		"b": {Path: "b", Changes: 1, SizeAt: 13, SizeAfter: 0},
		"c": {Path: "c", Changes: 2, SizeAt: 20, SizeAfter: 100},
	}
	if len(rep.Files) != len(want) {
		t.Fatalf("report %+v, want %+v", rep, want)
	}
	for _, fl := range rep.Files {
		if fl != want[fl.Path] {
			t.Errorf("report for %s: %+v, want %+v", fl.Path, fl, want[fl.Path])
		}
	}
	if len(ffs.Unsynced().Files) != 0 {
		t.Fatalf("still unsynced after the cut: %+v", ffs.Unsynced())
	}
	// The filesystem goes on: a write after the cut (through a handle
	// opened after it, as a restarted process has) is kept by an fsync.
	a = open(t, ffs.path("a"), os.O_WRONLY|os.O_APPEND)
	write(t, a, "after\n")
	if err := a.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := ffs.Drop(); err != nil {
		t.Fatal(err)
	}
	if got := contents(t, ffs.path("a")); got != "synced line\nafter\n" {
		t.Fatalf("a holds %q", got)
	}
}

// What was fsynced (or fdatasynced) survives the cut, and so does a file
// written, fsynced and renamed into place (how Redis writes an RDB file or
// an AOF manifest).
func TestFsyncedDataSurvives(t *testing.T) {
	ffs := mount(t, Options{})
	a := open(t, ffs.path("a"), os.O_CREATE|os.O_RDWR)
	write(t, a, "one\n")
	if err := a.Sync(); err != nil {
		t.Fatal(err)
	}
	write(t, a, "two\n")
	if err := syscall.Fdatasync(int(a.Fd())); err != nil {
		t.Fatal(err)
	}
	tmp := open(t, ffs.path("temp-1.rdb"), os.O_CREATE|os.O_RDWR|os.O_TRUNC)
	write(t, tmp, "REDIS0011 payload")
	if err := tmp.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(ffs.path("temp-1.rdb"), ffs.path("dump.rdb")); err != nil {
		t.Fatal(err)
	}
	rep, err := ffs.Drop()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Files) != 0 {
		t.Fatalf("the cut changed %+v; everything was synced", rep)
	}
	if got := contents(t, ffs.path("a")); got != "one\ntwo\n" {
		t.Fatalf("a holds %q", got)
	}
	if got := contents(t, ffs.path("dump.rdb")); got != "REDIS0011 payload" {
		t.Fatalf("dump.rdb holds %q", got)
	}
	// The backing directory holds what the mount shows.
	if b, _ := os.ReadFile(filepath.Join(ffs.Backing(), "dump.rdb")); string(b) != "REDIS0011 payload" {
		t.Fatalf("backing dump.rdb holds %q", b)
	}
}

// A torn cut keeps the unsynced writes before a file's last one and a
// prefix (shorter than the write) of that last one; the same seed tears
// at the same byte.
func TestTornCutKeepsAPrefixOfTheLastWrite(t *testing.T) {
	tear := func(seed uint64) (string, FileLoss) {
		ffs := mount(t, Options{})
		a := open(t, ffs.path("appendonly.aof"), os.O_CREATE|os.O_RDWR|os.O_APPEND)
		write(t, a, "*synced*")
		if err := a.Sync(); err != nil {
			t.Fatal(err)
		}
		write(t, a, "[first unsynced]")
		write(t, a, "[the last write, torn]")
		rep, err := ffs.Tear(rand.New(rand.NewPCG(seed, 0)))
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Files) != 1 {
			t.Fatalf("torn report %+v, want one file", rep)
		}
		return contents(t, ffs.path("appendonly.aof")), rep.Files[0]
	}
	last := "[the last write, torn]"
	got, fl := tear(3)
	if fl.TornOf != len(last) || fl.TornKept < 0 || fl.TornKept >= len(last) {
		t.Fatalf("torn report %+v: want a prefix shorter than %d bytes", fl, len(last))
	}
	want := "*synced*[first unsynced]" + last[:fl.TornKept]
	if got != want {
		t.Fatalf("torn file holds %q, want %q", got, want)
	}
	if fl.SizeAfter != int64(len(want)) {
		t.Fatalf("report says %d bytes after, the file has %d", fl.SizeAfter, len(want))
	}
	again, _ := tear(3)
	if again != got {
		t.Fatalf("same seed, different tear: %q then %q", got, again)
	}
	kept := map[int]bool{}
	for seed := range uint64(8) {
		_, fl := tear(seed + 100)
		kept[fl.TornKept] = true
	}
	if len(kept) < 2 {
		t.Fatalf("eight seeds tore at the same byte: %v", kept)
	}
}

// During a disk fault writes, fsyncs and creates answer its error and
// change nothing; reads still work; once healed, writes work again.
func TestDiskFaultAnswersItsErrorThenRecovers(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
		t.Run(errno.Error(), func(t *testing.T) {
			ffs := mount(t, Options{})
			a := open(t, ffs.path("a"), os.O_CREATE|os.O_RDWR|os.O_APPEND)
			write(t, a, "before\n")
			ffs.SetError(errno)
			if _, err := a.WriteString("during\n"); !errors.Is(err, errno) {
				t.Fatalf("a write during the fault: %v, want %v", err, errno)
			}
			if err := a.Sync(); !errors.Is(err, errno) {
				t.Fatalf("an fsync during the fault: %v, want %v", err, errno)
			}
			if _, err := os.Create(ffs.path("new")); !errors.Is(err, errno) {
				t.Fatalf("a create during the fault: %v, want %v", err, errno)
			}
			if got := contents(t, ffs.path("a")); got != "before\n" {
				t.Fatalf("during the fault a holds %q", got)
			}
			ffs.SetError(0)
			write(t, a, "after\n")
			if err := a.Sync(); err != nil {
				t.Fatalf("fsync after the fault: %v", err)
			}
			if got := contents(t, ffs.path("a")); got != "before\nafter\n" {
				t.Fatalf("after the fault a holds %q", got)
			}
		})
	}
}

// A write that arrives while the power is cut waits, then is refused: it
// never lands, even though it completes after the cut. (The process that
// sent it is meant to be SIGKILLed by then.)
func TestAWriteDuringTheCutNeverLands(t *testing.T) {
	ffs := mount(t, Options{})
	a := open(t, ffs.path("a"), os.O_CREATE|os.O_RDWR|os.O_APPEND)
	write(t, a, "synced\n")
	if err := a.Sync(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var werr error
	_, err := ffs.PowerCut(Loss{}, func() error {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, werr = a.WriteString("during the cut\n")
		}()
		time.Sleep(200 * time.Millisecond) // the write is waiting by now
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if !errors.Is(werr, syscall.EIO) {
		t.Fatalf("the write that waited through the cut returned %v, want EIO", werr)
	}
	if got := contents(t, ffs.path("a")); got != "synced\n" {
		t.Fatalf("a holds %q", got)
	}
}

// With a writeback delay, a change older than it reached the disk: only
// the newer ones are lost.
func TestWritebackKeepsOldChanges(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	ffs := mount(t, Options{Writeback: 30 * time.Second, Now: clock})
	a := open(t, ffs.path("a"), os.O_CREATE|os.O_RDWR|os.O_APPEND)
	write(t, a, "old\n")
	advance(31 * time.Second)
	write(t, a, "new\n")
	advance(time.Second)
	if _, err := ffs.Drop(); err != nil {
		t.Fatal(err)
	}
	if got := contents(t, ffs.path("a")); got != "old\n" {
		t.Fatalf("a holds %q, want only what is older than the writeback delay", got)
	}
}

// Checkpoint makes everything written durable.
func TestCheckpoint(t *testing.T) {
	ffs := mount(t, Options{})
	a := open(t, ffs.path("a"), os.O_CREATE|os.O_RDWR)
	write(t, a, "formed\n")
	ffs.Checkpoint()
	write(t, a, "later\n")
	if _, err := ffs.Drop(); err != nil {
		t.Fatal(err)
	}
	if got := contents(t, ffs.path("a")); got != "formed\n" {
		t.Fatalf("a holds %q", got)
	}
}

// Large writes are split at MaxWrite; each piece is undone.
func TestLargeWritesAreUndone(t *testing.T) {
	ffs := mount(t, Options{})
	a := open(t, ffs.path("a"), os.O_CREATE|os.O_RDWR)
	synced := bytes.Repeat([]byte("s"), 3*MaxWrite+17)
	if _, err := a.Write(synced); err != nil {
		t.Fatal(err)
	}
	if err := a.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WriteAt(bytes.Repeat([]byte("u"), 5*MaxWrite), 100); err != nil {
		t.Fatal(err)
	}
	if _, err := ffs.Drop(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(ffs.path("a")); !bytes.Equal(got, synced) {
		t.Fatalf("after the cut a has %d bytes, want the %d synced ones", len(got), len(synced))
	}
}

// A handle opened before a power cut belongs to a process the cut
// killed: its writes after the cut are refused. (A killed server's write
// still queued in the kernel when the cut ended used to land after the
// loss, at the file's old end, leaving a hole of zeros in its AOF.)
func TestAHandleFromBeforeTheCutIsDead(t *testing.T) {
	ffs := mount(t, Options{})
	a := open(t, ffs.path("appendonly.aof"), os.O_CREATE|os.O_WRONLY|os.O_APPEND)
	write(t, a, "synced\n")
	if err := a.Sync(); err != nil {
		t.Fatal(err)
	}
	write(t, a, "unsynced\n")
	if _, err := ffs.Drop(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WriteString("late\n"); !errors.Is(err, syscall.EIO) {
		t.Fatalf("a write through a handle from before the cut: %v, want EIO", err)
	}
	if got := contents(t, ffs.path("appendonly.aof")); got != "synced\n" {
		t.Fatalf("the file holds %q", got)
	}
	b := open(t, ffs.path("appendonly.aof"), os.O_WRONLY|os.O_APPEND)
	write(t, b, "after\n")
	if got := contents(t, ffs.path("appendonly.aof")); got != "synced\nafter\n" {
		t.Fatalf("a handle opened after the cut wrote %q", got)
	}
}
