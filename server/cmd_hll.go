// HyperLogLog commands (Redis hyperloglog.c). An HLL is a string value with
// Redis's exact byte layout, so GET of an HLL key, PFCOUNT and the
// sparse-to-dense promotion agree byte for byte with redis-server:
//
//	"HYLL" | encoding (0 dense, 1 sparse) | 3 unused | 8-byte cached
//	cardinality, little endian, top bit set when stale | registers
//
// Dense: 16384 6-bit registers packed from the least significant bit of
// each byte. Sparse: run-length opcodes, ZERO 00xxxxxx (1-64 zero
// registers), XZERO 01xxxxxx yyyyyyyy (1-16384 zero registers), VAL
// 1vvvvvxx (1-4 registers of value 1-32). Element hashes are MurmurHash64A
// with Redis's seed; the estimate is Ertl's improved estimator as in Redis.

package server

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/redline-dev/redline/server/store"
)

const (
	hllP          = 14
	hllQ          = 64 - hllP
	hllRegisters  = 1 << hllP
	hllPMask      = hllRegisters - 1
	hllBits       = 6
	hllRegMax     = 1<<hllBits - 1
	hllHdrSize    = 16
	hllDenseSize  = hllHdrSize + (hllRegisters*hllBits+7)/8
	hllDense      = 0
	hllSparse     = 1
	hllAlphaInf   = 0.721347520444481703680 // 0.5/ln(2)
	hllValMax     = 32                      // largest value a sparse VAL opcode holds
	hllValMaxLen  = 4
	hllZeroMaxLen = 64
	hllXZeroMax   = 16384

	errHLLInvalid   = "INVALIDOBJ Corrupted HLL object detected"
	errHLLWrongType = "WRONGTYPE Key is not a valid HyperLogLog string value."
)

