package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
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
	// parse: the run that wrote it crashed mid-line. That line is dropped.
	TruncatedTail bool
}

// Decode reads a JSON-lines history. name is used in error messages.
// A corrupt line anywhere but a torn last line is an error naming the line.
func Decode(r io.Reader, name string) (ReadResult, error) {
	return decode(r, name, 0)
}

// decode reads a history into a slice made for about capHint entries
// (growing a slice of a million 200-byte entries copies it over and over).
func decode(r io.Reader, name string, capHint int) (ReadResult, error) {
	res := ReadResult{Ops: make([]Op, 0, capHint)}
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
					return res, &ParseError{name, line + 1, fmt.Errorf("line longer than %d bytes", maxLine)}
				}
			}
			full = buf
		} else {
			full = b
		}
		if err != nil && err != io.EOF {
			return res, &ParseError{name, line + 1, err}
		}
		if len(full) == 0 && err == io.EOF {
			return res, nil
		}
		line++
		torn := err == io.EOF && !bytes.HasSuffix(full, []byte("\n"))
		trimmed := bytes.TrimSpace(full)
		if len(trimmed) > 0 {
			var perr error
			var op Op
			if !fast.decode(trimmed, &op) {
				op = Op{}
				perr = json.Unmarshal(trimmed, &op)
			}
			if perr != nil {
				if torn {
					res.TruncatedTail = true
					return res, nil
				}
				return res, &ParseError{name, line, fmt.Errorf("not a history entry: %v", perr)}
			}
			if verr := op.validate(); verr != nil {
				return res, &ParseError{name, line, verr}
			}
			res.Ops = append(res.Ops, op)
		}
		if err == io.EOF {
			return res, nil
		}
	}
}

func (o *Op) validate() error {
	switch o.Type {
	case Invoke, OK, Fail, Info:
	default:
		return fmt.Errorf("type %q is not invoke, ok, fail or info", o.Type)
	}
	if o.F == "" {
		return errors.New(`missing "f"`)
	}
	return nil
}

// ReadFile decodes a history file.
func ReadFile(path string) (ReadResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return ReadResult{}, err
	}
	defer f.Close()
	return decode(f, path, estimateEntries(f))
}

// estimateEntries guesses a history file's entry count from its size and
// the line lengths of its first 256 KB, a little high rather than low.
func estimateEntries(f *os.File) int {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return 0
	}
	head := make([]byte, 256<<10)
	n, _ := io.ReadFull(f, head)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0
	}
	lines := bytes.Count(head[:n], []byte("\n"))
	if lines == 0 {
		return 0
	}
	return int(float64(st.Size())/(float64(n)/float64(lines))*1.05) + 16
}
