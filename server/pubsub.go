package server

import (
	"sort"

	"github.com/redline-dev/redline/server/cluster"
	"github.com/redline-dev/redline/server/keyslot"
	"github.com/redline-dev/redline/server/resp"
)

// Pub/Sub as Redis 7.0: channels, patterns and shard channels. In cluster
// mode PUBLISH also goes to every other node over the bus (PUBLISH
// message) and SPUBLISH, routed by slot like a key, to the other nodes of
// the shard (PUBLISHSHARD), so a subscriber of any node gets it; a master
// that loses a slot tells its shard subscribers of that slot with
// "sunsubscribe".
//
// Delivery: a connection that subscribes leaves the event loop for a
// goroutine of its own (commandHoldsCaller lists the subscribe commands)
// and gets a writer goroutine. From then on everything it is sent goes through its
// pending buffer, in the order the server produced it under the server
// lock: a batch's replies are moved there before the lock is released, and
// a message appended for a subscriber first moves that client's unsent
// replies. Nothing of this runs for connections that never subscribed.

// pubsubOutputLimit is the hard output limit of a subscriber (Redis's
// client-output-buffer-limit pubsub 32mb): one that falls that far behind
// is disconnected.
const pubsubOutputLimit = 32 << 20

func (s *Server) pubsub() *pubsubState {
	if s.ps == nil {
		s.ps = &pubsubState{channels: map[string]map[*Client]struct{}{}, patterns: map[string]map[*Client]struct{}{},
			shard: map[string]map[*Client]struct{}{}}
	}
	return s.ps
}

// subscriberOf returns c's subscriber state, starting its writer.
func (c *Client) subscriberOf() *subscriber {
	if c.ps == nil {
		ps := &subscriber{c: c, channels: map[string]struct{}{}, patterns: map[string]struct{}{}, shard: map[string]struct{}{},
			wake: make(chan struct{}, 1), done: make(chan struct{}), conn: c.conn}
		c.ps = ps
		// Only a connection served by its own goroutine has a writer (the
		// subscribe commands leave the event loop first); internal
		// clients keep their replies in out.
		if _, isLoop := c.conn.(loopConn); c.conn == nil || isLoop {
			ps.conn = nil
		} else {
			c.s.subscribers.Add(1)
			go ps.writer()
		}
	}
	return c.ps
}

// subscriptions is the count Redis replies with for channels and patterns.
func (ps *subscriber) subscriptions() int { return len(ps.channels) + len(ps.patterns) }

// inContext reports whether c is in RESP2's subscribed context.
func (c *Client) inPubSubContext() bool {
	return c.ps != nil && c.proto == 2 && (c.ps.subscriptions() > 0 || len(c.ps.shard) > 0)
}

// enqueue moves c's unsent replies to the pending buffer (server lock held).
func (ps *subscriber) enqueue() {
	c := ps.c
	if len(c.out) == 0 || ps.conn == nil {
		return
	}
	ps.mu.Lock()
	ps.pending = append(ps.pending, c.out...)
	over := len(ps.pending) > pubsubOutputLimit
	ps.mu.Unlock()
	c.resetOut()
	if over {
		c.killed.Store(true)
		if ps.conn != nil {
			ps.conn.Close()
		}
		return
	}
	select {
	case ps.wake <- struct{}{}:
	default:
	}
}

func (ps *subscriber) writer() {
	for {
		select {
		case <-ps.done:
			return
		case <-ps.wake:
		}
		ps.mu.Lock()
		b := ps.pending
		ps.pending = ps.spare[:0]
		ps.mu.Unlock()
		if len(b) > 0 {
			if _, err := ps.conn.Write(b); err != nil {
				ps.conn.Close()
				return
			}
		}
		ps.mu.Lock()
		if cap(b) <= 1<<20 {
			ps.spare = b[:0]
		}
		ps.mu.Unlock()
	}
}

// dropSubscriber forgets a closing client's subscriptions (lock held).
func (s *Server) dropSubscriber(c *Client) {
	if c.ps == nil {
		return
	}
	s.unsubscribeAll(c)
	if c.ps.conn != nil {
		s.subscribers.Add(-1)
	}
	close(c.ps.done)
}

