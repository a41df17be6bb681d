package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Pieces of Redis's Lua environment that gopher-lua lacks or does
// differently: Lua 5.1's number formatting and parsing, the bit library
// (LuaBitOp) and cjson.

// luaNumberString formats n as Lua 5.1 does (LUAI_NUMFFORMAT "%.14g").
func luaNumberString(n float64) string {
	switch {
	case math.IsInf(n, 1):
		return "inf"
	case math.IsInf(n, -1):
		return "-inf"
	case math.IsNaN(n):
		if math.Signbit(n) {
			return "-nan"
		}
		return "nan"
	}
	return strconv.FormatFloat(n, 'g', 14, 64)
}

// luaStringToNumber converts s as Lua 5.1's luaO_str2d: strtod syntax (hex
// integers too), surrounding blanks allowed.
func luaStringToNumber(s string) (float64, bool) {
	t := strings.Trim(s, " \t\n\v\f\r")
	if t == "" {
		return 0, false
	}
	body := strings.TrimLeft(t, "+-")
	if len(body) > 1 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') {
		v, err := strconv.ParseUint(body[2:], 16, 64)
		if err != nil {
			return 0, false
		}
		if t[0] == '-' {
			return -float64(v), true
		}
		return float64(v), true
	}
	c, ok := cFloat(t)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(c, 64)
	if err != nil {
		if ne, isNum := err.(*strconv.NumError); !isNum || ne.Err != strconv.ErrRange {
			return 0, false
		}
	}
	return f, true
}

// installLuaBasics replaces tonumber and tostring with Lua 5.1's number
// conversions.
func installLuaBasics(L *lua.LState) {
	g := L.G.Global
	origToNumber := g.RawGetString("tonumber").(*lua.LFunction)
	g.RawSetString("tonumber", L.NewFunction(func(L *lua.LState) int {
		if s, ok := L.Get(1).(lua.LString); ok && (L.GetTop() < 2 || L.Get(2) == lua.LNumber(10)) {
			if f, ok := luaStringToNumber(string(s)); ok {
				L.Push(lua.LNumber(f))
			} else {
				L.Push(lua.LNil)
			}
			return 1
		}
		return origToNumber.GFunction(L)
	}))
	// string.dump: gopher-lua has no bytecode to dump. Redis's Lua refuses
	// to load binary chunks (f_parser always runs the text parser), so a
	// dump is only ever something loadstring rejects: a chunk that starts
	// with Lua 5.1's signature does exactly that here too.
	g.RawGetString("string").(*lua.LTable).RawSetString("dump", L.NewFunction(func(L *lua.LState) int {
		if fn := L.CheckFunction(1); fn.IsG {
			L.RaiseError("unable to dump given function")
		}
		L.Push(lua.LString("\x1bLuaQ\x00"))
		return 1
	}))
	origToString := g.RawGetString("tostring").(*lua.LFunction)
	g.RawSetString("tostring", L.NewFunction(func(L *lua.LState) int {
		if n, ok := L.Get(1).(lua.LNumber); ok {
			L.Push(lua.LString(luaNumberString(float64(n))))
			return 1
		}
		return origToString.GFunction(L)
	}))
}

// toBit reduces a Lua number to LuaBitOp's 32-bit integer.
func toBit(L *lua.LState, i int) int32 {
	n := float64(L.CheckNumber(i))
	return int32(uint32(int64(math.RoundToEven(math.Mod(n, 1<<32)))))
}

