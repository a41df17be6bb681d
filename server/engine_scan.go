// The SCAN family's cursor and option parsing, and the one container scan
// that HSCAN, SSCAN and ZSCAN share.

package server

import (
	"bytes"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"

	"github.com/redline-dev/redline/server/store"
)

// parseCursor parses a SCAN cursor as Redis's strtoul does: a sign is
// allowed and a negative number wraps; empty is 0.
func parseCursor(b []byte) (uint64, bool) {
	// Redis reads the cursor with strtoul on a NUL-terminated string:
	// nothing from a NUL byte on counts ("\x00" is cursor 0).
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg, b = b[0] == '-', b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	if len(b) == 0 {
		return 0, true
	}
	v, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseScanOptions parses [MATCH pattern] [COUNT count] [TYPE type] (TYPE
// only for SCAN), replying the error itself.
func parseScanOptions(c *Client, opts [][]byte, allowType bool) (count int, pat []byte, typ string, ok bool) {
	count = 10
	for i := 0; i < len(opts); i++ {
		switch {
		case eq(opts[i], "count") && i+1 < len(opts):
			n, ok := parseInt(opts[i+1])
			if !ok {
				c.Error(ErrNotInt)
				return 0, nil, "", false
			}
			if n < 1 {
				c.Error(ErrSyntax)
				return 0, nil, "", false
			}
			count = int(min(n, 1<<20))
			i++
		case eq(opts[i], "match") && i+1 < len(opts):
			pat = opts[i+1]
			i++
		case allowType && eq(opts[i], "type") && i+1 < len(opts):
			typ = strings.ToLower(string(opts[i+1]))
			i++
		default:
			c.Error(ErrSyntax)
			return 0, nil, "", false
		}
	}
	return count, pat, typ, true
}

// containerScan implements SSCAN, HSCAN and ZSCAN. Redis returns a
// compact (listpack, intset) value whole with cursor 0 whatever COUNT
// says; a larger one is paged here by position in reply order (Redis's
// cursor walks its hash table, which this server does not mimic). items
// lists the value's elements, pairs flattened; MATCH tests the first of
// each pair.
func containerScan(c *Client, argv [][]byte, kind store.Kind, items func(*store.Object) []string) {
	cur, ok := parseCursor(argv[2])
	if !ok {
		c.Error("ERR invalid cursor")
		return
	}
	o, ok := c.lookup(argv[1], kind)
	if !ok {
		return
	}
	if o == nil {
		c.Array(2)
		c.BulkString("0")
		c.Array(0)
		return
	}
	count, pat, _, ok := parseScanOptions(c, argv[3:], false)
	if !ok {
		return
	}
	all := items(o)
	width := 1
	if kind != store.KindSet {
		width = 2
	}
	from, to := 0, len(all)/width
	next := uint64(0)
	if o.Encoding() == "hashtable" || o.Encoding() == "skiplist" {
		all = scanOrder(all, width)
		from = sort.Search(to, func(i int) bool { return scanHash(all[i*width]) >= cur })
		if from+count < to {
			to = from + count
			next = scanHash(all[to*width])
		}
	}
	var out []string
	for i := from; i < to; i++ {
		if pat != nil && !GlobMatch(pat, []byte(all[i*width])) {
			continue
		}
		out = append(out, all[i*width:i*width+width]...)
	}
	c.Array(2)
	c.BulkString(strconv.FormatUint(next, 10))
	c.Array(len(out))
	for _, s := range out {
		c.BulkString(s)
	}
}

// scanHash is an element's place in a paged SSCAN, HSCAN or ZSCAN: the
// cursor is the hash of the next element to return, so elements removed
// between two calls move no other element and one present for the whole
// scan is returned, as Redis guarantees (never 0, the end cursor).
func scanHash(e string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(e))
	return h.Sum64()>>1 | 1
}

// scanOrder sorts the elements (groups of width) by scanHash.
func scanOrder(all []string, width int) []string {
	n := len(all) / width
	idx := make([]int, n)
	keys := make([]uint64, n)
	for i := range idx {
		idx[i] = i
		keys[i] = scanHash(all[i*width])
	}
	sort.Slice(idx, func(a, b int) bool { return keys[idx[a]] < keys[idx[b]] })
	out := make([]string, 0, len(all))
	for _, i := range idx {
		out = append(out, all[i*width:i*width+width]...)
	}
	return out
}
