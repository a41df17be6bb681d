// List commands (Redis t_list.c).

package server

import (
	"math"

	"github.com/redline-dev/redline/server/store"
)

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
	if front {
		c.notify(notifyList, "lpush", argv[1])
	} else {
		c.notify(notifyList, "rpush", argv[1])
	}
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
		if n == 0 {
			return
		}
	}
	c.notifyPop(argv[1], front)
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
	// Redis looks the key up before it parses the index.
	o, ok := c.lookup(argv[1], store.KindList)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	idx, ok := parseInt(argv[2])
	if !ok {
		c.Error(ErrNotInt)
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
	// Redis looks the key up before it parses the index.
	o, ok := c.lookup(argv[1], store.KindList)
	if !ok {
		return
	}
	if o == nil {
		c.Error(ErrNoKey)
		return
	}
	idx, ok := parseInt(argv[2])
	if !ok {
		c.Error(ErrNotInt)
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
	c.notify(notifyList, "lset", argv[1])
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
		// -count overflows for the smallest int64; Redis then removes all.
		for i := len(items) - 1; i >= 0 && (count == math.MinInt64 || removed < -count); i-- {
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
		c.notify(notifyList, "lrem", argv[1])
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
	c.notify(notifyList, "ltrim", argv[1]) // also when nothing went
	if int64(len(items)) != n {
		o.List.Reset(items)
		c.dropIfEmpty(o)
		c.s.dirty += n - int64(len(items))
	}
	c.OK()
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]
func cmdLPos(c *Client, argv [][]byte) {
	rank, count, maxlen := int64(1), int64(-1), int64(0)
	for i := 3; i < len(argv); i++ {
		if i+1 >= len(argv) {
			c.Error(ErrSyntax)
			return
		}
		v, ok := parseInt(argv[i+1])
		switch {
		case eq(argv[i], "rank"):
			if !ok {
				c.Error(ErrNotInt)
				return
			}
			if v == math.MinInt64 {
				v = -1 // Redis negates it, overflows and skips no match
			}
			if v == 0 {
				c.Error("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")
				return
			}
			rank = v
		case eq(argv[i], "count"):
			if !ok || v < 0 {
				c.Error("ERR COUNT can't be negative")
				return
			}
			count = v
		case eq(argv[i], "maxlen"):
			if !ok || v < 0 {
				c.Error("ERR MAXLEN can't be negative")
				return
			}
			maxlen = v
		default:
			c.Error(ErrSyntax)
			return
		}
		i++
	}
	o, ok := c.lookup(argv[1], store.KindList)
	if !ok {
		return
	}
	if o == nil {
		if count >= 0 {
			c.Array(0)
		} else {
			c.Null()
		}
		return
	}
	n := o.List.Len()
	skip := rank - 1
	if rank < 0 {
		skip = -rank - 1
	}
	var found []int64
	for j := 0; j < n && (maxlen == 0 || int64(j) < maxlen); j++ {
		idx := j
		if rank < 0 {
			idx = n - 1 - j
		}
		if string(o.List.At(idx)) != string(argv[2]) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		found = append(found, int64(idx))
		if count < 0 || (count > 0 && int64(len(found)) >= count) {
			break
		}
	}
	if count < 0 {
		if len(found) == 0 {
			c.Null()
		} else {
			c.Int(found[0])
		}
		return
	}
	c.Array(len(found))
	for _, f := range found {
		c.Int(f)
	}
}

// LINSERT key BEFORE|AFTER pivot element
func cmdLInsert(c *Client, argv [][]byte) {
	var after bool
	switch {
	case eq(argv[2], "after"):
		after = true
	case eq(argv[2], "before"):
	default:
		c.Error(ErrSyntax)
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
	for i, it := range items {
		if string(it) != string(argv[3]) {
			continue
		}
		at := i
		if after {
			at++
		}
		items = append(items[:at], append([][]byte{copyBytes(argv[4])}, items[at:]...)...)
		o.List.Reset(items)
		c.s.dirty++
		c.notify(notifyList, "linsert", argv[1])
		c.Int(int64(o.List.Len()))
		return
	}
	c.Int(-1)
}

// LMOVE source destination LEFT|RIGHT LEFT|RIGHT, and RPOPLPUSH.
func cmdLMove(c *Client, argv [][]byte) {
	fromLeft, toLeft := false, true
	if c.cmd.Name == "lmove" {
		var ok1, ok2 bool
		fromLeft, ok1 = parseSide(argv[3])
		toLeft, ok2 = parseSide(argv[4])
		if !ok1 || !ok2 {
			c.Error(ErrSyntax)
			return
		}
	}
	db := c.kv()
	src, ok := c.lookup(argv[1], store.KindList)
	if !ok {
		return
	}
	if src == nil {
		c.Null()
		return
	}
	dst := db.Get(argv[2])
	if dst != nil && dst.Kind != store.KindList {
		c.Error(ErrWrongType)
		return
	}
	var v []byte
	if fromLeft {
		v = src.List.PopFront()
	} else {
		v = src.List.PopBack()
	}
	if dst == nil {
		dst = store.NewObject(store.KindList)
		db.Add(argv[2], dst)
	}
	if toLeft {
		dst.List.PushFront(v)
		c.notify(notifyList, "lpush", argv[2])
	} else {
		dst.List.PushBack(v)
		c.notify(notifyList, "rpush", argv[2])
	}
	c.notifyPop(argv[1], fromLeft)
	c.dropIfEmpty(src)
	c.s.dirty++
	c.Bulk(v)
}

// listCommands are the list family's specs (the blocking ones are in cmd_blocking.go).
func listCommands() []*Command {
	return []*Command{
		newCmd("lpush", -3, wf, 1, 1, 1, cmdLPush, "list"),
		newCmd("rpush", -3, wf, 1, 1, 1, cmdRPush, "list"),
		newCmd("lpop", -2, wrf, 1, 1, 1, cmdLPop, "list"),
		newCmd("rpop", -2, wrf, 1, 1, 1, cmdRPop, "list"),
		newCmd("lrange", 4, ro, 1, 1, 1, cmdLRange, "list"),
		newCmd("llen", 2, rof, 1, 1, 1, cmdLLen, "list"),
		newCmd("lindex", 3, ro, 1, 1, 1, cmdLIndex, "list"),
		newCmd("lpushx", -3, wf, 1, 1, 1, func(c *Client, a [][]byte) { pushxGeneric(c, a, true) }, "list"),
		newCmd("rpushx", -3, wf, 1, 1, 1, func(c *Client, a [][]byte) { pushxGeneric(c, a, false) }, "list"),
		newCmd("lset", 4, w, 1, 1, 1, cmdLSet, "list"),
		newCmd("lrem", 4, wr, 1, 1, 1, cmdLRem, "list"),
		newCmd("ltrim", 4, wr, 1, 1, 1, cmdLTrim, "list"),
		newCmd("lpos", -3, ro, 1, 1, 1, cmdLPos, "list"),
		newCmd("linsert", 5, w, 1, 1, 1, cmdLInsert, "list"),
		newCmd("lmove", 5, w, 1, 2, 1, cmdLMove, "list"),
		newCmd("rpoplpush", 3, w, 1, 2, 1, cmdLMove, "list"),
	}
}
