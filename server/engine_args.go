// Argument parsing shared by the command families: integers and floats as
// Redis's string2ll/strtod read them, case-insensitive tokens, numkeys
// positions, the COUNT and range forms more than one family takes.

package server

import (
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redline-dev/redline/server/resp"
	"github.com/redline-dev/redline/server/store"
)

func parseInt(b []byte) (int64, bool) { return resp.ParseInt(b) }

// parseFloat parses like Redis's getDoubleFromObject (strtod): no leading
// or trailing spaces, no NaN, no overflow; hex floats allowed.
func parseFloat(b []byte) (float64, bool) {
	if len(b) == 0 || len(b) > 5000 || b[0] == ' ' || b[len(b)-1] == ' ' {
		return 0, false
	}
	s, ok := cFloat(string(b))
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, !math.IsInf(f, 0) // underflow to 0 is fine
		}
		return 0, false
	}
	return f, true
}

// cFloat rewrites a number in C's strtod syntax into the syntax Go's float
// parsers take (a hex mantissa needs no exponent in C; "infinity"), and
// refuses what strtod refuses but Go accepts (digit separators, 0b, 0o).
func cFloat(s string) (string, bool) {
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 || strings.IndexByte(s, '_') >= 0 {
		return "", false
	}
	if len(body) > 1 && body[0] == '0' {
		switch body[1] {
		case 'b', 'B', 'o', 'O':
			return "", false
		case 'x', 'X':
			if strings.IndexAny(body, "pP") < 0 {
				return s + "p0", true
			}
		}
	}
	if strings.EqualFold(body, "infinity") {
		return s[:len(s)-len(body)] + "inf", true
	}
	return s, true
}

func eq(a []byte, s string) bool { return strings.EqualFold(string(a), s) }

func copyBytes(b []byte) []byte { return append(make([]byte, 0, len(b)), b...) }

// numKeysAt returns the key positions of a command whose numkeys argument
// is at index at and whose keys follow it.
func numKeysAt(at int) func(argv [][]byte) []int {
	return func(argv [][]byte) []int {
		if len(argv) <= at {
			return nil
		}
		n, ok := parseInt(argv[at])
		if !ok || n <= 0 || n > int64(len(argv)-at-1) {
			return nil
		}
		out := make([]int, n)
		for i := range out {
			out[i] = at + 1 + i
		}
		return out
	}
}

// randomCountArgs parses the [count [WITHVALUES|WITHSCORES]] tail of
// HRANDFIELD and ZRANDMEMBER (with = the option's name) with Redis's checks.
func randomCountArgs(c *Client, argv [][]byte, with string) (count int64, withCount, withPairs, ok bool) {
	if len(argv) > 4 || (len(argv) == 4 && !eq(argv[3], with)) {
		c.Error(ErrSyntax)
		return 0, false, false, false
	}
	withCount, withPairs = len(argv) >= 3, len(argv) == 4
	if withCount {
		n, ok := parseInt(argv[2])
		if !ok {
			c.Error(ErrNotInt)
			return 0, false, false, false
		}
		if n == math.MinInt64 {
			c.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
			return 0, false, false, false
		}
		if withPairs && (n < -math.MaxInt64/2 || n > math.MaxInt64/2) {
			c.Error("ERR value is out of range")
			return 0, false, false, false
		}
		count = n
	}
	return count, withCount, withPairs, true
}

// rangeIndexes clamps Redis start/stop indexes to [0,n); ok=false if empty.
func rangeIndexes(start, stop, n int64) (int64, int64, bool) {
	if start < 0 {
		start += n
	}
	if stop < 0 {
		stop += n
	}
	if start < 0 {
		start = 0
	}
	if start > stop || start >= n {
		return 0, 0, false
	}
	if stop >= n {
		stop = n - 1
	}
	return start, stop, true
}

func parseSide(b []byte) (left, ok bool) {
	switch {
	case eq(b, "left"):
		return true, true
	case eq(b, "right"):
		return false, true
	}
	return false, false
}

// waitArgs parses WAIT numreplicas timeout, answering the error itself.
func waitArgs(c *Client, argv [][]byte) (want, timeoutMs int64, ok bool) {
	want, ok = parseInt(argv[1])
	if !ok {
		c.Error(ErrNotInt)
		return 0, 0, false
	}
	timeoutMs, ok = parseInt(argv[2])
	if !ok {
		c.Error("ERR timeout is not an integer or out of range")
		return 0, 0, false
	}
	if timeoutMs < 0 {
		c.Error("ERR timeout is negative")
		return 0, 0, false
	}
	return want, timeoutMs, true
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

func randomHex(n int) string {
	const hexd = "0123456789abcdef"
	b := make([]byte, n)
	f, err := os.Open("/dev/urandom")
	if err == nil {
		io.ReadFull(f, b)
		f.Close()
	} else {
		x := uint64(time.Now().UnixNano())
		for i := range b {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			b[i] = byte(x)
		}
	}
	for i := range b {
		b[i] = hexd[b[i]&15]
	}
	return string(b)
}

func streamIDBytes(id store.StreamID) []byte { return id.Append(nil) }
