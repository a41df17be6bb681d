// Set commands (Redis t_set.c).

package server

import (
	"math"
	"math/rand/v2"
	"strings"

	"github.com/redline-dev/redline/server/store"
)

func cmdSAdd(c *Client, argv [][]byte) {
	o, ok := c.getOrCreate(argv[1], store.KindSet)
	if !ok {
		return
	}
	var n int64
	for _, m := range argv[2:] {
		if o.SetAdd(string(m)) {
			n++
		}
	}
	c.s.dirty += n
	if n > 0 {
		c.notify(notifySet, "sadd", argv[1])
	}
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
		if n > 0 {
			c.notify(notifySet, "srem", argv[1])
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
	ms := o.SetMembers()
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
	if n > 0 {
		c.notify(notifySet, "spop", argv[1])
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

// setsAt looks up the sets at keys; a missing key is nil. A key of another
// type replies WRONGTYPE and returns ok=false (Redis checks every key
// before computing anything).
func (c *Client) setsAt(keys [][]byte) ([]*store.Object, bool) {
	sets := make([]*store.Object, len(keys))
	for i, k := range keys {
		o, ok := c.lookup(k, store.KindSet)
		if !ok {
			return nil, false
		}
		sets[i] = o
	}
	return sets, true
}

type setOp int

const (
	setInter setOp = iota
	setUnion
	setDiff
)

// setAlgebra computes the intersection, union or difference of sets (nil
// is empty) as a new set object, members added in Redis's iteration order
// so the result's encoding matches.
func setAlgebra(op setOp, sets []*store.Object, limit int) *store.Object {
	out := store.NewObject(store.KindSet)
	switch op {
	case setInter:
		for _, s := range sets {
			if s == nil {
				return out
			}
		}
		smallest := sets[0]
		for _, s := range sets[1:] {
			if len(s.Set) < len(smallest.Set) {
				smallest = s
			}
		}
	members:
		for _, m := range smallest.SetMembers() {
			for _, s := range sets {
				if _, ok := s.Set[m]; !ok {
					continue members
				}
			}
			out.SetAdd(m)
			if limit > 0 && len(out.Set) >= limit {
				break
			}
		}
	case setUnion:
		for _, s := range sets {
			if s != nil {
				for _, m := range s.SetMembers() {
					out.SetAdd(m)
				}
			}
		}
	case setDiff:
		if sets[0] == nil {
			return out
		}
	diff:
		for _, m := range sets[0].SetMembers() {
			for _, s := range sets[1:] {
				if s != nil {
					if _, ok := s.Set[m]; ok {
						continue diff
					}
				}
			}
			out.SetAdd(m)
		}
	}
	return out
}

func setOpOf(name string) setOp {
	switch {
	case strings.HasPrefix(name, "sinter"):
		return setInter
	case strings.HasPrefix(name, "sunion"):
		return setUnion
	}
	return setDiff
}

// SINTER, SUNION, SDIFF.
func cmdSetAlgebra(c *Client, argv [][]byte) {
	sets, ok := c.setsAt(argv[1:])
	if !ok {
		return
	}
	res := setAlgebra(setOpOf(c.cmd.Name), sets, 0)
	ms := res.SetMembers()
	c.SetHeader(len(ms))
	for _, m := range ms {
		c.BulkString(m)
	}
}

// SINTERSTORE, SUNIONSTORE, SDIFFSTORE.
func cmdSetAlgebraStore(c *Client, argv [][]byte) {
	sets, ok := c.setsAt(argv[2:])
	if !ok {
		return
	}
	res := setAlgebra(setOpOf(c.cmd.Name), sets, 0)
	c.storeResult(argv[1], res)
	c.Int(int64(res.Len()))
}

// parseNumKeys parses the numkeys argument of SINTERCARD, ZUNION and the
// like: at least 1 and no more than the arguments after it.
func parseNumKeys(c *Client, b []byte, rest int) (int, bool) {
	n, ok := parseInt(b)
	if !ok || n < 1 {
		c.Error("ERR numkeys should be greater than 0")
		return 0, false
	}
	if n > int64(rest) {
		c.Error("ERR Number of keys can't be greater than number of args")
		return 0, false
	}
	return int(n), true
}

// SINTERCARD numkeys key [key ...] [LIMIT limit]
func cmdSInterCard(c *Client, argv [][]byte) {
	n, ok := parseNumKeys(c, argv[1], len(argv)-2)
	if !ok {
		return
	}
	limit := int64(0)
	for i := 2 + n; i < len(argv); i++ {
		if eq(argv[i], "limit") && i+1 < len(argv) {
			l, ok := parseInt(argv[i+1])
			if !ok || l < 0 {
				c.Error("ERR LIMIT can't be negative")
				return
			}
			limit = l
			i++
			continue
		}
		c.Error(ErrSyntax)
		return
	}
	sets, ok := c.setsAt(argv[2 : 2+n])
	if !ok {
		return
	}
	c.Int(int64(setAlgebra(setInter, sets, int(min(limit, math.MaxInt32))).Len()))
}

// SMOVE source destination member
func cmdSMove(c *Client, argv [][]byte) {
	db := c.kv()
	src, dst := db.Get(argv[1]), db.Get(argv[2])
	if src == nil {
		c.Int(0)
		return
	}
	if src.Kind != store.KindSet || (dst != nil && dst.Kind != store.KindSet) {
		c.Error(ErrWrongType)
		return
	}
	m := string(argv[3])
	if src == dst {
		if _, ok := src.Set[m]; ok {
			c.Int(1)
		} else {
			c.Int(0)
		}
		return
	}
	if _, ok := src.Set[m]; !ok {
		c.Int(0)
		return
	}
	delete(src.Set, m)
	c.notify(notifySet, "srem", argv[1])
	c.dropIfEmpty(src)
	if dst == nil {
		dst = store.NewObject(store.KindSet)
		db.Add(argv[2], dst)
	}
	if !dst.SetAdd(m) {
		c.untouched = 2
	} else {
		c.notify(notifySet, "sadd", argv[2])
	}
	c.s.dirty++
	c.Int(1)
}

// SRANDMEMBER key [count]
func cmdSRandMember(c *Client, argv [][]byte) {
	if len(argv) > 3 {
		c.Error(ErrSyntax)
		return
	}
	count, withCount := int64(1), len(argv) == 3
	if withCount {
		n, ok := parseInt(argv[2])
		if !ok {
			c.Error(ErrNotInt)
			return
		}
		if n == math.MinInt64 {
			c.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
			return
		}
		count = n
	}
	o, ok := c.lookup(argv[1], store.KindSet)
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
	ms := o.SetMembers()
	if !withCount {
		c.BulkString(ms[rand.IntN(len(ms))])
		return
	}
	replyRandomSample(c, ms, count, 1, func(m string) { c.BulkString(m) })
}

// SSCAN key cursor [MATCH pattern] [COUNT count]
func cmdSScan(c *Client, argv [][]byte) {
	containerScan(c, argv, store.KindSet, (*store.Object).SetMembers)
}

// setCommands are the set family's specs.
func setCommands() []*Command {
	return []*Command{
		newCmd("sadd", -3, wf, 1, 1, 1, cmdSAdd, "set"),
		newCmd("srem", -3, wrf, 1, 1, 1, cmdSRem, "set"),
		newCmd("smembers", 2, ro, 1, 1, 1, cmdSMembers, "set"),
		newCmd("sismember", 3, rof, 1, 1, 1, cmdSIsMember, "set"),
		newCmd("smismember", -3, rof, 1, 1, 1, cmdSMIsMember, "set"),
		newCmd("scard", 2, rof, 1, 1, 1, cmdSCard, "set"),
		newCmd("spop", -2, wrf, 1, 1, 1, cmdSPop, "set"),
		newCmd("sinter", -2, ro, 1, -1, 1, cmdSetAlgebra, "set"),
		newCmd("sunion", -2, ro, 1, -1, 1, cmdSetAlgebra, "set"),
		newCmd("sdiff", -2, ro, 1, -1, 1, cmdSetAlgebra, "set"),
		newCmd("sinterstore", -3, w, 1, -1, 1, cmdSetAlgebraStore, "set"),
		newCmd("sunionstore", -3, w, 1, -1, 1, cmdSetAlgebraStore, "set"),
		newCmd("sdiffstore", -3, w, 1, -1, 1, cmdSetAlgebraStore, "set"),
		newCmd("sintercard", -3, ro|FlagMovableKeys, 0, 0, 0, cmdSInterCard, "set").withKeys(numKeysAt(1)),
		newCmd("smove", 4, wrf, 1, 2, 1, cmdSMove, "set"),
		newCmd("srandmember", -2, ro, 1, 1, 1, cmdSRandMember, "set"),
		newCmd("sscan", -3, ro, 1, 1, 1, cmdSScan, "set"),
	}
}
