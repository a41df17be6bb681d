package server

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/redline-dev/redline/server/resp"
	"github.com/redline-dev/redline/server/store"
)

func (c *Client) kv() *store.DB { return c.s.dbs[c.db] }

// lookup returns the live object at key, or nil; if it exists with another
// kind than want it replies WRONGTYPE and returns ok=false.
func (c *Client) lookup(key []byte, want store.Kind) (*store.Object, bool) {
	o := c.kv().Get(key)
	if o == nil {
		c.s.stats.keyspaceMisses++
		return nil, true
	}
	c.s.stats.keyspaceHits++
	if o.Kind != want {
		c.Error(ErrWrongType)
		return nil, false
	}
	return o, true
}

func parseInt(b []byte) (int64, bool) { return resp.ParseInt(b) }

// parseFloat parses like Redis's string2ld/strtod: no spaces, no NaN.
func parseFloat(b []byte) (float64, bool) {
	if len(b) == 0 || len(b) > 5000 || b[0] == ' ' || b[len(b)-1] == ' ' {
		return 0, false
	}
	s := string(b)
	switch strings.ToLower(s) {
	case "inf", "+inf", "infinity", "+infinity":
		return math.Inf(1), true
	case "-inf", "-infinity":
		return math.Inf(-1), true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, !math.IsInf(f, 0) // underflow to 0 is fine
		}
		return 0, false
	}
	if strings.ContainsAny(s, "_xXpP") {
		return 0, false
	}
	return f, true
}

func eq(a []byte, s string) bool { return strings.EqualFold(string(a), s) }

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

func copyBytes(b []byte) []byte { return append(make([]byte, 0, len(b)), b...) }