// unsubscribeAll ends every subscription of c, silently (RESET; a closing
// client). Its writer keeps running: the connection may go on.
func (s *Server) unsubscribeAll(c *Client) {
	ps := c.ps
	if ps == nil {
		return
	}
	st := s.pubsub()
	for ch := range ps.channels {
		unsub(st.channels, ch, c)
	}
	for p := range ps.patterns {
		unsub(st.patterns, p, c)
	}
	for ch := range ps.shard {
		unsub(st.shard, ch, c)
	}
	clear(ps.channels)
	clear(ps.patterns)
	clear(ps.shard)
}

func unsub(m map[string]map[*Client]struct{}, name string, c *Client) {
	if set := m[name]; set != nil {
		delete(set, c)
		if len(set) == 0 {
			delete(m, name)
		}
	}
}

func (c *Client) pushHeader(n int) {
	if c.proto == 3 {
		c.out = resp.AppendPush(c.out, n)
	} else {
		c.out = resp.AppendArray(c.out, n)
	}
}

// subscribeReply writes ["subscribe"|..., name, count].
func (c *Client) subscribeReply(kind string, name []byte, count int) {
	c.pushHeader(3)
	c.BulkString(kind)
	if name == nil {
		c.Null()
	} else {
		c.Bulk(name)
	}
	c.Int(int64(count))
}

func sortedSet(m map[string]struct{}) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// deliver appends a message to a subscriber's output, after its unsent
// replies.
func deliver(sub *Client, parts ...[]byte) {
	ps := sub.ps
	if ps == nil || ps.conn == nil {
		return
	}
	sub.pushHeader(len(parts))
	for _, p := range parts {
		sub.Bulk(p)
	}
	ps.enqueue()
}

var (
	msgMessage  = []byte("message")
	msgPMessage = []byte("pmessage")
	msgSMessage = []byte("smessage")
)

// publishLocal delivers to this node's subscribers and returns how many
// received it.
func (s *Server) publishLocal(channel, payload []byte, shard bool) int {
	if s.ps == nil {
		return 0
	}
	st := s.ps
	n := 0
	if shard {
		for sub := range st.shard[string(channel)] {
			deliver(sub, msgSMessage, channel, payload)
			n++
		}
		return n
	}
	for sub := range st.channels[string(channel)] {
		deliver(sub, msgMessage, channel, payload)
		n++
	}
	for p, subs := range st.patterns {
		if !GlobMatch([]byte(p), channel) {
			continue
		}
		for sub := range subs {
			deliver(sub, msgPMessage, []byte(p), channel, payload)
			n++
		}
	}
	return n
}

// inCluster reports whether this server runs as a cluster node
// (cluster-enabled yes and started).
func (s *Server) inCluster() bool { return s.cl.bus != nil && s.cl.node != nil }

// dropUnservedShardChannels ends the shard subscriptions of channels whose
// slot this node's shard (itself or its master) no longer serves, telling
// each client with "sunsubscribe", as Redis does when a slot is deleted
// from a shard it is part of (a move, SETSLOT NODE, an UPDATE).
func (s *Server) dropUnservedShardChannels(v *cluster.SlotView) {
	if s.ps == nil || len(s.ps.shard) == 0 {
		return
	}
	for ch, subs := range s.ps.shard {
		owner := v.Owner[keyslot.Of([]byte(ch))]
		if owner >= 0 && (owner == v.Self || owner == v.Master) {
			continue
		}
		for sub := range subs {
			delete(sub.ps.shard, ch)
			sub.subscribeReply("sunsubscribe", []byte(ch), len(sub.ps.shard))
			sub.ps.enqueue()
		}
		delete(s.ps.shard, ch)
	}
}

// pubsubRefusal is the error for a command a RESP2 client in the
// subscribed context may not run, or "".
func pubsubRefusal(c *Client, cmd *Command) string {
	if !c.inPubSubContext() {
		return ""
	}
	switch cmd.Name {
	case "subscribe", "ssubscribe", "psubscribe", "unsubscribe", "sunsubscribe", "punsubscribe", "ping", "quit", "reset":
		return ""
	}
	return "ERR Can't execute '" + cmd.Name + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
}
