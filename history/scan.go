package history

import (
	"io"
	"os"
)

// Scan reads the history file at path once, in any of its formats,
// handing each entry to fn in file order with its raw JSON line, and
// keeping none: the memory of a scan does not grow with the history. It
// reads, tolerates and refuses exactly as ReadFile does (one scanner
// serves both): the ReadResult it returns is ReadFile's without Ops (a
// torn tail reported, Entries counted), and a corrupt entry is the same
// *ParseError. op and raw are only valid during the call: fn keeps an
// entry by copying the Op (*op; what its fields point to is never reused)
// and raw by copying its bytes. An error from fn stops the scan and is
// returned as it is.
func Scan(path string, fn func(op *Op, raw []byte) error) (ReadResult, error) {
	return scanFile(path, fn, 0)
}

// scanFile is Scan with a framed history's records decoded by workers
// goroutines (scanFramed; 0: in the caller's). Only the spill asks for
// workers: its fn (writing the partitions) is light beside the decoding,
// and it runs alone (run10m: 6 s instead of 10). The other scans of a
// check run beside the partition checkers, or feed checkers heavier than
// the decoding, and gained nothing for a third more CPU (2026-12-06).
func scanFile(path string, fn func(op *Op, raw []byte) error, workers int) (ReadResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return ReadResult{}, err
	}
	defer f.Close()
	return scanReader(f, path, fn, workers)
}

// ScanReader is Scan of a history read from r; name is used in errors.
func ScanReader(r io.Reader, name string, fn func(op *Op, raw []byte) error) (ReadResult, error) {
	return scanReader(r, name, fn, 0)
}

// scanReader is ScanReader with a framed history's records decoded by
// workers goroutines (scanFramed; 0: in the caller's).
func scanReader(r io.Reader, name string, fn func(op *Op, raw []byte) error, workers int) (ReadResult, error) {
	var res ReadResult
	err := scanAny(r, name, &res, &streamSink{fn: fn}, workers)
	return res, err
}

// streamSink decodes every entry into the same Op and hands it on.
type streamSink struct {
	op Op
	fn func(*Op, []byte) error
}

func (s *streamSink) slot() *Op {
	s.op = Op{}
	return &s.op
}
func (s *streamSink) keep(op *Op, raw []byte) error { return s.fn(op, raw) }
func (s *streamSink) drop()                         {}