// murmurHash64A is MurmurHash2's 64-bit variant, reading the input as
// little-endian words (Redis's endian-neutral version).
func murmurHash64A(key []byte, seed uint64) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := seed ^ (uint64(len(key)) * m)
	n := len(key) &^ 7
	for i := 0; i < n; i += 8 {
		k := binary.LittleEndian.Uint64(key[i:])
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
	}
	tail := key[n:]
	switch len(tail) {
	case 7:
		h ^= uint64(tail[6]) << 48
		fallthrough
	case 6:
		h ^= uint64(tail[5]) << 40
		fallthrough
	case 5:
		h ^= uint64(tail[4]) << 32
		fallthrough
	case 4:
		h ^= uint64(tail[3]) << 24
		fallthrough
	case 3:
		h ^= uint64(tail[2]) << 16
		fallthrough
	case 2:
		h ^= uint64(tail[1]) << 8
		fallthrough
	case 1:
		h ^= uint64(tail[0])
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// hllPatLen hashes an element to its register and the length of the
// "000...1" run of the remaining hash bits (1 to Q+1).
func hllPatLen(ele []byte) (index int, count uint8) {
	hash := murmurHash64A(ele, 0xadc83b19)
	index = int(hash & hllPMask)
	hash >>= hllP
	hash |= 1 << hllQ
	count = 1
	for bit := uint64(1); hash&bit == 0; bit <<= 1 {
		count++
	}
	return index, count
}

// Dense registers. The byte after the last register is the string's
// terminator in Redis (always zero): here it is simply absent.

func hllDenseGet(r []byte, i int) uint8 {
	b := i * hllBits / 8
	fb := uint(i * hllBits & 7)
	b0 := uint(r[b])
	var b1 uint
	if b+1 < len(r) {
		b1 = uint(r[b+1])
	}
	return uint8((b0>>fb | b1<<(8-fb)) & hllRegMax)
}

func hllDenseSetReg(r []byte, i int, v uint8) {
	b := i * hllBits / 8
	fb := uint(i * hllBits & 7)
	fb8 := 8 - fb
	r[b] &^= uint8(hllRegMax << fb)
	r[b] |= uint8(uint(v) << fb)
	if b+1 < len(r) {
		r[b+1] &^= uint8(hllRegMax >> fb8)
		r[b+1] |= uint8(uint(v) >> fb8)
	}
}

// hllDenseSet raises register i to count and reports whether it changed.
func hllDenseSet(r []byte, i int, count uint8) bool {
	if count > hllDenseGet(r, i) {
		hllDenseSetReg(r, i, count)
		return true
	}
	return false
}

func hllDenseHisto(r []byte, h *[64]int) {
	for j := 0; j+12 <= len(r) && j < hllRegisters*hllBits/8; j += 12 {
		p := r[j : j+12 : j+12]
		h[p[0]&63]++
		h[(p[0]>>6|p[1]<<2)&63]++
		h[(p[1]>>4|p[2]<<4)&63]++
		h[(p[2]>>2)&63]++
		h[p[3]&63]++
		h[(p[3]>>6|p[4]<<2)&63]++
		h[(p[4]>>4|p[5]<<4)&63]++
		h[(p[5]>>2)&63]++
		h[p[6]&63]++
		h[(p[6]>>6|p[7]<<2)&63]++
		h[(p[7]>>4|p[8]<<4)&63]++
		h[(p[8]>>2)&63]++
		h[p[9]&63]++
		h[(p[9]>>6|p[10]<<2)&63]++
		h[(p[10]>>4|p[11]<<4)&63]++
		h[(p[11]>>2)&63]++
	}
}

// Sparse opcodes.

func spIsZero(b byte) bool  { return b&0xc0 == 0 }
func spIsXZero(b byte) bool { return b&0xc0 == 0x40 }
func spIsVal(b byte) bool   { return b&0x80 != 0 }
func spZeroLen(b byte) int  { return int(b&0x3f) + 1 }
func spValValue(b byte) int { return int(b>>2&0x1f) + 1 }
func spValLen(b byte) int   { return int(b&3) + 1 }
func spVal(v, n int) byte   { return byte((v-1)<<2|(n-1)) | 0x80 }

// spXZeroLen reads the XZERO opcode at s[p]; a truncated one reads the
// terminator Redis keeps after the string (zero).
func spXZeroLen(s []byte, p int) int {
	var lo int
	if p+1 < len(s) {
		lo = int(s[p+1])
	}
	return (int(s[p]&0x3f)<<8 | lo) + 1
}

// spOp decodes the opcode at s[p]: how many registers it covers, their
// value, and the opcode's length in bytes.
func spOp(s []byte, p int) (n, v, oplen int) {
	switch b := s[p]; {
	case spIsZero(b):
		return spZeroLen(b), 0, 1
	case spIsXZero(b):
		return spXZeroLen(s, p), 0, 2
	default:
		return spValLen(b), spValValue(b), 1
	}
}

func spAppendZero(seq []byte, n int) []byte {
	if n > hllZeroMaxLen {
		n--
		return append(seq, byte(n>>8)|0x40, byte(n))
	}
	return append(seq, byte(n-1))
}

// newHLL returns an empty sparse HLL: the header and one XZERO opcode
// covering every register, cached cardinality 0.
func newHLL() []byte {
	s := make([]byte, hllHdrSize, hllHdrSize+64)
	copy(s, "HYLL")
	s[4] = hllSparse
	for n := hllRegisters; n > 0; n -= hllXZeroMax {
		s = spAppendZero(s, min(n, hllXZeroMax))
	}
	return s
}

// hllSparseToDense converts a sparse HLL to the dense encoding (a dense
// one is returned as is); ok is false if the sparse data is corrupt.
func hllSparseToDense(s []byte) ([]byte, bool) {
	if s[4] == hllDense {
		return s, true
	}
	d := make([]byte, hllDenseSize)
	copy(d, s[:hllHdrSize])
	d[4] = hllDense
	r := d[hllHdrSize:]
	idx := 0
	for p := hllHdrSize; p < len(s); {
		n, v, oplen := spOp(s, p)
		if n+idx > hllRegisters {
			return nil, false // overflow (Redis's fix of CVE-2025-32023)
		}
		for i := 0; i < n && v > 0; i++ {
			hllDenseSetReg(r, idx+i, uint8(v))
		}
		idx += n
		p += oplen
	}
	if idx != hllRegisters {
		return nil, false
	}
	return d, true
}

// hllSparseSet raises register index of a sparse HLL to count: 1 if it
// changed, 0 if not, -1 if the data is corrupt. It may promote the HLL to
// dense (a value above 32, or a result above maxBytes), so the caller keeps
// the returned slice.
func hllSparseSet(s []byte, index int, count uint8, maxBytes int64) ([]byte, int) {
	if count > hllValMax {
		return hllPromote(s, index, count)
	}
	// Find the opcode covering index.
	p, end := hllHdrSize, len(s)
	first, span, prev := 0, 0, -1
	for p < end {
		oplen := 1
		switch b := s[p]; {
		case spIsZero(b):
			span = spZeroLen(b)
		case spIsVal(b):
			span = spValLen(b)
		default:
			span = spXZeroLen(s, p)
			oplen = 2
		}
		if index <= first+span-1 {
			break
		}
		prev = p
		p += oplen
		first += span
	}
	if span == 0 || p >= end {
		return s, -1
	}
	next := p + 1
	if spIsXZero(s[p]) {
		next = p + 2
	}
	if next >= end {
		next = -1
	}
	b := s[p]
	isZero, isXZero, isVal := spIsZero(b), spIsXZero(b), spIsVal(b)
	var runlen int
	switch {
	case isZero:
		runlen = spZeroLen(b)
	case isXZero:
		runlen = spXZeroLen(s, p)
	default:
		runlen = spValLen(b)
	}
	updatedInPlace := false
	if isVal {
		if spValValue(b) >= int(count) {
			return s, 0
		}
		if runlen == 1 {
			s[p] = spVal(int(count), 1)
			updatedInPlace = true
		}
	}
	if !updatedInPlace && isZero && runlen == 1 {
		s[p] = spVal(int(count), 1)
		updatedInPlace = true
	}
	if !updatedInPlace {
		// Split the opcode into up to three: before, the new VAL, after.
		var buf [5]byte
		seq := buf[:0]
		last := first + span - 1
		if isZero || isXZero {
			if index != first {
				seq = spAppendZero(seq, index-first)
			}
			seq = append(seq, spVal(int(count), 1))
			if index != last {
				seq = spAppendZero(seq, last-index)
			}
		} else {
			cur := spValValue(b)
			if index != first {
				seq = append(seq, spVal(cur, index-first))
			}
			seq = append(seq, spVal(int(count), 1))
			if index != last {
				seq = append(seq, spVal(cur, last-index))
			}
		}
		oldlen := 1
		if isXZero {
			oldlen = 2
		}
		delta := len(seq) - oldlen
		if delta > 0 && int64(len(s)+delta) > maxBytes {
			return hllPromote(s, index, count)
		}
		// As Redis: move what follows the opcode, write the sequence at p,
		// and set the length to the old one plus delta.
		newLen := len(s) + delta
		need := max(newLen, p+len(seq), end)
		if need > cap(s) {
			grown := make([]byte, end, need+need/4+8)
			copy(grown, s)
			s = grown
		}
		s = s[:need]
		if delta != 0 && next >= 0 {
			copy(s[next+delta:], s[next:end])
		}
		copy(s[p:], seq)
		s = s[:newLen]
		end = newLen
	}
	// Merge adjacent VAL opcodes of the same value, scanning up to five
	// opcodes from the one before the change.
	p = hllHdrSize
	if prev >= 0 {
		p = prev
	}
	for scan := 5; p < end && scan > 0; {
		scan--
		if spIsXZero(s[p]) {
			p += 2
			continue
		} else if spIsZero(s[p]) {
			p++
			continue
		}
		if p+1 < end && spIsVal(s[p+1]) {
			v1, v2 := spValValue(s[p]), spValValue(s[p+1])
			if v1 == v2 {
				if n := spValLen(s[p]) + spValLen(s[p+1]); n <= hllValMaxLen {
					s[p+1] = spVal(v1, n)
					copy(s[p:], s[p+1:end])
					end--
					s = s[:end]
					continue
				}
			}
		}
		p++
	}
	s[15] |= 0x80 // invalidate the cached cardinality
	return s, 1
}

func hllPromote(s []byte, index int, count uint8) ([]byte, int) {
	d, ok := hllSparseToDense(s)
	if !ok {
		return s, -1
	}
	hllDenseSet(d[hllHdrSize:], index, count)
	return d, 1
}

// hllAdd adds one element: 1 if a register changed, 0 if not, -1 if the
// HLL is corrupt. The HLL may be reallocated.
func hllAdd(s []byte, ele []byte, maxBytes int64) ([]byte, int) {
	index, count := hllPatLen(ele)
	switch s[4] {
	case hllDense:
		if hllDenseSet(s[hllHdrSize:], index, count) {
			return s, 1
		}
		return s, 0
	case hllSparse:
		return hllSparseSet(s, index, count, maxBytes)
	}
	return s, -1
}

func hllSigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		zPrime := z
		z += float64(x * y)
		y += y
		if zPrime == z {
			return z
		}
	}
}

