// Sorted-set commands (Redis t_zset.c).

package server

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/redline-dev/redline/server/resp"
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
			o.ZSet.Add(m, nsc+0) // -0 is stored as 0 (the reply keeps -0), as in Redis
			o.ZSetNote(m)
		} else if nsc != cur {
			changed++
			o.ZSet.Add(m, nsc+0)
		}
	}
	if added+changed > 0 {
		if incr {
			c.notify(notifyZSet, "zincr", argv[1])
		} else {
			c.notify(notifyZSet, "zadd", argv[1])
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
	// Redis parses ZINCRBY as ZADD INCR: a flag word where the increment
	// goes leaves an odd number of score/member words.
	switch strings.ToUpper(string(argv[2])) {
	case "NX", "XX", "GT", "LT", "CH", "INCR":
		c.Error(ErrSyntax)
		return
	}
	by, ok := parseFloat(argv[2])
	if !ok {
		c.Error(ErrNotFloat)
		return
	}
	o, ok := c.getOrCreate(argv[1], store.KindZSet)
	if !ok {
		return
	}
	n := by // a new member's score is the increment itself, -0 included
	if cur, exists := o.ZSet.Score(string(argv[3])); exists {
		n = cur + by
	}
	if math.IsNaN(n) {
		c.dropIfEmpty(o)
		c.Error("ERR resulting score is not a number (NaN)")
		return
	}
	o.ZSet.Add(string(argv[3]), n+0) // stored as 0, replied as -0, as in Redis
	o.ZSetNote(string(argv[3]))
	c.s.dirty++
	c.notify(notifyZSet, "zincr", argv[1])
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
		if n > 0 {
			c.notify(notifyZSet, "zrem", argv[1])
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
// plus ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZRANGEBYLEX,
// ZREVRANGEBYLEX and ZRANGESTORE dst src min max [...].
func cmdZRange(c *Client, argv [][]byte) {
	const (
		byAuto = iota
		byRank
		byScore
		byLex
	)
	store_ := c.cmd.Name == "zrangestore"
	var dst []byte
	if store_ {
		dst, argv = argv[1], argv[1:]
	}
	by, rev, withScores, limit := byAuto, false, false, false
	var offset, count int64 = 0, -1
	switch c.cmd.Name {
	case "zrevrange":
		by, rev = byRank, true
	case "zrangebyscore":
		by = byScore
	case "zrevrangebyscore":
		by, rev = byScore, true
	case "zrangebylex":
		by = byLex
	case "zrevrangebylex":
		by, rev = byLex, true
	}
	auto := by == byAuto
	for i := 4; i < len(argv); i++ {
		switch {
		case !store_ && eq(argv[i], "withscores"):
			withScores = true
		case eq(argv[i], "limit") && i+2 < len(argv):
			o, ok1 := parseInt(argv[i+1])
			n, ok2 := parseInt(argv[i+2])
			if !ok1 || !ok2 {
				c.Error(ErrNotInt)
				return
			}
			offset, count, limit = o, n, true
			i += 2
		case auto && by == byAuto && eq(argv[i], "byscore"):
			by = byScore
		case auto && by == byAuto && eq(argv[i], "bylex"):
			by = byLex
		case auto && !rev && eq(argv[i], "rev"):
			rev = true
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	if by == byAuto {
		by = byRank
	}
	if limit && by == byRank {
		c.Error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		return
	}
	if withScores && by == byLex {
		c.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
		return
	}
	minArg, maxArg := argv[2], argv[3]
	if rev && by != byRank {
		minArg, maxArg = maxArg, minArg
	}
	var sr scoreRange
	var lr lexRange
	var start, stop int64
	switch by {
	case byRank:
		var ok1, ok2 bool
		start, ok1 = parseInt(argv[2])
		stop, ok2 = parseInt(argv[3])
		if !ok1 || !ok2 {
			c.Error(ErrNotInt)
			return
		}
	case byScore:
		var ok bool
		if sr, ok = parseScoreRange(minArg, maxArg); !ok {
			c.Error("ERR min or max is not a float")
			return
		}
	case byLex:
		var ok bool
		if lr, ok = parseLexRange(minArg, maxArg); !ok {
			c.Error("ERR min or max not valid string range item")
			return
		}
	}
	o, ok := c.lookup(argv[1], store.KindZSet)
	if !ok {
		return
	}
	var entries []store.ZEntry
	if o != nil {
		switch by {
		case byRank:
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
		case byScore:
			lo, hi := sr.span(o.ZSet)
			entries = spanEntries(o.ZSet, lo, hi, rev)
		case byLex:
			lo, hi := lr.span(o.ZSet)
			if rev {
				lo, hi = lr.spanRev(o.ZSet)
			}
			entries = spanEntries(o.ZSet, lo, hi, rev)
		}
		if by != byRank {
			if offset < 0 {
				entries = nil
			} else if offset >= int64(len(entries)) {
				entries = nil
			} else {
				entries = entries[offset:]
			}
			if count >= 0 && int64(len(entries)) > count {
				entries = entries[:count]
			}
		}
	}
	if store_ {
		res := store.NewObject(store.KindZSet)
		for _, e := range entries {
			res.ZSet.Add(e.Member, e.Score)
			res.ZSetNote(e.Member)
		}
		c.storeResult(dst, res)
		c.Int(int64(len(entries)))
		return
	}
	c.replyZEntries(entries, withScores)
}

// replyZEntries replies members, with their scores as Redis does: flat in
// RESP2, [member, score] pairs in RESP3.
func (c *Client) replyZEntries(entries []store.ZEntry, withScores bool) {
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

// spanEntries returns the entries of ranks [lo, hi), reversed if rev.
func spanEntries(z *store.ZSet, lo, hi int, rev bool) []store.ZEntry {
	if lo >= hi {
		return nil
	}
	out := make([]store.ZEntry, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, z.At(i))
	}
	if rev {
		slices.Reverse(out)
	}
	return out
}

// scoreRange is a parsed [min, max] score interval.
type scoreRange struct {
	min, max     float64
	minEx, maxEx bool
}

func parseScoreRange(minArg, maxArg []byte) (scoreRange, bool) {
	var r scoreRange
	var ok1, ok2 bool
	r.min, r.minEx, ok1 = scoreBound(minArg)
	r.max, r.maxEx, ok2 = scoreBound(maxArg)
	return r, ok1 && ok2
}

// span returns the ranks [lo, hi) of the members in the range.
func (r scoreRange) span(z *store.ZSet) (int, int) {
	lo := z.FirstAtLeast(r.min, r.minEx)
	hi := lo
	for hi < z.Len() {
		e := z.At(hi)
		if e.Score > r.max || (r.maxEx && e.Score == r.max) {
			break
		}
		hi++
	}
	return lo, hi
}

// lexRange is a parsed ZRANGEBYLEX interval: "-" and "+" are the
// infinities, "[x" inclusive, "(x" exclusive.
type lexRange struct {
	min, max       string
	minInf, maxInf int // -1: "-", +1: "+", 0: a string
	minEx, maxEx   bool
}

func parseLexItem(b []byte) (s string, inf int, ex bool, ok bool) {
	switch {
	case len(b) == 1 && b[0] == '-':
		return "", -1, false, true
	case len(b) == 1 && b[0] == '+':
		return "", 1, false, true
	case len(b) > 0 && b[0] == '(':
		return string(b[1:]), 0, true, true
	case len(b) > 0 && b[0] == '[':
		return string(b[1:]), 0, false, true
	}
	return "", 0, false, false
}

func parseLexRange(minArg, maxArg []byte) (lexRange, bool) {
	var r lexRange
	var ok1, ok2 bool
	r.min, r.minInf, r.minEx, ok1 = parseLexItem(minArg)
	r.max, r.maxInf, r.maxEx, ok2 = parseLexItem(maxArg)
	return r, ok1 && ok2
}

func (r lexRange) gteMin(m string) bool {
	switch r.minInf {
	case -1:
		return true
	case 1:
		return false
	}
	if r.minEx {
		return m > r.min
	}
	return m >= r.min
}

func (r lexRange) lteMax(m string) bool {
	switch r.maxInf {
	case 1:
		return true
	case -1:
		return false
	}
	if r.maxEx {
		return m < r.max
	}
	return m <= r.max
}

// empty reports what Redis's zzlIsInLexRange rules out before walking: an
// interval empty by its bounds, a last member below min or a first member
// above max. (Members are meant to share one score; with mixed scores
// these checks and walks are still Redis's answer for a listpack.)
func (r lexRange) empty(z *store.ZSet) bool {
	if z.Len() == 0 {
		return true
	}
	lo, hi := r.minInf, r.maxInf
	switch {
	case lo == 1 || hi == -1:
		return true
	case lo == 0 && hi == 0 && (r.min > r.max || (r.min == r.max && (r.minEx || r.maxEx))):
		return true
	}
	return !r.gteMin(z.At(z.Len()-1).Member) || !r.lteMax(z.At(0).Member)
}

// span returns the ranks [lo, hi) Redis's lex walk covers: from the first
// member >= min, while members are <= max.
func (r lexRange) span(z *store.ZSet) (int, int) {
	if r.empty(z) {
		return 0, 0
	}
	lo := 0
	for lo < z.Len() && !r.gteMin(z.At(lo).Member) {
		lo++
	}
	hi := lo
	for hi < z.Len() && r.lteMax(z.At(hi).Member) {
		hi++
	}
	return lo, hi
}

// spanRev is span for the reverse walk: from the last member <= max,
// backwards while members are >= min.
func (r lexRange) spanRev(z *store.ZSet) (int, int) {
	if r.empty(z) {
		return 0, 0
	}
	hi := z.Len() - 1
	for hi >= 0 && !r.lteMax(z.At(hi).Member) {
		hi--
	}
	lo := hi
	for lo >= 0 && r.gteMin(z.At(lo).Member) {
		lo--
	}
	return lo + 1, hi + 1
}

// ZLEXCOUNT key min max
func cmdZLexCount(c *Client, argv [][]byte) {
	r, ok := parseLexRange(argv[2], argv[3])
	if !ok {
		c.Error("ERR min or max not valid string range item")
		return
	}
	o, ok := c.lookup(argv[1], store.KindZSet)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	lo, hi := r.span(o.ZSet)
	c.Int(int64(max(hi-lo, 0)))
}

// ZREMRANGEBYRANK, ZREMRANGEBYSCORE, ZREMRANGEBYLEX key min max
func cmdZRemRange(c *Client, argv [][]byte) {
	var span func(z *store.ZSet) (int, int)
	switch c.cmd.Name {
	case "zremrangebyrank":
		start, ok1 := parseInt(argv[2])
		stop, ok2 := parseInt(argv[3])
		if !ok1 || !ok2 {
			c.Error(ErrNotInt)
			return
		}
		span = func(z *store.ZSet) (int, int) {
			s, e, ok := rangeIndexes(start, stop, int64(z.Len()))
			if !ok {
				return 0, 0
			}
			return int(s), int(e) + 1
		}
	case "zremrangebyscore":
		r, ok := parseScoreRange(argv[2], argv[3])
		if !ok {
			c.Error("ERR min or max is not a float")
			return
		}
		span = r.span
	default:
		r, ok := parseLexRange(argv[2], argv[3])
		if !ok {
			c.Error("ERR min or max not valid string range item")
			return
		}
		span = r.span
	}
	o, ok := c.lookup(argv[1], store.KindZSet)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	lo, hi := span(o.ZSet)
	var gone []string
	for i := lo; i < hi; i++ {
		gone = append(gone, o.ZSet.At(i).Member)
	}
	for _, m := range gone {
		o.ZSet.Remove(m)
	}
	if len(gone) > 0 {
		c.notify(notifyZSet, c.cmd.Name, argv[1]) // zremrangebyrank|score|lex
	}
	c.dropIfEmpty(o)
	c.s.dirty += int64(len(gone))
	c.Int(int64(len(gone)))
}

// ZMSCORE key member [member ...]
func cmdZMScore(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindZSet)
	if !ok {
		return
	}
	c.Array(len(argv) - 2)
	for _, m := range argv[2:] {
		if o == nil {
			c.Null()
			continue
		}
		if sc, ok := o.ZSet.Score(string(m)); ok {
			c.Double(sc)
		} else {
			c.Null()
		}
	}
}

// ZRANDMEMBER key [count [WITHSCORES]]
func cmdZRandMember(c *Client, argv [][]byte) {
	count, withCount, withScores, ok := randomCountArgs(c, argv, "withscores")
	if !ok {
		return
	}
	o, ok := c.lookup(argv[1], store.KindZSet)
	if !ok {
		return
	}
	if o == nil {
		if withCount {
			c.Array(0)
		} else {
			c.Null()
		}
		return
	}
	all := make([]store.ZEntry, o.ZSet.Len())
	for i := range all {
		all[i] = o.ZSet.At(i)
	}
	if !withCount {
		c.BulkString(all[rand.IntN(len(all))].Member)
		return
	}
	if count >= int64(len(all)) {
		slices.Reverse(all) // Redis's zset iterator walks from the tail
	}
	if !withScores {
		replyRandomSample(c, all, count, 1, func(e store.ZEntry) { c.BulkString(e.Member) })
		return
	}
	replyRandomPairs(c, all, count, func(e store.ZEntry) {
		c.BulkString(e.Member)
		c.Double(e.Score)
	})
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
		if len(popped) > 0 {
			c.notifyZPop(argv[1], c.cmd.Name == "zpopmin")
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

// zsetInputsAt looks up the inputs of ZUNION and the like: sorted sets, or
// plain sets whose members count with score 1; a missing key is nil.
func (c *Client) zsetInputsAt(keys [][]byte) ([]*store.Object, bool) {
	objs := make([]*store.Object, len(keys))
	for i, k := range keys {
		o := c.kv().Get(k)
		if o != nil && o.Kind != store.KindZSet && o.Kind != store.KindSet {
			c.Error(ErrWrongType)
			return nil, false
		}
		objs[i] = o
	}
	return objs, true
}

// zsetInput iterates one input of ZUNION and the like.
func zsetInputLen(o *store.Object) int {
	if o == nil {
		return 0
	}
	return o.Len()
}

func zsetInputScore(o *store.Object, m string) (float64, bool) {
	switch {
	case o == nil:
		return 0, false
	case o.Kind == store.KindSet:
		_, ok := o.Set[m]
		return 1, ok
	}
	return o.ZSet.Score(m)
}

func zsetInputEach(o *store.Object, fn func(m string, score float64)) {
	switch {
	case o == nil:
	case o.Kind == store.KindSet:
		for _, m := range o.SetMembers() {
			fn(m, 1)
		}
	default:
		for i := 0; i < o.ZSet.Len(); i++ {
			e := o.ZSet.At(i)
			fn(e.Member, e.Score)
		}
	}
}

// ZUNION/ZINTER/ZDIFF numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE
// SUM|MIN|MAX] [WITHSCORES], their STORE forms (destination first, no
// WITHSCORES) and ZINTERCARD numkeys key [key ...] [LIMIT limit].
func cmdZSetAlgebra(c *Client, argv [][]byte) {
	name := c.cmd.Name
	storeTo := strings.HasSuffix(name, "store")
	card := name == "zintercard"
	at := 1
	if storeTo {
		at = 2
	}
	n64, ok := parseInt(argv[at])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	if n64 < 1 {
		c.Error("ERR at least 1 input key is needed for '" + name + "' command")
		return
	}
	if n64 > int64(len(argv)-at-1) {
		c.Error(ErrSyntax)
		return
	}
	n := int(n64)
	if card {
		limit := int64(0)
		for i := 2 + n; i < len(argv); i++ {
			if eq(argv[i], "limit") && i+1 < len(argv) {
				l, ok := parseInt(argv[i+1])
				if !ok || l < 0 {
					c.Error("ERR LIMIT can't be negative")
					return
				}
				limit, i = l, i+1
				continue
			}
			c.Error(ErrSyntax)
			return
		}
		inputs, ok := c.zsetInputsAt(argv[2 : 2+n])
		if !ok {
			return
		}
		res := zsetCombine("zinter", inputs, nil, "sum")
		if limit > 0 && int64(res.Len()) > limit {
			c.Int(limit)
			return
		}
		c.Int(int64(res.Len()))
		return
	}
	inputs, ok := c.zsetInputsAt(argv[at+1 : at+1+n])
	if !ok {
		return
	}
	var weights []float64
	agg, withScores := "sum", false
	isDiff := strings.HasPrefix(name, "zdiff")
	for i := at + 1 + n; i < len(argv); i++ {
		switch {
		case !isDiff && eq(argv[i], "weights") && i+n < len(argv):
			weights = make([]float64, n)
			for j := range weights {
				w, ok := parseFloat(argv[i+1+j])
				if !ok {
					c.Error("ERR weight value is not a float")
					return
				}
				weights[j] = w
			}
			i += n
		case !isDiff && eq(argv[i], "aggregate") && i+1 < len(argv):
			switch {
			case eq(argv[i+1], "sum"), eq(argv[i+1], "min"), eq(argv[i+1], "max"):
				agg = strings.ToLower(string(argv[i+1]))
			default:
				c.Error(ErrSyntax)
				return
			}
			i++
		case !storeTo && eq(argv[i], "withscores"):
			withScores = true
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	res := zsetCombine(strings.TrimSuffix(name, "store"), inputs, weights, agg)
	if storeTo {
		c.storeResult(argv[1], res)
		c.Int(int64(res.Len()))
		return
	}
	entries := make([]store.ZEntry, res.ZSet.Len())
	for i := range entries {
		entries[i] = res.ZSet.At(i)
	}
	c.replyZEntries(entries, withScores)
}

// zsetCombine computes ZUNION, ZINTER or ZDIFF with Redis's arithmetic: a
// weighted or summed score that is NaN (inf - inf, 0 * inf) counts as 0.
func zsetCombine(op string, inputs []*store.Object, weights []float64, agg string) *store.Object {
	weight := func(i int) float64 {
		if weights == nil {
			return 1
		}
		return weights[i]
	}
	scaled := func(i int, score float64) float64 {
		v := weight(i) * score
		if math.IsNaN(v) {
			return 0
		}
		return v
	}
	combine := func(acc, v float64) float64 {
		switch agg {
		case "min":
			return min(acc, v)
		case "max":
			return max(acc, v)
		}
		if s := acc + v; !math.IsNaN(s) {
			return s
		}
		return 0
	}
	out := store.NewObject(store.KindZSet)
	add := func(m string, score float64) {
		out.ZSet.Add(m, score+0)
		out.ZSetNote(m)
	}
	switch op {
	case "zunion":
		acc := map[string]float64{}
		var order []string
		for i, in := range inputs {
			zsetInputEach(in, func(m string, score float64) {
				v := scaled(i, score)
				if cur, ok := acc[m]; ok {
					acc[m] = combine(cur, v)
				} else {
					acc[m] = v
					order = append(order, m)
				}
			})
		}
		for _, m := range order {
			add(m, acc[m])
		}
	case "zinter":
		smallest := 0
		for i, in := range inputs {
			if in == nil {
				return out
			}
			if zsetInputLen(in) < zsetInputLen(inputs[smallest]) {
				smallest = i
			}
		}
		zsetInputEach(inputs[smallest], func(m string, _ float64) {
			var acc float64
			for i, in := range inputs {
				score, ok := zsetInputScore(in, m)
				if !ok {
					return
				}
				if i == 0 {
					acc = scaled(i, score)
				} else {
					acc = combine(acc, scaled(i, score))
				}
			}
			add(m, acc)
		})
	default: // zdiff
		zsetInputEach(inputs[0], func(m string, score float64) {
			for _, in := range inputs[1:] {
				if _, ok := zsetInputScore(in, m); ok {
					return
				}
			}
			add(m, score)
		})
	}
	return out
}

// ZSCAN key cursor [MATCH pattern] [COUNT count]: scores as strings, in
// Redis's %.17g form.
func cmdZScan(c *Client, argv [][]byte) {
	containerScan(c, argv, store.KindZSet, func(o *store.Object) []string {
		out := make([]string, 0, 2*o.ZSet.Len())
		for i := 0; i < o.ZSet.Len(); i++ {
			e := o.ZSet.At(i)
			out = append(out, e.Member, string(resp.AppendFloat(nil, e.Score)))
		}
		return out
	})
}

// storeAndNumKeys are the keys of Z*STORE: the destination, then numkeys sources.
func storeAndNumKeys(argv [][]byte) []int { return append([]int{1}, numKeysAt(2)(argv)...) }

// zsetCommands are the sorted-set family's specs (the blocking ones are in cmd_blocking.go).
func zsetCommands() []*Command {
	return []*Command{
		newCmd("zadd", -4, wf, 1, 1, 1, cmdZAdd, "sorted-set"),
		newCmd("zincrby", 4, wf, 1, 1, 1, cmdZIncrBy, "sorted-set"),
		newCmd("zscore", 3, rof, 1, 1, 1, cmdZScore, "sorted-set"),
		newCmd("zcard", 2, rof, 1, 1, 1, cmdZCard, "sorted-set"),
		newCmd("zcount", 4, rof, 1, 1, 1, cmdZCount, "sorted-set"),
		newCmd("zrem", -3, wrf, 1, 1, 1, cmdZRem, "sorted-set"),
		newCmd("zpopmin", -2, wrf, 1, 1, 1, cmdZPop, "sorted-set"),
		newCmd("zpopmax", -2, wrf, 1, 1, 1, cmdZPop, "sorted-set"),
		newCmd("zrank", 3, rof, 1, 1, 1, cmdZRank, "sorted-set"),
		newCmd("zrevrank", 3, rof, 1, 1, 1, cmdZRank, "sorted-set"),
		newCmd("zrange", -4, ro, 1, 1, 1, cmdZRange, "sorted-set"),
		newCmd("zrevrange", -4, ro, 1, 1, 1, cmdZRange, "sorted-set"),
		newCmd("zrangebyscore", -4, ro, 1, 1, 1, cmdZRange, "sorted-set"),
		newCmd("zrevrangebyscore", -4, ro, 1, 1, 1, cmdZRange, "sorted-set"),
		newCmd("zrangebylex", -4, ro, 1, 1, 1, cmdZRange, "sorted-set"),
		newCmd("zrevrangebylex", -4, ro, 1, 1, 1, cmdZRange, "sorted-set"),
		newCmd("zrangestore", -5, w, 1, 2, 1, cmdZRange, "sorted-set"),
		newCmd("zlexcount", 4, rof, 1, 1, 1, cmdZLexCount, "sorted-set"),
		newCmd("zremrangebyrank", 4, wr, 1, 1, 1, cmdZRemRange, "sorted-set"),
		newCmd("zremrangebyscore", 4, wr, 1, 1, 1, cmdZRemRange, "sorted-set"),
		newCmd("zremrangebylex", 4, wr, 1, 1, 1, cmdZRemRange, "sorted-set"),
		newCmd("zmscore", -3, rof, 1, 1, 1, cmdZMScore, "sorted-set"),
		newCmd("zrandmember", -2, ro, 1, 1, 1, cmdZRandMember, "sorted-set"),
		newCmd("zunion", -3, ro|FlagMovableKeys, 0, 0, 0, cmdZSetAlgebra, "sorted-set").withKeys(numKeysAt(1)),
		newCmd("zunionstore", -4, w|FlagMovableKeys, 1, 1, 1, cmdZSetAlgebra, "sorted-set").withKeys(storeAndNumKeys),
		newCmd("zinter", -3, ro|FlagMovableKeys, 0, 0, 0, cmdZSetAlgebra, "sorted-set").withKeys(numKeysAt(1)),
		newCmd("zinterstore", -4, w|FlagMovableKeys, 1, 1, 1, cmdZSetAlgebra, "sorted-set").withKeys(storeAndNumKeys),
		newCmd("zdiff", -3, ro|FlagMovableKeys, 0, 0, 0, cmdZSetAlgebra, "sorted-set").withKeys(numKeysAt(1)),
		newCmd("zdiffstore", -4, w|FlagMovableKeys, 1, 1, 1, cmdZSetAlgebra, "sorted-set").withKeys(storeAndNumKeys),
		newCmd("zscan", -3, ro, 1, 1, 1, cmdZScan, "sorted-set"),
		newCmd("zintercard", -3, ro|FlagMovableKeys, 0, 0, 0, cmdZSetAlgebra, "sorted-set").withKeys(numKeysAt(1)),
	}
}
