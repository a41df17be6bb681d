// Hash commands (Redis t_hash.c).

package server

import (
	"math"
	"math/big"
	"math/rand/v2"

	"github.com/redline-dev/redline/server/store"
)

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
		if o.HashSet(string(argv[i]), copyBytes(argv[i+1])) {
			added++
		}
	}
	c.s.dirty += int64(len(argv)-2) / 2
	c.notify(notifyHash, "hset", argv[1])
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
	o.HashSet(string(argv[2]), copyBytes(argv[3]))
	c.s.dirty++
	c.notify(notifyHash, "hset", argv[1])
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
	for _, k := range o.HashFields() {
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
	ks := o.HashFields()
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
	ks := o.HashFields()
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
			if o.HashDel(string(f)) {
				n++
			}
		}
		if n > 0 {
			c.notify(notifyHash, "hdel", argv[1])
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
	o.HashSet(string(argv[2]), itob(cur))
	c.s.dirty++
	c.notify(notifyHash, "hincrby", argv[1])
	c.Int(cur)
}

func cmdHIncrByFloat(c *Client, argv [][]byte) {
	by, ok := parseLongDouble(argv[3])
	if !ok {
		c.Error(ErrNotFloat)
		return
	}
	if by.IsInf() {
		// Redis refuses an infinite increment before looking at the key
		// (the string form only refuses an infinite result).
		c.Error("ERR value is NaN or Infinity")
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
	o.HashSet(string(argv[2]), s)
	c.s.dirty++
	c.notify(notifyHash, "hincrbyfloat", argv[1])
	c.Propagate([]byte("HSET"), argv[1], argv[2], s)
	c.Bulk(s)
}

// HRANDFIELD key [count [WITHVALUES]]
func cmdHRandField(c *Client, argv [][]byte) {
	count, withCount, withValues, ok := randomCountArgs(c, argv, "withvalues")
	if !ok {
		return
	}
	o, ok := c.lookup(argv[1], store.KindHash)
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
	fields := o.HashFields()
	switch {
	case !withCount:
		c.BulkString(fields[rand.IntN(len(fields))])
	case !withValues:
		replyRandomSample(c, fields, count, 1, func(f string) { c.BulkString(f) })
	default:
		replyRandomPairs(c, fields, count, func(f string) {
			c.BulkString(f)
			c.Bulk(o.Hash[f])
		})
	}
}

// HSCAN key cursor [MATCH pattern] [COUNT count]
func cmdHScan(c *Client, argv [][]byte) {
	containerScan(c, argv, store.KindHash, func(o *store.Object) []string {
		fields := o.HashFields()
		out := make([]string, 0, 2*len(fields))
		for _, f := range fields {
			out = append(out, f, string(o.Hash[f]))
		}
		return out
	})
}

// hashCommands are the hash family's specs.
func hashCommands() []*Command {
	return []*Command{
		newCmd("hset", -4, wf, 1, 1, 1, cmdHSet, "hash"),
		newCmd("hmset", -4, wf, 1, 1, 1, cmdHSet, "hash"),
		newCmd("hsetnx", 4, wf, 1, 1, 1, cmdHSetNX, "hash"),
		newCmd("hget", 3, rof, 1, 1, 1, cmdHGet, "hash"),
		newCmd("hmget", -3, rof, 1, 1, 1, cmdHMGet, "hash"),
		newCmd("hgetall", 2, ro, 1, 1, 1, cmdHGetAll, "hash"),
		newCmd("hdel", -3, wrf, 1, 1, 1, cmdHDel, "hash"),
		newCmd("hincrby", 4, wf, 1, 1, 1, cmdHIncrBy, "hash"),
		newCmd("hincrbyfloat", 4, wf, 1, 1, 1, cmdHIncrByFloat, "hash"),
		newCmd("hlen", 2, rof, 1, 1, 1, cmdHLen, "hash"),
		newCmd("hstrlen", 3, rof, 1, 1, 1, cmdHStrlen, "hash"),
		newCmd("hexists", 3, rof, 1, 1, 1, cmdHExists, "hash"),
		newCmd("hkeys", 2, ro, 1, 1, 1, cmdHKeys, "hash"),
		newCmd("hvals", 2, ro, 1, 1, 1, cmdHVals, "hash"),
		newCmd("hrandfield", -2, ro, 1, 1, 1, cmdHRandField, "hash"),
		newCmd("hscan", -3, ro, 1, 1, 1, cmdHScan, "hash"),
	}
}
