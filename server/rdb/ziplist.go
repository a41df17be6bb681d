package rdb

import (
	"encoding/binary"
	"strconv"
)

// ParseZiplist decodes and validates a ziplist blob (the encoding of
// small values before Redis 7.0) into its entries, integers as text.
func ParseZiplist(b []byte) ([][]byte, error) {
	if len(b) < 11 || binary.LittleEndian.Uint32(b) != uint32(len(b)) || b[len(b)-1] != 0xFF {
		return nil, ErrFormat
	}
	want := int(binary.LittleEndian.Uint16(b[8:]))
	tail := int(binary.LittleEndian.Uint32(b[4:]))
	var out [][]byte
	pos, prev, last := 10, 0, 10
	for pos < len(b)-1 {
		p := b[pos : len(b)-1]
		// prevlen
		var pl, plLen int
		if p[0] < 254 {
			pl, plLen = int(p[0]), 1
		} else if p[0] == 254 && len(p) >= 5 {
			pl, plLen = int(binary.LittleEndian.Uint32(p[1:])), 5
		} else {
			return nil, ErrFormat
		}
		if pl != prev {
			return nil, ErrFormat
		}
		p = p[plLen:]
		if len(p) < 1 {
			return nil, ErrFormat
		}
		c := p[0]
		var hdr, n int
		var iv int64
		isInt := true
		switch {
		case c>>6 == 0:
			hdr, n, isInt = 1, int(c&0x3F), false
		case c>>6 == 1:
			if len(p) < 2 {
				return nil, ErrFormat
			}
			hdr, n, isInt = 2, int(c&0x3F)<<8|int(p[1]), false
		case c == 0x80:
			if len(p) < 5 {
				return nil, ErrFormat
			}
			hdr, n, isInt = 5, int(binary.BigEndian.Uint32(p[1:])), false
		case c == 0xC0:
			hdr, n = 1, 2
		case c == 0xD0:
			hdr, n = 1, 4
		case c == 0xE0:
			hdr, n = 1, 8
		case c == 0xF0:
			hdr, n = 1, 3
		case c == 0xFE:
			hdr, n = 1, 1
		case c >= 0xF1 && c <= 0xFD:
			hdr, iv = 1, int64(c&0x0F)-1
		default:
			return nil, ErrFormat
		}
		if n < 0 || hdr+n > len(p) {
			return nil, ErrFormat
		}
		d := p[hdr : hdr+n]
		if isInt {
			switch c {
			case 0xC0:
				iv = int64(int16(binary.LittleEndian.Uint16(d)))
			case 0xD0:
				iv = int64(int32(binary.LittleEndian.Uint32(d)))
			case 0xE0:
				iv = int64(binary.LittleEndian.Uint64(d))
			case 0xF0:
				iv = int64(int32(uint32(d[0])<<8|uint32(d[1])<<16|uint32(d[2])<<24) >> 8)
			case 0xFE:
				iv = int64(int8(d[0]))
			}
			out = append(out, strconv.AppendInt(nil, iv, 10))
		} else {
			out = append(out, append([]byte{}, d...))
		}
		last = pos
		prev = plLen + hdr + n
		pos += prev
	}
	if pos != len(b)-1 || (len(out) > 0 && tail != last) || (len(out) == 0 && tail != 10) {
		return nil, ErrFormat
	}
	if want != 65535 && want != len(out) {
		return nil, ErrFormat
	}
	return out, nil
}

// ParseZipmap decodes a zipmap blob (hashes before Redis 2.6) into
// alternating fields and values.
func ParseZipmap(b []byte) ([][]byte, error) {
	if len(b) < 2 {
		return nil, ErrFormat
	}
	p := b[1:]
	var out [][]byte
	readLen := func() (int, bool) {
		if len(p) < 1 {
			return 0, false
		}
		if p[0] < 254 {
			n := int(p[0])
			p = p[1:]
			return n, true
		}
		if p[0] == 254 && len(p) >= 5 {
			n := int(binary.LittleEndian.Uint32(p[1:]))
			p = p[5:]
			return n, true
		}
		return 0, false
	}
	for {
		if len(p) == 0 {
			return nil, ErrFormat
		}
		if p[0] == 0xFF {
			if len(p) != 1 {
				return nil, ErrFormat
			}
			break
		}
		kl, ok := readLen()
		if !ok || kl > len(p) {
			return nil, ErrFormat
		}
		out = append(out, append([]byte{}, p[:kl]...))
		p = p[kl:]
		vl, ok := readLen()
		if !ok || len(p) < 1 {
			return nil, ErrFormat
		}
		free := int(p[0])
		p = p[1:]
		if vl+free > len(p) {
			return nil, ErrFormat
		}
		out = append(out, append([]byte{}, p[:vl]...))
		p = p[vl+free:]
	}
	return out, nil
}