func hllTau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		zPrime := z
		y *= 0.5
		t := 1 - x
		z -= float64(float64(t*t) * y)
		if zPrime == z {
			return z / 3
		}
	}
}

// hllEstimate is Redis's hllCount on a register histogram.
func hllEstimate(h *[64]int) uint64 {
	const m = float64(hllRegisters)
	z := m * hllTau((m-float64(h[hllQ+1]))/m)
	for j := hllQ; j >= 1; j-- {
		z += float64(h[j])
		z *= 0.5
	}
	z += float64(m * hllSigma(float64(h[0])/m))
	return uint64(math.Round(hllAlphaInf * m * m / z))
}

// hllCount estimates the cardinality of an HLL; invalid reports corrupt
// sparse data (the estimate is then meaningless).
func hllCount(s []byte) (card uint64, invalid bool) {
	var h [64]int
	if s[4] == hllDense {
		hllDenseHisto(s[hllHdrSize:], &h)
	} else {
		idx := 0
		for p := hllHdrSize; p < len(s); {
			n, v, oplen := spOp(s, p)
			if n+idx > hllRegisters {
				idx = -1 // overflow: corrupt
				break
			}
			idx += n
			h[v] += n
			p += oplen
		}
		invalid = idx != hllRegisters
	}
	return hllEstimate(&h), invalid
}

