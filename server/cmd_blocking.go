// Blocking list and sorted set commands and their non-blocking multi-key
// forms (Redis's t_list.c and t_zset.c): BLPOP, BRPOP, BRPOPLPUSH, BLMOVE,
// BLMPOP, LMPOP, BZPOPMIN, BZPOPMAX, BZMPOP, ZMPOP. The waiting itself is in
// blocking.go.

package server

import (
	"math"
	"strings"
	"time"

	"github.com/redline-dev/redline/server/store"
)

// BLPOP|BRPOP key [key ...] timeout
func cmdBPop(c *Client, argv [][]byte) {
	timeout, ok := c.blockTimeout(argv[len(argv)-1])
	if !ok {
		return
	}
	blockingListPop(c, argv[1:len(argv)-1], c.cmd.Name == "blpop", -1, true, timeout)
}

// blockingListPop pops from the first non-empty list of keys, or blocks
// (Redis's blockingPopGenericCommand); count -1 is BLPOP's single element.
// With canBlock false (LMPOP) it answers a null array instead.
func blockingListPop(c *Client, keys [][]byte, left bool, count int64, canBlock bool, timeout time.Duration) {
	for _, k := range keys {
		o, ok := c.lookup(k, store.KindList)
		if !ok {
			return
		}
		if o == nil || o.List.Len() == 0 {
			continue
		}
		if count < 0 {
			v := listPop(o, left)
			c.Array(2)
			c.Bulk(k)
			c.Bulk(v)
			c.s.dirty++
			c.Propagate(popName(left), k)
		} else {
			listPopRangeWithKey(c, o, k, left, count)
		}
		c.notifyPop(k, left)
		c.dropIfEmpty(o)
		return
	}
	if !canBlock || c.denyBlocking() {
		c.NullArray()
		return
	}
	c.block(&blockedOn{kind: store.KindList, left: left, count: count}, keys, timeout)
}

// listPopRangeWithKey pops up to count elements as LMPOP replies them and
// propagates LPOP/RPOP key n.
func listPopRangeWithKey(c *Client, o *store.Object, k []byte, left bool, count int64) {
	n := min(int(min(count, math.MaxInt32)), o.List.Len())
	c.Array(2)
	c.Bulk(k)
	c.Array(n)
	for i := 0; i < n; i++ {
		c.Bulk(listPop(o, left))
	}
	c.s.dirty += int64(n)
	c.Propagate(popName(left), k, itob(int64(n)))
}

// BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout, and
// BRPOPLPUSH source destination timeout.
func cmdBLMove(c *Client, argv [][]byte) {
	left, toLeft := false, true
	ti := 3
	if c.cmd.Name == "blmove" {
		var ok1, ok2 bool
		if left, ok1 = parseSide(argv[3]); !ok1 {
			c.Error(ErrSyntax)
			return
		}
		if toLeft, ok2 = parseSide(argv[4]); !ok2 {
			c.Error(ErrSyntax)
			return
		}
		ti = 5
	}
	timeout, ok := c.blockTimeout(argv[ti])
	if !ok {
		return
	}
	src, ok := c.lookup(argv[1], store.KindList)
	if !ok {
		return
	}
	if src == nil {
		if c.denyBlocking() {
			c.Null()
			return
		}
		c.block(&blockedOn{kind: store.KindList, left: left, toLeft: toLeft, target: copyBytes(argv[2])}, argv[1:2], timeout)
		return
	}
	// The regular LMOVE, propagated as LMOVE (RPOPLPUSH).
	s := c.s
	name, largv := "rpoplpush", argv[:3]
	if c.cmd.Name == "blmove" {
		name, largv = "lmove", argv[:5]
	}
	own := c.cmd
	lm := s.commands[name]
	c.cmd = lm
	dirty := s.dirty
	lm.Handler(c, largv) // LMOVE's own handler, through the table
	c.cmd = own
	if s.dirty != dirty {
		p := make([][]byte, len(largv))
		copy(p, largv)
		p[0] = []byte(strings.ToUpper(name))
		c.Propagate(p...)
	}
}

// parseMPop parses the numkeys key [key ...] where [COUNT count] tail of
// LMPOP/BLMPOP/ZMPOP/BZMPOP starting at argv[at]. sides are the two words
// for the head and tail ("LEFT", "RIGHT" or "MIN", "MAX").
func parseMPop(c *Client, argv [][]byte, at int, head, tail string) (keys [][]byte, first bool, count int64, ok bool) {
	n, ok := parseInt(argv[at])
	if !ok || n < 1 {
		c.Error("ERR numkeys should be greater than 0")
		return nil, false, 0, false
	}
	if n >= int64(len(argv)-at-1) { // where would be past the arguments
		c.Error(ErrSyntax)
		return nil, false, 0, false
	}
	where := int64(at) + n + 1
	if where >= int64(len(argv)) {
		c.Error(ErrSyntax)
		return nil, false, 0, false
	}
	switch {
	case eq(argv[where], head):
		first = true
	case eq(argv[where], tail):
	default:
		c.Error(ErrSyntax)
		return nil, false, 0, false
	}
	count = -1
	for j := int(where) + 1; j < len(argv); j++ {
		if count == -1 && eq(argv[j], "count") && j+1 < len(argv) {
			j++
			v, ok := parseInt(argv[j])
			if !ok || v < 1 {
				c.Error("ERR count should be greater than 0")
				return nil, false, 0, false
			}
			count = v
			continue
		}
		c.Error(ErrSyntax)
		return nil, false, 0, false
	}
	if count == -1 {
		count = 1
	}
	return argv[at+1 : where], first, count, true
}

// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count], and
// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count].
func cmdLMPop(c *Client, argv [][]byte) {
	if keys, left, count, block, timeout, ok := parseMPopCommand(c, argv, "left", "right"); ok {
		blockingListPop(c, keys, left, count, block, timeout)
	}
}

// parseMPopCommand parses LMPOP/ZMPOP and, for their blocking forms
// (BLMPOP/BZMPOP: the name starts with b), the timeout before numkeys.
func parseMPopCommand(c *Client, argv [][]byte, head, tail string) (keys [][]byte, first bool, count int64, block bool, timeout time.Duration, ok bool) {
	block = c.cmd.Name[0] == 'b'
	at := 1
	if block {
		at = 2
	}
	if keys, first, count, ok = parseMPop(c, argv, at, head, tail); !ok {
		return
	}
	if block {
		timeout, ok = c.blockTimeout(argv[1])
	}
	return
}

// BZPOPMIN|BZPOPMAX key [key ...] timeout
func cmdBZPop(c *Client, argv [][]byte) {
	timeout, ok := c.blockTimeout(argv[len(argv)-1])
	if !ok {
		return
	}
	blockingZPop(c, argv[1:len(argv)-1], c.cmd.Name == "bzpopmin", -1, true, timeout)
}

// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count], and
// BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count].
func cmdZMPop(c *Client, argv [][]byte) {
	if keys, min, count, block, timeout, ok := parseMPopCommand(c, argv, "min", "max"); ok {
		blockingZPop(c, keys, min, count, block, timeout)
	}
}

// blockingZPop pops from the first non-empty sorted set of keys, or blocks
// (Redis's blockingGenericZpopCommand and genericZpopCommand): count -1 is
// BZPOPMIN's [key, member, score], else ZMPOP's nested reply.
func blockingZPop(c *Client, keys [][]byte, min bool, count int64, canBlock bool, timeout time.Duration) {
	for _, k := range keys {
		o, ok := c.lookup(k, store.KindZSet)
		if !ok {
			return
		}
		if o == nil || o.ZSet.Len() == 0 {
			continue
		}
		name := []byte("ZPOPMIN")
		if !min {
			name = []byte("ZPOPMAX")
		}
		if count < 0 {
			popped := zsetPopN(o, 1, min)
			c.Array(3)
			c.Bulk(k)
			c.BulkString(popped[0].Member)
			c.Double(popped[0].Score)
			c.s.dirty++
			c.Propagate(name, k)
		} else {
			n := int(count)
			if count > int64(o.ZSet.Len()) {
				n = o.ZSet.Len()
			}
			popped := zsetPopN(o, n, min)
			replyZMPop(c, k, popped)
			c.s.dirty += int64(n)
			c.Propagate(name, k, itob(int64(n)))
		}
		c.notifyZPop(k, min)
		c.dropIfEmpty(o)
		return
	}
	if !canBlock || c.denyBlocking() {
		c.NullArray()
		return
	}
	c.block(&blockedOn{kind: store.KindZSet, left: min, count: count}, keys, timeout)
}

// blockingCommands are the blocking list and sorted-set commands' specs,
// with LMPOP and ZMPOP.
func blockingCommands() []*Command {
	const blk = FlagWrite | FlagNoScript | FlagBlocking
	return []*Command{
		newCmd("blpop", -3, blk, 1, -2, 1, cmdBPop, "list"),
		newCmd("brpop", -3, blk, 1, -2, 1, cmdBPop, "list"),
		newCmd("brpoplpush", 4, FlagWrite|FlagDenyOOM|FlagNoScript|FlagBlocking, 1, 2, 1, cmdBLMove, "list"),
		newCmd("blmove", 6, FlagWrite|FlagDenyOOM|FlagNoScript|FlagBlocking, 1, 2, 1, cmdBLMove, "list"),
		newCmd("blmpop", -5, FlagWrite|FlagBlocking|FlagMovableKeys, 0, 0, 0, cmdLMPop, "list").withKeys(numKeysAt(2)),
		newCmd("lmpop", -4, FlagWrite|FlagMovableKeys, 0, 0, 0, cmdLMPop, "list").withKeys(numKeysAt(1)),
		newCmd("bzpopmin", -3, blk|FlagFast, 1, -2, 1, cmdBZPop, "sorted-set"),
		newCmd("bzpopmax", -3, blk|FlagFast, 1, -2, 1, cmdBZPop, "sorted-set"),
		newCmd("bzmpop", -5, FlagWrite|FlagBlocking|FlagMovableKeys, 0, 0, 0, cmdZMPop, "sorted-set").withKeys(numKeysAt(2)),
		newCmd("zmpop", -4, FlagWrite|FlagMovableKeys, 0, 0, 0, cmdZMPop, "sorted-set").withKeys(numKeysAt(1)),
	}
}
