package server

import (
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/redline-dev/redline/server/store"
)

// getOrCreate returns the object at key of kind k, creating it if missing.
func (c *Client) getOrCreate(key []byte, k store.Kind) (*store.Object, bool) {
	o, ok := c.lookup(key, k)
	if !ok {
		return nil, false
	}
	if o == nil {
		o = store.NewObject(k)
		c.kv().Add(key, o)
	}
	return o, true
}

// dropIfEmpty deletes a container that became empty.
func (c *Client) dropIfEmpty(o *store.Object) {
	if o.Len() == 0 {
		c.kv().Remove(o)
	}
}

// Hashes.

func cmdHSet(c *Client, argv [][]byte) {
	if len(argv)%2 != 0 {
		c.Error(ErrArity(c.cmd.Name))
		return
	}
	o, ok := c.getOrCreate(argv[1], store.KindHash)
	if !ok {
		return
	}
	var added int64
	for i := 2; i < len(argv); i += 2 {
		if _, had := o.Hash[string(argv[i])]; !had {
			added++
		}
		o.Hash[string(argv[i])] = copyBytes(argv[i+1])
	}
	c.s.dirty += int64(len(argv)-2) / 2
	if c.cmd.Name == "hmset" {
		c.OK()
	} else {
		c.Int(added)
	}
}

func cmdHSetNX(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindHash)
	if !ok {
		return
	}
	if o != nil {
		if _, had := o.Hash[string(argv[2])]; had {
			c.Int(0)
			return
		}
	}
	o, _ = c.getOrCreate(argv[1], store.KindHash)
	o.Hash[string(argv[2])] = copyBytes(argv[3])
	c.s.dirty++
	c.Int(1)
}

func cmdHGet(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindHash)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	v, had := o.Hash[string(argv[2])]
	if !had {
		c.Null()
		return
	}
	c.Bulk(v)
}

func cmdHMGet(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindHash)
	if !ok {
		return
	}
	c.Array(len(argv) - 2)
	for _, f := range argv[2:] {
		if o == nil {
			c.Null()
			continue
		}
		if v, had := o.Hash[string(f)]; had {
			c.Bulk(v)
		} else {
			c.Null()
		}
	}
}

func sortedHashFields(o *store.Object) []string {
	ks := make([]string, 0, len(o.Hash))
	for k := range o.Hash {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func cmdHGetAll(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindHash)
	if !ok {
		return
	}
	if o == nil {
		c.Map(0)
		return
	}
	c.Map(len(o.Hash))
	for _, k := range sortedHashFields(o) {
		c.BulkString(k)
		c.Bulk(o.Hash[k])
	}
}

func cmdHKeys(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindHash)
	if !ok {
		return
	}
	if o == nil {
		c.Array(0)
		return
	}
	ks := sortedHashFields(o)
	c.Array(len(ks))
	for _, k := range ks {
		c.BulkString(k)
	}
}

func cmdHVals(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindHash)
	if !ok {
		return
	}
	if o == nil {
		c.Array(0)
		return
	}
	ks := sortedHashFields(o)
	c.Array(len(ks))
	for _, k := range ks {
		c.Bulk(o.Hash[k])
	}
}

func cmdHDel(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindHash)
	if !ok {
		return
	}
	var n int64
	if o != nil {
		for _, f := range argv[2:] {
			if _, had := o.Hash[string(f)]; had {
				delete(o.Hash, string(f))
				n++
			}
		}
		c.dropIfEmpty(o)
	}
	c.s.dirty += n
	c.Int(n)
}

func cmdHLen(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindHash)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	c.Int(int64(len(o.Hash)))
}

func cmdHStrlen(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindHash)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	c.Int(int64(len(o.Hash[string(argv[2])])))
}

func cmdHExists(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindHash)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	if _, had := o.Hash[string(argv[2])]; had {
		c.Int(1)
	} else {
		c.Int(0)
	}
}

