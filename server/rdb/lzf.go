package rdb

import "errors"

// LZF as liblzf 3.6 compresses with Redis's settings (HLOG 16, VERY_FAST,
// 64-bit offsets), so that a compressed string is byte for byte what
// redis-server writes. Format: 000LLLLL + L+1 literal bytes; LLLooooo
// oooooooo a back reference of L+2 bytes at offset o+1; 111ooooo LLLLLLLL
// oooooooo a back reference of L+9 bytes.

const (
	lzfHLog   = 16
	lzfHSize  = 1 << lzfHLog
	lzfMaxLit = 1 << 5
	lzfMaxOff = 1 << 13
	lzfMaxRef = (1 << 8) + (1 << 3)
)

func lzfIdx(h uint32) uint32 { return ((h >> (3*8 - lzfHLog)) - h*5) & (lzfHSize - 1) }

// LZFCompress compresses in into at most outLen bytes and returns nil when
// it does not fit (Redis then stores the string as it is).
func LZFCompress(in []byte, outLen int) []byte {
	inLen := len(in)
	if inLen == 0 || outLen == 0 {
		return nil
	}
	// htab holds positions+1 (0 = empty), as liblzf's offsets from the
	// input start, where offset 0 reads as no entry.
	htab := make([]int32, lzfHSize)
	out := make([]byte, outLen+3)
	ip, op, lit := 0, 1, 0
	hval := uint32(in[0])<<8 | uint32(at(in, 1))
	for ip < inLen-2 {
		hval = hval<<8 | uint32(in[ip+2])
		slot := lzfIdx(hval)
		ref := int(htab[slot])
		htab[slot] = int32(ip)
		var off int
		if ref != 0 {
			off = ip - ref - 1
		}
		if ref != 0 && off >= 0 && off < lzfMaxOff && ref > 0 &&
			in[ref+2] == in[ip+2] && in[ref] == in[ip] && in[ref+1] == in[ip+1] {
			l := 2
			maxlen := inLen - ip - l
			if maxlen > lzfMaxRef {
				maxlen = lzfMaxRef
			}
			if op+3+1 >= outLen {
				notLit := 0
				if lit == 0 {
					notLit = 1
				}
				if op-notLit+3+1 >= outLen {
					return nil
				}
			}
			out[op-lit-1] = byte(lit - 1)
			if lit == 0 {
				op--
			}
			// liblzf first compares 16 bytes unrolled (without the
			// maxlen bound), then byte by byte up to maxlen.
			done := false
			if maxlen > 16 {
				for range 16 {
					l++
					if in[ref+l] != in[ip+l] {
						done = true
						break
					}
				}
			}
			for !done {
				l++
				done = l >= maxlen || in[ref+l] != in[ip+l]
			}
			l -= 2
			ip++
			if l < 7 {
				out[op] = byte(off>>8) + byte(l<<5)
				op++
			} else {
				out[op] = byte(off>>8) + 7<<5
				out[op+1] = byte(l - 7)
				op += 2
			}
			out[op] = byte(off)
			op++
			lit = 0
			op++
			ip += l + 1
			if ip >= inLen-2 {
				break
			}
			ip -= 2
			hval = uint32(in[ip])<<8 | uint32(in[ip+1])
			hval = hval<<8 | uint32(in[ip+2])
			htab[lzfIdx(hval)] = int32(ip)
			ip++
			hval = hval<<8 | uint32(in[ip+2])
			htab[lzfIdx(hval)] = int32(ip)
			ip++
		} else {
			if op >= outLen {
				return nil
			}
			lit++
			out[op] = in[ip]
			op++
			ip++
			if lit == lzfMaxLit {
				out[op-lit-1] = byte(lit - 1)
				lit = 0
				op++
			}
		}
	}
	if op+3 > outLen {
		return nil
	}
	for ip < inLen {
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	out[op-lit-1] = byte(lit - 1)
	if lit == 0 {
		op--
	}
	return out[:op]
}

func at(b []byte, i int) byte {
	if i < len(b) {
		return b[i]
	}
	return 0
}

var errLZF = errors.New("invalid LZF data")

// LZFDecompress expands in, which must decode to exactly outLen bytes.
func LZFDecompress(in []byte, outLen int) ([]byte, error) {
	out := make([]byte, 0, outLen)
	ip := 0
	for ip < len(in) {
		ctrl := int(in[ip])
		ip++
		if ctrl < 1<<5 {
			n := ctrl + 1
			if ip+n > len(in) || len(out)+n > outLen {
				return nil, errLZF
			}
			out = append(out, in[ip:ip+n]...)
			ip += n
			continue
		}
		l := ctrl >> 5
		if l == 7 {
			if ip >= len(in) {
				return nil, errLZF
			}
			l += int(in[ip])
			ip++
		}
		if ip >= len(in) {
			return nil, errLZF
		}
		ref := len(out) - (ctrl&0x1f)<<8 - 1 - int(in[ip])
		ip++
		l += 2
		if ref < 0 || len(out)+l > outLen {
			return nil, errLZF
		}
		for i := 0; i < l; i++ {
			out = append(out, out[ref+i])
		}
	}
	if len(out) != outLen {
		return nil, errLZF
	}
	return out, nil
}