// hllMerge raises max[i] to each register of the HLL s; false if s is a
// corrupt sparse HLL.
func hllMerge(max []uint8, s []byte) bool {
	if s[4] == hllDense {
		r := s[hllHdrSize:]
		for i := 0; i < hllRegisters; i++ {
			if v := hllDenseGet(r, i); v > max[i] {
				max[i] = v
			}
		}
		return true
	}
	i := 0
	for p := hllHdrSize; p < len(s); {
		n, v, oplen := spOp(s, p)
		if n+i > hllRegisters {
			return false // overflow (Redis's fix of CVE-2025-32023)
		}
		for end := i + n; i < end; i++ {
			if uint8(v) > max[i] {
				max[i] = uint8(v)
			}
		}
		p += oplen
	}
	return i == hllRegisters
}

// isHLL checks a string value's header as Redis's isHLLObjectOrReply.
func isHLL(s []byte) bool {
	if len(s) < hllHdrSize || string(s[:4]) != "HYLL" || s[4] > hllSparse {
		return false
	}
	return s[4] != hllDense || len(s) == hllDenseSize
}

// hllLookup returns the HLL at key (nil if missing), replying with the
// error and ok=false for another type or an invalid HLL. A valid one is
// left raw-encoded, as Redis unshares it before editing.
func (c *Client) hllLookup(key []byte, stats bool) (*store.Object, bool) {
	var o *store.Object
	if stats {
		var ok bool
		if o, ok = c.lookup(key, store.KindString); !ok {
			return nil, false
		}
	} else if o = c.kv().Get(key); o != nil && o.Kind != store.KindString {
		c.Error(ErrWrongType)
		return nil, false
	}
	if o == nil {
		return nil, true
	}
	if !isHLL(o.Str) {
		c.Error(errHLLWrongType)
		return nil, false
	}
	return o, true
}

