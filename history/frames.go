package history

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/zstd"
)

// File names of a run's history. FileName is what the recorder writes:
// the JSON lines of the format below, compressed in independent zstd
// frames. JSONLinesName is the uncompressed JSON lines runs of redline
// before it wrote (and what a hand-made history may still be); every
// reader reads both, by content, whatever the name says.
const (
	FileName      = "history.jsonl.zst"
	JSONLinesName = "history.jsonl"
)

// Path is the history file of the run directory dir: FileName when it
// exists, else JSONLinesName when that exists (a run of an older
// redline), else FileName (whose absence the caller's open reports).
func Path(dir string) string {
	p := filepath.Join(dir, FileName)
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if old := filepath.Join(dir, JSONLinesName); fileExists(old) {
		return old
	}
	return p
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// The compressed history is a sequence of records, each a zstd skippable
// frame of indexHeaderSize bytes followed by one zstd frame:
//
//	skippable frame: magic indexMagic (u32 LE), size 8 (u32 LE),
//	                 the zstd frame's length in bytes (u32 LE),
//	                 the number of entries (lines) it holds (u32 LE)
//	zstd frame:      whole JSON lines, with a content checksum
//
// Each zstd frame is independent, so a crash mid-write leaves every
// complete record readable; the index frame says where a frame ends, so a
// record cut short is told (and its bytes counted) from a frame that does
// not decode (an error). zstd's tools skip skippable frames: `zstdcat
// history.jsonl.zst` prints the JSON lines.
const (
	indexMagic      = 0x184D2A5B // in the skippable range 0x184D2A50..5F
	indexHeaderSize = 16
	zstdMagic       = 0xFD2FB528
)

// FrameWriter writes whole JSON lines as records of the compressed
// history. It is not safe for concurrent use.
type FrameWriter struct {
	w   io.Writer
	enc *zstd.Encoder
	buf []byte
}

// NewFrameWriter writes compressed records to w.
func NewFrameWriter(w io.Writer) (*FrameWriter, error) {
	// One goroutine: a frame is compressed by whoever writes it, and a run
	// shares its cores with its cluster. Level fastest: on a million
	// entries of scripts/gen-history (120 bytes each as JSON) in frames of
	// 40000 it gave 16.9 bytes an entry at 69 MB/s on the shared CI box,
	// where default gave 18.0 at 35 MB/s and better 15.5 at 26 MB/s.
	enc, err := newFrameEncoder()
	if err != nil {
		return nil, err
	}
	return &FrameWriter{w: w, enc: enc}, nil
}

// newFrameEncoder is the encoder of the history's frames (NewFrameWriter
// says why these options).
func newFrameEncoder() (*zstd.Encoder, error) {
	return zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(true),
		zstd.WithEncoderLevel(zstd.SpeedFastest))
}

// WriteFrame compresses lines (entries whole JSON lines, each ending in a
// newline) into one record and writes it with a single Write. Nothing is
// written for no lines.
func (fw *FrameWriter) WriteFrame(lines []byte, entries int) error {
	if len(lines) == 0 {
		return nil
	}
	if lines[len(lines)-1] != '\n' {
		return errors.New("history frame: the lines must end with a newline")
	}
	b := fw.buf[:0]
	b = binary.LittleEndian.AppendUint32(b, indexMagic)
	b = binary.LittleEndian.AppendUint32(b, 8)
	b = append(b, 0, 0, 0, 0) // the frame's length, below
	b = binary.LittleEndian.AppendUint32(b, uint32(entries))
	b = fw.enc.EncodeAll(lines, b)
	n := len(b) - indexHeaderSize
	if int64(n) > 0xffffffff {
		return fmt.Errorf("history frame of %d bytes: too big", n)
	}
	binary.LittleEndian.PutUint32(b[8:], uint32(n))
	fw.buf = b
	_, err := fw.w.Write(b)
	return err
}

// Format is how a history file is stored.
type Format int

const (
	JSONLines  Format = iota // plain JSON lines (history.jsonl)
	Framed                   // records of index + zstd frame (history.jsonl.zst)
	ZstdStream               // a plain zstd stream (e.g. `zstd history.jsonl`)
)

