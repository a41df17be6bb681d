// String commands (Redis t_string.c).

package server

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/redline-dev/redline/server/store"
)

func cmdGet(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindString)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	c.Bulk(o.Str)
}

const (
	setNX = 1 << iota
	setXX
	setGet
	setKeepTTL
	setEX
	setPX
	setEXAT
	setPXAT
)

func cmdSet(c *Client, argv [][]byte) {
	if len(argv) == 3 {
		c.setString(argv[1], argv[2], false)
		c.s.dirty++
		c.notify(notifyString, "set", argv[1])
		c.OK()
		return
	}
	flags := 0
	var exp int64
	var expArg []byte
	for i := 3; i < len(argv); i++ {
		a := strings.ToUpper(string(argv[i]))
		next := i+1 < len(argv)
		switch {
		case a == "NX" && flags&setXX == 0:
			flags |= setNX
		case a == "XX" && flags&setNX == 0:
			flags |= setXX
		case a == "GET":
			flags |= setGet
		case a == "KEEPTTL" && flags&(setEX|setPX|setEXAT|setPXAT) == 0:
			flags |= setKeepTTL
		case (a == "EX" || a == "PX" || a == "EXAT" || a == "PXAT") && next:
			f := map[string]int{"EX": setEX, "PX": setPX, "EXAT": setEXAT, "PXAT": setPXAT}[a]
			// The same option again overrides (Redis: the last wins); another
			// expire option or KEEPTTL conflicts.
			if flags&(setKeepTTL|setEX|setPX|setEXAT|setPXAT)&^f != 0 {
				c.Error(ErrSyntax)
				return
			}
			flags |= f
			i++
			expArg = argv[i]
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	now := c.kv().Now()
	if expArg != nil {
		v, ok := parseInt(expArg)
		if !ok {
			c.Error(ErrNotInt)
			return
		}
		if v <= 0 {
			c.Error("ERR invalid expire time in 'set' command")
			return
		}
		switch {
		case flags&setEX != 0:
			if v > math.MaxInt64/1000 || v*1000 > math.MaxInt64-now {
				c.Error("ERR invalid expire time in 'set' command")
				return
			}
			exp = now + v*1000
		case flags&setPX != 0:
			if v > math.MaxInt64-now {
				c.Error("ERR invalid expire time in 'set' command")
				return
			}
			exp = now + v
		case flags&setEXAT != 0:
			if v > math.MaxInt64/1000 {
				c.Error("ERR invalid expire time in 'set' command")
				return
			}
			exp = v * 1000
		default:
			exp = v
		}
	}
	db := c.kv()
	old := db.Get(argv[1])
	if flags&setGet != 0 {
		if old != nil && old.Kind != store.KindString {
			c.Error(ErrWrongType)
			return
		}
	}
	if (flags&setNX != 0 && old != nil) || (flags&setXX != 0 && old == nil) {
		if flags&setGet != 0 {
			if old == nil {
				c.Null()
			} else {
				c.Bulk(old.Str)
			}
		} else {
			c.Null()
		}
		return
	}
	if flags&setGet != 0 {
		if old == nil {
			c.Null()
		} else {
			c.Bulk(old.Str)
		}
	}
	if expArg != nil && c.s.alreadyExpired(exp, now) {
		// Already expired: the key is simply gone (Redis deletes it).
		if old != nil {
			db.Remove(old)
		}
		c.s.dirty++
		// Redis 7.0 stores the key and sets the past expiry: its events.
		c.notify(notifyString, "set", argv[1])
		c.notify(notifyGeneric, "expire", argv[1])
		c.Propagate([]byte("DEL"), argv[1])
		if flags&setGet == 0 {
			c.OK()
		}
		return
	}
	o := c.setString(argv[1], argv[2], flags&setKeepTTL != 0)
	c.notify(notifyString, "set", argv[1])
	if expArg != nil {
		db.SetExpire(o, exp)
		c.notify(notifyGeneric, "expire", argv[1])
		c.Propagate([]byte("SET"), argv[1], argv[2], []byte("PXAT"), itob(exp))
	} else if flags&setKeepTTL != 0 {
		c.Propagate([]byte("SET"), argv[1], argv[2], []byte("KEEPTTL"))
	} else {
		c.Propagate([]byte("SET"), argv[1], argv[2])
	}
	c.s.dirty++
	if flags&setGet == 0 {
		c.OK()
	}
}

func cmdSetNX(c *Client, argv [][]byte) {
	if c.kv().Get(argv[1]) != nil {
		c.Int(0)
		return
	}
	c.setString(argv[1], argv[2], false)
	c.s.dirty++
	c.notify(notifyString, "set", argv[1])
	c.Int(1)
}

func setexGeneric(c *Client, argv [][]byte, unit int64, name string) {
	v, ok := parseInt(argv[2])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	now := c.kv().Now()
	if v <= 0 || v > (math.MaxInt64-now)/unit {
		c.Error("ERR invalid expire time in '" + name + "' command")
		return
	}
	o := c.setString(argv[1], argv[3], false)
	exp := now + v*unit
	c.kv().SetExpire(o, exp)
	c.s.dirty++
	c.notify(notifyString, "set", argv[1])
	c.notify(notifyGeneric, "expire", argv[1])
	c.Propagate([]byte("SET"), argv[1], argv[3], []byte("PXAT"), itob(exp))
	c.OK()
}

func cmdSetEX(c *Client, argv [][]byte)  { setexGeneric(c, argv, 1000, "setex") }
func cmdPSetEX(c *Client, argv [][]byte) { setexGeneric(c, argv, 1, "psetex") }

func cmdGetSet(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindString)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
	} else {
		c.Bulk(o.Str)
	}
	c.setString(argv[1], argv[2], false)
	c.s.dirty++
	c.notify(notifyString, "set", argv[1])
}

