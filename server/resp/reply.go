package resp

import (
	"bytes"
	"strconv"
)

// Kind is the type of a decoded reply.
type Kind byte

// Reply kinds, named after their RESP type byte.
const (
	KindSimple Kind = '+'
	KindError  Kind = '-'
	KindInt    Kind = ':'
	KindBulk   Kind = '$'
	KindArray  Kind = '*'
	KindNull   Kind = '_'
	KindDouble Kind = ','
	KindBool   Kind = '#'
	KindMap    Kind = '%'
	KindSet    Kind = '~'
	KindVerb   Kind = '='
	KindBigNum Kind = '('
	KindPush   Kind = '>'
)

// Value is a decoded reply. Null bulk/array in RESP2 decode as KindNull.
type Value struct {
	Kind  Kind
	Str   []byte // simple, error, bulk, verbatim (without the format prefix), double and bignum text
	Int   int64  // integer, bool (0/1)
	Elems []Value
	// Format is a verbatim string's format ("txt"), which comes as
	// KindBulk; empty for a plain bulk string.
	Format string
}

// ReadReply decodes one reply from buf. n == 0 with a nil error means
// incomplete. It is used for Lua's redis.call and by tests.
func ReadReply(buf []byte) (v Value, n int, err error) {
	return readReply(buf, 0)
}

func readReply(buf []byte, depth int) (Value, int, error) {
	if len(buf) == 0 {
		return Value{}, 0, nil
	}
	if depth > 1000 {
		return Value{}, 0, &ProtocolError{"reply nesting too deep"}
	}
	nl := bytes.Index(buf, []byte("\r\n"))
	if nl < 0 {
		return Value{}, 0, nil
	}
	line := buf[1:nl]
	pos := nl + 2
	k := Kind(buf[0])
	switch k {
	case KindSimple, KindError, KindDouble, KindBigNum:
		return Value{Kind: k, Str: line}, pos, nil
	case KindNull:
		return Value{Kind: KindNull}, pos, nil
	case KindBool:
		v := Value{Kind: KindBool}
		if len(line) == 1 && line[0] == 't' {
			v.Int = 1
		}
		return v, pos, nil
	case KindInt:
		i, err := strconv.ParseInt(string(line), 10, 64)
		if err != nil {
			return Value{}, 0, &ProtocolError{"bad integer reply"}
		}
		return Value{Kind: KindInt, Int: i}, pos, nil
	case KindBulk, KindVerb:
		l, err := strconv.Atoi(string(line))
		if err != nil {
			return Value{}, 0, &ProtocolError{"bad bulk length"}
		}
		if l < 0 {
			return Value{Kind: KindNull}, pos, nil
		}
		if pos+l+2 > len(buf) {
			return Value{}, 0, nil
		}
		s := buf[pos : pos+l]
		format := ""
		if k == KindVerb && len(s) >= 4 {
			format, s = string(s[:3]), s[4:]
		}
		return Value{Kind: KindBulk, Str: s, Format: format}, pos + l + 2, nil
	case '|':
		// An attribute map comes before the reply it annotates; a reader
		// that does not expose attributes (Lua's, as Redis's) skips it.
		cnt, err := strconv.Atoi(string(line))
		if err != nil || cnt < 0 {
			return Value{}, 0, &ProtocolError{"bad attribute length"}
		}
		for i := 0; i < 2*cnt; i++ {
			_, m, err := readReply(buf[pos:], depth+1)
			if err != nil || m == 0 {
				return Value{}, 0, err
			}
			pos += m
		}
		v, m, err := readReply(buf[pos:], depth+1)
		if err != nil || m == 0 {
			return Value{}, 0, err
		}
		return v, pos + m, nil
	case KindArray, KindSet, KindPush, KindMap:
		cnt, err := strconv.Atoi(string(line))
		if err != nil {
			return Value{}, 0, &ProtocolError{"bad array length"}
		}
		if cnt < 0 {
			return Value{Kind: KindNull}, pos, nil
		}
		if k == KindMap {
			cnt *= 2
		}
		v := Value{Kind: k, Elems: make([]Value, 0, min(cnt, 1024))}
		for i := 0; i < cnt; i++ {
			e, m, err := readReply(buf[pos:], depth+1)
			if err != nil || m == 0 {
				return Value{}, 0, err
			}
			v.Elems = append(v.Elems, e)
			pos += m
		}
		return v, pos, nil
	}
	return Value{}, 0, &ProtocolError{"unknown reply type " + strconv.Quote(string(buf[:1]))}
}