func cmdHIncrBy(c *Client, argv [][]byte) {
	by, ok := parseInt(argv[3])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	o, ok := c.lookup(argv[1], store.KindHash)
	if !ok {
		return
	}
	var cur int64
	if o != nil {
		if v, had := o.Hash[string(argv[2])]; had {
			cur, ok = parseInt(v)
			if !ok {
				c.Error("ERR hash value is not an integer")
				return
			}
		}
	}
	if (by < 0 && cur < 0 && by < math.MinInt64-cur) || (by > 0 && cur > 0 && by > math.MaxInt64-cur) {
		c.Error(ErrOverflow)
		return
	}
	cur += by
	o, _ = c.getOrCreate(argv[1], store.KindHash)
	o.Hash[string(argv[2])] = itob(cur)
	c.s.dirty++
	c.Int(cur)
}

func cmdHIncrByFloat(c *Client, argv [][]byte) {
	by, ok := parseLongDouble(argv[3])
	if !ok {
		c.Error(ErrNotFloat)
		return
	}
	o, ok := c.lookup(argv[1], store.KindHash)
	if !ok {
		return
	}
	cur := new(big.Float)
	if o != nil {
		if v, had := o.Hash[string(argv[2])]; had {
			cur, ok = parseLongDouble(v)
			if !ok {
				c.Error("ERR hash value is not a float")
				return
			}
		}
	}
	res, ok := addLongDouble(cur, by)
	if !ok {
		c.Error("ERR increment would produce NaN or Infinity")
		return
	}
	s := []byte(res)
	o, _ = c.getOrCreate(argv[1], store.KindHash)
	o.Hash[string(argv[2])] = s
	c.s.dirty++
	c.Propagate([]byte("HSET"), argv[1], argv[2], s)
	c.Bulk(s)
}

// Sets.

func cmdSAdd(c *Client, argv [][]byte) {
	o, ok := c.getOrCreate(argv[1], store.KindSet)
	if !ok {
		return
	}
	var n int64
	for _, m := range argv[2:] {
		if _, had := o.Set[string(m)]; !had {
			o.Set[string(m)] = struct{}{}
			n++
		}
	}
	c.s.dirty += n
	c.Int(n)
}

func cmdSRem(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindSet)
	if !ok {
		return
	}
	var n int64
	if o != nil {
		for _, m := range argv[2:] {
			if _, had := o.Set[string(m)]; had {
				delete(o.Set, string(m))
				n++
			}
		}
		c.dropIfEmpty(o)
	}
	c.s.dirty += n
	c.Int(n)
}

func cmdSMembers(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindSet)
	if !ok {
		return
	}
	if o == nil {
		c.SetHeader(0)
		return
	}
	ms := make([]string, 0, len(o.Set))
	for m := range o.Set {
		ms = append(ms, m)
	}
	sort.Strings(ms)
	c.SetHeader(len(ms))
	for _, m := range ms {
		c.BulkString(m)
	}
}

func cmdSIsMember(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindSet)
	if !ok {
		return
	}
	if o != nil {
		if _, had := o.Set[string(argv[2])]; had {
			c.Int(1)
			return
		}
	}
	c.Int(0)
}

func cmdSMIsMember(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindSet)
	if !ok {
		return
	}
	c.Array(len(argv) - 2)
	for _, m := range argv[2:] {
		had := false
		if o != nil {
			_, had = o.Set[string(m)]
		}
		if had {
			c.Int(1)
		} else {
			c.Int(0)
		}
	}
}

func cmdSCard(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindSet)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	c.Int(int64(len(o.Set)))
}

// Lists.

func pushGeneric(c *Client, argv [][]byte, front bool) {
	o, ok := c.getOrCreate(argv[1], store.KindList)
	if !ok {
		return
	}
	for _, v := range argv[2:] {
		if front {
			o.List.PushFront(copyBytes(v))
		} else {
			o.List.PushBack(copyBytes(v))
		}
	}
	c.s.dirty += int64(len(argv) - 2)
	c.Int(int64(o.List.Len()))
}

func cmdLPush(c *Client, argv [][]byte) { pushGeneric(c, argv, true) }
func cmdRPush(c *Client, argv [][]byte) { pushGeneric(c, argv, false) }