// setString stores val at key as a string, reusing an existing string
// object's buffer. keepTTL keeps the old expiry; otherwise it is cleared.
func (c *Client) setString(key, val []byte, keepTTL bool) *store.Object {
	db := c.kv()
	o := db.Get(key)
	if o != nil && o.Kind == store.KindString {
		if cap(o.Str) >= len(val) && cap(o.Str) <= 2*len(val)+64 {
			o.Str = append(o.Str[:0], val...)
		} else {
			o.Str = copyBytes(val)
		}
		if !keepTTL && o.ExpireAt != 0 {
			db.SetExpire(o, 0)
		}
		return o
	}
	n := &store.Object{Kind: store.KindString, Str: copyBytes(val)}
	if o != nil {
		if keepTTL {
			n.ExpireAt = o.ExpireAt
		}
		db.Set(key, n)
	} else {
		db.Add(key, n)
	}
	return n
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
		case (a == "EX" || a == "PX" || a == "EXAT" || a == "PXAT") && flags&(setKeepTTL|setEX|setPX|setEXAT|setPXAT) == 0 && next:
			switch a {
			case "EX":
				flags |= setEX
			case "PX":
				flags |= setPX
			case "EXAT":
				flags |= setEXAT
			case "PXAT":
				flags |= setPXAT
			}
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
	if expArg != nil && exp <= now {
		// Already expired: the key is simply gone (Redis deletes it).
		if old != nil {
			db.Remove(old)
		}
		c.s.dirty++
		c.Propagate([]byte("DEL"), argv[1])
		if flags&setGet == 0 {
			c.OK()
		}
		return
	}
	o := c.setString(argv[1], argv[2], flags&setKeepTTL != 0)
	if expArg != nil {
		db.SetExpire(o, exp)
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
	c.Propagate([]byte("DEL"), argv[1])
}

func cmdMGet(c *Client, argv [][]byte) {
	c.Array(len(argv) - 1)
	db := c.kv()
	for _, k := range argv[1:] {
		o := db.Get(k)
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
	}
	c.s.dirty++
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
	c.setString(argv[1], s, true)
	c.s.dirty++
	c.Propagate([]byte("SET"), argv[1], s, []byte("KEEPTTL"))
	c.Bulk(s)
}

// Generic key commands.

func cmdDel(c *Client, argv [][]byte) {
	var n int64
	for _, k := range argv[1:] {
		if c.kv().Delete(k) {
			n++
		}
	}
	c.s.dirty += n
	c.Int(n)
}

func cmdExists(c *Client, argv [][]byte) {
	var n int64
	for _, k := range argv[1:] {
		if c.kv().Get(k) != nil {
			n++
		}
	}
	c.Int(n)
}

func cmdType(c *Client, argv [][]byte) {
	o := c.kv().Get(argv[1])
	if o == nil {
		c.Simple("none")
		return
	}
	c.Simple(o.Kind.String())
}

func expireGeneric(c *Client, argv [][]byte, unit int64, absolute bool) {
	name := c.cmd.Name
	v, ok := parseInt(argv[2])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	var nx, xx, gt, lt bool
	for _, a := range argv[3:] {
		switch strings.ToUpper(string(a)) {
		case "NX":
			nx = true
		case "XX":
			xx = true
		case "GT":
			gt = true
		case "LT":
			lt = true
		default:
			c.Error("ERR Unsupported option " + string(a))
			return
		}
	}
	if nx && (xx || gt || lt) {
		c.Error("ERR NX and XX, GT or LT options at the same time are not compatible")
		return
	}
	if gt && lt {
		c.Error("ERR GT and LT options at the same time are not compatible")
		return
	}
	db := c.kv()
	now := db.Now()
	if unit == 1000 {
		if v > math.MaxInt64/1000 || v < math.MinInt64/1000 {
			c.Error("ERR invalid expire time in '" + name + "' command")
			return
		}
		v *= 1000
	}
	if !absolute {
		if (v > 0 && v > math.MaxInt64-now) || (v < 0 && v < math.MinInt64+now) {
			c.Error("ERR invalid expire time in '" + name + "' command")
			return
		}
		v += now
	}
	o := db.Get(argv[1])
	if o == nil {
		c.Int(0)
		return
	}
	cur := o.ExpireAt
	if nx && cur != 0 || xx && cur == 0 {
		c.Int(0)
		return
	}
	if gt && (cur == 0 || v <= cur) {
		c.Int(0)
		return
	}
	if lt && cur != 0 && v >= cur {
		c.Int(0)
		return
	}
	if v <= now {
		db.Remove(o)
		c.s.dirty++
		c.Propagate([]byte("DEL"), argv[1])
		c.Int(1)
		return
	}
	db.SetExpire(o, v)
	c.s.dirty++
	c.Propagate([]byte("PEXPIREAT"), argv[1], itob(v))
	c.Int(1)
}

func cmdExpire(c *Client, argv [][]byte)    { expireGeneric(c, argv, 1000, false) }
func cmdPExpire(c *Client, argv [][]byte)   { expireGeneric(c, argv, 1, false) }
func cmdExpireAt(c *Client, argv [][]byte)  { expireGeneric(c, argv, 1000, true) }
func cmdPExpireAt(c *Client, argv [][]byte) { expireGeneric(c, argv, 1, true) }

func ttlGeneric(c *Client, argv [][]byte, ms bool) {
	o := c.kv().Get(argv[1])
	if o == nil {
		c.Int(-2)
		return
	}
	if o.ExpireAt == 0 {
		c.Int(-1)
		return
	}
	left := o.ExpireAt - c.kv().Now()
	if left < 0 {
		left = 0
	}
	if ms {
		c.Int(left)
	} else {
		c.Int((left + 500) / 1000)
	}
}

func cmdTTL(c *Client, argv [][]byte)  { ttlGeneric(c, argv, false) }
func cmdPTTL(c *Client, argv [][]byte) { ttlGeneric(c, argv, true) }

func expireTimeGeneric(c *Client, argv [][]byte, ms bool) {
	o := c.kv().Get(argv[1])
	if o == nil {
		c.Int(-2)
		return
	}
	if o.ExpireAt == 0 {
		c.Int(-1)
		return
	}
	if ms {
		c.Int(o.ExpireAt)
	} else {
		c.Int(o.ExpireAt / 1000)
	}
}

func cmdPersist(c *Client, argv [][]byte) {
	o := c.kv().Get(argv[1])
	if o == nil || o.ExpireAt == 0 {
		c.Int(0)
		return
	}
	c.kv().SetExpire(o, 0)
	c.s.dirty++
	c.Int(1)
}

func cmdKeys(c *Client, argv [][]byte) {
	pat := argv[1]
	var out []string
	all := len(pat) == 1 && pat[0] == '*'
	c.kv().Each(func(o *store.Object) bool {
		if all || GlobMatch(pat, []byte(o.Key())) {
			out = append(out, o.Key())
		}
		return true
	})
	c.Array(len(out))
	for _, k := range out {
		c.BulkString(k)
	}
}

func cmdScan(c *Client, argv [][]byte) {
	cur, err := strconv.ParseUint(string(argv[1]), 10, 64)
	if err != nil {
		c.Error("ERR invalid cursor")
		return
	}
	count := 10
	var pat []byte
	typ := ""
	for i := 2; i < len(argv); i++ {
		switch {
		case eq(argv[i], "count") && i+1 < len(argv):
			n, ok := parseInt(argv[i+1])
			if !ok {
				c.Error(ErrNotInt)
				return
			}
			if n < 1 {
				c.Error(ErrSyntax)
				return
			}
			count = int(min(n, 1<<20))
			i++
		case eq(argv[i], "match") && i+1 < len(argv):
			pat = argv[i+1]
			i++
		case eq(argv[i], "type") && i+1 < len(argv):
			typ = strings.ToLower(string(argv[i+1]))
			i++
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	var keys []string
	next := c.kv().Scan(cur, count, func(o *store.Object) {
		if pat != nil && !GlobMatch(pat, []byte(o.Key())) {
			return
		}
		if typ != "" && o.Kind.String() != typ {
			return
		}
		keys = append(keys, o.Key())
	})
	c.Array(2)
	c.BulkString(strconv.FormatUint(next, 10))
	c.Array(len(keys))
	for _, k := range keys {
		c.BulkString(k)
	}
}

func renameGeneric(c *Client, argv [][]byte, nx bool) {
	db := c.kv()
	o := db.Get(argv[1])
	if o == nil {
		c.Error(ErrNoKey)
		return
	}
	if string(argv[1]) == string(argv[2]) {
		if nx {
			c.Int(0)
		} else {
			c.OK()
		}
		return
	}
	if nx && db.Get(argv[2]) != nil {
		c.Int(0)
		return
	}
	db.Rename(o, argv[2])
	c.s.dirty++
	if nx {
		c.Int(1)
	} else {
		c.OK()
	}
}

func cmdRename(c *Client, argv [][]byte)   { renameGeneric(c, argv, false) }
func cmdRenameNX(c *Client, argv [][]byte) { renameGeneric(c, argv, true) }

func cmdRandomKey(c *Client, argv [][]byte) {
	o := c.kv().RandomKey()
	if o == nil {
		c.Null()
		return
	}
	c.BulkString(o.Key())
}

func cmdDBSize(c *Client, argv [][]byte) { c.Int(int64(c.kv().Len())) }

func flushArgs(c *Client, argv [][]byte) bool {
	if len(argv) > 2 || (len(argv) == 2 && !eq(argv[1], "async") && !eq(argv[1], "sync")) {
		c.Error(ErrSyntax)
		return false
	}
	return true
}

func cmdFlushDB(c *Client, argv [][]byte) {
	if !flushArgs(c, argv) {
		return
	}
	c.kv().Flush()
	c.s.touchAll(c.db)
	c.s.dirty++
	c.OK()
}

func cmdFlushAll(c *Client, argv [][]byte) {
	if !flushArgs(c, argv) {
		return
	}
	for _, db := range c.s.dbs {
		db.Flush()
	}
	c.s.touchAll(-1)
	c.s.dirty++
	c.OK()
}

func cmdDump(c *Client, argv [][]byte) {
	o := c.kv().Get(argv[1])
	if o == nil {
		c.Null()
		return
	}
	c.Bulk(store.Dump(o))
}

func cmdRestore(c *Client, argv [][]byte) {
	ttl, ok := parseInt(argv[2])
	if !ok {
		c.Error(ErrNotInt)
		return
	}
	var replace, absttl bool
	for i := 4; i < len(argv); i++ {
		switch {
		case eq(argv[i], "replace"):
			replace = true
		case eq(argv[i], "absttl"):
			absttl = true
		case (eq(argv[i], "idletime") || eq(argv[i], "freq")) && i+1 < len(argv):
			if _, ok := parseInt(argv[i+1]); !ok {
				c.Error(ErrNotInt)
				return
			}
			i++
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	if ttl < 0 {
		c.Error("ERR Invalid TTL value, must be >= 0")
		return
	}
	db := c.kv()
	old := db.Get(argv[1])
	if old != nil && !replace {
		c.Error("BUSYKEY Target key name already exists.")
		return
	}
	o, err := store.Restore(argv[3])
	if err != nil {
		c.Error(err.Error())
		return
	}
	now := db.Now()
	if ttl > 0 {
		if !absttl {
			ttl += now
		}
		if ttl <= now {
			// Already expired: behave as if restored and expired at once.
			if old != nil {
				db.Remove(old)
				c.s.dirty++
				c.Propagate([]byte("DEL"), argv[1])
			} else {
				c.Propagate()
			}
			c.OK()
			return
		}
		o.ExpireAt = ttl
	}
	db.Set(argv[1], o)
	c.s.dirty++
	if o.ExpireAt != 0 {
		args := [][]byte{argv[0], argv[1], itob(o.ExpireAt), argv[3], []byte("ABSTTL")}
		if replace {
			args = append(args, []byte("REPLACE"))
		}
		c.Propagate(args...)
	}
	c.OK()
}

func cmdObject(c *Client, argv [][]byte) {
	sub := strings.ToUpper(string(argv[1]))
	if sub == "HELP" {
		c.Array(1)
		c.Simple("OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are: ENCODING, FREQ, IDLETIME, REFCOUNT, HELP.")
		return
	}
	if len(argv) != 3 {
		switch sub {
		case "ENCODING", "FREQ", "IDLETIME", "REFCOUNT":
			c.Error("ERR wrong number of arguments for 'object|" + strings.ToLower(sub) + "' command")
		default:
			c.Error("ERR unknown subcommand '" + string(argv[1]) + "'. Try OBJECT HELP.")
		}
		return
	}
	o := c.kv().Get(argv[2])
	switch sub {
	case "ENCODING", "FREQ", "IDLETIME", "REFCOUNT":
	default:
		c.Error("ERR unknown subcommand '" + string(argv[1]) + "'. Try OBJECT HELP.")
		return
	}
	if o == nil {
		c.Null()
		return
	}
	switch sub {
	case "ENCODING":
		enc := "hashtable"
		switch o.Kind {
		case store.KindString:
			if _, ok := parseInt(o.Str); ok && len(o.Str) <= 20 {
				enc = "int"
			} else if len(o.Str) <= 44 {
				enc = "embstr"
			} else {
				enc = "raw"
			}
		case store.KindList:
			enc = "quicklist"
		case store.KindZSet:
			enc = "skiplist"
		}
		c.BulkString(enc)
	case "REFCOUNT":
		c.Int(1)
	case "IDLETIME":
		c.Int(0)
	case "FREQ":
		c.Error("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
	}
}

func cmdGetEx(c *Client, argv [][]byte) {
	var exp int64
	persist, has := false, false
	db := c.kv()
	now := db.Now()
	for i := 2; i < len(argv); i++ {
		a := strings.ToUpper(string(argv[i]))
		switch {
		case a == "PERSIST" && !has && !persist:
			persist = true
		case (a == "EX" || a == "PX" || a == "EXAT" || a == "PXAT") && !has && !persist && i+1 < len(argv):
			v, ok := parseInt(argv[i+1])
			if !ok {
				c.Error(ErrNotInt)
				return
			}
			bad := v <= 0
			switch a {
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
			has = true
			i++
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	o, ok := c.lookup(argv[1], store.KindString)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	c.Bulk(o.Str)
	switch {
	case has && exp <= now:
		db.Remove(o)
		c.s.dirty++
		c.Propagate([]byte("DEL"), argv[1])
	case has:
		db.SetExpire(o, exp)
		c.s.dirty++
		c.Propagate([]byte("PEXPIREAT"), argv[1], itob(exp))
	case persist && o.ExpireAt != 0:
		db.SetExpire(o, 0)
		c.s.dirty++
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
	if o == nil && len(val) == 0 {
		c.Int(0)
		return
	}
	if off+int64(len(val)) > c.s.cfg.ProtoMaxBulkLen {
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
		c.s.dirty++
	}
	c.Int(int64(len(o.Str)))
}
