// List commands (Redis t_list.c).

package server

import (
	"github.com/redline-dev/redline/server/store"
	"math"
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
