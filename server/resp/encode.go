package resp

import (
	"math"
	"strconv"
	"strings"
)

// Append-style encoders. Each appends one RESP element to b and returns it.

// AppendSimple appends a status reply: +s\r\n. CR and LF inside s are
// replaced by spaces, as Redis does, so that no text (a script's
// status_reply, say) can end the reply early and inject another.
func AppendSimple(b []byte, s string) []byte {
	return appendLine(b, '+', s)
}

// AppendError appends an error reply: -s\r\n. s carries its own prefix (ERR, WRONGTYPE, ...).
// CR and LF inside s are replaced by spaces, as Redis does.
func AppendError(b []byte, s string) []byte {
	return appendLine(b, '-', s)
}

func appendLine(b []byte, kind byte, s string) []byte {
	b = append(b, kind)
	if strings.IndexByte(s, '\r') < 0 && strings.IndexByte(s, '\n') < 0 {
		b = append(b, s...)
		return append(b, '\r', '\n')
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return append(b, '\r', '\n')
}

// AppendBigNumber appends a RESP3 big number, (n\r\n; CR and LF become
// spaces so that the text cannot end the reply early.
func AppendBigNumber(b []byte, n string) []byte { return appendLine(b, '(', n) }

// AppendInt appends an integer reply: :n\r\n.
func AppendInt(b []byte, n int64) []byte {
	if n >= 0 && n < int64(len(smallInts)) {
		return append(b, smallInts[n]...)
	}
	b = append(b, ':')
	b = strconv.AppendInt(b, n, 10)
	return append(b, '\r', '\n')
}

var smallInts = func() []string {
	s := make([]string, 64)
	for i := range s {
		s[i] = ":" + strconv.Itoa(i) + "\r\n"
	}
	return s
}()

func appendHeader(b []byte, c byte, n int64) []byte {
	b = append(b, c)
	b = strconv.AppendInt(b, n, 10)
	return append(b, '\r', '\n')
}

// AppendBulk appends a bulk string.
func AppendBulk(b []byte, v []byte) []byte {
	b = appendHeader(b, '$', int64(len(v)))
	b = append(b, v...)
	return append(b, '\r', '\n')
}

// AppendBulkString appends a bulk string.
func AppendBulkString(b []byte, v string) []byte {
	b = appendHeader(b, '$', int64(len(v)))
	b = append(b, v...)
	return append(b, '\r', '\n')
}

// AppendBulkInt appends n formatted as a bulk string.
func AppendBulkInt(b []byte, n int64) []byte {
	var tmp [24]byte
	return AppendBulk(b, strconv.AppendInt(tmp[:0], n, 10))
}

// AppendArray appends an array header of n elements.
func AppendArray(b []byte, n int) []byte { return appendHeader(b, '*', int64(n)) }

// AppendNullBulk appends the RESP2 null bulk string $-1.
func AppendNullBulk(b []byte) []byte { return append(b, "$-1\r\n"...) }

// AppendNullArray appends the RESP2 null array *-1.
func AppendNullArray(b []byte) []byte { return append(b, "*-1\r\n"...) }

// RESP3 types.

// AppendNull appends the RESP3 null _.
func AppendNull(b []byte) []byte { return append(b, "_\r\n"...) }

// AppendMap appends a RESP3 map header of n pairs.
func AppendMap(b []byte, n int) []byte { return appendHeader(b, '%', int64(n)) }

// AppendSet appends a RESP3 set header of n elements.
func AppendSet(b []byte, n int) []byte { return appendHeader(b, '~', int64(n)) }

// AppendPush appends a RESP3 push header of n elements.
func AppendPush(b []byte, n int) []byte { return appendHeader(b, '>', int64(n)) }

// AppendBool appends a RESP3 boolean.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "#t\r\n"...)
	}
	return append(b, "#f\r\n"...)
}

// AppendDouble appends a RESP3 double.
func AppendDouble(b []byte, f float64) []byte {
	b = append(b, ',')
	b = AppendFloat(b, f)
	return append(b, '\r', '\n')
}

// AppendVerbatim appends a RESP3 verbatim string with a 3-letter format.
func AppendVerbatim(b []byte, format, s string) []byte {
	b = appendHeader(b, '=', int64(len(s)+4))
	b = append(b, format...)
	b = append(b, ':')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// AppendFloat formats f the way Redis 7.0 prints doubles in replies (%.17g),
// with inf and -inf spelled out.
func AppendFloat(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	case math.IsNaN(f):
		return append(b, "nan"...)
	}
	return strconv.AppendFloat(b, f, 'g', 17, 64)
}
