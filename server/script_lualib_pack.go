package server

import (
	"encoding/binary"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// luaArgError raises Lua 5.1's "bad argument #n to 'fn' (msg)".
func luaArgError(L *lua.LState, n int, fn, msg string) {
	L.RaiseError("bad argument #%d to '%s' (%s)", n, fn, msg)
}

func luaTypeName(v lua.LValue) string {
	if v == lua.LNil {
		return "no value"
	}
	return v.Type().String()
}

// luaCheckNumber is luaL_checknumber: a number or a numeric string.
func luaCheckNumber(L *lua.LState, n int, fn string) float64 {
	switch v := L.Get(n).(type) {
	case lua.LNumber:
		return float64(v)
	case lua.LString:
		if f, ok := luaStringToNumber(string(v)); ok {
			return f
		}
	}
	luaArgError(L, n, fn, "number expected, got "+luaTypeName(L.Get(n)))
	return 0
}

// luaCheckString is luaL_checklstring: a string or a number.
func luaCheckString(L *lua.LState, n int, fn string) string {
	switch v := L.Get(n).(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return luaNumberString(float64(v))
	}
	luaArgError(L, n, fn, "string expected, got "+luaTypeName(L.Get(n)))
	return ""
}

// The cmsgpack (lua-cmsgpack 0.4) and struct (Roberto Ierusalimschy's
// struct library) tables of Redis's Lua environment.

// cmsgpackMaxNesting is the depth past which tables encode as nil, so a
// table that contains itself still packs.
const cmsgpackMaxNesting = 16

func newCMsgpackLib(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	L.SetFuncs(t, map[string]lua.LGFunction{
		"pack": func(L *lua.LState) int {
			n := L.GetTop()
			if n == 0 {
				luaArgError(L, 0, "pack", "MessagePack pack needs input.")
			}
			var b []byte
			for i := 1; i <= n; i++ {
				b = mpEncode(b, L.Get(i), 0)
			}
			L.Push(lua.LString(b))
			return 1
		},
		"unpack": func(L *lua.LState) int { return mpUnpack(L, "unpack", 0, 0) },
		"unpack_one": func(L *lua.LState) int {
			off := luaOptInt(L, 2, "unpack_one")
			L.SetTop(1)
			return mpUnpack(L, "unpack_one", 1, off)
		},
		"unpack_limit": func(L *lua.LState) int {
			limit := int64(luaCheckNumber(L, 2, "unpack_limit"))
			off := luaOptInt(L, 3, "unpack_limit")
			L.SetTop(1)
			return mpUnpack(L, "unpack_limit", limit, off)
		},
	})
	t.RawSetString("_NAME", lua.LString("cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	return t
}

func mpEncode(b []byte, v lua.LValue, level int) []byte {
	switch v := v.(type) {
	case lua.LString:
		n := len(v)
		switch {
		case n < 32:
			b = append(b, 0xa0|byte(n))
		case n <= 0xff:
			b = append(b, 0xd9, byte(n))
		case n <= 0xffff:
			b = binary.BigEndian.AppendUint16(append(b, 0xda), uint16(n))
		default:
			b = binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
		}
		return append(b, v...)
	case lua.LBool:
		if v {
			return append(b, 0xc3)
		}
		return append(b, 0xc2)
	case lua.LNumber:
		f := float64(v)
		if f >= -(1<<63) && f < 1<<63 && f == math.Trunc(f) {
			return mpEncodeInt(b, int64(f))
		}
		if f32 := float32(f); float64(f32) == f {
			return binary.BigEndian.AppendUint32(append(b, 0xca), math.Float32bits(f32))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xcb), math.Float64bits(f))
	case *lua.LTable:
		if level == cmsgpackMaxNesting {
			return append(b, 0xc0)
		}
		if n, ok := mpArrayLen(v); ok {
			b = mpHeader(b, n, 0x90, 0xdc, 0xdd)
			for i := 1; i <= n; i++ {
				b = mpEncode(b, v.RawGetInt(i), level+1)
			}
			return b
		}
		n := 0
		luaEach(v, func(lua.LValue, lua.LValue) { n++ })
		b = mpHeader(b, n, 0x80, 0xde, 0xdf)
		luaEach(v, func(k, val lua.LValue) {
			b = mpEncode(b, k, level+1)
			b = mpEncode(b, val, level+1)
		})
		return b
	}
	return append(b, 0xc0)
}

// mpArrayLen reports whether t's keys are exactly 1..n (an empty table
// is an array).
func mpArrayLen(t *lua.LTable) (int, bool) {
	count, max, ok := 0, 0, true
	luaEach(t, func(k, _ lua.LValue) {
		n, isNum := k.(lua.LNumber)
		if !isNum || n <= 0 || float64(n) != math.Trunc(float64(n)) || float64(n) > math.MaxInt32 {
			ok = false
			return
		}
		max = int(math.Max(float64(max), float64(n)))
		count++
	})
	return count, ok && max == count
}

// luaEach visits t's pairs in next()'s order (the array part, then keys
// in insertion order), which unlike LTable.ForEach is the same every run.
func luaEach(t *lua.LTable, fn func(k, v lua.LValue)) {
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		fn(k, v)
	}
}

func mpHeader(b []byte, n int, fix, b16, b32 byte) []byte {
	switch {
	case n <= 15:
		return append(b, fix|byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(b, b16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, b32), uint32(n))
}

func mpEncodeInt(b []byte, n int64) []byte {
	switch {
	case n >= 0 && n <= 127:
		return append(b, byte(n))
	case n >= 0 && n <= 0xff:
		return append(b, 0xcc, byte(n))
	case n >= 0 && n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(n))
	case n >= 0 && n <= 0xffffffff:
		return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(n))
	case n >= 0:
		return binary.BigEndian.AppendUint64(append(b, 0xcf), uint64(n))
	case n >= -32:
		return append(b, byte(n))
	case n >= -128:
		return append(b, 0xd0, byte(n))
	case n >= -32768:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(n))
	case n >= -2147483648:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
}

