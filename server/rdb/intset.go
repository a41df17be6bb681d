package rdb

import "encoding/binary"

// Intset encodes sorted distinct values as Redis's intset blob: encoding
// width (2, 4 or 8) and count as little-endian uint32, then the values.
// width is at least the width the largest value needs.
func Intset(vals []int64, width int) []byte {
	for _, v := range vals {
		width = max(width, IntWidth(v))
	}
	b := binary.LittleEndian.AppendUint32(nil, uint32(width))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(vals)))
	for _, v := range vals {
		switch width {
		case 2:
			b = binary.LittleEndian.AppendUint16(b, uint16(v))
		case 4:
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		default:
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
	}
	return b
}

// IntWidth is the intset encoding v needs.
func IntWidth(v int64) int {
	switch {
	case v >= -32768 && v <= 32767:
		return 2
	case v >= -2147483648 && v <= 2147483647:
		return 4
	}
	return 8
}

// ParseIntset decodes and validates an intset blob (values strictly
// ascending), returning the values and the width.
func ParseIntset(b []byte) ([]int64, int, error) {
	if len(b) < 8 {
		return nil, 0, ErrFormat
	}
	w := int(binary.LittleEndian.Uint32(b))
	n := int(binary.LittleEndian.Uint32(b[4:]))
	if (w != 2 && w != 4 && w != 8) || uint64(n)*uint64(w) != uint64(len(b)-8) || n == 0 {
		return nil, 0, ErrFormat
	}
	out := make([]int64, n)
	p := b[8:]
	for i := range out {
		switch w {
		case 2:
			out[i] = int64(int16(binary.LittleEndian.Uint16(p[i*2:])))
		case 4:
			out[i] = int64(int32(binary.LittleEndian.Uint32(p[i*4:])))
		default:
			out[i] = int64(binary.LittleEndian.Uint64(p[i*8:]))
		}
		if i > 0 && out[i] <= out[i-1] {
			return nil, 0, ErrFormat
		}
	}
	return out, w, nil
}
