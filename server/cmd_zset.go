// Sorted-set commands (Redis t_zset.c).

package server

import (
	"math"
	"strconv"
	"strings"

	"github.com/redline-dev/redline/server/store"
)

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
		scores[j] = f + 0 // -0 is stored as 0, as in Redis
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
			o.ZSetNote(m)
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
	o.ZSetNote(string(argv[3]))
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
	// strtod, as Redis's zslParseRange: an empty number is 0, leading
	// blanks are skipped, overflow gives ±inf.
	if len(b) == 0 {
		return 0, excl, true
	}
	t := strings.TrimLeft(string(b), " \t\n\v\f\r")
	s, ok := cFloat(t)
	if !ok || t == "" {
		return 0, excl, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if ne, isNum := err.(*strconv.NumError); err != nil && !(isNum && ne.Err == strconv.ErrRange) {
		return 0, excl, false
	}
	return f, excl, !math.IsNaN(f)
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
