package server

import (
	"github.com/redline-dev/redline/server/store"
)

func (c *Client) streamIDReply(id store.StreamID) {
	var buf [48]byte
	c.Bulk(id.Append(buf[:0]))
}

func (c *Client) entryReply(e *store.StreamEntry) {
	c.Array(2)
	c.streamIDReply(e.ID)
	c.Array(len(e.Fields))
	for _, f := range e.Fields {
		c.Bulk(f)
	}
}

// streamConsumer looks up (refreshing its seen time) or creates the
// consumer name of g; a consumer a NOACK read creates is propagated.
func streamConsumer(c *Client, g *store.StreamCG, key, group []byte, name string, noack bool) *store.StreamConsumer {
	now := c.s.clock.NowMs()
	if cons := g.Consumer(name); cons != nil {
		cons.SeenTime = now
		return cons
	}
	cons := g.CreateConsumer(name, now)
	c.s.dirty++
	c.notify(notifyStream, "xgroup-createconsumer", key)
	if noack {
		c.s.propagate(c.db, [][]byte{[]byte("XGROUP"), []byte("CREATECONSUMER"), copyBytes(key), copyBytes(group), []byte(name)})
	}
	return cons
}

// streamServe is streamReplyWithRange for XREAD/XREADGROUP: r gets the
// entries from start on (at most count), g's last ID and PEL follow.
func streamServe(r, c *Client, s *store.Stream, start store.StreamID, count int64, key []byte, g *store.StreamCG, cons *store.StreamConsumer, group []byte, noack, history bool) {
	now := c.s.clock.NowMs()
	if g != nil && history {
		pend := cons.PendingFrom(start)
		n := len(pend)
		if count > 0 && int64(n) > count {
			n = int(count)
		}
		r.Array(n)
		for _, p := range pend[:n] {
			if e := s.Get(p.ID); e != nil {
				r.entryReply(e)
				p.DeliveryTime = now
				p.DeliveryCount++
			} else {
				r.Array(2)
				r.streamIDReply(p.ID)
				r.NullArray()
			}
		}
		return
	}
	var ents []*store.StreamEntry
	s.Range(start, store.MaxStreamID, false, func(e *store.StreamEntry) bool {
		ents = append(ents, e)
		return count == 0 || int64(len(ents)) < count
	})
	r.Array(len(ents))
	propLast := false
	for _, e := range ents {
		if g != nil && e.ID.Cmp(g.LastID) > 0 {
			if g.EntriesRead != -1 && !s.HasTombstones(e.ID) {
				g.EntriesRead++
			} else if s.EntriesAdded != 0 {
				g.EntriesRead = s.EstimateDistance(e.ID)
			}
			g.LastID = e.ID
			if noack {
				propLast = true
			}
		}
		r.entryReply(e)
		if g != nil && !noack {
			nack := g.Deliver(e.ID, cons, now)
			propagateXClaim(c, key, g, group, e.ID, nack)
		}
	}
	if propLast {
		propagateGroupID(c, key, g, group)
	}
}

func propagateXClaim(c *Client, key []byte, g *store.StreamCG, group []byte, id store.StreamID, n *store.StreamNACK) {
	c.s.propagate(c.db, [][]byte{[]byte("XCLAIM"), copyBytes(key), copyBytes(group), []byte(n.Consumer.Name), []byte("0"),
		streamIDBytes(id), []byte("TIME"), itob(n.DeliveryTime), []byte("RETRYCOUNT"), itob(n.DeliveryCount),
		[]byte("FORCE"), []byte("JUSTID"), []byte("LASTID"), streamIDBytes(g.LastID)})
}

func propagateGroupID(c *Client, key []byte, g *store.StreamCG, group []byte) {
	c.s.propagate(c.db, [][]byte{[]byte("XGROUP"), []byte("SETID"), copyBytes(key), copyBytes(group),
		streamIDBytes(g.LastID), []byte("ENTRIESREAD"), itob(g.EntriesRead)})
}

func propagateXClaimRaw(c *Client, key []byte, g *store.StreamCG, group, id []byte, n *store.StreamNACK) {
	c.s.propagate(c.db, [][]byte{[]byte("XCLAIM"), copyBytes(key), copyBytes(group), []byte(n.Consumer.Name), []byte("0"),
		copyBytes(id), []byte("TIME"), itob(n.DeliveryTime), []byte("RETRYCOUNT"), itob(n.DeliveryCount),
		[]byte("FORCE"), []byte("JUSTID"), []byte("LASTID"), streamIDBytes(g.LastID)})
}

// streamConsumerNoProp looks up (refreshing) or creates a consumer.
func streamConsumerNoProp(c *Client, g *store.StreamCG, key []byte, name string) *store.StreamConsumer {
	now := c.s.clock.NowMs()
	if cons := g.Consumer(name); cons != nil {
		cons.SeenTime = now
		return cons
	}
	c.s.dirty++
	cons := g.CreateConsumer(name, now)
	c.notify(notifyStream, "xgroup-createconsumer", key)
	return cons
}
