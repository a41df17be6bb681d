package history

import (
	"encoding/json"
	"math"
)

// lineDecoder decodes the flat entries the recorder writes without
// encoding/json's reflection, and shares the strings that repeat across a
// history (op names, keys, node addresses, error texts): a long history
// then costs its Op structs plus little more. Anything it does not
// recognise exactly (escapes, non-ASCII text, nested nemesis fields,
// unknown or differently-cased keys, unusual numbers) goes to
// encoding/json, so the result is always what json.Unmarshal gives.
type lineDecoder struct {
	strs map[string]string
	errs map[string]*Ext // an Ext of an error alone, shared (an Ext is never written through)
	slab []byte          // backing store of raw values
}

func newLineDecoder() *lineDecoder {
	return &lineDecoder{strs: make(map[string]string), errs: make(map[string]*Ext)}
}

// errExt returns the shared Ext that holds the error s alone: a history's
// errors are few texts over many entries.
func (d *lineDecoder) errExt(s string) *Ext {
	e := d.errs[s]
	if e == nil {
		e = &Ext{Error: s}
		d.errs[s] = e
	}
	return e
}

// decode fills op from one line; false means "use encoding/json".
func (d *lineDecoder) decode(b []byte, op *Op) bool {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return false // no type: encoding/json names the error
	}
	for {
		key, j, ok := plainString(b, i)
		if !ok {
			return false
		}
		i = skipWS(b, j)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipWS(b, i+1)
		switch string(key) {
		case "index":
			op.Index, i, ok = integer(b, i)
		case "time":
			op.Time, i, ok = integer(b, i)
		case "redirects":
			var n int64
			n, i, ok = integer(b, i)
			op.SetRedirects(int(n))
		case "attempts", "resent":
			// Rare (a client library's own retries): the setter keeps
			// the other of the pair.
			var n int64
			n, i, ok = integer(b, i)
			if string(key) == "attempts" {
				op.SetAttempts(int(n), op.ResentCount())
			} else {
				op.SetAttempts(op.AttemptCount(), int(n))
			}
		case "process":
			if i < len(b) && b[i] == '"' {
				var s []byte
				s, i, ok = plainString(b, i)
				ok = ok && string(s) == "nemesis"
				op.Process = Nemesis
			} else {
				var n int64
				n, i, ok = integer(b, i)
				ok = ok && n >= 0 && n <= math.MaxInt32
				op.Process = Process(n)
			}
		case "type":
			var s []byte
			s, i, ok = plainString(b, i)
			if ok {
				op.Type, ok = ParseType(string(s)) // not a type: encoding/json names it
			}
		case "f":
			op.F, i, ok = d.str(b, i)
		case "key":
			op.Key, i, ok = d.str(b, i)
		case "node":
			op.Node, i, ok = d.str(b, i)
		case "error":
			var s string
			s, i, ok = d.str(b, i)
			if ok && op.Ext == nil && s != "" {
				op.Ext = d.errExt(s)
			} else {
				op.SetError(s)
			}
		case "value":
			var end int
			end, ok = valueEnd(b, i)
			if ok {
				raw := b[i:end]
				ok = json.Valid(raw)
				op.Value = d.keep(raw)
				i = end
			}
		case "wait":
			var w Wait
			i, ok = waitObject(b, i, &w)
			if ok {
				op.SetWait(&w)
			}
		default:
			return false // nodes, detail, or a field this decoder does not know
		}
		if !ok {
			return false
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			// An entry without a type: encoding/json names the error.
			return skipWS(b, i+1) == len(b) && op.Type != 0
		default:
			return false
		}
	}
}

// waitObject reads {"want":N,"acked":M} (either order, either left out,
// as encoding/json would); anything else (null, other keys, other cases)
// is declined.
func waitObject(b []byte, i int, w *Wait) (int, bool) {
	if i >= len(b) || b[i] != '{' {
		return i, false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		key, j, ok := plainString(b, i)
		if !ok {
			return i, false
		}
		i = skipWS(b, j)
		if i >= len(b) || b[i] != ':' {
			return i, false
		}
		i = skipWS(b, i+1)
		var n int64
		n, i, ok = integer(b, i)
		if !ok {
			return i, false
		}
		switch string(key) {
		case "want":
			w.Want = int(n)
		case "acked":
			w.Acked = int(n)
		default:
			return i, false
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// str reads a plain string and returns the shared copy of it.
func (d *lineDecoder) str(b []byte, i int) (string, int, bool) {
	s, j, ok := plainString(b, i)
	if !ok {
		return "", i, false
	}
	if v, found := d.strs[string(s)]; found {
		return v, j, true
	}
	v := string(s)
	d.strs[v] = v
	return v, j, true
}

// keep copies a raw value into the slab (one allocation per 64 KB rather
// than one per op). The result's capacity is its length, so an append by
// a user never writes into a neighbour.
func (d *lineDecoder) keep(raw []byte) json.RawMessage {
	if len(raw) > 4096 {
		return append(json.RawMessage(nil), raw...)
	}
	if cap(d.slab)-len(d.slab) < len(raw) {
		d.slab = make([]byte, 0, 64<<10)
	}
	n := len(d.slab)
	d.slab = append(d.slab, raw...)
	return json.RawMessage(d.slab[n:len(d.slab):len(d.slab)])
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// plainString reads a JSON string of printable ASCII without escapes (the
// bytes between the quotes) and returns the index after the closing quote.
func plainString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, i, false
	}
	for j := i + 1; j < len(b); j++ {
		c := b[j]
		switch {
		case c == '"':
			return b[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, i, false
		}
	}
	return nil, i, false
}

// integer reads a JSON integer as encoding/json would into an int64.
func integer(b []byte, i int) (int64, int, bool) {
	j := i
	neg := j < len(b) && b[j] == '-'
	if neg {
		j++
	}
	start := j
	var n int64
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		if j-start >= 18 {
			return 0, i, false // may overflow: let encoding/json decide
		}
		n = n*10 + int64(b[j]-'0')
		j++
	}
	if j == start || (b[start] == '0' && j-start > 1) {
		return 0, i, false
	}
	if j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E') {
		return 0, i, false
	}
	if neg {
		n = -n
	}
	return n, j, true
}

// valueEnd finds the end of the JSON value starting at i (validated by
// the caller).
func valueEnd(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1, true
			}
		}
		return i, false
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			case '"':
				end, ok := valueEnd(b, j)
				if !ok {
					return i, false
				}
				j = end - 1
			}
		}
		return i, false
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ' ' && b[j] != '\t' && b[j] != '\r' && b[j] != '\n' {
		j++
	}
	return j, j > i
}
