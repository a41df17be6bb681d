package history

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// scanned is everything a scan gives: each entry (its Op and raw line),
// the ReadResult and the error.
type scanned struct {
	ops  []Op
	raws []string
	res  ReadResult
	err  string
}

func scanAll(t *testing.T, b []byte, workers int, stopAfter int) scanned {
	t.Helper()
	var s scanned
	errStop := errors.New("fn stopped")
	res, err := scanReader(bytes.NewReader(b), "h", func(op *Op, raw []byte) error {
		if stopAfter >= 0 && len(s.ops) == stopAfter {
			return errStop
		}
		s.ops = append(s.ops, *op)
		s.raws = append(s.raws, string(raw))
		return nil
	}, workers)
	s.res = res
	if err != nil {
		s.err = err.Error()
	}
	return s
}

// rawFrame is a record of lines as they are, lies included.
func rawFrame(t *testing.T, lines string, entries int) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	b := binary.LittleEndian.AppendUint32(nil, indexMagic)
	b = binary.LittleEndian.AppendUint32(b, 8)
	z := enc.EncodeAll([]byte(lines), nil)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(z)))
	b = binary.LittleEndian.AppendUint32(b, uint32(entries))
	return append(b, z...)
}

// A framed history scanned by worker goroutines gives what the scan of
// one goroutine gives, entry for entry, with the same ReadResult and the
// same error at the same line: whole, torn mid-record, cut in an index,
// followed by garbage, with a frame that does not decode, a frame whose
// index lies about its lines, a line of garbage, a line of an unknown
// type, a line without f, blank lines, and fn stopping the scan.
func TestScanFramedAsOneGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	ops := mixedHistory(9, 5000, 11, 40)
	whole := framed(t, ops, 97)
	mid := len(whole) / 2
	goodLines := string(encodeAll(t, ops[:3]))
	cases := map[string][]byte{
		"whole":                    whole,
		"torn mid-record":          whole[:len(whole)-5],
		"cut in an index":          append(append([]byte{}, whole...), rawFrame(t, goodLines, 3)[:9]...),
		"garbage after":            append(append([]byte{}, whole...), []byte("garbage, not a record")...),
		"a frame that fails":       append(append(append([]byte{}, whole[:mid]...), 0x5b, 0x2a, 0x4d, 0x18, 8, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 0x28, 0xb5, 0x2f, 0xfd), whole[mid:]...),
		"an index that lies":       append(append([]byte{}, whole...), rawFrame(t, goodLines, 5)...),
		"a line of garbage":        append(append([]byte{}, whole...), rawFrame(t, goodLines+"{\"index\": garbage\n"+goodLines, 7)...),
		"a line of no known type":  append(append([]byte{}, whole...), rawFrame(t, goodLines+`{"index":9,"time":0,"process":1,"type":"bogus","f":"add"}`+"\n", 4)...),
		"a line without f":         append(append([]byte{}, whole...), rawFrame(t, `{"index":9,"time":0,"process":1,"type":"invoke"}`+"\n", 1)...),
		"blank lines":              append(append([]byte{}, whole...), rawFrame(t, "\n"+goodLines+"  \n", 5)...),
		"a frame without its last": append(append([]byte{}, whole...), rawFrame(t, goodLines[:len(goodLines)-1], 3)...),
	}
	for name, b := range cases {
		want := scanAll(t, b, 0, -1)
		for _, workers := range []int{1, 2, 3} {
			got := scanAll(t, b, workers, -1)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, %d workers: %d entries, %+v, %q; one goroutine: %d entries, %+v, %q",
					name, workers, len(got.ops), got.res, got.err, len(want.ops), want.res, want.err)
			}
		}
		if name == "whole" && (want.err != "" || len(want.ops) != len(ops)) {
			t.Fatalf("whole: %d entries, %q", len(want.ops), want.err)
		}
		if name != "whole" && name != "blank lines" && want.err == "" && !want.res.TruncatedTail {
			t.Fatalf("%s: neither an error nor a tear", name)
		}
	}
	// fn stopping the scan: its error, at any point, and nothing after.
	for _, at := range []int{0, 1, 96, 97, 98, 2500, 4999} {
		want := scanAll(t, whole, 0, at)
		got := scanAll(t, whole, 2, at)
		if !reflect.DeepEqual(got, want) || got.err != "fn stopped" {
			t.Fatalf("stopped at %d: %d entries, %q; one goroutine: %d, %q", at, len(got.ops), got.err, len(want.ops), want.err)
		}
	}
	// Nothing of the scans is left running.
	if n := runtime.NumGoroutine(); n > before {
		time.Sleep(100 * time.Millisecond)
		if n = runtime.NumGoroutine(); n > before {
			t.Fatalf("%d goroutines after the scans, %d before", n, before)
		}
	}
}
