// Keyspace commands (Redis db.c, expire.c): commands on keys whatever their
// type, and the key lookup and argument helpers every command family uses.

package server

import (
	"math"
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
func copyBytes(b []byte) []byte  { return append(make([]byte, 0, len(b)), b...) }

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
		c.BulkString(c.s.objectEncoding(o))
	case "REFCOUNT":
		c.Int(1)
	case "IDLETIME":
		c.Int(0)
	case "FREQ":
		c.Error("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
	}
}

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

func cmdTouch(c *Client, argv [][]byte) {
	var n int64
	for _, k := range argv[1:] {
		if c.kv().Get(k) != nil {
			n++
		}
	}
	c.Int(n)
}
