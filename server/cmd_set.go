// Set commands (Redis t_set.c).

package server

import (
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
