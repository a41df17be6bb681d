package aof

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWriteLoadTruncate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d", "appendonly.aof")
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Append([][]byte{[]byte("SET"), []byte("a"), []byte("1")})
	w.Append([][]byte{[]byte("INCR"), []byte("n")})
	if err := w.Flush(true); err != nil {
		t.Fatal(err)
	}
	good := w.Size()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("*2\r\n$4\r\nINCR\r\n$1")
	f.Close()
	var got []string
	res, err := Load(path, func(argv [][]byte, off int64) {
		parts := make([]string, len(argv))
		for i, a := range argv {
			parts[i] = string(a)
		}
		got = append(got, strings.Join(parts, " "))
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "SET a 1|INCR n" || res.Valid != good || res.Size <= good || res.Corrupt {
		t.Fatalf("load: %v %+v (good %d)", got, res, good)
	}
	if err := Truncate(path, res.Valid); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path+".bad", []byte("*1\r\n$4\r\nPING\r\ngarbage here\r\n"), 0o644)
	res, err = Load(path+".bad", func([][]byte, int64) {})
	if err != nil || !res.Corrupt || res.Valid != 14 {
		t.Fatalf("corrupt: %+v %v", res, err)
	}
	if _, err := Load(path+".none", func([][]byte, int64) {}); err != ErrNoFile {
		t.Fatalf("missing file: %v", err)
	}
}

func TestRewrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "appendonly.aof")
	os.WriteFile(path, []byte("old"), 0o644)
	err := Rewrite(path, func(add func(argv ...[]byte)) {
		add([]byte("SET"), []byte("k"), []byte("v"))
	})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if string(b) != "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n" {
		t.Fatalf("rewritten: %q", b)
	}
}

// shortFile accepts half of a write and then fails it, as a disk that
// fills in the middle of one does.
type shortFile struct {
	*os.File
	full bool
}

func (f *shortFile) Write(p []byte) (int, error) {
	if !f.full {
		return f.File.Write(p)
	}
	n, _ := f.File.Write(p[:len(p)/2])
	return n, syscall.ENOSPC
}

// TestShortWriteIsCutOffAndRetried: as Redis's flushAppendOnlyFile, a
// short write is cut off the file (it ends at a command's end) and the
// whole buffer is written by the next Flush.
func TestShortWriteIsCutOffAndRetried(t *testing.T) {
	path := filepath.Join(t.TempDir(), "appendonly.aof")
	var sf *shortFile
	w, err := OpenWrapped(path, func(f *os.File) File { sf = &shortFile{File: f}; return sf })
	if err != nil {
		t.Fatal(err)
	}
	w.Append([][]byte{[]byte("SET"), []byte("a"), []byte("1")})
	if err := w.Flush(false); err != nil {
		t.Fatal(err)
	}
	good := w.Written()
	sf.full = true
	w.Append([][]byte{[]byte("SET"), []byte("b"), []byte("2")})
	var werr *WriteError
	if err := w.Flush(false); !errors.As(err, &werr) || !werr.Short || werr.Kept || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("short write: %v", err)
	}
	if st, _ := os.Stat(path); st.Size() != good || w.Written() != good || !w.Pending() {
		t.Fatalf("after a short write: file %d bytes, written %d, want %d with the buffer kept", st.Size(), w.Written(), good)
	}
	sf.full = false
	if err := w.Flush(false); err != nil {
		t.Fatal(err)
	}
	w.Close()
	n := 0
	if _, err := Load(path, func([][]byte, int64) { n++ }); err != nil || n != 2 {
		t.Fatalf("loaded %d commands (%v), want 2", n, err)
	}
}