func cmdGetDel(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindString)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	c.Bulk(o.Str)
	c.kv().Remove(o)
	c.s.dirty++
	c.notify(notifyGeneric, "del", argv[1])
	c.Propagate([]byte("DEL"), argv[1])
}

func cmdMGet(c *Client, argv [][]byte) {
	c.Array(len(argv) - 1)
	db := c.kv()
	for _, k := range argv[1:] {
		o := db.Get(k)
		if o == nil {
			c.notifyMiss(k)
		}
		if o == nil || o.Kind != store.KindString {
			c.Null()
		} else {
			c.Bulk(o.Str)
		}
	}
}

func cmdMSet(c *Client, argv [][]byte) {
	if len(argv)%2 == 0 {
		c.Error(ErrArity(c.cmd.Name))
		return
	}
	for i := 1; i < len(argv); i += 2 {
		c.setString(argv[i], argv[i+1], false)
		c.notify(notifyString, "set", argv[i])
	}
	c.s.dirty += int64(len(argv) / 2)
	c.OK()
}

func cmdMSetNX(c *Client, argv [][]byte) {
	if len(argv)%2 == 0 {
		c.Error(ErrArity(c.cmd.Name))
		return
	}
	for i := 1; i < len(argv); i += 2 {
		if c.kv().Get(argv[i]) != nil {
			c.Int(0)
			return
		}
	}
	for i := 1; i < len(argv); i += 2 {
		c.setString(argv[i], argv[i+1], false)
		c.notify(notifyString, "set", argv[i])
	}
	c.s.dirty += int64(len(argv) / 2)
	c.Int(1)
}

func cmdAppend(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindString)
	if !ok {
		return
	}
	if o == nil {
		o = c.setString(argv[1], argv[2], false)
	} else {
		if int64(len(o.Str)+len(argv[2])) > c.s.cfg.ProtoMaxBulkLen {
			c.Error("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
			return
		}
		o.Str = append(o.Str, argv[2]...)
		o.SetRaw(true)
	}
	c.s.dirty++
	c.notify(notifyString, "append", argv[1])
	c.Int(int64(len(o.Str)))
}

func cmdStrlen(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindString)
	if !ok {
		return
	}
	if o == nil {
		c.Int(0)
		return
	}
	c.Int(int64(len(o.Str)))
}