func (c *Client) hllCreate(key []byte) *store.Object {
	o := &store.Object{Kind: store.KindString, Str: newHLL()}
	o.SetRaw(true)
	c.kv().Add(key, o)
	return o
}

// PFADD key [element ...]
func cmdPFAdd(c *Client, argv [][]byte) {
	o, ok := c.hllLookup(argv[1], false)
	if !ok {
		return
	}
	updated := int64(0)
	if o == nil {
		o = c.hllCreate(argv[1])
		updated++
	} else {
		o.SetRaw(true)
	}
	maxBytes := c.s.cfg.HLLSparseMaxBytes
	for _, ele := range argv[2:] {
		var r int
		o.Str, r = hllAdd(o.Str, ele, maxBytes)
		switch r {
		case 1:
			updated++
		case -1:
			c.Error(errHLLInvalid)
			return
		}
	}
	if updated > 0 {
		c.s.dirty += updated
		c.notify(notifyString, "pfadd", argv[1])
		o.Str[15] |= 0x80
		c.Int(1)
		return
	}
	c.Int(0)
}

// PFCOUNT key [key ...]
func cmdPFCount(c *Client, argv [][]byte) {
	if len(argv) > 2 {
		max := make([]uint8, hllRegisters)
		for _, k := range argv[1:] {
			o, ok := c.hllLookup(k, true)
			if !ok {
				return
			}
			if o != nil && !hllMerge(max, o.Str) {
				c.Error(errHLLInvalid)
				return
			}
		}
		var h [64]int
		for _, v := range max {
			h[v]++
		}
		c.Int(int64(hllEstimate(&h)))
		return
	}
	o, ok := c.hllLookup(argv[1], true)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	o.SetRaw(true)
	if o.Str[15]&0x80 == 0 {
		c.Int(int64(binary.LittleEndian.Uint64(o.Str[8:16])))
		return
	}
	card, invalid := hllCount(o.Str)
	if invalid {
		c.Error(errHLLInvalid)
		return
	}
	binary.LittleEndian.PutUint64(o.Str[8:16], card)
	// PFCOUNT is read-only yet rewrites the cached cardinality: Redis
	// counts it as a change, invalidates WATCH and propagates the command.
	c.s.dirty++
	if len(c.s.watchers) > 0 {
		c.s.touch(c.db, argv[1])
	}
	c.s.propagate(c.db, argv)
	c.Int(int64(card))
}

// PFMERGE destkey [sourcekey ...]
func cmdPFMerge(c *Client, argv [][]byte) {
	max := make([]uint8, hllRegisters)
	useDense := false
	for _, k := range argv[1:] {
		o, ok := c.hllLookup(k, true)
		if !ok {
			return
		}
		if o == nil {
			continue
		}
		if o.Str[4] == hllDense {
			useDense = true
		}
		if !hllMerge(max, o.Str) {
			c.Error(errHLLInvalid)
			return
		}
	}
	o := c.kv().Get(argv[1])
	if o == nil {
		o = c.hllCreate(argv[1])
	} else {
		o.SetRaw(true)
	}
	if useDense {
		d, ok := hllSparseToDense(o.Str)
		if !ok {
			c.Error(errHLLInvalid)
			return
		}
		o.Str = d
	}
	maxBytes := c.s.cfg.HLLSparseMaxBytes
	for j, v := range max {
		if v == 0 {
			continue
		}
		if o.Str[4] == hllDense {
			hllDenseSet(o.Str[hllHdrSize:], j, v)
		} else {
			o.Str, _ = hllSparseSet(o.Str, j, v, maxBytes)
		}
	}
	o.Str[15] |= 0x80
	c.s.dirty++
	c.notify(notifyString, "pfadd", argv[1]) // PFMERGE's event in Redis 7.0
	c.OK()
}

// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key
func cmdPFDebug(c *Client, argv [][]byte) {
	o := c.kv().Get(argv[2])
	if o == nil {
		c.Error("ERR The specified key does not exist")
		return
	}
	o, ok := c.hllLookup(argv[2], false)
	if !ok {
		return
	}
	o.SetRaw(true)
	sub := string(argv[1])
	if i := strings.IndexByte(sub, 0); i >= 0 {
		sub = sub[:i] // Redis reads the subcommand as a C string
	}
	switch strings.ToLower(sub) {
	case "getreg":
		if o.Str[4] == hllSparse {
			d, ok := hllSparseToDense(o.Str)
			if !ok {
				c.Error(errHLLInvalid)
				return
			}
			o.Str = d
			c.s.dirty++
		}
		r := o.Str[hllHdrSize:]
		c.Array(hllRegisters)
		for j := 0; j < hllRegisters; j++ {
			c.Int(int64(hllDenseGet(r, j)))
		}
	case "decode":
		if o.Str[4] != hllSparse {
			c.Error("ERR HLL encoding is not sparse")
			return
		}
		var b []byte
		s := o.Str
		for p := hllHdrSize; p < len(s); {
			switch v := s[p]; {
			case spIsZero(v):
				b = append(b, "z:"...)
				b = strconv.AppendInt(b, int64(spZeroLen(v)), 10)
				p++
			case spIsXZero(v):
				b = append(b, "Z:"...)
				b = strconv.AppendInt(b, int64(spXZeroLen(s, p)), 10)
				p += 2
			default:
				b = append(b, "v:"...)
				b = strconv.AppendInt(b, int64(spValValue(v)), 10)
				b = append(b, ',')
				b = strconv.AppendInt(b, int64(spValLen(v)), 10)
				p++
			}
			b = append(b, ' ')
		}
		c.BulkString(strings.Trim(string(b), " "))
	case "encoding":
		if o.Str[4] == hllDense {
			c.Simple("dense")
		} else {
			c.Simple("sparse")
		}
	case "todense":
		if o.Str[4] != hllSparse {
			c.Int(0)
			return
		}
		d, ok := hllSparseToDense(o.Str)
		if !ok {
			c.Error(errHLLInvalid)
			return
		}
		o.Str = d
		c.s.dirty++
		c.Int(1)
	default:
		c.Error("ERR Unknown PFDEBUG subcommand '" + sub + "'")
	}
}

