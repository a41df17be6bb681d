package server

import (
	"net"
	"sort"
	"strings"
	"sync"

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
// goroutine of its own (blocking() lists the subscribe commands) and gets a
// writer goroutine. From then on everything it is sent goes through its
// pending buffer, in the order the server produced it under the server
// lock: a batch's replies are moved there before the lock is released, and
// a message appended for a subscriber first moves that client's unsent
// replies. Nothing of this runs for connections that never subscribed.

// pubsubOutputLimit is the hard output limit of a subscriber (Redis's
// client-output-buffer-limit pubsub 32mb): one that falls that far behind
// is disconnected.
const pubsubOutputLimit = 32 << 20

type pubsubState struct {
	channels map[string]map[*Client]struct{}
	patterns map[string]map[*Client]struct{}
	shard    map[string]map[*Client]struct{}
}

// subscriber is the Pub/Sub state of one client (Client.ps).
type subscriber struct {
	c                         *Client
	channels, patterns, shard map[string]struct{}

	mu      sync.Mutex
	pending []byte
	spare   []byte
	wake    chan struct{}
	done    chan struct{}
	conn    net.Conn
}

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

func cmdSubscribe(c *Client, argv [][]byte) {
	st := c.s.pubsub()
	ps := c.subscriberOf()
	shard := c.cmd.Name == "ssubscribe"
	pattern := c.cmd.Name == "psubscribe"
	for _, a := range argv[1:] {
		name := string(a)
		var mine map[string]struct{}
		var all map[string]map[*Client]struct{}
		switch {
		case shard:
			mine, all = ps.shard, st.shard
		case pattern:
			mine, all = ps.patterns, st.patterns
		default:
			mine, all = ps.channels, st.channels
		}
		if _, ok := mine[name]; !ok {
			mine[name] = struct{}{}
			if all[name] == nil {
				all[name] = map[*Client]struct{}{}
			}
			all[name][c] = struct{}{}
		}
		count := ps.subscriptions()
		if shard {
			count = len(ps.shard)
		}
		c.subscribeReply(c.cmd.Name, a, count)
	}
}

func cmdUnsubscribe(c *Client, argv [][]byte) {
	kind := c.cmd.Name
	if c.ps == nil { // never subscribed: nothing to end
		if len(argv) == 1 {
			c.subscribeReply(kind, nil, 0)
		}
		for _, a := range argv[1:] {
			c.subscribeReply(kind, a, 0)
		}
		return
	}
	st := c.s.pubsub()
	ps := c.ps
	var mine map[string]struct{}
	var all map[string]map[*Client]struct{}
	switch kind {
	case "sunsubscribe":
		mine, all = ps.shard, st.shard
	case "punsubscribe":
		mine, all = ps.patterns, st.patterns
	default:
		mine, all = ps.channels, st.channels
	}
	names := argv[1:]
	if len(names) == 0 {
		for _, n := range sortedSet(mine) {
			names = append(names, []byte(n))
		}
		if len(names) == 0 {
			count := ps.subscriptions()
			if kind == "sunsubscribe" {
				count = len(ps.shard)
			}
			c.subscribeReply(kind, nil, count)
			return
		}
	}
	for _, a := range names {
		name := string(a)
		if _, ok := mine[name]; ok {
			delete(mine, name)
			unsub(all, name, c)
		}
		count := ps.subscriptions()
		if kind == "sunsubscribe" {
			count = len(ps.shard)
		}
		c.subscribeReply(kind, a, count)
	}
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

// clusterNode returns the cluster node when this server is in cluster mode.
func (s *Server) clusterBus() *ext {
	if s.ext != nil && s.ext.bus != nil && s.ext.node != nil {
		return s.ext
	}
	return nil
}

func cmdPublish(c *Client, argv [][]byte) {
	s := c.s
	n := s.publishLocal(argv[1], argv[2], false)
	if e := s.clusterBus(); e != nil {
		e.node.Publish(argv[1], argv[2])
		e.pending = true
	} else {
		// Outside cluster mode PUBLISH reaches replicas through the
		// replication stream, as in Redis.
		s.propagate(c.db, argv)
	}
	c.Int(int64(n))
}

func cmdSPublish(c *Client, argv [][]byte) {
	s := c.s
	n := s.publishLocal(argv[1], argv[2], true)
	if e := s.clusterBus(); e != nil {
		e.node.PublishShard(argv[1], argv[2])
		e.pending = true
	} else {
		s.propagate(c.db, argv)
	}
	c.Int(int64(n))
}

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

func cmdPubsub(c *Client, argv [][]byte) {
	st := c.s.pubsub()
	sub := strings.ToUpper(string(argv[1]))
	switch {
	case (sub == "CHANNELS" || sub == "SHARDCHANNELS") && len(argv) <= 3:
		m := st.channels
		if sub == "SHARDCHANNELS" {
			m = st.shard
		}
		var out []string
		for ch := range m {
			if len(argv) == 3 && !GlobMatch(argv[2], []byte(ch)) {
				continue
			}
			out = append(out, ch)
		}
		sort.Strings(out)
		c.Array(len(out))
		for _, ch := range out {
			c.BulkString(ch)
		}
	case sub == "NUMSUB" || sub == "SHARDNUMSUB":
		m := st.channels
		if sub == "SHARDNUMSUB" {
			m = st.shard
		}
		c.Map(len(argv) - 2)
		for _, a := range argv[2:] {
			c.Bulk(a)
			c.Int(int64(len(m[string(a)])))
		}
	case sub == "NUMPAT" && len(argv) == 2:
		c.Int(int64(len(st.patterns)))
	case sub == "HELP" && len(argv) == 2:
		help := []string{"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"CHANNELS [<pattern>]", "NUMPAT", "NUMSUB [<channel> ...]", "SHARDCHANNELS [<pattern>]", "SHARDNUMSUB [<shardchannel> ...]", "HELP"}
		c.Array(len(help))
		for _, h := range help {
			c.Simple(h)
		}
	default:
		c.Error("ERR unknown subcommand or wrong number of arguments for '" + strings.ToLower(string(argv[1])) + "'. Try PUBSUB HELP.")
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

func (s *Server) registerPubSubCommands() {
	const f = "pubsub noscript loading stale"
	s.reg("subscribe", -2, f, 0, 0, 0, cmdSubscribe, "pubsub")
	s.reg("psubscribe", -2, f, 0, 0, 0, cmdSubscribe, "pubsub")
	s.reg("unsubscribe", -1, f, 0, 0, 0, cmdUnsubscribe, "pubsub")
	s.reg("punsubscribe", -1, f, 0, 0, 0, cmdUnsubscribe, "pubsub")
	s.reg("ssubscribe", -2, f, 1, -1, 1, cmdSubscribe, "pubsub")
	s.reg("sunsubscribe", -1, f, 1, -1, 1, cmdUnsubscribe, "pubsub")
	s.reg("publish", 3, "pubsub loading stale fast may_replicate", 0, 0, 0, cmdPublish, "pubsub")
	s.reg("spublish", 3, "pubsub loading stale fast may_replicate", 1, 1, 1, cmdSPublish, "pubsub")
	s.reg("pubsub", -2, "", 0, 0, 0, cmdPubsub, "pubsub").Subcommands = []*Command{
		sub("channels", -2, "pubsub loading stale"), sub("numpat", 2, "pubsub loading stale"),
		sub("numsub", -2, "pubsub loading stale"), sub("shardchannels", -2, "pubsub loading stale"),
		sub("shardnumsub", -2, "pubsub loading stale"), sub("help", 2, "loading stale"),
	}
}