// sniff tells the format from a file's first bytes.
func sniff(head []byte) Format {
	if len(head) >= 4 {
		switch binary.LittleEndian.Uint32(head) {
		case indexMagic:
			return Framed
		case zstdMagic:
			return ZstdStream
		}
	}
	return JSONLines
}

// frameReader reads the JSON lines of a framed history, a frame at a
// time. At the end it reports a record cut short as torn (its bytes
// counted) and anything else that is not a record as an error.
type frameReader struct {
	r        *bufio.Reader
	dec      *zstd.Decoder
	off      int64 // file offset of the next record
	frame    int   // records read
	entries  int   // entries in the frames read
	out      []byte
	frameBuf []byte // the compressed frame being read
	pos      int
	err      error
	// torn is the number of bytes after the last whole record when the
	// file ends inside a record (the recorder was cut mid-write).
	torn int64
}

func newFrameReader(r io.Reader) (*frameReader, error) {
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30))
	if err != nil {
		return nil, err
	}
	return &frameReader{r: bufio.NewReaderSize(r, 1<<20), dec: dec}, nil
}

func (fr *frameReader) Read(p []byte) (int, error) {
	for fr.pos == len(fr.out) {
		if fr.err != nil {
			return 0, fr.err
		}
		fr.err = fr.next()
	}
	n := copy(p, fr.out[fr.pos:])
	fr.pos += n
	return n, nil
}

func (fr *frameReader) close() { fr.dec.Close() }

// next decodes the next record into out; io.EOF at a clean end.
func (fr *frameReader) next() error {
	fr.out, fr.pos = fr.out[:0], 0
	rec, err := fr.readRecord()
	if err != nil {
		return err
	}
	out, err := rec.decode(fr.dec, fr.out[:0])
	if err != nil {
		return err
	}
	fr.out = out
	return nil
}

// record is one record of a framed history as read, its zstd frame not
// yet decoded.
type record struct {
	frame   []byte
	entries int
	no      int   // its place among the records, from 1
	off     int64 // its offset in the file
}

// readRecord reads the next record (its frame in fr.frameBuf, reused by
// the next call); io.EOF at a clean end or at a record cut short (torn,
// its bytes counted in fr.torn).
func (fr *frameReader) readRecord() (record, error) {
	var head [indexHeaderSize]byte
	n, err := io.ReadFull(fr.r, head[:])
	if n == 0 && err == io.EOF {
		return record{}, io.EOF
	}
	if err != nil && err != io.ErrUnexpectedEOF {
		return record{}, fr.errorf("%v", err)
	}
	var want [indexHeaderSize]byte
	binary.LittleEndian.PutUint32(want[0:], indexMagic)
	binary.LittleEndian.PutUint32(want[4:], 8)
	if !bytes.Equal(head[:min(n, 8)], want[:min(n, 8)]) {
		return record{}, fr.errorf("not a history frame (its first bytes are %x)", head[:min(n, 8)])
	}
	if n < indexHeaderSize {
		fr.torn = int64(n)
		return record{}, io.EOF
	}
	size := int64(binary.LittleEndian.Uint32(head[8:]))
	entries := int(binary.LittleEndian.Uint32(head[12:]))
	// Read what is there rather than allocate what the index says: an
	// index that lies must not make the reader allocate gigabytes.
	fr.frameBuf = fr.frameBuf[:0]
	buf := bytes.NewBuffer(fr.frameBuf)
	k, err := buf.ReadFrom(io.LimitReader(fr.r, size))
	frame := buf.Bytes()
	fr.frameBuf = frame
	if err != nil {
		return record{}, fr.errorf("%v", err)
	}
	if k < size {
		if k >= 4 && binary.LittleEndian.Uint32(frame) != zstdMagic {
			return record{}, fr.errorf("its index is followed by no zstd frame (bytes %x)", frame[:4])
		}
		fr.torn = indexHeaderSize + k
		return record{}, io.EOF
	}
	rec := record{frame: frame, entries: entries, no: fr.frame + 1, off: fr.off}
	fr.off += indexHeaderSize + size
	fr.frame++
	fr.entries += entries
	return rec, nil
}

