package rdb

import (
	"encoding/binary"
	"strconv"
)

// Listpack builds a listpack blob as Redis lays it out in memory: a 6-byte
// header (total bytes, element count), the entries, 0xFF.
type Listpack struct {
	b []byte
	n int
}

// NewListpack returns an empty listpack.
func NewListpack() *Listpack { return &Listpack{b: make([]byte, 6, 64)} }

// Append adds s, integer-encoded when it is a canonical int64 (lpAppend).
func (l *Listpack) Append(s []byte) {
	if v, ok := ParseInt(s); ok {
		l.AppendInt(v)
		return
	}
	start := len(l.b)
	n := len(s)
	switch {
	case n < 64:
		l.b = append(l.b, byte(n)|0x80)
	case n < 4096:
		l.b = append(l.b, byte(n>>8)|0xE0, byte(n))
	default:
		l.b = binary.LittleEndian.AppendUint32(append(l.b, 0xF0), uint32(n))
	}
	l.b = append(l.b, s...)
	l.backlen(len(l.b) - start)
}

// AppendInt adds v in the smallest integer encoding.
func (l *Listpack) AppendInt(v int64) {
	start := len(l.b)
	switch {
	case v >= 0 && v <= 127:
		l.b = append(l.b, byte(v))
	case v >= -4096 && v <= 4095:
		u := uint64(v) & (1<<13 - 1)
		l.b = append(l.b, byte(u>>8)|0xC0, byte(u))
	case v >= -32768 && v <= 32767:
		l.b = binary.LittleEndian.AppendUint16(append(l.b, 0xF1), uint16(v))
	case v >= -8388608 && v <= 8388607:
		u := uint32(v)
		l.b = append(l.b, 0xF2, byte(u), byte(u>>8), byte(u>>16))
	case v >= -2147483648 && v <= 2147483647:
		l.b = binary.LittleEndian.AppendUint32(append(l.b, 0xF3), uint32(v))
	default:
		l.b = binary.LittleEndian.AppendUint64(append(l.b, 0xF4), uint64(v))
	}
	l.backlen(len(l.b) - start)
}

func (l *Listpack) backlen(n int) {
	switch {
	case n <= 127:
		l.b = append(l.b, byte(n))
	case n < 16383:
		l.b = append(l.b, byte(n>>7), byte(n&127)|128)
	case n < 2097151:
		l.b = append(l.b, byte(n>>14), byte(n>>7&127)|128, byte(n&127)|128)
	case n < 268435455:
		l.b = append(l.b, byte(n>>21), byte(n>>14&127)|128, byte(n>>7&127)|128, byte(n&127)|128)
	default:
		l.b = append(l.b, byte(n>>28), byte(n>>21&127)|128, byte(n>>14&127)|128, byte(n>>7&127)|128, byte(n&127)|128)
	}
	l.n++
}

// Size is the blob's size in bytes so far (with header and terminator).
func (l *Listpack) Size() int { return len(l.b) + 1 }

// Len is the number of entries.
func (l *Listpack) Len() int { return l.n }

// Bytes finishes the blob (the listpack stays usable).
func (l *Listpack) Bytes() []byte {
	out := append(append([]byte{}, l.b...), 0xFF)
	binary.LittleEndian.PutUint32(out, uint32(len(out)))
	binary.LittleEndian.PutUint16(out[4:], uint16(min(l.n, 65535)))
	return out
}

// ParseListpack decodes and validates a listpack blob into its entries
// (integers as their decimal text).
func ParseListpack(b []byte) ([][]byte, error) {
	if len(b) < 7 || binary.LittleEndian.Uint32(b) != uint32(len(b)) || b[len(b)-1] != 0xFF {
		return nil, ErrFormat
	}
	want := int(binary.LittleEndian.Uint16(b[4:]))
	var out [][]byte
	p := b[6 : len(b)-1]
	for len(p) > 0 {
		c := p[0]
		var hdr, n int // encoding bytes, data bytes
		var ent []byte
		var iv int64
		isInt := true
		switch {
		case c&0x80 == 0:
			hdr, iv = 1, int64(c)
		case c&0xC0 == 0x80:
			hdr, n, isInt = 1, int(c&0x3F), false
		case c&0xE0 == 0xC0:
			if len(p) < 2 {
				return nil, ErrFormat
			}
			hdr = 2
			u := int64(c&0x1F)<<8 | int64(p[1])
			if u >= 1<<12 {
				u -= 1 << 13
			}
			iv = u
		case c&0xF0 == 0xE0:
			if len(p) < 2 {
				return nil, ErrFormat
			}
			hdr, n, isInt = 2, int(c&0xF)<<8|int(p[1]), false
		case c == 0xF0:
			if len(p) < 5 {
				return nil, ErrFormat
			}
			hdr, n, isInt = 5, int(binary.LittleEndian.Uint32(p[1:])), false
		case c == 0xF1:
			if len(p) < 3 {
				return nil, ErrFormat
			}
			hdr, iv = 3, int64(int16(binary.LittleEndian.Uint16(p[1:])))
		case c == 0xF2:
			if len(p) < 4 {
				return nil, ErrFormat
			}
			hdr, iv = 4, int64(int32(uint32(p[1])<<8|uint32(p[2])<<16|uint32(p[3])<<24)>>8)
		case c == 0xF3:
			if len(p) < 5 {
				return nil, ErrFormat
			}
			hdr, iv = 5, int64(int32(binary.LittleEndian.Uint32(p[1:])))
		case c == 0xF4:
			if len(p) < 9 {
				return nil, ErrFormat
			}
			hdr, iv = 9, int64(binary.LittleEndian.Uint64(p[1:]))
		default:
			return nil, ErrFormat
		}
		if n < 0 || hdr+n > len(p) {
			return nil, ErrFormat
		}
		if isInt {
			ent = strconv.AppendInt(nil, iv, 10)
		} else {
			ent = append([]byte{}, p[hdr:hdr+n]...)
		}
		size := hdr + n
		// The backlen: 7 bits a byte, the first byte without the high bit.
		var bl int
		switch {
		case size <= 127:
			bl = 1
		case size < 16383:
			bl = 2
		case size < 2097151:
			bl = 3
		case size < 268435455:
			bl = 4
		default:
			bl = 5
		}
		if size+bl > len(p) {
			return nil, ErrFormat
		}
		var v int
		for i := 0; i < bl; i++ {
			v = v<<7 | int(p[size+i]&127)
		}
		if v != size {
			return nil, ErrFormat
		}
		out = append(out, ent)
		p = p[size+bl:]
	}
	if want != 65535 && want != len(out) {
		return nil, ErrFormat
	}
	return out, nil
}