func incrGeneric(c *Client, key []byte, by int64) {
	o, ok := c.lookup(key, store.KindString)
	if !ok {
		return
	}
	var cur int64
	if o != nil {
		v, ok := parseInt(o.Str)
		if !ok {
			c.Error(ErrNotInt)
			return
		}
		cur = v
	}
	if (by < 0 && cur < 0 && by < math.MinInt64-cur) || (by > 0 && cur > 0 && by > math.MaxInt64-cur) {
		c.Error(ErrOverflow)
		return
	}
	cur += by
	var tmp [24]byte
	c.setString(key, strconv.AppendInt(tmp[:0], cur, 10), true)
	c.s.dirty++
	c.notify(notifyString, "incrby", key)
	c.Int(cur)
}

func cmdIncr(c *Client, argv [][]byte) { incrGeneric(c, argv[1], 1) }
func cmdDecr(c *Client, argv [][]byte) { incrGeneric(c, argv[1], -1) }

func cmdIncrBy(c *Client, argv [][]byte) {
	by, ok := parseInt(argv[2])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	incrGeneric(c, argv[1], by)
}

func cmdDecrBy(c *Client, argv [][]byte) {
	by, ok := parseInt(argv[2])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	if by == math.MinInt64 {
		c.Error("ERR decrement would overflow")
		return
	}
	incrGeneric(c, argv[1], -by)
}

func cmdIncrByFloat(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindString)
	if !ok {
		return
	}
	cur := new(big.Float)
	if o != nil {
		v, ok := parseLongDouble(o.Str)
		if !ok {
			c.Error(ErrNotFloat)
			return
		}
		cur = v
	}
	by, ok := parseLongDouble(argv[2])
	if !ok {
		c.Error(ErrNotFloat)
		return
	}
	res, ok := addLongDouble(cur, by)
	if !ok {
		c.Error("ERR increment would produce NaN or Infinity")
		return
	}
	s := []byte(res)
	c.setString(argv[1], s, true).SetNotInt() // Redis stores the result unencoded
	c.s.dirty++
	c.notify(notifyString, "incrbyfloat", argv[1])
	c.Propagate([]byte("SET"), argv[1], s, []byte("KEEPTTL"))
	c.Bulk(s)
}