// decode decompresses the record's frame (appended to out) and checks it
// holds the whole lines its index says.
func (rec record) decode(dec *zstd.Decoder, out []byte) ([]byte, error) {
	out, err := dec.DecodeAll(rec.frame, out)
	if err != nil {
		return nil, rec.errorf("the frame of %d bytes does not decode: %v", len(rec.frame), err)
	}
	if len(out) == 0 || out[len(out)-1] != '\n' {
		return nil, rec.errorf("the frame does not end with a whole line")
	}
	if got := bytes.Count(out, []byte{'\n'}); got != rec.entries {
		return nil, rec.errorf("the frame holds %d lines, its index says %d", got, rec.entries)
	}
	return out, nil
}

func (rec record) errorf(format string, args ...any) error {
	return fmt.Errorf("frame %d (at byte %d): %s", rec.no, rec.off, fmt.Sprintf(format, args...))
}

// errorf is an error of the record the reader is at.
func (fr *frameReader) errorf(format string, args ...any) error {
	return record{no: fr.frame + 1, off: fr.off}.errorf(format, args...)
}

// frameEntries sums the entries of a framed history's index frames (to
// size the entry slice once), reading only the index frames. The sum is
// capped at limit (the file's size: an index that lies must not make the
// reader allocate more than a JSON-lines file of that size could).
func frameEntries(f io.ReadSeeker, limit int64) int {
	n := frameEntriesOf(f)
	return int(min(int64(n), limit))
}

func frameEntriesOf(f io.ReadSeeker) int {
	n := 0
	var head [indexHeaderSize]byte
	for {
		if _, err := io.ReadFull(f, head[:]); err != nil || binary.LittleEndian.Uint32(head[:]) != indexMagic {
			break
		}
		n += int(binary.LittleEndian.Uint32(head[12:]))
		if _, err := f.Seek(int64(binary.LittleEndian.Uint32(head[8:])), io.SeekCurrent); err != nil {
			break
		}
	}
	return n
}

// Lines is a history file's content as JSON lines, whatever its format:
// what `redline history cat` prints. After Read returns io.EOF, Torn says
// what the end of the file lacked.
type Lines struct {
	c      io.Closer // the file, when Lines opened it
	r      io.Reader
	fr     *frameReader
	zr     *zstd.Decoder
	last   byte
	format Format
}

// OpenLines opens the history file at path.
func OpenLines(path string) (*Lines, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	l, err := NewLines(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	l.c = f
	return l, nil
}

// NewLines reads a history in any format from r; Close does not close r.
func NewLines(r io.Reader) (*Lines, error) {
	l := &Lines{}
	br := bufio.NewReaderSize(r, 1<<16)
	head, _ := br.Peek(4)
	l.format = sniff(head)
	var err error
	switch l.format {
	case Framed:
		if l.fr, err = newFrameReader(br); err == nil {
			l.r = l.fr
		}
	case ZstdStream:
		if l.zr, err = zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30)); err == nil {
			l.r = l.zr
		}
	default:
		l.r = br
	}
	if err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Lines) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if n > 0 {
		l.last = p[n-1]
	}
	return n, err
}

// Format is how the file is stored.
func (l *Lines) Format() Format { return l.format }

// Torn describes a torn end once Read returned io.EOF, "" for none: a
// record of a compressed history cut short (its bytes counted), or a last
// JSON line without its newline.
func (l *Lines) Torn() string {
	switch {
	case l.fr != nil && l.fr.torn > 0:
		return fmt.Sprintf("its last %d bytes are a frame cut mid-write, after %d whole frames (%d entries)", l.fr.torn, l.fr.frame, l.fr.entries)
	case l.fr == nil && l.last != 0 && l.last != '\n':
		return "its last line has no newline (cut mid-write)"
	}
	return ""
}

// Close releases the decoder and closes the file OpenLines opened.
func (l *Lines) Close() error {
	if l.fr != nil {
		l.fr.close()
	}
	if l.zr != nil {
		l.zr.Close()
	}
	if l.c != nil {
		return l.c.Close()
	}
	return nil
}