type mpCursor struct {
	s   string
	err string // "" while fine
}

func (c *mpCursor) need(n int) bool {
	if c.err == "" && len(c.s) < n {
		c.err = "Missing bytes in input."
	}
	return c.err == ""
}

// luaOptInt is luaL_optinteger (0 when absent).
func luaOptInt(L *lua.LState, n int, fn string) int64 {
	if L.Get(n) == lua.LNil {
		return 0
	}
	return int64(luaCheckNumber(L, n, fn))
}

func mpUnpack(L *lua.LState, fn string, limit, offset int64) int {
	s := luaCheckString(L, 1, fn)
	all := limit == 0 && offset == 0
	if offset < 0 || limit < 0 {
		L.RaiseError("Invalid request to unpack with offset of %d and limit of %d.", int32(offset), int32(len(s)))
	} else if offset > int64(len(s)) {
		L.RaiseError("Start offset %d greater than input length %d.", int32(offset), int32(len(s)))
	}
	if all {
		limit = math.MaxInt32
	}
	c := &mpCursor{s: s[offset:]}
	var out []lua.LValue
	for cnt := int64(0); len(c.s) > 0 && cnt < limit; cnt++ {
		v := mpDecode(L, c)
		if c.err != "" {
			L.RaiseError("%s", c.err)
		}
		out = append(out, v)
	}
	if !all {
		next := int64(len(s) - len(c.s))
		if len(c.s) == 0 {
			next = -1
		}
		L.Push(lua.LNumber(next))
	}
	for _, v := range out {
		L.Push(v)
	}
	if all {
		return len(out)
	}
	return len(out) + 1
}

func mpDecode(L *lua.LState, c *mpCursor) lua.LValue {
	if !c.need(1) {
		return lua.LNil
	}
	s := c.s
	fixed := func(n int) string {
		if !c.need(n) {
			return ""
		}
		v := c.s[1:n]
		c.s = c.s[n:]
		return v
	}
	str := func(hdr, n int) lua.LValue {
		if !c.need(hdr + n) {
			return lua.LNil
		}
		v := c.s[hdr : hdr+n]
		c.s = c.s[hdr+n:]
		return lua.LString(v)
	}
	be := func(b string) uint64 {
		var v uint64
		for i := 0; i < len(b); i++ {
			v = v<<8 | uint64(b[i])
		}
		return v
	}
	switch t := s[0]; {
	case t == 0xcc || t == 0xcd || t == 0xce || t == 0xcf:
		b := fixed(1 + 1<<(t-0xcc))
		return lua.LNumber(float64(be(b)))
	case t == 0xd0:
		return lua.LNumber(float64(int8(be(fixed(2)))))
	case t == 0xd1:
		return lua.LNumber(float64(int16(be(fixed(3)))))
	case t == 0xd2:
		return lua.LNumber(float64(int32(be(fixed(5)))))
	case t == 0xd3:
		return lua.LNumber(float64(int64(be(fixed(9)))))
	case t == 0xc0:
		c.s = c.s[1:]
		return lua.LNil
	case t == 0xc3 || t == 0xc2:
		c.s = c.s[1:]
		return lua.LBool(t == 0xc3)
	case t == 0xca:
		return lua.LNumber(float64(math.Float32frombits(uint32(be(fixed(5))))))
	case t == 0xcb:
		return lua.LNumber(math.Float64frombits(be(fixed(9))))
	case t == 0xd9:
		if !c.need(2) {
			return lua.LNil
		}
		return str(2, int(s[1]))
	case t == 0xda:
		if !c.need(3) {
			return lua.LNil
		}
		return str(3, int(be(s[1:3])))
	case t == 0xdb:
		if !c.need(5) {
			return lua.LNil
		}
		return str(5, int(be(s[1:5])))
	case t == 0xdc || t == 0xdd || t == 0xde || t == 0xdf:
		hdr := 3
		if t == 0xdd || t == 0xdf {
			hdr = 5
		}
		n := int(be(fixed(hdr)))
		if c.err != "" {
			return lua.LNil
		}
		return mpDecodeTable(L, c, n, t == 0xdc || t == 0xdd)
	case t&0x80 == 0:
		c.s = c.s[1:]
		return lua.LNumber(float64(t))
	case t&0xe0 == 0xe0:
		c.s = c.s[1:]
		return lua.LNumber(float64(int8(t)))
	case t&0xe0 == 0xa0:
		return str(1, int(t&0x1f))
	case t&0xf0 == 0x90 || t&0xf0 == 0x80:
		c.s = c.s[1:]
		return mpDecodeTable(L, c, int(t&0xf), t&0xf0 == 0x90)
	}
	c.err = "Bad data format in input."
	return lua.LNil
}

