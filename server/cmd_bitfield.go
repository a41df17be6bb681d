// BITFIELD and BITFIELD_RO (Redis bitops.c): signed and unsigned integers
// of 1 to 64 bits at any bit offset of a string, most significant bit
// first, with WRAP, SAT or FAIL overflow.

package server

import (
	"bytes"
	"math"
	"strings"

	"github.com/redline-dev/redline/server/store"
)

const (
	bfGet = iota
	bfSet
	bfIncrBy
)

const (
	bfWrap = iota
	bfSat
	bfFail
)

type bitfieldOp struct {
	offset   uint64
	value    int64 // SET value or INCRBY increment
	op       int
	overflow int
	bits     uint
	signed   bool
}

const errBitfieldType = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."

// parseBitfieldType parses i1..i64 or u1..u63 (Redis reads the width as a
// C string: it ends at a NUL byte).
func parseBitfieldType(b []byte) (signed bool, bits uint, ok bool) {
	if len(b) == 0 || (b[0] != 'i' && b[0] != 'u') {
		return false, 0, false
	}
	signed = b[0] == 'i'
	w := b[1:]
	if i := bytes.IndexByte(w, 0); i >= 0 {
		w = w[:i]
	}
	n, ok := parseInt(w)
	if !ok || n < 1 || (signed && n > 64) || (!signed && n > 63) {
		return false, 0, false
	}
	return signed, uint(n), true
}

// parseBitfieldOffset parses a bit offset, or #N meaning N times the
// type's width, inside proto-max-bulk-len bytes.
func parseBitfieldOffset(c *Client, b []byte, bits uint) (uint64, bool) {
	hash := len(b) > 0 && b[0] == '#'
	if hash {
		b = b[1:]
	}
	off, ok := parseInt(b)
	if ok && hash {
		off *= int64(bits) // wraps as Redis's long long multiplication does
	}
	if !ok || off < 0 || off>>3 >= c.s.cfg.ProtoMaxBulkLen {
		c.Error("ERR bit offset is not an integer or out of range")
		return 0, false
	}
	return uint64(off), true
}

func getUnsignedBits(p []byte, off uint64, bits uint) uint64 {
	var v uint64
	for j := uint(0); j < bits; j++ {
		var bit uint64
		if i := off >> 3; i < uint64(len(p)) {
			bit = uint64(p[i]>>(7-off&7)) & 1
		}
		v = v<<1 | bit
		off++
	}
	return v
}

func getSignedBits(p []byte, off uint64, bits uint) int64 {
	v := int64(getUnsignedBits(p, off, bits))
	if bits < 64 && v&(1<<(bits-1)) != 0 {
		v |= -1 << bits
	}
	return v
}

func setBits(p []byte, off uint64, bits uint, v uint64) {
	for j := uint(0); j < bits; j++ {
		mask := byte(1) << (7 - off&7)
		if v&(1<<(bits-1-j)) != 0 {
			p[off>>3] |= mask
		} else {
			p[off>>3] &^= mask
		}
		off++
	}
}

// unsignedOverflow reports whether value+incr leaves the range of an
// unsigned integer of bits bits: 1 above, -1 below, 0 if it fits; limit is
// the result to store under WRAP or SAT.
func unsignedOverflow(value uint64, incr int64, bits uint, owtype int) (int, uint64) {
	max := uint64(1)<<bits - 1
	maxincr := int64(max - value)
	minincr := -int64(value)
	wrap := func() uint64 { return (value + uint64(incr)) & max }
	if value > max || (incr > 0 && incr > maxincr) {
		if owtype == bfWrap {
			return 1, wrap()
		}
		return 1, max
	}
	if incr < 0 && incr < minincr {
		if owtype == bfWrap {
			return -1, wrap()
		}
		return -1, 0
	}
	return 0, 0
}

// signedOverflow is unsignedOverflow for two's complement integers.
func signedOverflow(value, incr int64, bits uint, owtype int) (int, int64) {
	max := int64(math.MaxInt64)
	if bits < 64 {
		max = 1<<(bits-1) - 1
	}
	min := -max - 1
	maxincr := int64(uint64(max) - uint64(value))
	minincr := min - value
	wrap := func() int64 {
		c := uint64(value) + uint64(incr)
		if bits < 64 {
			mask := ^uint64(0) << bits
			if c&(1<<(bits-1)) != 0 {
				c |= mask
			} else {
				c &^= mask
			}
		}
		return int64(c)
	}
	if value > max || (bits != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr) {
		if owtype == bfWrap {
			return 1, wrap()
		}
		return 1, max
	}
	if value < min || (bits != 64 && incr < minincr) || (value < 0 && incr < 0 && incr < minincr) {
		if owtype == bfWrap {
			return -1, wrap()
		}
		return -1, min
	}
	return 0, 0
}

func cmdBitfield(c *Client, argv [][]byte)   { bitfieldGeneric(c, argv, false) }
func cmdBitfieldRO(c *Client, argv [][]byte) { bitfieldGeneric(c, argv, true) }