func cmdGetEx(c *Client, argv [][]byte) {
	var exp int64
	var expArg []byte
	unit, persist := "", false
	db := c.kv()
	now := db.Now()
	for i := 2; i < len(argv); i++ {
		a := strings.ToUpper(string(argv[i]))
		switch {
		case a == "PERSIST" && unit == "":
			persist = true
		case (a == "EX" || a == "PX" || a == "EXAT" || a == "PXAT") && !persist && (unit == "" || unit == a) && i+1 < len(argv):
			unit = a // the same option again overrides, as in Redis
			i++
			expArg = argv[i]
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	// Redis looks the key up before it checks the expire value.
	o, ok := c.lookup(argv[1], store.KindString)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	has := expArg != nil
	if has {
		v, ok := parseInt(expArg)
		if !ok {
			c.Error(ErrNotInt)
			return
		}
		bad := v <= 0
		switch unit {
		case "EX":
			bad = bad || v > (math.MaxInt64-now)/1000
			exp = now + v*1000
		case "PX":
			bad = bad || v > math.MaxInt64-now
			exp = now + v
		case "EXAT":
			bad = bad || v > math.MaxInt64/1000
			exp = v * 1000
		default:
			exp = v
		}
		if bad {
			c.Error("ERR invalid expire time in 'getex' command")
			return
		}
	}
	c.Bulk(o.Str)
	switch {
	case has && c.s.alreadyExpired(exp, now):
		db.Remove(o)
		c.s.dirty++
		c.notify(notifyGeneric, "del", argv[1])
		c.Propagate([]byte("DEL"), argv[1])
	case has:
		db.SetExpire(o, exp)
		c.s.dirty++
		c.notify(notifyGeneric, "expire", argv[1])
		c.Propagate([]byte("PEXPIREAT"), argv[1], itob(exp))
	case persist && o.ExpireAt != 0:
		db.SetExpire(o, 0)
		c.s.dirty++
		c.notify(notifyGeneric, "persist", argv[1])
		c.Propagate([]byte("PERSIST"), argv[1])
	}
}

func cmdGetRange(c *Client, argv [][]byte) {
	start, ok1 := parseInt(argv[2])
	end, ok2 := parseInt(argv[3])
	if !ok1 || !ok2 {
		c.Error(ErrNotInt)
		return
	}
	o, ok := c.lookup(argv[1], store.KindString)
	if !ok {
		return
	}
	if o == nil {
		c.BulkString("")
		return
	}
	n := int64(len(o.Str))
	if start < 0 && end < 0 && start > end {
		c.BulkString("")
		return
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	if start < 0 {
		start = 0
	}
	if end < 0 {
		end = 0
	}
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		c.BulkString("")
		return
	}
	c.Bulk(o.Str[start : end+1])
}

func cmdSetRange(c *Client, argv [][]byte) {
	off, ok := parseInt(argv[2])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	if off < 0 {
		c.Error("ERR offset is out of range")
		return
	}
	o, ok := c.lookup(argv[1], store.KindString)
	if !ok {
		return
	}
	val := argv[3]
	if len(val) == 0 { // Redis checks no size when nothing is written
		if o == nil {
			c.Int(0)
		} else {
			c.Int(int64(len(o.Str)))
		}
		return
	}
	// Written as a subtraction: off+len can overflow int64.
	if off > c.s.cfg.ProtoMaxBulkLen-int64(len(val)) {
		c.Error("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
		return
	}
	if o == nil {
		o = c.setString(argv[1], nil, false)
	}
	if len(val) > 0 {
		need := int(off) + len(val)
		if need > len(o.Str) {
			o.Str = append(o.Str, make([]byte, need-len(o.Str))...)
		}
		copy(o.Str[off:], val)
		o.SetRaw(true)
		c.s.dirty++
		c.notify(notifyString, "setrange", argv[1])
	}
	c.Int(int64(len(o.Str)))
}

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]: the longest
// common subsequence by the textbook dynamic programme, walked back from
// the end as Redis does so that IDX lists the same ranges in the same
// (last-first) order.
func cmdLCS(c *Client, argv [][]byte) {
	db := c.kv()
	oa, ob := db.Get(argv[1]), db.Get(argv[2])
	if (oa != nil && oa.Kind != store.KindString) || (ob != nil && ob.Kind != store.KindString) {
		c.Error("ERR The specified keys must contain string values")
		return
	}
	var a, b []byte
	if oa != nil {
		a = oa.Str
	}
	if ob != nil {
		b = ob.Str
	}
	var getLen, getIdx, withMatchLen bool
	var minMatch int64
	for i := 3; i < len(argv); i++ {
		switch {
		case eq(argv[i], "idx"):
			getIdx = true
		case eq(argv[i], "len"):
			getLen = true
		case eq(argv[i], "withmatchlen"):
			withMatchLen = true
		case eq(argv[i], "minmatchlen") && i+1 < len(argv):
			n, ok := parseInt(argv[i+1])
			if !ok {
				c.Error(ErrNotInt)
				return
			}
			minMatch = max(n, 0)
			i++
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	if getLen && getIdx {
		c.Error("ERR If you want both the length and indexes, please just use IDX.")
		return
	}
	alen, blen := len(a), len(b)
	if uint64(alen+1)*uint64(blen+1)*4 > uint64(c.s.cfg.ProtoMaxBulkLen) {
		c.Error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
		return
	}
	w := blen + 1
	t := make([]uint32, (alen+1)*w) // t[i*w+j]: LCS length of a[:i], b[:j]
	for i := 1; i <= alen; i++ {
		for j := 1; j <= blen; j++ {
			if a[i-1] == b[j-1] {
				t[i*w+j] = t[(i-1)*w+j-1] + 1
			} else {
				t[i*w+j] = max(t[(i-1)*w+j], t[i*w+j-1])
			}
		}
	}
	total := t[alen*w+blen]
	if getLen {
		c.Int(int64(total))
		return
	}
	type match struct{ a0, a1, b0, b1 int }
	var matches []match
	result := make([]byte, total)
	k := int(total)
	cur, open := match{}, false
	for i, j := alen, blen; i > 0 && j > 0; {
		emit := false
		if a[i-1] == b[j-1] {
			result[k-1] = a[i-1]
			switch {
			case !open:
				cur, open = match{i - 1, i - 1, j - 1, j - 1}, true
			case cur.a0 == i && cur.b0 == j: // extends backwards
				cur.a0--
				cur.b0--
			default:
				emit = true
			}
			if cur.a0 == 0 || cur.b0 == 0 {
				emit = true
			}
			k, i, j = k-1, i-1, j-1
		} else {
			if t[(i-1)*w+j] > t[i*w+j-1] {
				i--
			} else {
				j--
			}
			emit = open
		}
		if emit {
			if n := int64(cur.a1 - cur.a0 + 1); minMatch == 0 || n >= minMatch {
				matches = append(matches, cur)
			}
			open = false
		}
	}
	if !getIdx {
		c.Bulk(result)
		return
	}
	c.Map(2)
	c.BulkString("matches")
	c.Array(len(matches))
	for _, m := range matches {
		if withMatchLen {
			c.Array(3)
		} else {
			c.Array(2)
		}
		c.Array(2)
		c.Int(int64(m.a0))
		c.Int(int64(m.a1))
		c.Array(2)
		c.Int(int64(m.b0))
		c.Int(int64(m.b1))
		if withMatchLen {
			c.Int(int64(m.a1 - m.a0 + 1))
		}
	}
	c.BulkString("len")
	c.Int(int64(total))
}

// stringCommands are the string family's specs (Redis 7.0's COMMAND: arity, flags, keys).
func stringCommands() []*Command {
	return []*Command{
		newCmd("get", 2, rof, 1, 1, 1, cmdGet, "string"),
		newCmd("set", -3, w, 1, 1, 1, cmdSet, "string"),
		newCmd("setnx", 3, wf, 1, 1, 1, cmdSetNX, "string"),
		newCmd("setex", 4, w, 1, 1, 1, cmdSetEX, "string"),
		newCmd("psetex", 4, w, 1, 1, 1, cmdPSetEX, "string"),
		newCmd("getset", 3, wf, 1, 1, 1, cmdGetSet, "string"),
		newCmd("getdel", 2, wrf, 1, 1, 1, cmdGetDel, "string"),
		newCmd("mget", -2, rof, 1, -1, 1, cmdMGet, "string"),
		newCmd("mset", -3, w, 1, -1, 2, cmdMSet, "string"),
		newCmd("msetnx", -3, w, 1, -1, 2, cmdMSetNX, "string"),
		newCmd("append", 3, wf, 1, 1, 1, cmdAppend, "string"),
		newCmd("strlen", 2, rof, 1, 1, 1, cmdStrlen, "string"),
		newCmd("getex", -2, wrf, 1, 1, 1, cmdGetEx, "string"),
		newCmd("getrange", 4, ro, 1, 1, 1, cmdGetRange, "string"),
		newCmd("substr", 4, ro, 1, 1, 1, cmdGetRange, "string"),
		newCmd("setrange", 4, w, 1, 1, 1, cmdSetRange, "string"),
		newCmd("incr", 2, wf, 1, 1, 1, cmdIncr, "string"),
		newCmd("decr", 2, wf, 1, 1, 1, cmdDecr, "string"),
		newCmd("incrby", 3, wf, 1, 1, 1, cmdIncrBy, "string"),
		newCmd("decrby", 3, wf, 1, 1, 1, cmdDecrBy, "string"),
		newCmd("incrbyfloat", 3, wf, 1, 1, 1, cmdIncrByFloat, "string"),
		newCmd("lcs", -3, ro, 1, 2, 1, cmdLCS, "string"),
	}
}
