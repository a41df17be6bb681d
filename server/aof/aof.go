// Package aof reads and writes the append-only file: a sequence of RESP
// multibulk commands, replayed at start. A truncated tail (a crash in the
// middle of a write) is detected and cut off.
package aof

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/redline-dev/redline/server/resp"
)

// File is what a Writer writes through: an *os.File, or a wrapper a
// test puts around it to fail writes and fsyncs as a full or failing disk
// does.
type File interface {
	Write(p []byte) (int, error)
	Sync() error
	Truncate(size int64) error
	Close() error
}

// Writer appends commands to the file. Append only buffers; Flush writes
// the buffer (and fsyncs when asked). It is not safe for concurrent use
// except SyncAsync, which may overlap with Append/Flush.
//
// A failed write is not sticky, as in Redis's flushAppendOnlyFile: the
// buffer is kept (what a short write put in the file is cut off again, or
// when that fails too, left there and dropped from the buffer) and the
// next Flush tries again.
type Writer struct {
	f       File
	path    string
	buf     []byte
	size    atomic.Int64
	syncing atomic.Bool
	syncMu  sync.Mutex
	// bgErr is the outcome of the last background fsync (Redis's
	// aof_bio_fsync_status and errno): nil once one succeeds.
	bgErr atomic.Pointer[error]
}

// Open opens (creating if needed) the file at path for appending.
func Open(path string) (*Writer, error) { return OpenWrapped(path, nil) }

// OpenWrapped is Open with the file passed through wrap (nil: as is).
func OpenWrapped(path string, wrap func(*os.File) File) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	w := &Writer{f: f, path: path}
	if wrap != nil {
		w.f = wrap(f)
	}
	w.size.Store(st.Size())
	return w, nil
}

// Path is the file path.
func (w *Writer) Path() string { return w.path }

// Size is the file size including buffered bytes.
func (w *Writer) Size() int64 { return w.size.Load() + int64(len(w.buf)) }

// Written is the file size without the buffer: what write(2) accepted.
func (w *Writer) Written() int64 { return w.size.Load() }

// Append buffers one command.
func (w *Writer) Append(argv [][]byte) {
	w.buf = AppendCommand(w.buf, argv)
}

// Pending reports whether there are buffered bytes.
func (w *Writer) Pending() bool { return len(w.buf) > 0 }

// WriteError is a failed write of the buffer.
type WriteError struct {
	Err error
	// Short: part of the buffer was written; Kept says whether that part
	// is still in the file (cutting it off failed too).
	Short, Kept bool
}

func (e *WriteError) Error() string {
	if e.Short {
		return fmt.Sprintf("short write to the AOF: %v", e.Err)
	}
	return fmt.Sprintf("writing the AOF: %v", e.Err)
}

func (e *WriteError) Unwrap() error { return e.Err }

// SyncError is a failed fsync.
type SyncError struct{ Err error }

func (e *SyncError) Error() string { return fmt.Sprintf("fsync of the AOF: %v", e.Err) }
func (e *SyncError) Unwrap() error { return e.Err }

// Flush writes the buffer to the file, then fsyncs if sync is set (also
// with nothing buffered: what was written since the last fsync). A write
// error (*WriteError) keeps the unwritten buffer for the next call; a
// fsync error is a *SyncError.
func (w *Writer) Flush(sync bool) error {
	if len(w.buf) > 0 {
		before := w.size.Load()
		n, err := w.f.Write(w.buf)
		if err != nil || n < len(w.buf) {
			if err == nil {
				err = io.ErrShortWrite
			}
			werr := &WriteError{Err: err}
			if n > 0 {
				// As Redis: cut a short write off, so the file ends at
				// a command's end; if that fails too, keep what was
				// written and drop it from the buffer.
				werr.Short = true
				if terr := w.f.Truncate(before); terr != nil {
					werr.Kept = true
					w.size.Add(int64(n))
					w.buf = append(w.buf[:0], w.buf[n:]...)
				}
			}
			return werr
		}
		w.size.Add(int64(n))
		if cap(w.buf) > 1<<20 {
			w.buf = nil
		} else {
			w.buf = w.buf[:0]
		}
	}
	if sync {
		w.syncMu.Lock()
		err := w.f.Sync()
		w.syncMu.Unlock()
		if err != nil {
			return &SyncError{Err: err}
		}
	}
	return nil
}