// BITFIELD key [GET type offset] [SET type offset value]
// [INCRBY type offset increment] [OVERFLOW WRAP|SAT|FAIL] ...
func bitfieldGeneric(c *Client, argv [][]byte, readonly bool) {
	var ops []bitfieldOp
	owtype := bfWrap
	onlyGets := true
	var highest uint64
	for j := 2; j < len(argv); j++ {
		rem := len(argv) - j - 1
		var op int
		switch sub := strings.ToLower(string(argv[j])); {
		case sub == "get" && rem >= 2:
			op = bfGet
		case sub == "set" && rem >= 3:
			op = bfSet
		case sub == "incrby" && rem >= 3:
			op = bfIncrBy
		case sub == "overflow" && rem >= 1:
			j++
			switch strings.ToLower(string(argv[j])) {
			case "wrap":
				owtype = bfWrap
			case "sat":
				owtype = bfSat
			case "fail":
				owtype = bfFail
			default:
				c.Error("ERR Invalid OVERFLOW type specified")
				return
			}
			continue
		default:
			c.Error(ErrSyntax)
			return
		}
		signed, bits, ok := parseBitfieldType(argv[j+1])
		if !ok {
			c.Error(errBitfieldType)
			return
		}
		off, ok := parseBitfieldOffset(c, argv[j+2], bits)
		if !ok {
			return
		}
		var v int64
		if op != bfGet {
			onlyGets = false
			highest = max(highest, off+uint64(bits)-1)
			if v, ok = parseInt(argv[j+3]); !ok {
				c.Error(ErrNotInt)
				return
			}
			j++
		}
		ops = append(ops, bitfieldOp{offset: off, value: v, op: op, overflow: owtype, bits: bits, signed: signed})
		j += 2
	}
	var o *store.Object
	dirty := false
	if onlyGets {
		var ok bool
		if o, ok = c.lookup(argv[1], store.KindString); !ok {
			return
		}
	} else {
		if readonly {
			c.Error("ERR BITFIELD_RO only supports the GET subcommand")
			return
		}
		o = c.kv().Get(argv[1])
		if o != nil && o.Kind != store.KindString {
			c.Error(ErrWrongType)
			return
		}
		size := int(highest>>3) + 1
		if o == nil {
			o = &store.Object{Kind: store.KindString, Str: make([]byte, size)}
			c.kv().Add(argv[1], o)
			dirty = true
		} else if len(o.Str) < size {
			o.Str = append(o.Str, make([]byte, size-len(o.Str))...)
			dirty = true
		}
		o.SetRaw(true)
	}
	c.Array(len(ops))
	changes := int64(0)
	for _, op := range ops {
		if op.op == bfGet {
			var p []byte
			if o != nil {
				p = o.Str
			}
			if op.signed {
				c.Int(getSignedBits(p, op.offset, op.bits))
			} else {
				c.Int(int64(getUnsignedBits(p, op.offset, op.bits)))
			}
			continue
		}
		var oldBits, newBits uint64
		var reply int64
		overflow := 0
		if op.signed {
			old := getSignedBits(o.Str, op.offset, op.bits)
			var nv, limit int64
			if op.op == bfIncrBy {
				overflow, limit = signedOverflow(old, op.value, op.bits, op.overflow)
				nv = old + op.value
				if overflow != 0 {
					nv = limit
				}
				reply = nv
			} else {
				nv = op.value
				if overflow, limit = signedOverflow(nv, 0, op.bits, op.overflow); overflow != 0 {
					nv = limit
				}
				reply = old
			}
			oldBits, newBits = uint64(old), uint64(nv)
		} else {
			old := getUnsignedBits(o.Str, op.offset, op.bits)
			var nv, limit uint64
			if op.op == bfIncrBy {
				nv = old + uint64(op.value)
				if overflow, limit = unsignedOverflow(old, op.value, op.bits, op.overflow); overflow != 0 {
					nv = limit
				}
				reply = int64(nv)
			} else {
				nv = uint64(op.value)
				if overflow, limit = unsignedOverflow(nv, 0, op.bits, op.overflow); overflow != 0 {
					nv = limit
				}
				reply = int64(old)
			}
			oldBits, newBits = old, nv
		}
		if overflow != 0 && op.overflow == bfFail {
			c.Null()
			continue
		}
		c.Int(reply)
		setBits(o.Str, op.offset, op.bits, newBits)
		if dirty || oldBits != newBits {
			changes++
		}
	}
	c.s.dirty += changes
	if changes > 0 {
		c.notify(notifyString, "setbit", argv[1])
	}
}

// bitfieldCommands are BITFIELD's and BITFIELD_RO's specs.
func bitfieldCommands() []*Command {
	return []*Command{
		newCmd("bitfield", -2, FlagWrite|FlagDenyOOM, 1, 1, 1, cmdBitfield, "bitmap").
			withDocs("Perform arbitrary bitfield integer operations on strings", "3.2.0").
			withInfoSpecs(KeySpec{Notes: "This command allows both access and modification of the key",
				Flags: []string{"RW", "access", "update", "variable_flags"}, Begin: KeyBegin{Index: 1}, Find: KeyFind{Step: 1}}),
		newCmd("bitfield_ro", -2, FlagReadonly|FlagFast, 1, 1, 1, cmdBitfieldRO, "bitmap").
			withDocs("Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD", "6.0.0"),
	}
}