// newBitLib is LuaBitOp, the bit library Redis ships: 32-bit operations
// whose results are signed.
func newBitLib(L *lua.LState) *lua.LTable {
	ret := func(L *lua.LState, v int32) int {
		L.Push(lua.LNumber(v))
		return 1
	}
	fold := func(op func(a, b int32) int32) lua.LGFunction {
		return func(L *lua.LState) int {
			v := toBit(L, 1)
			for i := 2; i <= L.GetTop(); i++ {
				v = op(v, toBit(L, i))
			}
			return ret(L, v)
		}
	}
	t := L.NewTable()
	L.SetFuncs(t, map[string]lua.LGFunction{
		"tobit": func(L *lua.LState) int { return ret(L, toBit(L, 1)) },
		"bnot":  func(L *lua.LState) int { return ret(L, ^toBit(L, 1)) },
		"band":  fold(func(a, b int32) int32 { return a & b }),
		"bor":   fold(func(a, b int32) int32 { return a | b }),
		"bxor":  fold(func(a, b int32) int32 { return a ^ b }),
		"lshift": func(L *lua.LState) int {
			return ret(L, int32(uint32(toBit(L, 1))<<(uint32(toBit(L, 2))&31)))
		},
		"rshift": func(L *lua.LState) int {
			return ret(L, int32(uint32(toBit(L, 1))>>(uint32(toBit(L, 2))&31)))
		},
		"arshift": func(L *lua.LState) int { return ret(L, toBit(L, 1)>>(uint32(toBit(L, 2))&31)) },
		"rol": func(L *lua.LState) int {
			x, n := uint32(toBit(L, 1)), uint32(toBit(L, 2))&31
			return ret(L, int32(x<<n|x>>((32-n)&31)))
		},
		"ror": func(L *lua.LState) int {
			x, n := uint32(toBit(L, 1)), uint32(toBit(L, 2))&31
			return ret(L, int32(x>>n|x<<((32-n)&31)))
		},
		"bswap": func(L *lua.LState) int {
			x := uint32(toBit(L, 1))
			return ret(L, int32(x>>24|(x>>8)&0xff00|(x&0xff00)<<8|x<<24))
		},
		"tohex": func(L *lua.LState) int {
			x := uint32(toBit(L, 1))
			n := int32(8)
			if L.GetTop() >= 2 {
				n = toBit(L, 2)
			}
			digits := "0123456789abcdef"
			if n < 0 {
				n, digits = -n, "0123456789ABCDEF"
			}
			n = min(n, 8)
			buf := make([]byte, n)
			for i := n - 1; i >= 0; i-- {
				buf[i] = digits[x&15]
				x >>= 4
			}
			L.Push(lua.LString(buf))
			return 1
		},
	})
	return t
}

// cjsonNull is cjson.null: a value distinct from every other.
var cjsonNull = &lua.LUserData{}

// newCJSONLib is the subset of lua-cjson Redis scripts use: encode, decode
// and null, with lua-cjson's number format (%.14g), escaping of "/", and
// refusal of excessively sparse arrays. Object keys come out sorted
// (Redis's order is its Lua table's, which a client cannot rely on).
func newCJSONLib(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	cfg := &cjsonConfig{encodeMaxDepth: 1000, decodeMaxDepth: 1000}
	depthSetter := func(field *int) lua.LGFunction {
		return func(L *lua.LState) int {
			if L.GetTop() >= 1 && L.Get(1) != lua.LNil {
				n := L.CheckInt(1)
				if n <= 0 {
					L.ArgError(1, "expected integer between 1 and 2147483647")
				}
				*field = n
			}
			L.Push(lua.LNumber(*field))
			return 1
		}
	}
	L.SetFuncs(t, map[string]lua.LGFunction{
		"encode_max_depth": depthSetter(&cfg.encodeMaxDepth),
		"decode_max_depth": depthSetter(&cfg.decodeMaxDepth),
		"encode_invalid_numbers": func(L *lua.LState) int {
			if L.GetTop() >= 1 {
				cfg.encodeInvalid = L.ToBool(1)
			}
			L.Push(lua.LBool(cfg.encodeInvalid))
			return 1
		},
		// lua-cjson's buffer reuse: nothing to keep here.
		"encode_keep_buffer": func(L *lua.LState) int {
			L.Push(lua.LBool(L.GetTop() < 1 || L.ToBool(1)))
			return 1
		},
		"encode": func(L *lua.LState) int {
			var b bytes.Buffer
			if err := cjsonEncode(&b, L.CheckAny(1), 0, cfg); err != "" {
				L.RaiseError("%s", err)
			}
			L.Push(lua.LString(b.String()))
			return 1
		},
		"decode": func(L *lua.LState) int {
			s := L.CheckString(1)
			if d, at := jsonNesting(s, cfg.decodeMaxDepth); d > cfg.decodeMaxDepth {
				L.RaiseError("Found too many nested data structures (%d) at character %d", d, at)
			}
			dec := json.NewDecoder(strings.NewReader(s))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				L.RaiseError("Expected value but found invalid token at character 1")
			}
			if dec.More() {
				L.RaiseError("Expected the end but found invalid token at character %d", dec.InputOffset()+1)
			}
			L.Push(cjsonToLua(L, v))
			return 1
		},
	})
	t.RawSetString("null", cjsonNull)
	return t
}

func cjsonToLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case nil:
		return cjsonNull
	case bool:
		return lua.LBool(x)
	case json.Number:
		f, _ := strconv.ParseFloat(string(x), 64)
		return lua.LNumber(f)
	case string:
		return lua.LString(x)
	case []any:
		t := L.CreateTable(len(x), 0)
		for i, e := range x {
			t.RawSetInt(i+1, cjsonToLua(L, e))
		}
		return t
	case map[string]any:
		t := L.CreateTable(0, len(x))
		for k, e := range x {
			t.RawSetString(k, cjsonToLua(L, e))
		}
		return t
	}
	return lua.LNil
}

func cjsonEncode(b *bytes.Buffer, v lua.LValue, depth int, cfg *cjsonConfig) string {
	if depth > cfg.encodeMaxDepth {
		return fmt.Sprintf("Cannot serialise, excessive nesting (%d)", depth)
	}
	switch x := v.(type) {
	case *lua.LNilType:
		b.WriteString("null")
	case lua.LBool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case lua.LNumber:
		f := float64(x)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			if !cfg.encodeInvalid {
				return "Cannot serialise number: must not be NaN or Inf"
			}
			switch {
			case math.IsNaN(f):
				b.WriteString("nan")
			case f > 0:
				b.WriteString("inf")
			default:
				b.WriteString("-inf")
			}
			return ""
		}
		b.WriteString(luaNumberString(f))
	case lua.LString:
		cjsonString(b, string(x))
	case *lua.LUserData:
		if x != cjsonNull {
			return "Cannot serialise userdata: type not supported"
		}
		b.WriteString("null")
	case *lua.LTable:
		return cjsonTable(b, x, depth+1, cfg)
	default:
		return "Cannot serialise " + v.Type().String() + ": type not supported"
	}
	return ""
}

func cjsonTable(b *bytes.Buffer, t *lua.LTable, depth int, cfg *cjsonConfig) string {
	// An array has only positive integer keys and is not too sparse.
	maxIdx, items, isArray := 0, 0, true
	t.ForEach(func(k, _ lua.LValue) {
		n, ok := k.(lua.LNumber)
		if !ok || float64(n) != math.Floor(float64(n)) || n < 1 {
			isArray = false
			return
		}
		maxIdx = max(maxIdx, int(n))
		items++
	})
	if isArray && items > 0 {
		if maxIdx > items*2 && maxIdx > 10 {
			return "Cannot serialise table: excessively sparse array"
		}
		b.WriteByte('[')
		for i := 1; i <= maxIdx; i++ {
			if i > 1 {
				b.WriteByte(',')
			}
			if err := cjsonEncode(b, t.RawGetInt(i), depth, cfg); err != "" {
				return err
			}
		}
		b.WriteByte(']')
		return ""
	}
	type kv struct {
		k string
		v lua.LValue
	}
	var pairs []kv
	var bad string
	t.ForEach(func(k, v lua.LValue) {
		switch key := k.(type) {
		case lua.LString:
			pairs = append(pairs, kv{string(key), v})
		case lua.LNumber:
			pairs = append(pairs, kv{luaNumberString(float64(key)), v})
		default:
			bad = "Cannot serialise " + k.Type().String() + ": table key must be a number or string"
		}
	})
	if bad != "" {
		return bad
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i].k < pairs[j].k })
	b.WriteByte('{')
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte(',')
		}
		cjsonString(b, p.k)
		b.WriteByte(':')
		if err := cjsonEncode(b, p.v, depth, cfg); err != "" {
			return err
		}
	}
	b.WriteByte('}')
	return ""
}

