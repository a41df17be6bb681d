// SORT and SORT_RO (Redis sort.c): sort a list, set or sorted set by its
// elements or by weights found through a BY pattern, numerically or as
// strings, fetch GET patterns for each element, and reply or STORE a list.

package server

import (
	"bytes"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/redline-dev/redline/server/acl"
	"github.com/redline-dev/redline/server/store"
)

// sortItem is one element to sort with its weight.
type sortItem struct {
	obj   []byte
	score float64
	cmp   []byte // ALPHA with BY: the weight string, nil when missing
}

// cString is b up to its first NUL byte: what Redis's C string functions
// (strchr, strstr, strcoll) see of an argument.
func cString(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// sortLookup reads the value a pattern names for element subst, as Redis's
// lookupKeyByPattern: "#" is the element itself; the first '*' is replaced
// by the element; "key->field" reads a hash field. nil when there is none.
func (c *Client) sortLookup(pattern, subst []byte) []byte {
	cs := cString(pattern)
	if len(cs) == 1 && cs[0] == '#' {
		return nonNil(subst)
	}
	star := bytes.IndexByte(cs, '*')
	if star < 0 {
		return nil
	}
	fieldLen := 0
	var field []byte
	if f := bytes.Index(cs[star+1:], []byte("->")); f >= 0 && star+1+f+2 < len(cs) {
		at := star + 1 + f
		fieldLen = len(pattern) - at - 2
		field = pattern[at+2:]
	}
	post := len(pattern) - (star + 1)
	if fieldLen > 0 {
		post -= fieldLen + 2
	}
	key := make([]byte, 0, star+len(subst)+post)
	key = append(append(append(key, pattern[:star]...), subst...), pattern[star+1:star+1+post]...)
	o := c.kv().Get(key)
	if o == nil {
		c.s.stats.keyspaceMisses++
		c.notifyMiss(key)
		return nil
	}
	c.s.stats.keyspaceHits++
	if field != nil {
		if o.Kind != store.KindHash {
			return nil
		}
		v, ok := o.Hash[string(field)]
		if !ok {
			return nil
		}
		return nonNil(v)
	}
	if o.Kind != store.KindString {
		return nil
	}
	return nonNil(o.Str)
}

// nonNil tells an empty value from a missing one.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// sortScore parses a weight as Redis's SORT does with strtod: leading
// spaces and an empty string are accepted, trailing bytes (up to a NUL),
// NaN and out-of-range values are not.
func sortScore(b []byte) (float64, bool) {
	s := string(cString(b))
	if s == "" {
		return 0, true
	}
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	if t == "" {
		return 0, false
	}
	g, ok := cFloat(t)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(g, 64)
	if err != nil || math.IsNaN(f) {
		return 0, false
	}
	if (f == 0 || math.Abs(f) < 0x1p-1022) && hasNonZeroMantissa(t) {
		return 0, false // underflow: strtod sets ERANGE
	}
	return f, true
}

// hasNonZeroMantissa reports whether a decimal or hex number has a non-zero
// digit before its exponent.
func hasNonZeroMantissa(t string) bool {
	t = strings.TrimLeft(t, "+-")
	hex := len(t) > 1 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')
	if hex {
		t = t[2:]
	}
	for i := 0; i < len(t); i++ {
		ch := t[i]
		if (!hex && (ch == 'e' || ch == 'E')) || (hex && (ch == 'p' || ch == 'P')) {
			break
		}
		if ch >= '1' && ch <= '9' || (hex && (ch >= 'a' && ch <= 'f' || ch >= 'A' && ch <= 'F')) {
			return true
		}
	}
	return false
}

// sortKeys are SORT's keys: the sorted key and the last STORE destination.
func sortKeys(argv [][]byte) []int {
	keys := []int{1}
	store := 0
	for i := 2; i < len(argv); i++ {
		switch {
		case eq(argv[i], "limit"):
			i += 2
		case eq(argv[i], "store") && i+1 < len(argv):
			store = i + 1
		case eq(argv[i], "get"), eq(argv[i], "by"):
			i++
		}
	}
	if store > 0 {
		keys = append(keys, store)
	}
	return keys
}

func cmdSort(c *Client, argv [][]byte)   { sortGeneric(c, argv, false) }
func cmdSortRO(c *Client, argv [][]byte) { sortGeneric(c, argv, true) }

// SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC]
// [ALPHA] [STORE destination]
func sortGeneric(c *Client, argv [][]byte, readonly bool) {
	desc, alpha, dontsort := false, false, false
	limitStart, limitCount := int64(0), int64(-1)
	var sortby, storekey []byte
	var gets [][]byte
	cluster := c.s.cfg.ClusterEnabled
	for j := 2; j < len(argv); j++ {
		left := len(argv) - j - 1
		switch a := argv[j]; {
		case eq(a, "asc"):
			desc = false
		case eq(a, "desc"):
			desc = true
		case eq(a, "alpha"):
			alpha = true
		case eq(a, "limit") && left >= 2:
			var ok bool
			if limitStart, ok = parseInt(argv[j+1]); !ok {
				c.Error(ErrNotInt)
				return
			}
			if limitCount, ok = parseInt(argv[j+2]); !ok {
				c.Error(ErrNotInt)
				return
			}
			j += 2
		case !readonly && eq(a, "store") && left >= 1:
			storekey = argv[j+1]
			j++
		case eq(a, "by") && left >= 1:
			sortby = argv[j+1]
			if bytes.IndexByte(cString(sortby), '*') < 0 {
				dontsort = true
			} else if cluster {
				c.Error("ERR BY option of SORT denied in Cluster mode.")
				return
			} else if !c.fullKeyAccess(argv, acl.PermRead) {
				c.Error("ERR BY option of SORT denied due to insufficient ACL permissions.")
				return
			}
			j++
		case eq(a, "get") && left >= 1:
			if cluster {
				c.Error("ERR GET option of SORT denied in Cluster mode.")
				return
			}
			if !c.fullKeyAccess(argv, acl.PermRead) {
				c.Error("ERR GET option of SORT denied due to insufficient ACL permissions.")
				return
			}
			gets = append(gets, argv[j+1])
			j++
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	o := c.kv().Get(argv[1])
	if o == nil {
		c.s.stats.keyspaceMisses++
		c.notifyMiss(argv[1])
	} else {
		c.s.stats.keyspaceHits++
		if o.Kind != store.KindList && o.Kind != store.KindSet && o.Kind != store.KindZSet {
			c.Error(ErrWrongType)
			return
		}
	}
	// A set has no order of its own: stored or scripted results are sorted
	// so that replicas and the AOF see the same thing.
	if dontsort && o != nil && o.Kind == store.KindSet && (storekey != nil || c.inScript) {
		dontsort, alpha, sortby = false, true, nil
	}
	if o != nil {
		o.ToSkiplist()
	}
	n := 0
	if o != nil {
		n = o.Len()
	}
	start := min(max(limitStart, 0), int64(n))
	count := min(max(limitCount, -1), int64(n))
	end := int64(n) - 1
	if count >= 0 {
		end = start + count - 1
	}
	if start >= int64(n) {
		start, end = int64(n)-1, int64(n)-2
	}
	if end >= int64(n) {
		end = int64(n) - 1
	}
	var items []sortItem
	switch {
	case o == nil:
	case o.Kind == store.KindList && dontsort:
		if end >= start {
			for i := start; i <= end; i++ {
				at := int(i)
				if desc {
					at = n - 1 - int(i)
				}
				items = append(items, sortItem{obj: o.List.At(at)})
			}
			end -= start
			start = 0
		}
	case o.Kind == store.KindZSet && dontsort:
		for i := start; i <= end; i++ {
			at := int(i)
			if desc {
				at = n - 1 - int(i)
			}
			items = append(items, sortItem{obj: []byte(o.ZSet.At(at).Member)})
		}
		end -= start
		start = 0
	case o.Kind == store.KindList:
		for i := 0; i < n; i++ {
			items = append(items, sortItem{obj: o.List.At(i)})
		}
	case o.Kind == store.KindSet:
		for _, m := range o.SetMembers() {
			items = append(items, sortItem{obj: []byte(m)})
		}
	default:
		for i := 0; i < n; i++ {
			items = append(items, sortItem{obj: []byte(o.ZSet.At(i).Member)})
		}
	}
	badScore := false
	if !dontsort {
		for i := range items {
			by := items[i].obj
			if sortby != nil {
				if by = c.sortLookup(sortby, items[i].obj); by == nil {
					continue
				}
			}
			if alpha {
				if sortby != nil {
					items[i].cmp = by
				}
			} else if f, ok := sortScore(by); ok {
				items[i].score = f
			} else {
				badScore = true
			}
		}
		stored := storekey != nil
		cmp := func(a, b *sortItem) int {
			var r int
			switch {
			case !alpha:
				switch {
				case a.score > b.score:
					r = 1
				case a.score < b.score:
					r = -1
				default:
					r = bytes.Compare(a.obj, b.obj)
				}
			case sortby != nil:
				switch {
				case a.cmp == nil || b.cmp == nil:
					if a.cmp == nil && b.cmp != nil {
						r = -1
					} else if a.cmp != nil {
						r = 1
					}
				case stored:
					r = bytes.Compare(a.cmp, b.cmp)
				default:
					r = bytes.Compare(cString(a.cmp), cString(b.cmp)) // strcoll in the C locale
				}
			case stored:
				r = bytes.Compare(a.obj, b.obj)
			default:
				r = bytes.Compare(cString(a.obj), cString(b.obj))
			}
			if desc {
				return -r
			}
			return r
		}
		// Redis's qsort is glibc's merge sort: stable.
		sort.SliceStable(items, func(i, j int) bool { return cmp(&items[i], &items[j]) < 0 })
	}
	if badScore {
		c.Error("ERR One or more scores can't be converted into double")
		return
	}
	rows := max(end-start+1, 0)
	outLen := rows
	if len(gets) > 0 {
		outLen *= int64(len(gets))
	}
	if storekey == nil {
		c.Array(int(outLen))
		for j := start; j <= end; j++ {
			it := items[j].obj
			if len(gets) == 0 {
				c.Bulk(it)
			}
			for _, g := range gets {
				if v := c.sortLookup(g, it); v != nil {
					c.Bulk(v)
				} else {
					c.Null()
				}
			}
		}
		return
	}
	res := store.NewObject(store.KindList)
	for j := start; j <= end; j++ {
		it := items[j].obj
		if len(gets) == 0 {
			res.List.PushBack(slices.Clone(it))
		}
		for _, g := range gets {
			res.List.PushBack(slices.Clone(c.sortLookup(g, it)))
		}
	}
	db := c.kv()
	if outLen > 0 {
		db.Delete(storekey)
		db.Add(storekey, res)
		c.s.dirty += outLen
		c.notify(notifyList, "sortstore", storekey)
	} else if db.Delete(storekey) {
		c.s.dirty++
		c.notify(notifyGeneric, "del", storekey)
	}
	c.Int(outLen)
}

// sortCommands are SORT's and SORT_RO's specs.
func sortCommands() []*Command {
	acl := []string{"@write", "@set", "@sortedset", "@list", "@slow", "@dangerous"}
	byGet := KeySpec{Notes: "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort",
		Flags: []string{"RO", "access"}, Find: KeyFind{Unknown: true}}
	key := KeySpec{Flags: []string{"RO", "access"}, Begin: KeyBegin{Index: 1}, Find: KeyFind{Step: 1}}
	return []*Command{
		newCmd("sort", -2, FlagWrite|FlagDenyOOM|FlagMovableKeys, 1, 1, 1, cmdSort, "generic").withKeys(sortKeys).withACL(acl...).
			withDocs("Sort the elements in a list, set or sorted set", "").
			withInfoSpecs(key, byGet,
				KeySpec{Notes: "For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array",
					Flags: []string{"OW", "update"}, Find: KeyFind{Unknown: true}}),
		newCmd("sort_ro", -2, FlagReadonly|FlagMovableKeys, 1, 1, 1, cmdSortRO, "generic").
			withKeys(func([][]byte) []int { return []int{1} }).withACL(append([]string{"@read"}, acl[1:]...)...).
			withDocs("Sort the elements in a list, set or sorted set. Read-only variant of SORT.", "7.0.0").
			withInfoSpecs(key, byGet),
	}
}