func mpDecodeTable(L *lua.LState, c *mpCursor, n int, array bool) lua.LValue {
	t := L.NewTable()
	for i := 1; i <= n; i++ {
		if array {
			v := mpDecode(L, c)
			if c.err != "" {
				return t
			}
			t.RawSetInt(i, v)
			continue
		}
		k := mpDecode(L, c)
		if c.err != "" {
			return t
		}
		v := mpDecode(L, c)
		if c.err != "" {
			return t
		}
		if k == lua.LNil {
			L.RaiseError("table index is nil")
		}
		t.RawSet(k, v)
	}
	return t
}

// struct: pack, unpack and size of C-like binary records.

type structHeader struct {
	little bool
	align  int
}

func structGetNum(L *lua.LState, f string, i *int, def int) int {
	if *i >= len(f) || f[*i] < '0' || f[*i] > '9' {
		return def
	}
	a := 0
	for *i < len(f) && f[*i] >= '0' && f[*i] <= '9' {
		d := int(f[*i] - '0')
		if a > math.MaxInt32/10 || a*10 > math.MaxInt32-d {
			L.RaiseError("integral size overflow")
		}
		a = a*10 + d
		*i++
	}
	return a
}

func structOptSize(L *lua.LState, opt byte, f string, i *int) int {
	switch opt {
	case 'B', 'b':
		return 1
	case 'H', 'h':
		return 2
	case 'L', 'l', 'T', 'd':
		return 8
	case 'f':
		return 4
	case 'x':
		return 1
	case 'c':
		return structGetNum(L, f, i, 1)
	case 'i', 'I':
		sz := structGetNum(L, f, i, 4)
		if sz > 32 {
			L.RaiseError("integral size %d is larger than limit of %d", sz, 32)
		}
		return sz
	}
	return 0
}

func structToAlign(n int, h *structHeader, opt byte, size int) int {
	if size == 0 || opt == 'c' {
		return 0
	}
	if size > h.align {
		size = h.align
	}
	return (size - (n & (size - 1))) & (size - 1)
}

func structControl(L *lua.LState, fn string, opt byte, f string, i *int, h *structHeader) {
	switch opt {
	case ' ':
	case '>':
		h.little = false
	case '<':
		h.little = true
	case '!':
		a := structGetNum(L, f, i, 8)
		if a <= 0 || a&(a-1) != 0 {
			L.RaiseError("alignment %d is not a power of 2", a)
		}
		h.align = a
	default:
		luaArgError(L, 1, fn, "invalid format option '"+string(opt)+"'")
	}
}

func structPutInt(b []byte, v uint64, little bool, size int) []byte {
	buf := make([]byte, size)
	for j := 0; j < size; j++ {
		at := size - 1 - j
		if little {
			at = j
		}
		buf[at] = byte(v)
		v >>= 8
	}
	return append(b, buf...)
}

func structGetInt(s string, little, signed bool, size int) float64 {
	var l uint64
	for j := 0; j < size; j++ {
		at := j
		if little {
			at = size - 1 - j
		}
		l = l<<8 | uint64(s[at])
	}
	if !signed {
		return float64(l)
	}
	if bits := size*8 - 1; bits < 64 {
		if mask := ^uint64(0) << bits; l&mask != 0 {
			l |= mask
		}
	}
	return float64(int64(l))
}