func popGeneric(c *Client, argv [][]byte, front bool) {
	if len(argv) > 3 {
		c.Error(ErrArity(c.cmd.Name))
		return
	}
	count := int64(-1)
	if len(argv) == 3 {
		n, ok := parseInt(argv[2])
		if !ok || n < 0 {
			c.Error(ErrNotIntRange)
			return
		}
		count = n
	}
	o, ok := c.lookup(argv[1], store.KindList)
	if !ok {
		return
	}
	if o == nil {
		if count >= 0 {
			c.NullArray()
		} else {
			c.Null()
		}
		return
	}
	pop := func() []byte {
		if front {
			return o.List.PopFront()
		}
		return o.List.PopBack()
	}
	if count < 0 {
		c.Bulk(pop())
		c.s.dirty++
	} else {
		n := min(int(count), o.List.Len())
		c.Array(n)
		for i := 0; i < n; i++ {
			c.Bulk(pop())
		}
		c.s.dirty += int64(n)
	}
	c.dropIfEmpty(o)
}

func cmdLPop(c *Client, argv [][]byte) { popGeneric(c, argv, true) }
func cmdRPop(c *Client, argv [][]byte) { popGeneric(c, argv, false) }

func cmdLLen(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindList)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	c.Int(int64(o.List.Len()))
}

func cmdLIndex(c *Client, argv [][]byte) {
	idx, ok := parseInt(argv[2])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	o, ok := c.lookup(argv[1], store.KindList)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	n := int64(o.List.Len())
	if idx < 0 {
		idx += n
	}
	if idx < 0 || idx >= n {
		c.Null()
		return
	}
	c.Bulk(o.List.At(int(idx)))
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

func cmdLRange(c *Client, argv [][]byte) {
	start, ok1 := parseInt(argv[2])
	stop, ok2 := parseInt(argv[3])
	if !ok1 || !ok2 {
		c.Error(ErrNotInt)
		return
	}
	o, ok := c.lookup(argv[1], store.KindList)
	if !ok {
		return
	}
	if o == nil {
		c.Array(0)
		return
	}
	s, e, ok := rangeIndexes(start, stop, int64(o.List.Len()))
	if !ok {
		c.Array(0)
		return
	}
	c.Array(int(e - s + 1))
	for i := s; i <= e; i++ {
		c.Bulk(o.List.At(int(i)))
	}
}

// Sorted sets.

func cmdZAdd(c *Client, argv [][]byte) {
	var nx, xx, gt, lt, ch, incr bool
	i := 2
	for ; i < len(argv); i++ {
		switch strings.ToUpper(string(argv[i])) {
		case "NX":
			nx = true
		case "XX":
			xx = true
		case "GT":
			gt = true
		case "LT":
			lt = true
		case "CH":
			ch = true
		case "INCR":
			incr = true
		default:
			goto scores
		}
	}
scores:
	rest := argv[i:]
	if len(rest) == 0 || len(rest)%2 != 0 {
		c.Error(ErrSyntax)
		return
	}
	if nx && xx {
		c.Error("ERR XX and NX options at the same time are not compatible")
		return
	}
	if (gt && nx) || (lt && nx) || (gt && lt) {
		c.Error("ERR GT, LT, and/or NX options at the same time are not compatible")
		return
	}
	if incr && len(rest) > 2 {
		c.Error("ERR INCR option supports a single increment-element pair")
		return
	}
	scores := make([]float64, len(rest)/2)
	for j := range scores {
		f, ok := parseFloat(rest[2*j])
		if !ok {
			c.Error(ErrNotFloat)
			return
		}
		scores[j] = f
	}
	o, ok := c.lookup(argv[1], store.KindZSet)
	if !ok {
		return
	}
	if o == nil {
		if xx {
			if incr {
				c.Null()
			} else {
				c.Int(0)
			}
			return
		}
		o = store.NewObject(store.KindZSet)
		c.kv().Add(argv[1], o)
	}
	var added, changed int64
	var result float64
	aborted := false
	for j, sc := range scores {
		m := string(rest[2*j+1])
		cur, exists := o.ZSet.Score(m)
		if (nx && exists) || (xx && !exists) {
			aborted = true
			continue
		}
		nsc := sc
		if incr && exists {
			nsc = cur + sc
			if math.IsNaN(nsc) {
				c.dropIfEmpty(o)
				c.Error("ERR resulting score is not a number (NaN)")
				return
			}
		}
		if exists && ((gt && nsc <= cur) || (lt && nsc >= cur)) {
			aborted = true
			continue
		}
		result = nsc
		if !exists {
			added++
			o.ZSet.Add(m, nsc)
		} else if nsc != cur {
			changed++
			o.ZSet.Add(m, nsc)
		}
	}
	c.dropIfEmpty(o)
	c.s.dirty += added + changed
	if incr {
		if aborted {
			c.Null()
		} else {
			c.Double(result)
		}
		return
	}
	if ch {
		c.Int(added + changed)
	} else {
		c.Int(added)
	}
}

func cmdZIncrBy(c *Client, argv [][]byte) {
	by, ok := parseFloat(argv[2])
	if !ok {
		c.Error(ErrNotFloat)
		return
	}
	o, ok := c.getOrCreate(argv[1], store.KindZSet)
	if !ok {
		return
	}
	cur, _ := o.ZSet.Score(string(argv[3]))
	n := cur + by
	if math.IsNaN(n) {
		c.dropIfEmpty(o)
		c.Error("ERR resulting score is not a number (NaN)")
		return
	}
	o.ZSet.Add(string(argv[3]), n)
	c.s.dirty++
	c.Double(n)
}

func cmdZScore(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindZSet)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	s, had := o.ZSet.Score(string(argv[2]))
	if !had {
		c.Null()
		return
	}
	c.Double(s)
}