// PFSELFTEST checks the dense register access and the estimate's error
// against dense and sparse HLLs fed the same ten million elements.
func cmdPFSelfTest(c *Client, argv [][]byte) {
	dense := make([]byte, hllDenseSize)
	r := dense[hllHdrSize:]
	var want [hllRegisters]uint8
	for cycle := 0; cycle < 1000; cycle++ {
		for i := range want {
			v := uint8(rand.Uint32() & hllRegMax)
			want[i] = v
			hllDenseSetReg(r, i, v)
		}
		for i, v := range want {
			if got := hllDenseGet(r, i); got != v {
				c.Error("ERR TESTFAILED Register " + strconv.Itoa(i) + " should be " + strconv.Itoa(int(v)) + " but is " + strconv.Itoa(int(got)))
				return
			}
		}
	}
	clear(r)
	copy(dense, "HYLL")
	sparse := newHLL()
	maxBytes := c.s.cfg.HLLSparseMaxBytes
	relerr := 1.04 / math.Sqrt(hllRegisters)
	checkpoint := int64(1)
	seed := rand.Uint64()
	var ele [8]byte
	for j := int64(1); j <= 10000000; j++ {
		binary.LittleEndian.PutUint64(ele[:], uint64(j)^seed)
		index, count := hllPatLen(ele[:])
		hllDenseSet(r, index, count)
		sparse, _ = hllAdd(sparse, ele[:], maxBytes)
		if j != checkpoint {
			continue
		}
		if j < maxBytes/2 && sparse[4] != hllSparse {
			c.Error("ERR TESTFAILED sparse encoding not used")
			return
		}
		dc, _ := hllCount(dense)
		if sc, _ := hllCount(sparse); dc != sc {
			c.Error("ERR TESTFAILED dense/sparse disagree")
			return
		}
		abserr := checkpoint - int64(dc)
		maxerr := int64(math.Ceil(relerr * 6 * float64(checkpoint)))
		if j == 10 {
			maxerr = 1
		}
		if abserr < 0 {
			abserr = -abserr
		}
		if abserr > maxerr {
			c.Error("ERR TESTFAILED Too big error. card:" + strconv.FormatInt(checkpoint, 10) + " abserr:" + strconv.FormatInt(abserr, 10))
			return
		}
		checkpoint *= 10
	}
	c.OK()
}

// hllCommands are the HyperLogLog family's specs.
func hllCommands() []*Command {
	spec := func(flags []string, begin, last int) KeySpec {
		return KeySpec{Flags: flags, Begin: KeyBegin{Index: begin}, Find: KeyFind{LastKey: last, Step: 1}}
	}
	hll := func(name string, arity int, flags Flag, first, last int, h Handler, summary string, acl []string, specs []KeySpec) *Command {
		step := 1
		if first == 0 {
			step = 0
		}
		cmd := newCmd(name, arity, flags, first, last, step, h, "hyperloglog").withDocs(summary, "2.8.9").withACL(acl...)
		cmd.InfoSpecs = specs
		return cmd
	}
	pfcount := KeySpec{Notes: "RW because it may change the internal representation of the key, and propagate to replicas",
		Flags: []string{"RW", "access"}, Begin: KeyBegin{Index: 1}, Find: KeyFind{LastKey: -1, Step: 1}}
	return []*Command{
		hll("pfadd", -2, FlagWrite|FlagDenyOOM|FlagFast, 1, 1, cmdPFAdd, "Adds the specified elements to the specified HyperLogLog.",
			[]string{"@write", "@hyperloglog", "@fast"}, []KeySpec{spec([]string{"RW", "insert"}, 1, 0)}),
		hll("pfcount", -2, FlagReadonly|FlagMayReplicate, 1, -1, cmdPFCount, "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).",
			[]string{"@read", "@hyperloglog", "@slow"}, []KeySpec{pfcount}),
		hll("pfmerge", -2, FlagWrite|FlagDenyOOM, 1, -1, cmdPFMerge, "Merge N different HyperLogLogs into a single one.",
			[]string{"@write", "@hyperloglog", "@slow"},
			[]KeySpec{spec([]string{"RW", "access", "insert"}, 1, 0), spec([]string{"RO", "access"}, 2, -1)}),
		hll("pfdebug", 3, FlagWrite|FlagDenyOOM|FlagAdmin, 2, 2, cmdPFDebug, "Internal commands for debugging HyperLogLog values",
			[]string{"@write", "@hyperloglog", "@admin", "@slow", "@dangerous"}, []KeySpec{spec([]string{"RW", "access"}, 2, 0)}),
		hll("pfselftest", 1, FlagAdmin, 0, 0, cmdPFSelfTest, "An internal command for testing HyperLogLog values",
			[]string{"@hyperloglog", "@admin", "@slow", "@dangerous"}, nil),
	}
}