// SyncAsync fsyncs in the background unless a sync is already running;
// its outcome is BackgroundSyncErr's.
func (w *Writer) SyncAsync() {
	if !w.syncing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer w.syncing.Store(false)
		w.syncMu.Lock()
		err := w.f.Sync()
		w.syncMu.Unlock()
		if err != nil {
			err = &SyncError{Err: err}
			w.bgErr.Store(&err)
		} else {
			w.bgErr.Store(nil)
		}
	}()
}

// BackgroundSyncErr is the last background fsync's error, nil when it
// succeeded (or none ran).
func (w *Writer) BackgroundSyncErr() error {
	if p := w.bgErr.Load(); p != nil {
		return *p
	}
	return nil
}

// Close flushes, fsyncs and closes the file.
func (w *Writer) Close() error {
	err := w.Flush(true)
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Abandon closes the file without writing the buffer, as a process that
// exits does.
func (w *Writer) Abandon() error {
	w.buf = nil
	w.syncMu.Lock()
	defer w.syncMu.Unlock()
	return w.f.Close()
}

// AppendCommand encodes argv as a RESP multibulk.
func AppendCommand(b []byte, argv [][]byte) []byte {
	b = resp.AppendArray(b, len(argv))
	for _, a := range argv {
		b = resp.AppendBulk(b, a)
	}
	return b
}

// LoadResult describes a replayed file.
type LoadResult struct {
	Commands int
	// Valid is the length of the well-formed prefix. If it is less than
	// Size, the tail was truncated or corrupt.
	Valid, Size int64
	// Corrupt is set when the tail is not merely short but malformed.
	Corrupt bool
}

// ErrNoFile is returned by Load when the file does not exist.
var ErrNoFile = errors.New("no AOF file")

// Load replays the file at path, calling fn for each command in order.
// offset is where the command starts. It stops at the first incomplete or
// malformed command and reports where.
func Load(path string, fn func(argv [][]byte, offset int64)) (LoadResult, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return LoadResult{}, ErrNoFile
	}
	if err != nil {
		return LoadResult{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return LoadResult{}, err
	}
	res := LoadResult{Size: st.Size()}
	r := bufio.NewReaderSize(f, 1<<16)
	p := resp.Parser{MaxBulk: 1 << 62}
	buf := make([]byte, 0, 1<<16)
	var args [][]byte
	eof := false
	for {
		// Parse what we have.
		for len(buf) > 0 {
			a, n, _, perr := p.Parse(buf, args[:0])
			if perr != nil || (n > 0 && buf[0] != '*') {
				res.Corrupt = true
				return res, nil
			}
			if n == 0 {
				break
			}
			args = a
			if len(a) > 0 {
				fn(a, res.Valid)
				res.Commands++
			}
			res.Valid += int64(n)
			buf = buf[n:]
		}
		if eof {
			return res, nil
		}
		// Read more, keeping the unparsed tail.
		tail := len(buf)
		nb := make([]byte, tail, max(2*tail, 1<<16))
		copy(nb, buf)
		m, rerr := io.ReadFull(r, nb[tail:cap(nb)])
		buf = nb[:tail+m]
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			eof = true
		} else if rerr != nil {
			return res, rerr
		}
	}
}

// Truncate cuts the file at path to size (to drop a partial last command).
func Truncate(path string, size int64) error {
	return os.Truncate(path, size)
}

// Rewrite writes a compact file produced by emit to a temporary file next to
// path, fsyncs it and renames it over path. emit calls add for each command.
func Rewrite(path string, emit func(add func(argv ...[]byte))) error {
	tmp := fmt.Sprintf("%s.temp-rewrite-%d", path, os.Getpid())
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	var scratch []byte
	emit(func(argv ...[]byte) {
		scratch = AppendCommand(scratch[:0], argv)
		bw.Write(scratch)
	})
	if err := bw.Flush(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
