package history

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// The one decoding of integer values in a history, shared by the
// workloads (reading back what they invoked) and the checkers.

// ParseInt reads a JSON integer; null and absent give ok=false, and so does
// anything that is not an integer within int64 (a float, a string, a number
// too large): the workloads write integers only, so such a reply is garbage
// and the caller flags it (the checkers' anomalies). There is no float fallback: it
// would collapse every integer beyond int64 into one value.
func ParseInt(raw json.RawMessage) (int64, bool) {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 || string(b) == "null" {
		return 0, false
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}

// ParseInts reads a JSON list of integers, each element under ParseInt's
// rules (a null element is garbage); null gives (nil, true) so that a missing key reads as an empty
// collection.
func ParseInts(raw json.RawMessage) ([]int64, bool) {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		return nil, false
	}
	if string(b) == "null" {
		return nil, true
	}
	if b[0] != '[' || b[len(b)-1] != ']' {
		return nil, false
	}
	inner := b[1 : len(b)-1]
	out := make([]int64, 0, bytes.Count(inner, []byte(","))+1)
	for len(inner) > 0 {
		i := bytes.IndexByte(inner, ',')
		var tok []byte
		if i < 0 {
			tok, inner = inner, nil
		} else {
			tok, inner = inner[:i], inner[i+1:]
		}
		tok = bytes.TrimSpace(tok)
		if len(tok) == 0 {
			if inner == nil && len(out) == 0 {
				break // "[]"
			}
			return nil, false
		}
		n, err := strconv.ParseInt(string(tok), 10, 64)
		if err != nil {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}
