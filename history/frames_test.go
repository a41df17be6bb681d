package history

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// oldFixture is a history as redline wrote it before the compressed
// format: plain JSON lines.
const oldFixture = "testdata/old-run-history.jsonl"

func encodeAll(t *testing.T, ops []Op) []byte {
	t.Helper()
	var buf bytes.Buffer
	for i := range ops {
		if err := Encode(&buf, &ops[i]); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// framed writes ops as a compressed history, per entries to a frame.
func framed(t *testing.T, ops []Op, per int) []byte {
	t.Helper()
	var out bytes.Buffer
	fw, err := NewFrameWriter(&out)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(ops); i += per {
		j := min(i+per, len(ops))
		if err := fw.WriteFrame(encodeAll(t, ops[i:j]), j-i); err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes()
}

func readOld(t *testing.T) []Op {
	t.Helper()
	res, err := ReadFile(oldFixture)
	if err != nil || res.TruncatedTail || len(res.Ops) != 8 {
		t.Fatalf("old-format fixture: %d ops, torn %v, %v", len(res.Ops), res.TruncatedTail, err)
	}
	return res.Ops
}

func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A run of an older redline (history.jsonl) reads as before, through the
// same reader and Path; the same ops written compressed read back equal,
// entry for entry, and zstd's tools see the JSON lines.
func TestFramedRoundTripAndOldRuns(t *testing.T) {
	ops := readOld(t)
	want, err := os.ReadFile(oldFixture)
	if err != nil {
		t.Fatal(err)
	}
	if got := encodeAll(t, ops); !bytes.Equal(got, want) {
		t.Fatalf("the old fixture does not re-encode to itself:\n%s", got)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, JSONLinesName), want, 0o644); err != nil {
		t.Fatal(err)
	}
	if p := Path(dir); filepath.Base(p) != JSONLinesName {
		t.Fatalf("Path of an old run = %s", p)
	}
	if res, err := ReadRun(dir); err != nil || len(res.Ops) != len(ops) {
		t.Fatalf("ReadRun of an old run: %d ops, %v", len(res.Ops), err)
	}
	for _, per := range []int{1, 3, 100} {
		b := framed(t, ops, per)
		if err := os.WriteFile(filepath.Join(dir, FileName), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if p := Path(dir); filepath.Base(p) != FileName {
			t.Fatalf("Path prefers %s to the compressed history", p)
		}
		res, err := ReadRun(dir)
		if err != nil || res.TruncatedTail {
			t.Fatalf("%d a frame: torn %v, %v", per, res.TruncatedTail, err)
		}
		if got := encodeAll(t, res.Ops); !bytes.Equal(got, want) {
			t.Fatalf("%d a frame: read back\n%s\nwant\n%s", per, got, want)
		}
		l, err := OpenLines(filepath.Join(dir, FileName))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(l)
		l.Close()
		if err != nil || !bytes.Equal(got, want) || l.Torn() != "" || l.Format() != Framed {
			t.Fatalf("%d a frame: Lines gave %q (torn %q), %v", per, got, l.Torn(), err)
		}
	}
	// A plain zstd stream of the JSON lines (as `zstd history.jsonl`
	// makes) reads too.
	fw, _ := NewFrameWriter(io.Discard)
	plain := fw.enc.EncodeAll(want, nil)
	if res, err := ReadFile(writeTemp(t, FileName, plain)); err != nil || len(res.Ops) != len(ops) {
		t.Fatalf("zstd stream: %d ops, %v", len(res.Ops), err)
	}
}

// A crash mid-write leaves a record cut short: every whole frame before it
// is read and the torn bytes are reported, at every cut point, never a
// prefix taken silently.
func TestFramedTornTail(t *testing.T) {
	ops := readOld(t)
	b := framed(t, ops, 3) // frames of 3, 3 and 2 entries
	var ends []int         // where each record ends
	for off := 0; off < len(b); {
		off += indexHeaderSize + int(binary.LittleEndian.Uint32(b[off+8:]))
		ends = append(ends, off)
	}
	if len(ends) != 3 {
		t.Fatalf("%d records, want 3", len(ends))
	}
	for cut := ends[0] + 1; cut < len(b); cut++ {
		whole := 0
		for _, e := range ends {
			if e <= cut {
				whole++
			}
		}
		res, err := ReadFile(writeTemp(t, FileName, b[:cut]))
		if whole == 2 && cut == ends[1] {
			if err != nil || res.TruncatedTail || len(res.Ops) != 6 {
				t.Fatalf("cut at a record's end: %d ops, torn %v, %v", len(res.Ops), res.TruncatedTail, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("cut at %d of %d: %v", cut, len(b), err)
		}
		torn := int64(cut - ends[whole-1])
		if !res.TruncatedTail || res.TornBytes != torn || len(res.Ops) != 3*whole || res.TornLine != 3*whole+1 {
			t.Fatalf("cut at %d: %d ops, torn %v (%d bytes, line %d), want %d ops and %d torn bytes",
				cut, len(res.Ops), res.TruncatedTail, res.TornBytes, res.TornLine, 3*whole, torn)
		}
		l, err := OpenLines(writeTemp(t, FileName, b[:cut]))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(l)
		l.Close()
		if err != nil || bytes.Count(got, []byte("\n")) != 3*whole || !strings.Contains(l.Torn(), "frame cut mid-write") {
			t.Fatalf("cut at %d: Lines gave %d lines, torn %q, %v", cut, bytes.Count(got, []byte("\n")), l.Torn(), err)
		}
	}
}

// A frame that does not decode, anywhere, is an error naming it; so is
// anything after the last record that is not the start of one.
func TestFramedGarbageIsAnError(t *testing.T) {
	ops := readOld(t)
	b := framed(t, ops, 3)
	second := indexHeaderSize + int(binary.LittleEndian.Uint32(b[8:]))
	for name, mutate := range map[string]func([]byte) []byte{
		"a byte of the middle frame flipped":  func(c []byte) []byte { c[second+indexHeaderSize+10] ^= 0xff; return c },
		"the middle frame's index garbled":    func(c []byte) []byte { c[second] ^= 0xff; return c },
		"the middle frame's entry count lies": func(c []byte) []byte { c[second+12]++; return c },
		"the middle frame's length lies": func(c []byte) []byte {
			binary.LittleEndian.PutUint32(c[second+8:], binary.LittleEndian.Uint32(c[second+8:])-1)
			return c
		},
		"garbage after the last frame": func(c []byte) []byte { return append(c, "garbage"...) },
		"zeros after the last frame":   func(c []byte) []byte { return append(c, make([]byte, 40)...) },
		"a JSON line after the frames": func(c []byte) []byte { return append(c, `{"index":8}`+"\n"...) },
	} {
		c := mutate(bytes.Clone(b))
		res, err := ReadFile(writeTemp(t, FileName, c))
		var perr *ParseError
		if !errors.As(err, &perr) || !strings.Contains(err.Error(), "frame") {
			t.Errorf("%s: %d ops, torn %v, error %v; want a ParseError naming the frame", name, len(res.Ops), res.TruncatedTail, err)
		}
		l, err := OpenLines(writeTemp(t, FileName, c))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadAll(l); err == nil {
			t.Errorf("%s: Lines read it all without an error", name)
		}
		l.Close()
	}
}

// An empty file (a run that crashed before its first frame) is an empty
// history, in either name: the checkers then say they saw nothing.
func TestEmptyHistory(t *testing.T) {
	for _, name := range []string{FileName, JSONLinesName} {
		res, err := ReadFile(writeTemp(t, name, nil))
		if err != nil || len(res.Ops) != 0 || res.TruncatedTail {
			t.Fatalf("%s empty: %d ops, torn %v, %v", name, len(res.Ops), res.TruncatedTail, err)
		}
	}
	if _, err := ReadRun(t.TempDir()); !os.IsNotExist(err) {
		t.Fatalf("a run without a history: %v, want not-exist", err)
	}
}

// An index that lies about sizes makes the reader allocate no more than
// the file holds, and never reads clean: a length past the end of the file
// reads as torn (all that follows is lost, the verdict cannot be valid),
// an entry count of billions is an error.
func TestFramedIndexThatLies(t *testing.T) {
	ops := readOld(t)
	b := framed(t, ops, 3)
	second := indexHeaderSize + int(binary.LittleEndian.Uint32(b[8:]))
	long := bytes.Clone(b)
	binary.LittleEndian.PutUint32(long[second+8:], 0xfffffff0)
	res, err := ReadFile(writeTemp(t, FileName, long))
	if err != nil || !res.TruncatedTail || len(res.Ops) != 3 || res.TornBytes != int64(len(b)-second) {
		t.Fatalf("a length past the end: %d ops, torn %v (%d bytes), %v", len(res.Ops), res.TruncatedTail, res.TornBytes, err)
	}
	many := bytes.Clone(b)
	binary.LittleEndian.PutUint32(many[second+12:], 0xfffffff0)
	res, err = ReadFile(writeTemp(t, FileName, many))
	if err == nil || cap(res.Ops) > len(many) {
		t.Fatalf("an entry count of billions: %d ops (cap %d), %v", len(res.Ops), cap(res.Ops), err)
	}
}