func cmdZCard(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindZSet)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	c.Int(int64(o.ZSet.Len()))
}

func cmdZRem(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindZSet)
	if !ok {
		return
	}
	var n int64
	if o != nil {
		for _, m := range argv[2:] {
			if o.ZSet.Remove(string(m)) {
				n++
			}
		}
		c.dropIfEmpty(o)
	}
	c.s.dirty += n
	c.Int(n)
}

func cmdZRank(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindZSet)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	r, had := o.ZSet.Rank(string(argv[2]))
	if !had {
		c.Null()
		return
	}
	if c.cmd.Name == "zrevrank" {
		r = o.ZSet.Len() - 1 - r
	}
	c.Int(int64(r))
}

// scoreBound parses a ZRANGE BYSCORE bound: "(1.5", "-inf", "+inf", "3".
func scoreBound(b []byte) (float64, bool, bool) {
	excl := false
	if len(b) > 0 && b[0] == '(' {
		excl = true
		b = b[1:]
	}
	f, ok := parseFloat(b)
	return f, excl, ok
}

// ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]
// plus ZREVRANGE and ZRANGEBYSCORE.
func cmdZRange(c *Client, argv [][]byte) {
	byScore, rev, withScores := false, false, false
	limit := false
	var offset, count int64 = 0, -1
	switch c.cmd.Name {
	case "zrevrange":
		rev = true
	case "zrangebyscore":
		byScore = true
	case "zrevrangebyscore":
		byScore, rev = true, true
	}
	for i := 4; i < len(argv); i++ {
		switch {
		case eq(argv[i], "withscores"):
			withScores = true
		case eq(argv[i], "byscore") && c.cmd.Name == "zrange":
			byScore = true
		case eq(argv[i], "rev") && c.cmd.Name == "zrange":
			rev = true
		case eq(argv[i], "bylex") && c.cmd.Name == "zrange":
			c.Error("ERR BYLEX is not supported by this server")
			return
		case eq(argv[i], "limit") && i+2 < len(argv) && c.cmd.Name != "zrevrange":
			o, ok1 := parseInt(argv[i+1])
			n, ok2 := parseInt(argv[i+2])
			if !ok1 || !ok2 {
				c.Error(ErrNotInt)
				return
			}
			offset, count, limit = o, n, true
			i += 2
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	if limit && !byScore {
		c.Error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		return
	}
	var entries []store.ZEntry
	if !byScore {
		start, ok1 := parseInt(argv[2])
		stop, ok2 := parseInt(argv[3])
		if !ok1 || !ok2 {
			c.Error(ErrNotInt)
			return
		}
		o, ok := c.lookup(argv[1], store.KindZSet)
		if !ok {
			return
		}
		if o != nil {
			n := int64(o.ZSet.Len())
			if s, e, ok := rangeIndexes(start, stop, n); ok {
				for i := s; i <= e; i++ {
					idx := i
					if rev {
						idx = n - 1 - i
					}
					entries = append(entries, o.ZSet.At(int(idx)))
				}
			}
		}
	} else {
		minArg, maxArg := argv[2], argv[3]
		if rev {
			minArg, maxArg = maxArg, minArg
		}
		lo, loEx, ok1 := scoreBound(minArg)
		hi, hiEx, ok2 := scoreBound(maxArg)
		if !ok1 || !ok2 {
			c.Error("ERR min or max is not a float")
			return
		}
		o, ok := c.lookup(argv[1], store.KindZSet)
		if !ok {
			return
		}
		if o != nil {
			var all []store.ZEntry
			for i := o.ZSet.FirstAtLeast(lo, loEx); i < o.ZSet.Len(); i++ {
				e := o.ZSet.At(i)
				if e.Score > hi || (hiEx && e.Score == hi) {
					break
				}
				all = append(all, e)
			}
			if rev {
				for l, r := 0, len(all)-1; l < r; l, r = l+1, r-1 {
					all[l], all[r] = all[r], all[l]
				}
			}
			if offset < 0 {
				all = nil
			} else if offset > 0 {
				if offset >= int64(len(all)) {
					all = nil
				} else {
					all = all[offset:]
				}
			}
			if count >= 0 && int64(len(all)) > count {
				all = all[:count]
			}
			entries = all
		}
	}
	if withScores && c.proto == 3 {
		c.Array(len(entries))
		for _, e := range entries {
			c.Array(2)
			c.BulkString(e.Member)
			c.Double(e.Score)
		}
		return
	}
	if withScores {
		c.Array(2 * len(entries))
	} else {
		c.Array(len(entries))
	}
	for _, e := range entries {
		c.BulkString(e.Member)
		if withScores {
			c.Double(e.Score)
		}
	}
}

var _ = strconv.Itoa

func cmdSPop(c *Client, argv [][]byte) {
	if len(argv) > 3 {
		c.Error(ErrSyntax)
		return
	}
	count := int64(-1)
	if len(argv) == 3 {
		n, ok := parseInt(argv[2])
		if !ok || n < 0 {
			c.Error(ErrNotIntRange)
			return
		}
		count = n
	}
	o, ok := c.lookup(argv[1], store.KindSet)
	if !ok {
		return
	}
	if o == nil {
		if count >= 0 {
			c.SetHeader(0)
		} else {
			c.Null()
		}
		return
	}
	n := 1
	if count >= 0 {
		n = int(min(count, int64(len(o.Set))))
	}
	popped := make([][]byte, 0, n)
	for m := range o.Set { // map order is random
		if len(popped) == n {
			break
		}
		popped = append(popped, []byte(m))
		delete(o.Set, m)
	}
	c.dropIfEmpty(o)
	if count < 0 {
		c.Bulk(popped[0])
	} else {
		c.SetHeader(len(popped))
		for _, m := range popped {
			c.Bulk(m)
		}
	}
	if len(popped) > 0 {
		c.s.dirty += int64(len(popped))
		c.Propagate(append([][]byte{[]byte("SREM"), argv[1]}, popped...)...)
	} else {
		c.Propagate()
	}
}

func cmdZPop(c *Client, argv [][]byte) {
	if len(argv) > 3 {
		c.Error(ErrSyntax)
		return
	}
	count := int64(1)
	withCount := len(argv) == 3
	if withCount {
		n, ok := parseInt(argv[2])
		if !ok || n < 0 {
			c.Error(ErrNotIntRange)
			return
		}
		count = n
	}
	o, ok := c.lookup(argv[1], store.KindZSet)
	if !ok {
		return
	}
	var popped []store.ZEntry
	if o != nil {
		for int64(len(popped)) < count && o.ZSet.Len() > 0 {
			i := 0
			if c.cmd.Name == "zpopmax" {
				i = o.ZSet.Len() - 1
			}
			e := o.ZSet.At(i)
			o.ZSet.Remove(e.Member)
			popped = append(popped, e)
		}
		c.dropIfEmpty(o)
	}
	if withCount && c.proto == 3 {
		c.Array(len(popped))
		for _, e := range popped {
			c.Array(2)
			c.BulkString(e.Member)
			c.Double(e.Score)
		}
	} else {
		c.Array(2 * len(popped))
		for _, e := range popped {
			c.BulkString(e.Member)
			c.Double(e.Score)
		}
	}
	if len(popped) > 0 {
		args := [][]byte{[]byte("ZREM"), argv[1]}
		for _, e := range popped {
			args = append(args, []byte(e.Member))
		}
		c.s.dirty += int64(len(popped))
		c.Propagate(args...)
	}
}

func pushxGeneric(c *Client, argv [][]byte, front bool) {
	o, ok := c.lookup(argv[1], store.KindList)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	pushGeneric(c, argv, front)
}

func cmdLSet(c *Client, argv [][]byte) {
	idx, ok := parseInt(argv[2])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	o, ok := c.lookup(argv[1], store.KindList)
	if !ok {
		return
	}
	if o == nil {
		c.Error(ErrNoKey)
		return
	}
	n := int64(o.List.Len())
	if idx < 0 {
		idx += n
	}
	if idx < 0 || idx >= n {
		c.Error(ErrOutOfRange)
		return
	}
	o.List.Set(int(idx), copyBytes(argv[3]))
	c.s.dirty++
	c.OK()
}

func cmdLRem(c *Client, argv [][]byte) {
	count, ok := parseInt(argv[2])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	o, ok := c.lookup(argv[1], store.KindList)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	items := o.List.Slice()
	keep := make([]bool, len(items))
	for i := range keep {
		keep[i] = true
	}
	var removed int64
	if count >= 0 {
		for i := 0; i < len(items) && (count == 0 || removed < count); i++ {
			if string(items[i]) == string(argv[3]) {
				keep[i] = false
				removed++
			}
		}
	} else {
		for i := len(items) - 1; i >= 0 && removed < -count; i-- {
			if string(items[i]) == string(argv[3]) {
				keep[i] = false
				removed++
			}
		}
	}
	if removed > 0 {
		out := items[:0]
		for i, it := range items {
			if keep[i] {
				out = append(out, it)
			}
		}
		o.List.Reset(out)
		c.dropIfEmpty(o)
		c.s.dirty += removed
	}
	c.Int(removed)
}

func cmdLTrim(c *Client, argv [][]byte) {
	start, ok1 := parseInt(argv[2])
	stop, ok2 := parseInt(argv[3])
	if !ok1 || !ok2 {
		c.Error(ErrNotInt)
		return
	}
	o, ok := c.lookup(argv[1], store.KindList)
	if !ok {
		return
	}
	if o == nil {
		c.OK()
		return
	}
	n := int64(o.List.Len())
	s, e, ok := rangeIndexes(start, stop, n)
	items := o.List.Slice()
	if !ok {
		items = nil
	} else {
		items = items[s : e+1]
	}
	if int64(len(items)) != n {
		o.List.Reset(items)
		c.dropIfEmpty(o)
		c.s.dirty += n - int64(len(items))
	}
	c.OK()
}

func cmdZCount(c *Client, argv [][]byte) {
	lo, loEx, ok1 := scoreBound(argv[2])
	hi, hiEx, ok2 := scoreBound(argv[3])
	if !ok1 || !ok2 {
		c.Error("ERR min or max is not a float")
		return
	}
	o, ok := c.lookup(argv[1], store.KindZSet)
	if !ok {
		return
	}
	var n int64
	if o != nil {
		for i := o.ZSet.FirstAtLeast(lo, loEx); i < o.ZSet.Len(); i++ {
			e := o.ZSet.At(i)
			if e.Score > hi || (hiEx && e.Score == hi) {
				break
			}
			n++
		}
	}
	c.Int(n)
}

func cmdTouch(c *Client, argv [][]byte) {
	var n int64
	for _, k := range argv[1:] {
		if c.kv().Get(k) != nil {
			n++
		}
	}
	c.Int(n)
}
