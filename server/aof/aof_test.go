package aof

import (
	"os"
	"path/filepath"
	"strings"
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
