package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
)

// maxLine bounds one history line; a final read of a big set can be long.
const maxLine = 256 << 20

// Encode writes one op as a JSON line.
func Encode(w io.Writer, op *Op) error {
	b, err := json.Marshal(op)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// ParseError names the line of a history that could not be read.
type ParseError struct {
	File string
	Line int
	Err  error
}

func (e *ParseError) Error() string {
	name := e.File
	if name == "" {
		name = "history"
	}
	return fmt.Sprintf("%s:%d: %v", name, e.Line, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// ReadResult is a decoded history plus what was tolerated while reading it.
type ReadResult struct {
	Ops []Op
	// TruncatedTail is true when the last line had no newline and did not
	// parse: the run that wrote it crashed mid-line. That line is dropped;
	// TornLine is its number (1-based) and TornText its bytes (at most
	// maxTornText), for the reader to report it raw.
	TruncatedTail bool
	TornLine      int
	TornText      string
	// TornBytes, for a compressed history (FileName), is the number of
	// bytes after its last whole frame when the file ends inside a frame:
	// TruncatedTail is then true, TornLine is the line the lost entries
	// began at and TornText is empty (the bytes do not decode alone).
	TornBytes int64
	// Entries counts the entries read (len(Ops) when they are kept).
	Entries int
}

// maxTornText bounds the torn line's bytes a ReadResult keeps.
const maxTornText = 1024

// Decode reads a history in any of its formats (JSON lines, compressed
// frames, a zstd stream), told by its first bytes. name is used in error
// messages. A corrupt line anywhere but a torn last line is an error
// naming the line; in a compressed history, a frame that does not decode
// is an error naming the frame, and a last frame cut short is reported
// (TornBytes), its whole predecessors read.
func Decode(r io.Reader, name string) (ReadResult, error) {
	return decodeAny(r, name, 0)
}

func decodeAny(r io.Reader, name string, capHint int) (ReadResult, error) {
	res := ReadResult{Ops: make([]Op, 0, capHint)}
	err := scanAny(r, name, &res, sliceSink{&res.Ops}, 0)
	return res, err
}

// scanAny reads a history in any of its formats into sink (see Decode).
func scanAny(r io.Reader, name string, res *ReadResult, sink opSink, workers int) error {
	br := bufio.NewReaderSize(r, 1<<20)
	head, _ := br.Peek(4)
	switch sniff(head) {
	case Framed:
		fr, err := newFrameReader(br)
		if err != nil {
			return err
		}
		defer fr.close()
		if ss, ok := sink.(*streamSink); ok && workers > 0 {
			err = scanFramed(fr, name, res, ss.fn, workers)
		} else {
			err = scanLines(fr, name, res, sink)
		}
		if err != nil {
			return err
		}
		if res.TruncatedTail {
			// A whole frame always ends with a newline: unreachable
			// unless the reader is wrong, so never tolerated.
			return &ParseError{name, res.TornLine, errors.New("a frame ends in the middle of a line")}
		}
		if fr.torn > 0 {
			res.TruncatedTail = true
			res.TornLine = res.Entries + 1
			res.TornBytes = fr.torn
		}
		return nil
	case ZstdStream:
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30))
		if err != nil {
			return err
		}
		defer zr.Close()
		// A plain stream has no index: a stream cut short is an error
		// of the decoder (never a prefix taken silently).
		return scanLines(zr, name, res, sink)
	}
	return scanLines(br, name, res, sink)
}

// decode reads a history into a slice made for about capHint entries
// (growing a slice of a million 120-byte entries copies it over and over).
func decode(r io.Reader, name string, capHint int) (ReadResult, error) {
	res := ReadResult{Ops: make([]Op, 0, capHint)}
	err := scanLines(r, name, &res, sliceSink{&res.Ops})
	return res, err
}

// opSink is where scanLines puts each entry: slot gives the Op to decode
// into, then keep takes it (with its raw line) or drop gives it back.
// One scanner for the decoder that keeps every entry and the one that
// streams them (Scan), so that both read, tolerate and refuse alike.
type opSink interface {
	slot() *Op
	keep(op *Op, raw []byte) error
	drop()
}

// sliceSink decodes in place at the end of a slice: one Op per entry on
// the heap was half of the decoder's allocation.
type sliceSink struct{ ops *[]Op }

func (s sliceSink) slot() *Op {
	*s.ops = append(*s.ops, Op{})
	return &(*s.ops)[len(*s.ops)-1]
}
func (s sliceSink) keep(*Op, []byte) error { return nil }
func (s sliceSink) drop()                  { *s.ops = (*s.ops)[:len(*s.ops)-1] }

// scanLines reads the JSON lines of r into sink, res recording what was
// tolerated (a torn last line) and counting the entries kept (Entries).
func scanLines(r io.Reader, name string, res *ReadResult, sink opSink) error {
	br := bufio.NewReaderSize(r, 1<<20)
	fast := newLineDecoder()
	line := 0
	for {
		b, err := br.ReadSlice('\n')
		var full []byte
		if errors.Is(err, bufio.ErrBufferFull) {
			// Long line: assemble it.
			buf := append([]byte(nil), b...)
			for errors.Is(err, bufio.ErrBufferFull) {
				b, err = br.ReadSlice('\n')
				buf = append(buf, b...)
				if len(buf) > maxLine {
					return &ParseError{name, line + 1, fmt.Errorf("line longer than %d bytes", maxLine)}
				}
			}
			full = buf
		} else {
			full = b
		}
		if err != nil && err != io.EOF {
			return &ParseError{name, line + 1, err}
		}
		if len(full) == 0 && err == io.EOF {
			return nil
		}
		line++
		torn := err == io.EOF && !bytes.HasSuffix(full, []byte("\n"))
		trimmed := bytes.TrimSpace(full)
		if len(trimmed) > 0 {
			op := sink.slot()
			var perr error
			if !fast.decode(trimmed, op) {
				var slow Op
				perr = json.Unmarshal(trimmed, &slow)
				*op = slow
			}
			if perr != nil {
				sink.drop()
				if terr := typeError(perr); terr != nil {
					// A whole entry of no known type: not a torn line.
					return &ParseError{name, line, terr}
				}
				if torn {
					res.TruncatedTail = true
					res.TornLine = line
					res.TornText = string(trimmed[:min(len(trimmed), maxTornText)])
					return nil
				}
				return &ParseError{name, line, fmt.Errorf("not a history entry: %v", perr)}
			}
			if verr := op.validate(); verr != nil {
				sink.drop()
				return &ParseError{name, line, verr}
			}
			res.Entries++
			if kerr := sink.keep(op, trimmed); kerr != nil {
				return kerr
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// typeError is the *TypeError in err, if any (a function of its own: the
// variable errors.As fills escapes, and a line that decodes must not pay
// an allocation for it).
func typeError(err error) *TypeError {
	var terr *TypeError
	if errors.As(err, &terr) {
		return terr
	}
	return nil
}

func (o *Op) validate() error {
	switch o.Type {
	case Invoke, OK, Fail, Info:
	default:
		return &TypeError{o.Type.String()}
	}
	if o.F == "" {
		return errors.New(`missing "f"`)
	}
	return nil
}

// ReadFile decodes a history file in any of its formats (see Decode).
func ReadFile(path string) (ReadResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return ReadResult{}, err
	}
	defer f.Close()
	var head [4]byte
	n, _ := io.ReadFull(f, head[:])
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return ReadResult{}, err
	}
	hint := 0
	switch sniff(head[:n]) {
	case Framed:
		var size int64
		if st, err := f.Stat(); err == nil {
			size = st.Size()
		}
		hint = frameEntries(f, size)
	case JSONLines:
		hint = estimateEntries(f)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return ReadResult{}, err
	}
	return decodeAny(f, path, hint)
}

// ReadRun decodes the history of the run directory dir (Path).
func ReadRun(dir string) (ReadResult, error) {
	return ReadFile(Path(dir))
}

// estimateEntries counts the lines of a history file (an entry is a line),
// so that the entry slice is made once at its size: growing a slice of
// millions of entries copies it over and over and leaves it up to twice too
// big. Counting newlines reads the file once more, at memory speed.
func estimateEntries(f *os.File) int {
	buf := make([]byte, 1<<20)
	n := 0
	for {
		k, err := f.Read(buf)
		n += bytes.Count(buf[:k], []byte("\n"))
		if err != nil {
			break
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0
	}
	return n + 1
}
