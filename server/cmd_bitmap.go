// Bitmap commands (Redis bitops.c): bits of a string, most significant bit
// of the first byte first.

package server

import (
	"math/bits"

	"github.com/redline-dev/redline/server/store"
)

// parseBitOffset parses a SETBIT/GETBIT offset: non-negative and inside
// proto-max-bulk-len bytes.
func parseBitOffset(c *Client, b []byte) (int64, bool) {
	off, ok := parseInt(b)
	if !ok || off < 0 || off>>3 >= c.s.cfg.ProtoMaxBulkLen {
		c.Error("ERR bit offset is not an integer or out of range")
		return 0, false
	}
	return off, true
}

// SETBIT key offset value
func cmdSetBit(c *Client, argv [][]byte) {
	off, ok := parseBitOffset(c, argv[2])
	if !ok {
		return
	}
	on, ok := parseInt(argv[3])
	if !ok || on&^1 != 0 {
		c.Error("ERR bit is not an integer or out of range")
		return
	}
	o, ok := c.lookup(argv[1], store.KindString)
	if !ok {
		return
	}
	byteAt := int(off >> 3)
	grown := false // Redis counts a change when the key is created or grows
	if o == nil {
		o = c.setString(argv[1], make([]byte, byteAt+1), false)
		grown = true
	} else if len(o.Str) <= byteAt {
		o.Str = append(o.Str, make([]byte, byteAt+1-len(o.Str))...)
		grown = true
	}
	o.SetRaw(true)
	mask := byte(1) << (7 - uint(off&7))
	old := o.Str[byteAt]&mask != 0
	if on == 1 {
		o.Str[byteAt] |= mask
	} else {
		o.Str[byteAt] &^= mask
	}
	if grown || old != (on == 1) {
		c.s.dirty++
		c.notify(notifyString, "setbit", argv[1])
	}
	if old {
		c.Int(1)
	} else {
		c.Int(0)
	}
}

// GETBIT key offset
func cmdGetBit(c *Client, argv [][]byte) {
	off, ok := parseBitOffset(c, argv[2])
	if !ok {
		return
	}
	o, ok := c.lookup(argv[1], store.KindString)
	if !ok {
		return
	}
	if o == nil || int64(len(o.Str)) <= off>>3 || o.Str[off>>3]&(1<<(7-uint(off&7))) == 0 {
		c.Int(0)
		return
	}
	c.Int(1)
}

// bitRange turns BITCOUNT/BITPOS start and end (bytes, or bits with BIT)
// into an inclusive range of bit positions, clamped as Redis does; empty
// reports start > end.
func bitRange(strlen, start, end int64, isBit bool) (lo, hi int64, empty bool) {
	total := strlen
	if isBit {
		total <<= 3
	}
	if start < 0 {
		start += total
	}
	if end < 0 {
		end += total
	}
	start, end = max(start, 0), max(end, 0)
	if end >= total {
		end = total - 1
	}
	if start > end {
		return 0, 0, true
	}
	if isBit {
		return start, end, false
	}
	return start * 8, end*8 + 7, false
}

func bitAt(s []byte, i int64) bool { return s[i>>3]&(1<<(7-uint(i&7))) != 0 }

// parseBitUnit parses the optional BYTE|BIT argument.
func parseBitUnit(b []byte) (isBit, ok bool) {
	switch {
	case eq(b, "bit"):
		return true, true
	case eq(b, "byte"):
		return false, true
	}
	return false, false
}

// BITCOUNT key [start end [BYTE|BIT]]
func cmdBitCount(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindString)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	s := o.Str
	var lo, hi int64
	switch len(argv) {
	case 2:
		lo, hi = 0, int64(len(s))*8-1
	case 4, 5:
		start, ok1 := parseInt(argv[2])
		end, ok2 := parseInt(argv[3])
		if !ok1 || !ok2 {
			c.Error(ErrNotInt)
			return
		}
		if start < 0 && end < 0 && start > end {
			c.Int(0)
			return
		}
		isBit := false
		if len(argv) == 5 {
			if isBit, ok = parseBitUnit(argv[4]); !ok {
				c.Error(ErrSyntax)
				return
			}
		}
		var empty bool
		if lo, hi, empty = bitRange(int64(len(s)), start, end, isBit); empty {
			c.Int(0)
			return
		}
	default:
		c.Error(ErrSyntax)
		return
	}
	var n int64
	for i := lo; i <= hi; {
		if i&7 == 0 && i+7 <= hi {
			n += int64(bits.OnesCount8(s[i>>3]))
			i += 8
			continue
		}
		if bitAt(s, i) {
			n++
		}
		i++
	}
	c.Int(n)
}

