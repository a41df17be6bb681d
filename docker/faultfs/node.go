package faultfs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// node is go-fuse's loopback node with the changes of file contents
// recorded, the disk fault answered, and every change admitted through
// the power-cut lock (FS.begin).
type node struct {
	*fs.LoopbackNode
	ffs *FS
}

var (
	_ fs.NodeWrapChilder    = (*node)(nil)
	_ fs.NodeOpener         = (*node)(nil)
	_ fs.NodeCreater        = (*node)(nil)
	_ fs.NodeSetattrer      = (*node)(nil)
	_ fs.NodeUnlinker       = (*node)(nil)
	_ fs.NodeRenamer        = (*node)(nil)
	_ fs.NodeMkdirer        = (*node)(nil)
	_ fs.NodeMknoder        = (*node)(nil)
	_ fs.NodeRmdirer        = (*node)(nil)
	_ fs.NodeSymlinker      = (*node)(nil)
	_ fs.NodeLinker         = (*node)(nil)
	_ fs.NodeCopyFileRanger = (*node)(nil)
)

// WrapChild makes every node below the root one of ours.
func (n *node) WrapChild(_ context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	return &node{LoopbackNode: ops.(*fs.LoopbackNode), ffs: n.ffs}
}

// backing is the node's path in the backing directory.
func (n *node) backing(name ...string) string {
	return filepath.Join(append([]string{n.ffs.opts.Backing, n.Path(nil)}, name...)...)
}

func (n *node) rel(name ...string) string {
	return filepath.Join(append([]string{n.Path(nil)}, name...)...)
}

// creating admits an operation that takes space: refused during a disk
// fault, and through the power-cut lock.
func (n *node) creating() (func(), syscall.Errno) {
	end, errno := n.ffs.begin()
	if errno != 0 {
		return nil, errno
	}
	if e := n.ffs.injected(); e != 0 {
		end()
		return nil, e
	}
	return end, 0
}

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if flags&syscall.O_TRUNC != 0 {
		// The kernel sends O_TRUNC as a SETATTR (no atomic_o_trunc):
		// this is only for a kernel that would not.
		end, errno := n.creating()
		if errno != 0 {
			return nil, 0, errno
		}
		defer end()
		if errno := n.recordTruncate(n.backing(), n.rel(), 0); errno != 0 {
			return nil, 0, errno
		}
	}
	fh, _, errno := n.LoopbackNode.Open(ctx, flags)
	if errno != 0 {
		return nil, 0, errno
	}
	return wrap(ctx, n, fh)
}

// wrap makes a loopback file handle of n one of ours.
func wrap(ctx context.Context, n *node, fh fs.FileHandle) (fs.FileHandle, uint32, syscall.Errno) {
	lf, ok := fh.(*fs.LoopbackFile)
	if !ok {
		return fh, fuse.FOPEN_DIRECT_IO, 0
	}
	var out fuse.AttrOut
	if errno := lf.Getattr(ctx, &out); errno != 0 {
		lf.Release(ctx)
		return nil, 0, errno
	}
	return &file{lf: lf, n: n, ino: out.Ino, gen: n.ffs.gen.Load()}, fuse.FOPEN_DIRECT_IO, 0
}

// recordTruncate records that the regular file at path is about to be cut
// to size (O_TRUNC): what is cut, and its size, go into its undo log.
func (n *node) recordTruncate(path, rel string, size int64) syscall.Errno {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size <= size {
		return 0 // nothing there to cut
	}
	t, err := n.ffs.track(st.Ino, rel, func() (*os.File, error) { return os.OpenFile(path, os.O_RDWR, 0) })
	if err != nil {
		return fs.ToErrno(err)
	}
	_, errno := t.record(n.ffs.opts, size, -1, false, func() (int, syscall.Errno) { return 0, 0 })
	return errno
}

func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	end, errno := n.creating()
	if errno != 0 {
		return nil, nil, 0, errno
	}
	defer end()
	if flags&syscall.O_TRUNC != 0 {
		if errno := n.recordTruncate(n.backing(name), n.rel(name), 0); errno != 0 {
			return nil, nil, 0, errno
		}
	}
	ch, fh, _, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	child, ok := ch.Operations().(*node)
	if !ok {
		return ch, fh, fuse.FOPEN_DIRECT_IO, 0
	}
	fh, fl, errno := wrap(ctx, child, fh)
	return ch, fh, fl, errno
}