// cjsonString writes s as lua-cjson does: bytes as they are (no UTF-8
// validation), control characters, '"', '\\', '/' and DEL escaped.
func cjsonString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '/':
			b.WriteString(`\/`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 || c == 0x7f {
				fmt.Fprintf(b, `\u%04x`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

// cjsonConfig is a Lua state's lua-cjson settings.
type cjsonConfig struct {
	encodeMaxDepth, decodeMaxDepth int
	encodeInvalid                  bool
}

// jsonNesting finds where a JSON text first nests deeper than max: the
// depth reached and its 1-based position (depth <= max when it never does).
func jsonNesting(s string, max int) (depth, at int) {
	inStr, esc := false, false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case inStr:
			if esc {
				esc = false
			} else if ch == '\\' {
				esc = true
			} else if ch == '"' {
				inStr = false
			}
		case ch == '"':
			inStr = true
		case ch == '{' || ch == '[':
			depth++
			if depth > max {
				return depth, i + 1
			}
		case ch == '}' || ch == ']':
			depth--
		}
	}
	return 0, 0
}

// redisRand48 is Redis's rand.c (the drand48 generator) behind
// math.random and math.randomseed in scripts: scripts seeded alike draw
// alike on both servers. Redis keeps one generator for the process and
// never reseeds it on its own.
type redisRand48 struct{ x uint64 }

func newRedisRand48() *redisRand48 { return &redisRand48{x: 0x1234ABCD330E} }

func (r *redisRand48) seed(v int32) { r.x = uint64(uint32(v))<<16 | 0x330E }

func (r *redisRand48) next() int32 {
	r.x = (0x5DEECE66D*r.x + 0xB) & (1<<48 - 1)
	return int32(r.x >> 17)
}

// luaCheckInt is luaL_checkint: a number or a numeric string, truncated
// to a C int.
func luaCheckInt(L *lua.LState, i int) int32 {
	return int32(int64(L.CheckNumber(i)))
}

// installRedisRandom replaces math.random and math.randomseed with
// Redis's (redis_math_random: lmathlib's with rand() replaced by
// redisLrand48()).
func installRedisRandom(L *lua.LState, r *redisRand48) {
	m := L.G.Global.RawGetString("math").(*lua.LTable)
	m.RawSetString("random", L.NewFunction(func(L *lua.LState) int {
		const max = math.MaxInt32
		f := float64(r.next()%max) / max
		switch L.GetTop() {
		case 0:
			L.Push(lua.LNumber(f))
		case 1:
			u := luaCheckInt(L, 1)
			if u < 1 {
				L.ArgError(1, "interval is empty")
			}
			L.Push(lua.LNumber(math.Floor(f*float64(u)) + 1))
		case 2:
			l, u := luaCheckInt(L, 1), luaCheckInt(L, 2)
			if l > u {
				L.ArgError(2, "interval is empty")
			}
			L.Push(lua.LNumber(math.Floor(f*float64(int64(u)-int64(l)+1)) + float64(l)))
		default:
			L.RaiseError("wrong number of arguments")
		}
		return 1
	}))
	m.RawSetString("randomseed", L.NewFunction(func(L *lua.LState) int {
		r.seed(luaCheckInt(L, 1))
		return 0
	}))
}

// installLuaFormat wraps string.format so that %q quotes as Lua 5.1's
// addquoted (\000 for NUL, a backslash before a newline, \r) and a number
// given to %s or %q is Lua 5.1's text of it (%.14g); every other
// conversion goes to gopher-lua's format one spec at a time.
func installLuaFormat(L *lua.LState) {
	str := L.G.Global.RawGetString("string").(*lua.LTable)
	orig := str.RawGetString("format").(*lua.LFunction)
	str.RawSetString("format", L.NewFunction(func(L *lua.LState) int {
		format := L.CheckString(1)
		var b strings.Builder
		arg := 1
		for i := 0; i < len(format); i++ {
			ch := format[i]
			if ch != '%' {
				b.WriteByte(ch)
				continue
			}
			if i+1 < len(format) && format[i+1] == '%' {
				b.WriteByte('%')
				i++
				continue
			}
			j := i + 1
			for j < len(format) && strings.IndexByte("-+ #0", format[j]) >= 0 {
				j++
			}
			for j < len(format) && (format[j] >= '0' && format[j] <= '9' || format[j] == '.') {
				j++
			}
			if j >= len(format) {
				L.RaiseError("invalid option '%%' to 'format'")
			}
			spec, conv := format[i:j+1], format[j]
			i = j
			arg++
			if arg > L.GetTop() {
				L.ArgError(arg, "no value")
			}
			v := L.Get(arg)
			if n, ok := v.(lua.LNumber); ok && (conv == 's' || conv == 'q') {
				v = lua.LString(luaNumberString(float64(n)))
			}
			if conv == 'q' {
				s, ok := v.(lua.LString)
				if !ok {
					L.ArgError(arg, "string expected, got "+v.Type().String())
				}
				b.WriteString(luaQuote(string(s)))
				continue
			}
			L.Push(orig)
			L.Push(lua.LString(spec))
			L.Push(v)
			L.Call(2, 1)
			b.WriteString(L.ToString(-1))
			L.Pop(1)
		}
		L.Push(lua.LString(b.String()))
		return 1
	}))
}

// luaQuote is Lua 5.1's %q (lstrlib.c addquoted).
func luaQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\', '\n':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\r':
			b.WriteString("\\r")
		case 0:
			b.WriteString("\\000")
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
