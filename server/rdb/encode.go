package rdb

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
)

// ErrFormat is any malformed or unsupported encoding.
var ErrFormat = errors.New("bad data format")

// AppendLen appends n in RDB's length encoding.
func AppendLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(n>>8)|0x40, byte(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, 0x80), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0x81), n)
}

// appendEncodedInt appends v as an integer-encoded string if it fits 32 bits.
func appendEncodedInt(b []byte, v int64) ([]byte, bool) {
	switch {
	case v >= math.MinInt8 && v <= math.MaxInt8:
		return append(b, 0xC0, byte(v)), true
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return binary.LittleEndian.AppendUint16(append(b, 0xC1), uint16(v)), true
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return binary.LittleEndian.AppendUint32(append(b, 0xC2), uint32(v)), true
	}
	return b, false
}

// ParseInt is Redis's string2ll: canonical decimal int64 only (no sign on
// zero, no leading zeros, no '+', no spaces).
func ParseInt(s []byte) (int64, bool) {
	n := len(s)
	if n == 0 || n > 20 || s[0] == '+' || (s[0] == '0' && n > 1) || (n > 1 && s[0] == '-' && s[1] == '0') || (n == 1 && s[0] == '-') {
		return 0, false
	}
	for i, c := range s {
		if (c < '0' || c > '9') && !(i == 0 && c == '-') {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(string(s), 10, 64)
	return v, err == nil
}

// AppendString appends s as Redis's rdbSaveRawString does: integer encoded
// when it is a short canonical integer, LZF-compressed when longer than 20
// bytes and compress is set and compression saves at least 4 bytes,
// verbatim otherwise.
func AppendString(b []byte, s []byte, compress bool) []byte {
	if len(s) <= 11 {
		if v, ok := ParseInt(s); ok {
			if nb, ok := appendEncodedInt(b, v); ok {
				return nb
			}
		}
	}
	if compress && len(s) > 20 {
		if c := LZFCompress(s, len(s)-4); c != nil {
			b = append(b, 0xC3)
			b = AppendLen(b, uint64(len(c)))
			b = AppendLen(b, uint64(len(s)))
			return append(b, c...)
		}
	}
	b = AppendLen(b, uint64(len(s)))
	return append(b, s...)
}

// AppendInt appends v as rdbSaveLongLongAsStringObject does.
func AppendInt(b []byte, v int64) []byte {
	if nb, ok := appendEncodedInt(b, v); ok {
		return nb
	}
	s := strconv.AppendInt(nil, v, 10)
	return append(AppendLen(b, uint64(len(s))), s...)
}

// AppendBinaryDouble appends f as an 8-byte little-endian IEEE double.
func AppendBinaryDouble(b []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
}

// Seal appends the DUMP footer (RDB version, CRC-64 of everything before).
func Seal(b []byte) []byte {
	b = binary.LittleEndian.AppendUint16(b, Version)
	return binary.LittleEndian.AppendUint64(b, CRC64(0, b))
}

// Verify checks a DUMP payload's footer as Redis's verifyDumpPayload does
// (version not newer than ours, CRC-64 matches) and returns the body.
func Verify(p []byte) ([]byte, bool) {
	if len(p) < 10 {
		return nil, false
	}
	f := p[len(p)-10:]
	if binary.LittleEndian.Uint16(f) > Version {
		return nil, false
	}
	if CRC64(0, p[:len(p)-8]) != binary.LittleEndian.Uint64(f[2:]) {
		return nil, false
	}
	return p[:len(p)-10], true
}

// Reader decodes RDB encodings from a byte slice; the first error sticks.
type Reader struct {
	B   []byte
	Err error
}

func (r *Reader) fail() { r.Err = ErrFormat; r.B = nil }

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if r.Err != nil || len(r.B) < 1 {
		r.fail()
		return 0
	}
	c := r.B[0]
	r.B = r.B[1:]
	return c
}

func (r *Reader) take(n uint64) []byte {
	if r.Err != nil || n > uint64(len(r.B)) {
		r.fail()
		return nil
	}
	s := r.B[:n]
	r.B = r.B[n:]
	return s
}

// lenOrEnc reads a length; enc reports an encoded-string marker (11xxxxxx)
// whose low 6 bits are returned.
func (r *Reader) lenOrEnc() (n uint64, enc bool) {
	c := r.Byte()
	switch c >> 6 {
	case 0:
		return uint64(c & 0x3F), false
	case 1:
		return uint64(c&0x3F)<<8 | uint64(r.Byte()), false
	case 3:
		return uint64(c & 0x3F), true
	}
	switch c {
	case 0x80:
		return uint64(binary.BigEndian.Uint32(r.take(4))), false
	case 0x81:
		return binary.BigEndian.Uint64(r.take(8)), false
	}
	r.fail()
	return 0, false
}

// Len reads a plain length.
func (r *Reader) Len() uint64 {
	n, enc := r.lenOrEnc()
	if enc {
		r.fail()
		return 0
	}
	return n
}

// Count reads a length used as an element count, refusing one that cannot
// possibly fit in what is left (each element takes at least one byte).
func (r *Reader) Count() int {
	n := r.Len()
	if n > uint64(len(r.B)) {
		r.fail()
		return 0
	}
	return int(n)
}

// String reads a string in any of its encodings (a fresh copy).
func (r *Reader) String() []byte {
	n, enc := r.lenOrEnc()
	if r.Err != nil {
		return nil
	}
	if !enc {
		return append([]byte{}, r.take(n)...)
	}
	switch n {
	case 0:
		return strconv.AppendInt(nil, int64(int8(r.Byte())), 10)
	case 1:
		b := r.take(2)
		if b == nil {
			return nil
		}
		return strconv.AppendInt(nil, int64(int16(binary.LittleEndian.Uint16(b))), 10)
	case 2:
		b := r.take(4)
		if b == nil {
			return nil
		}
		return strconv.AppendInt(nil, int64(int32(binary.LittleEndian.Uint32(b))), 10)
	case 3:
		clen := r.Len()
		olen := r.Len()
		c := r.take(clen)
		if r.Err != nil || olen > 1<<32 {
			r.fail()
			return nil
		}
		s, err := LZFDecompress(c, int(olen))
		if err != nil {
			r.fail()
			return nil
		}
		return s
	}
	r.fail()
	return nil
}

// BinaryDouble reads an 8-byte little-endian double.
func (r *Reader) BinaryDouble() float64 {
	b := r.take(8)
	if b == nil {
		return 0
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b))
}

// OldDouble reads a double of RDB_TYPE_ZSET (a length byte and its text;
// 253 nan, 254 +inf, 255 -inf).
func (r *Reader) OldDouble() float64 {
	n := r.Byte()
	switch n {
	case 253:
		return math.NaN()
	case 254:
		return math.Inf(1)
	case 255:
		return math.Inf(-1)
	}
	s := r.take(uint64(n))
	if s == nil {
		return 0
	}
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil {
		r.fail()
	}
	return f
}

// Raw reads n bytes as they are (stream IDs and times in a stream value).
func (r *Reader) Raw(n int) []byte { return r.take(uint64(n)) }