func newStructLib(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	L.SetFuncs(t, map[string]lua.LGFunction{
		"pack": func(L *lua.LState) int {
			f := luaCheckString(L, 1, "pack")
			h := structHeader{little: true, align: 1}
			arg := 2
			var b []byte
			for i := 0; i < len(f); {
				opt := f[i]
				i++
				size := structOptSize(L, opt, f, &i)
				for n := structToAlign(len(b), &h, opt, size); n > 0; n-- {
					b = append(b, 0)
				}
				switch opt {
				case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
					n := float64(luaCheckNumber(L, arg, "pack"))
					arg++
					var v uint64
					if n < 0 {
						v = uint64(int64(n))
					} else {
						v = uint64(n)
					}
					b = structPutInt(b, v, h.little, size)
				case 'x':
					b = append(b, 0)
				case 'f':
					v := math.Float32bits(float32(luaCheckNumber(L, arg, "pack")))
					arg++
					b = structPutInt(b, uint64(v), h.little, 4)
				case 'd':
					v := math.Float64bits(float64(luaCheckNumber(L, arg, "pack")))
					arg++
					b = structPutInt(b, v, h.little, 8)
				case 'c', 's':
					s := luaCheckString(L, arg, "pack")
					arg++
					if size == 0 {
						size = len(s)
					}
					if len(s) < size {
						luaArgError(L, arg, "pack", "string too short")
					}
					b = append(b, s[:size]...)
					if opt == 's' {
						b = append(b, 0)
					}
				default:
					structControl(L, "pack", opt, f, &i, &h)
				}
			}
			L.Push(lua.LString(b))
			return 1
		},
		"unpack": func(L *lua.LState) int {
			f := luaCheckString(L, 1, "unpack")
			data := luaCheckString(L, 2, "unpack")
			pos := 1
			if L.Get(3) != lua.LNil {
				pos = int(luaCheckNumber(L, 3, "unpack"))
			}
			if pos <= 0 {
				luaArgError(L, 3, "unpack", "offset must be 1 or greater")
			}
			pos--
			h := structHeader{little: true, align: 1}
			var out []lua.LValue
			for i := 0; i < len(f); {
				opt := f[i]
				i++
				size := structOptSize(L, opt, f, &i)
				pos += structToAlign(pos, &h, opt, size)
				if size > len(data) || pos > len(data)-size {
					luaArgError(L, 2, "unpack", "data string too short")
				}
				switch opt {
				case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
					signed := opt >= 'a' && opt <= 'z'
					out = append(out, lua.LNumber(structGetInt(data[pos:pos+size], h.little, signed, size)))
				case 'x':
				case 'f':
					out = append(out, lua.LNumber(float64(math.Float32frombits(uint32(structGetInt(data[pos:pos+4], h.little, false, 4))))))
				case 'd':
					var v uint64
					for j := 0; j < 8; j++ {
						at := j
						if h.little {
							at = 7 - j
						}
						v = v<<8 | uint64(data[pos+at])
					}
					out = append(out, lua.LNumber(math.Float64frombits(v)))
				case 'c':
					if size == 0 {
						var n lua.LNumber
						ok := false
						if len(out) > 0 {
							n, ok = out[len(out)-1].(lua.LNumber)
						}
						if !ok {
							L.RaiseError("format 'c0' needs a previous size")
						}
						size = int(n)
						out = out[:len(out)-1]
						if size > len(data) || pos > len(data)-size {
							luaArgError(L, 2, "unpack", "data string too short")
						}
					}
					out = append(out, lua.LString(data[pos:pos+size]))
				case 's':
					e := strings.IndexByte(data[pos:], 0)
					if e < 0 {
						L.RaiseError("unfinished string in data")
					}
					size = e + 1
					out = append(out, lua.LString(data[pos:pos+e]))
				default:
					structControl(L, "unpack", opt, f, &i, &h)
				}
				pos += size
			}
			for _, v := range out {
				L.Push(v)
			}
			L.Push(lua.LNumber(pos + 1))
			return len(out) + 1
		},
		"size": func(L *lua.LState) int {
			f := luaCheckString(L, 1, "size")
			h := structHeader{little: true, align: 1}
			pos := 0
			for i := 0; i < len(f); {
				opt := f[i]
				i++
				size := structOptSize(L, opt, f, &i)
				pos += structToAlign(pos, &h, opt, size)
				if opt == 's' {
					luaArgError(L, 1, "size", "option 's' has no fixed size")
				} else if opt == 'c' && size == 0 {
					luaArgError(L, 1, "size", "option 'c0' has no fixed size")
				}
				if !(opt >= 'a' && opt <= 'z' || opt >= 'A' && opt <= 'Z' || opt >= '0' && opt <= '9') {
					structControl(L, "size", opt, f, &i, &h)
				}
				pos += size
			}
			L.Push(lua.LNumber(pos))
			return 1
		},
	})
	return t
}