func (n *node) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	size, ok := in.GetSize()
	if !ok {
		return n.LoopbackNode.Setattr(ctx, fh, in, out)
	}
	end, errno := n.ffs.begin()
	if errno != 0 {
		return errno
	}
	defer end()
	f, _ := fh.(*file)
	var st syscall.Stat_t
	if f != nil {
		if err := f.stat(&st); err != nil {
			return fs.ToErrno(err)
		}
	} else if err := syscall.Lstat(n.backing(), &st); err != nil {
		return fs.ToErrno(err)
	}
	if int64(size) > st.Size {
		if e := n.ffs.injected(); e != 0 {
			return e
		}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return n.LoopbackNode.Setattr(ctx, fh, in, out)
	}
	open := func() (*os.File, error) { return os.OpenFile(n.backing(), os.O_RDWR, 0) }
	if f != nil {
		open = f.reopen
	}
	t, err := n.ffs.track(st.Ino, n.rel(), open)
	if err != nil {
		return fs.ToErrno(err)
	}
	count := int64(-1) // shrinking: save everything it cuts
	if int64(size) >= st.Size {
		count = 0 // growing: the undo cuts it back
	}
	_, errno = t.record(n.ffs.opts, int64(size), count, false, func() (int, syscall.Errno) {
		return 0, n.LoopbackNode.Setattr(ctx, fh, in, out)
	})
	return errno
}

// gone is the inode of the regular file at path if removing its name
// removes its last one, else 0.
func gone(path string) uint64 {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Nlink != 1 {
		return 0
	}
	return st.Ino
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	end, errno := n.ffs.begin()
	if errno != 0 {
		return errno
	}
	defer end()
	ino := gone(n.backing(name))
	errno = n.LoopbackNode.Unlink(ctx, name)
	if errno == 0 && ino != 0 {
		n.ffs.forget(ino)
	}
	return errno
}

func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	end, errno := n.ffs.begin()
	if errno != 0 {
		return errno
	}
	defer end()
	to, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	var ino uint64
	if flags&unix.RENAME_EXCHANGE == 0 {
		ino = gone(to.backing(newName))
	}
	errno = n.LoopbackNode.Rename(ctx, name, to.LoopbackNode, newName, flags)
	if errno == 0 && ino != 0 {
		n.ffs.forget(ino)
	}
	return errno
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	end, errno := n.creating()
	if errno != 0 {
		return nil, errno
	}
	defer end()
	return n.LoopbackNode.Mkdir(ctx, name, mode, out)
}

func (n *node) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	end, errno := n.creating()
	if errno != 0 {
		return nil, errno
	}
	defer end()
	return n.LoopbackNode.Mknod(ctx, name, mode, rdev, out)
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	end, errno := n.ffs.begin()
	if errno != 0 {
		return errno
	}
	defer end()
	return n.LoopbackNode.Rmdir(ctx, name)
}

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	end, errno := n.creating()
	if errno != 0 {
		return nil, errno
	}
	defer end()
	return n.LoopbackNode.Symlink(ctx, target, name, out)
}

func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	end, errno := n.creating()
	if errno != 0 {
		return nil, errno
	}
	defer end()
	if t, ok := target.(*node); ok {
		target = t.LoopbackNode
	}
	return n.LoopbackNode.Link(ctx, target, name, out)
}

// CopyFileRange is refused, so the kernel copies through reads and writes
// (which are recorded).
func (n *node) CopyFileRange(context.Context, fs.FileHandle, uint64, *fs.Inode, fs.FileHandle, uint64, uint64, uint64) (uint32, syscall.Errno) {
	return 0, syscall.ENOSYS
}

// file is an open file: go-fuse's loopback file with writes, allocations
// and fsyncs recorded. It does not offer a passthrough descriptor: every
// read and write must come here.
type file struct {
	lf  *fs.LoopbackFile
	n   *node
	ino uint64 // the backing inode
	// gen is the power-cut count when the file was opened: a handle
	// opened before a cut belongs to a process the cut killed.
	gen uint64
}

// begin is FS.begin for an operation through the handle, refused (EIO)
// when the handle was opened before a power cut. A killed process's
// write can still be in the kernel's FUSE queue when the cut ends; let
// through, it landed after the loss, at the offset the file had before
// it, leaving a hole of zeros in an AOF (seen: "appendonly.aof
// 207971->133137", then 62 bytes at 207971).
func (f *file) begin() (func(), syscall.Errno) {
	end, errno := f.n.ffs.begin()
	if errno != 0 {
		return nil, errno
	}
	if f.n.ffs.gen.Load() != f.gen {
		end()
		return nil, syscall.EIO
	}
	return end, 0
}