// BITPOS key bit [start [end [BYTE|BIT]]]
func cmdBitPos(c *Client, argv [][]byte) {
	bit, ok := parseInt(argv[2])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	if bit != 0 && bit != 1 {
		c.Error("ERR The bit argument must be 1 or 0.")
		return
	}
	o := c.kv().Get(argv[1])
	if o == nil {
		c.Int(-bit) // no key: infinite zeros
		return
	}
	if o.Kind != store.KindString {
		c.Error(ErrWrongType)
		return
	}
	s := o.Str
	lo, hi, endGiven := int64(0), int64(len(s))*8-1, false
	switch len(argv) {
	case 3:
	case 4, 5, 6:
		start, ok := parseInt(argv[3])
		if !ok {
			c.Error(ErrNotInt)
			return
		}
		isBit := false
		if len(argv) == 6 {
			if isBit, ok = parseBitUnit(argv[5]); !ok {
				c.Error(ErrSyntax)
				return
			}
		}
		end := int64(len(s)) - 1
		if isBit {
			end = int64(len(s))*8 - 1
		}
		if len(argv) >= 5 {
			if end, ok = parseInt(argv[4]); !ok {
				c.Error(ErrNotInt)
				return
			}
			endGiven = true
		}
		var empty bool
		if lo, hi, empty = bitRange(int64(len(s)), start, end, isBit); empty {
			c.Int(-1)
			return
		}
	default:
		c.Error(ErrSyntax)
		return
	}
	if lo > hi {
		c.Int(-1)
		return
	}
	want := bit == 1
	for i := lo; i <= hi; i++ {
		if bitAt(s, i) == want {
			c.Int(i)
			return
		}
	}
	// No clear bit: the string continues with zeros right after the range,
	// unless the caller bounded it.
	if want || endGiven {
		c.Int(-1)
		return
	}
	c.Int(hi + 1)
}

// BITOP AND|OR|XOR|NOT destkey key [key ...]
func cmdBitOp(c *Client, argv [][]byte) {
	var op byte
	switch {
	case eq(argv[1], "and"):
		op = '&'
	case eq(argv[1], "or"):
		op = '|'
	case eq(argv[1], "xor"):
		op = '^'
	case eq(argv[1], "not"):
		op = '~'
	default:
		c.Error(ErrSyntax)
		return
	}
	if op == '~' && len(argv) != 4 {
		c.Error("ERR BITOP NOT must be called with a single source key.")
		return
	}
	srcs := make([][]byte, 0, len(argv)-3)
	maxLen := 0
	for _, k := range argv[3:] {
		o, ok := c.lookup(k, store.KindString)
		if !ok {
			return
		}
		var s []byte
		if o != nil {
			s = o.Str
		}
		srcs = append(srcs, s)
		maxLen = max(maxLen, len(s))
	}
	res := make([]byte, maxLen)
	for i := range res {
		byteOf := func(s []byte) byte {
			if i < len(s) {
				return s[i]
			}
			return 0
		}
		v := byteOf(srcs[0])
		for _, s := range srcs[1:] {
			switch op {
			case '&':
				v &= byteOf(s)
			case '|':
				v |= byteOf(s)
			default:
				v ^= byteOf(s)
			}
		}
		if op == '~' {
			v = ^v
		}
		res[i] = v
	}
	db := c.kv()
	if maxLen == 0 {
		if db.Delete(argv[2]) {
			c.s.dirty++
			c.notify(notifyGeneric, "del", argv[2])
		}
		c.Int(0)
		return
	}
	c.setString(argv[2], res, false).SetRaw(true)
	c.s.dirty++
	c.notify(notifyString, "set", argv[2])
	c.Int(int64(maxLen))
}

// bitmapCommands are the bitmap family's specs (BITFIELD's are in cmd_bitfield.go).
func bitmapCommands() []*Command {
	return []*Command{
		newCmd("setbit", 4, w, 1, 1, 1, cmdSetBit, "bitmap"),
		newCmd("getbit", 3, rof, 1, 1, 1, cmdGetBit, "bitmap"),
		newCmd("bitcount", -2, ro, 1, 1, 1, cmdBitCount, "bitmap"),
		newCmd("bitpos", -3, ro, 1, 1, 1, cmdBitPos, "bitmap"),
		newCmd("bitop", -4, w, 2, -1, 1, cmdBitOp, "bitmap"),
	}
}