var (
	_ fs.FileReader    = (*file)(nil)
	_ fs.FileWriter    = (*file)(nil)
	_ fs.FileFsyncer   = (*file)(nil)
	_ fs.FileFlusher   = (*file)(nil)
	_ fs.FileReleaser  = (*file)(nil)
	_ fs.FileGetattrer = (*file)(nil)
	_ fs.FileSetattrer = (*file)(nil)
	_ fs.FileAllocater = (*file)(nil)
	_ fs.FileLseeker   = (*file)(nil)
	_ fs.FileGetlker   = (*file)(nil)
	_ fs.FileSetlker   = (*file)(nil)
	_ fs.FileSetlkwer  = (*file)(nil)
)

// reopen opens the backing file read-write through /proc, whatever mode
// the handle was opened in, for the undo log.
func (f *file) reopen() (*os.File, error) {
	fd, ok := f.lf.PassthroughFd()
	if !ok {
		return nil, syscall.EBADF
	}
	return os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", fd), os.O_RDWR, 0)
}

func (f *file) stat(st *syscall.Stat_t) error {
	fd, ok := f.lf.PassthroughFd()
	if !ok {
		return syscall.EBADF
	}
	return syscall.Fstat(fd, st)
}

func (f *file) tracked() (*tracked, syscall.Errno) {
	t, err := f.n.ffs.track(f.ino, f.n.rel(), f.reopen)
	if err != nil {
		return nil, fs.ToErrno(err)
	}
	return t, 0
}

func (f *file) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	f.n.ffs.mu.RLock()
	defer f.n.ffs.mu.RUnlock()
	// Read now, not when the result is spliced to the kernel: a drop
	// may come in between.
	r, errno := f.lf.Read(ctx, dest, off)
	if errno != 0 {
		return nil, errno
	}
	b, st := r.Bytes(dest)
	r.Done()
	if st != fuse.OK {
		return nil, syscall.Errno(st)
	}
	return fuse.ReadResultData(b), 0
}

func (f *file) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	end, errno := f.begin()
	if errno != 0 {
		return 0, errno
	}
	defer end()
	if e := f.n.ffs.injected(); e != 0 {
		return 0, e
	}
	t, errno := f.tracked()
	if errno != 0 {
		return 0, errno
	}
	n, errno := t.record(f.n.ffs.opts, off, int64(len(data)), true, func() (int, syscall.Errno) {
		w, errno := f.lf.Write(ctx, data, off)
		return int(w), errno
	})
	return uint32(n), errno
}

// Fsync makes the file's contents durable (fsync and fdatasync alike). The
// backing file is not synced: only the simulated machine loses power.
func (f *file) Fsync(_ context.Context, _ uint32) syscall.Errno {
	end, errno := f.begin()
	if errno != 0 {
		return errno
	}
	defer end()
	if e := f.n.ffs.injected(); e != 0 {
		return e
	}
	f.n.ffs.synced(f.ino)
	return 0
}

func (f *file) Allocate(ctx context.Context, off uint64, size uint64, mode uint32) syscall.Errno {
	end, errno := f.begin()
	if errno != 0 {
		return errno
	}
	defer end()
	if e := f.n.ffs.injected(); e != 0 {
		return e
	}
	t, errno := f.tracked()
	if errno != 0 {
		return errno
	}
	_, errno = t.record(f.n.ffs.opts, int64(off), int64(size), false, func() (int, syscall.Errno) {
		return 0, f.lf.Allocate(ctx, off, size, mode)
	})
	return errno
}

func (f *file) Flush(ctx context.Context) syscall.Errno   { return f.lf.Flush(ctx) }
func (f *file) Release(ctx context.Context) syscall.Errno { return f.lf.Release(ctx) }
func (f *file) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	return f.lf.Getattr(ctx, out)
}
func (f *file) Setattr(ctx context.Context, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return f.lf.Setattr(ctx, in, out)
}
func (f *file) Lseek(ctx context.Context, off uint64, whence uint32) (uint64, syscall.Errno) {
	return f.lf.Lseek(ctx, off, whence)
}
func (f *file) Getlk(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32, out *fuse.FileLock) syscall.Errno {
	return f.lf.Getlk(ctx, owner, lk, flags, out)
}
func (f *file) Setlk(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32) syscall.Errno {
	return f.lf.Setlk(ctx, owner, lk, flags)
}
func (f *file) Setlkw(ctx context.Context, owner uint64, lk *fuse.FileLock, flags uint32) syscall.Errno {
	return f.lf.Setlkw(ctx, owner, lk, flags)
}
