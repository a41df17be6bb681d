// Clients blocked on keys (Redis's blocked.c): BLPOP, BRPOP, BRPOPLPUSH,
// BLMOVE, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP, and XREAD/XREADGROUP BLOCK
// (cmd_stream.go: a stream is ready when XADD feeds it, and XREADGROUP
// waiters get -NOGROUP or -UNBLOCKED when the group or the key goes).
//
// A command that finds all its keys empty parks its client here instead of
// replying: the client stays in its event loop (or goroutine), which runs
// none of the commands it sends meanwhile. When a list or sorted set key
// comes into existence (store.Hooks.Added, Redis's signalKeyAsReady in
// dbAdd) and clients wait on it, the key is queued as ready; after the
// command that created it (a whole EXEC or script included) the server
// serves the waiting clients first come, first served, with the lock still
// held, and propagates each pop in its non-blocking form (LPOP, LMOVE,
// ZPOPMIN ...). A served client's reply is built into a buffer of its own,
// because the client's loop or goroutine may be writing its earlier
// replies meanwhile; the owner then takes the reply and resumes the
// client's buffered input:
//   - an event loop client is queued on its loop, which an eventfd wakes;
//   - a client with a goroutine of its own is woken from its socket read by
//     a read deadline in the past (Client.woken says why).
// Timeouts are runtime timers (time.AfterFunc), one per blocked client with
// a timeout, stopped when it is served: nothing polls.

package server

import (
	"errors"
	"math"
	"net"
	"strconv"
	"time"

	"github.com/redline-dev/redline/server/keyslot"
	"github.com/redline-dev/redline/server/resp"
	"github.com/redline-dev/redline/server/store"
)

// denyBlocking reports whether a blocking command must answer at once as
// if it timed out: inside MULTI/EXEC and scripts (CLIENT_DENY_BLOCKING).
func (c *Client) denyBlocking() bool {
	return c.inScript || c.s.prop.depth > 0 || c.conn == nil
}

// blockTimeout parses a blocking command's timeout in seconds (a float) as
// Redis's getTimeoutFromObjectOrReply; 0 means forever.
func (c *Client) blockTimeout(b []byte) (time.Duration, bool) {
	f, ok := parseFloat(b)
	if !ok {
		// A long double holds what overflows a double; Redis's cast of
		// the huge product to long long comes out negative.
		if v, err := strconv.ParseFloat(string(b), 64); err != nil && math.IsInf(v, 0) && len(b) < 5000 && validFloatSyntax(b) {
			c.Error("ERR timeout is negative")
			return 0, false
		}
		c.Error("ERR timeout is not a float or out of range")
		return 0, false
	}
	ms := math.Ceil(f * 1000)
	if ms < 0 || ms >= math.MaxInt64 {
		c.Error("ERR timeout is negative")
		return 0, false
	}
	return time.Duration(ms) * time.Millisecond, true
}

// validFloatSyntax: a decimal number whose only fault is its size.
func validFloatSyntax(b []byte) bool {
	_, err := strconv.ParseFloat(string(b), 64)
	var ne *strconv.NumError
	return errors.As(err, &ne) && ne.Err == strconv.ErrRange && b[0] != ' '
}

// block parks c on b's keys (lock held) for timeout (0: forever).
func (c *Client) block(b *blockedOn, keys [][]byte, timeout time.Duration) {
	s := c.s
	b.db = c.db
	b.cmd = c.cmd
	if s.blk.keys == nil {
		s.blk.keys = make(map[watchedKey][]*Client)
	}
	for _, k := range keys {
		dup := false
		for _, o := range b.keys {
			if o == string(k) {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		b.keys = append(b.keys, string(k))
		wk := watchedKey{c.db, string(k)}
		s.blk.keys[wk] = append(s.blk.keys[wk], c)
	}
	c.blk = b
	c.blocked.Store(true)
	s.blk.n++
	if timeout > 0 {
		b.timer = time.AfterFunc(timeout, func() {
			s.mu.Lock()
			if c.blk == b && !b.served {
				s.finishBlocked(c, nullArrayReply(c), false)
			}
			s.mu.Unlock()
		})
	}
}

func nullArrayReply(c *Client) []byte {
	if c.proto == 3 {
		return resp.AppendNull(nil)
	}
	return resp.AppendNullArray(nil)
}

// unlinkBlocked removes a blocked client from the key index (lock held).
func (s *Server) unlinkBlocked(c *Client, b *blockedOn) {
	for _, k := range b.keys {
		wk := watchedKey{b.db, k}
		l := s.blk.keys[wk]
		for i, x := range l {
			if x == c {
				l = append(l[:i:i], l[i+1:]...)
				break
			}
		}
		if len(l) == 0 {
			delete(s.blk.keys, wk)
		} else {
			s.blk.keys[wk] = l
		}
	}
	if b.timer != nil {
		b.timer.Stop()
	}
	s.blk.n--
}

// unblock forgets c's blocked state without a reply (its connection is
// gone).
func (s *Server) unblock(c *Client) {
	b := c.blk
	if !b.served {
		s.unlinkBlocked(c, b)
	}
	c.blk = nil
	c.blocked.Store(false)
}

// finishBlocked answers a blocked client with reply and wakes its owner
// (lock held).
func (s *Server) finishBlocked(c *Client, reply []byte, closeAfter bool) {
	b := c.blk
	s.unlinkBlocked(c, b)
	b.served = true
	b.reply = reply
	b.closeAfter = closeAfter
	s.wakeOwner(c)
}

// wakeOwner wakes the goroutine that serves c, the event loop's or its
// own, to take what was left for it: a blocked command's reply, pushes
// (lock held).
func (s *Server) wakeOwner(c *Client) {
	switch {
	case c.loop != nil:
		s.wakeLoopClient(c)
	case c.conn != nil:
		// Flag first, deadline second: the goroutine checks the flag after
		// setting its own deadline, so one of the two reaches it.
		c.woken.Store(true)
		c.conn.SetReadDeadline(time.Unix(1, 0))
	}
}

// resumeBlocked is called by a blocked client's owner: once the client was
// answered, the reply joins c.out and the client runs commands again. It
// reports whether the client is free.
func (s *Server) resumeBlocked(c *Client) bool {
	s.mu.Lock()
	if b := c.blk; b != nil && b.served {
		c.out = append(c.out, b.reply...)
		if b.closeAfter {
			c.closeNow = true
		}
		c.blk = nil
		c.blocked.Store(false)
	}
	free := c.blk == nil
	s.mu.Unlock()
	return free
}

// wakeTimeout tells a goroutine's read error caused by a wake-up (or the
// stale deadline of one) from the idle timeout and real errors; for a
// wake-up it restores the read deadline and returns true.
func wakeTimeout(c *Client, conn net.Conn, err error, deadline time.Time) bool {
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		return false
	}
	now := time.Now()
	if !deadline.IsZero() && !now.Before(deadline) && !c.blocked.Load() {
		return false // idle for the timeout directive
	}
	if deadline.IsZero() || !now.Before(deadline) {
		conn.SetReadDeadline(time.Time{})
	} else {
		conn.SetReadDeadline(deadline)
	}
	return true
}

// keyAdded is the store's hook for a new key: a list or sorted set that
// clients wait for becomes ready.
func (s *Server) keyAdded(db int, key string, o *store.Object) {
	if s.blk.n == 0 || (o.Kind != store.KindList && o.Kind != store.KindZSet && o.Kind != store.KindStream) {
		return
	}
	s.signalReady(watchedKey{db, key})
}

func (s *Server) signalReady(wk watchedKey) {
	if _, ok := s.blk.keys[wk]; !ok || s.blk.readySet[wk] {
		return
	}
	if s.blk.readySet == nil {
		s.blk.readySet = make(map[watchedKey]bool)
	}
	s.blk.readySet[wk] = true
	s.blk.ready = append(s.blk.ready, wk)
}

// signalSwapped marks as ready the keys clients wait for in databases a
// and b after SWAPDB (Redis's scanDatabaseForReadyKeys).
func (s *Server) signalSwapped(a, b int) {
	if s.blk.n == 0 {
		return
	}
	for wk := range s.blk.keys {
		if wk.db != a && wk.db != b {
			continue
		}
		// Every key: a stream gone from under XREADGROUP is news too.
		s.signalReady(wk)
	}
}

// serveReadyKeys serves the clients blocked on the keys that became ready
// (Redis's handleClientsBlockedOnKeys), lock held, outside any EXEC or
// script.
func (s *Server) serveReadyKeys() {
	if s.prop.depth > 0 {
		return
	}
	for len(s.blk.ready) > 0 {
		ready := s.blk.ready
		s.blk.ready = nil
		for _, wk := range ready {
			delete(s.blk.readySet, wk)
			db := s.dbs[wk.db]
			db.Tick()
			o := db.GetString(wk.key)
			if o == nil || o.Kind != store.KindStream {
				s.unblockDeletedStreamReaders(wk)
			}
			if o == nil {
				continue
			}
			waiting := append([]*Client(nil), s.blk.keys[wk]...)
			for _, c := range waiting {
				b := c.blk
				if b == nil || b.served || b.kind != o.Kind {
					continue
				}
				if o.Kind == store.KindStream {
					start := nanotime()
					s.serveBlockedStream(c, b, wk, o)
					s.slowlogServed(c, b, start)
					continue
				}
				start := nanotime()
				emptied := s.serveBlocked(c, b, wk, o)
				s.slowlogServed(c, b, start)
				if emptied {
					break // the key was emptied and deleted
				}
			}
		}
	}
}

// serveBlocked pops for one blocked client from the ready key o, replies
// and propagates the pop as its non-blocking command. It reports whether o
// was emptied (and deleted).
func (s *Server) serveBlocked(c *Client, b *blockedOn, wk watchedKey, o *store.Object) bool {
	db := s.dbs[wk.db]
	r := &Client{s: s, proto: c.proto, db: wk.db, id: c.id}
	key := []byte(wk.key)
	if o.Kind == store.KindList {
		switch {
		case b.target != nil:
			dst := db.Get(b.target)
			if dst != nil && dst.Kind != store.KindList {
				r.Error(ErrWrongType)
				s.finishBlocked(c, r.out, false)
				return false
			}
			v := listPop(o, b.left)
			if dst == nil {
				dst = store.NewObject(store.KindList)
				db.Add(b.target, dst)
			}
			if b.toLeft {
				dst.List.PushFront(v)
				r.notify(notifyList, "lpush", b.target)
			} else {
				dst.List.PushBack(v)
				r.notify(notifyList, "rpush", b.target)
			}
			r.notifyPop(key, b.left)
			if b.cmd != nil && b.cmd.Name == "brpoplpush" {
				s.propagate(wk.db, [][]byte{[]byte("RPOPLPUSH"), key, b.target})
			} else {
				s.propagate(wk.db, [][]byte{[]byte("LMOVE"), key, b.target, sideName(b.left), sideName(b.toLeft)})
			}
			s.dirty++
			s.touch(wk.db, b.target)
			r.Bulk(v)
		case b.count < 0:
			s.propagate(wk.db, [][]byte{popName(b.left), key})
			v := listPop(o, b.left)
			s.dirty++
			r.notifyPop(key, b.left)
			r.Array(2)
			r.Bulk(key)
			r.Bulk(v)
		default:
			n := min(int(min(b.count, math.MaxInt32)), o.List.Len())
			s.propagate(wk.db, [][]byte{popName(b.left), key, itob(int64(n))})
			r.Array(2)
			r.Bulk(key)
			r.Array(n)
			for i := 0; i < n; i++ {
				r.Bulk(listPop(o, b.left))
			}
			s.dirty += int64(n)
			r.notifyPop(key, b.left)
		}
	} else {
		n := 1
		if b.count > 0 {
			n = min(int(min(b.count, math.MaxInt32)), o.ZSet.Len())
		}
		name := []byte("ZPOPMIN")
		if !b.left {
			name = []byte("ZPOPMAX")
		}
		if b.count < 0 {
			s.propagate(wk.db, [][]byte{name, key})
		} else {
			s.propagate(wk.db, [][]byte{name, key, itob(int64(n))})
		}
		popped := zsetPopN(o, n, b.left)
		s.dirty += int64(len(popped))
		r.notifyZPop(key, b.left)
		if b.count < 0 {
			r.Array(3)
			r.Bulk(key)
			r.BulkString(popped[0].Member)
			r.Double(popped[0].Score)
		} else {
			replyZMPop(r, key, popped)
		}
	}
	deleted := o.Len() == 0
	if deleted {
		db.Remove(o)
		r.notify(notifyGeneric, "del", key)
	}
	s.touch(wk.db, key)
	if s.trk != nil {
		s.trackServedBlocked(c, r, wk.db, key, b.target)
	}
	s.finishBlocked(c, r.out, false)
	return deleted
}

func listPop(o *store.Object, left bool) []byte {
	if left {
		return o.List.PopFront()
	}
	return o.List.PopBack()
}

func popName(left bool) []byte {
	if left {
		return []byte("LPOP")
	}
	return []byte("RPOP")
}

func sideName(left bool) []byte {
	if left {
		return []byte("left") // as Redis's shared.left
	}
	return []byte("right")
}

// zsetPopN removes and returns up to n entries from the low (min) or high
// end of a sorted set.
func zsetPopN(o *store.Object, n int, min bool) []store.ZEntry {
	var out []store.ZEntry
	for len(out) < n && o.ZSet.Len() > 0 {
		i := 0
		if !min {
			i = o.ZSet.Len() - 1
		}
		e := o.ZSet.At(i)
		o.ZSet.Remove(e.Member)
		out = append(out, e)
	}
	return out
}

// replyZMPop writes ZMPOP/BZMPOP's reply: the key and [member, score]
// pairs.
func replyZMPop(c *Client, key []byte, popped []store.ZEntry) {
	c.Array(2)
	c.Bulk(key)
	c.Array(len(popped))
	for _, e := range popped {
		c.Array(2)
		c.BulkString(e.Member)
		c.Double(e.Score)
	}
}

// unblockClient answers a client blocked on keys from CLIENT UNBLOCK: as a
// timeout, or with an error. It reports whether id was such a client.
func (s *Server) unblockClient(id int64, withError bool) bool {
	s.clientsMu.Lock()
	t := s.clients[id]
	s.clientsMu.Unlock()
	if t == nil || t.blk == nil || t.blk.served {
		return false
	}
	if withError {
		s.finishBlocked(t, resp.AppendError(nil, "UNBLOCKED client unblocked via CLIENT UNBLOCK"), false)
		s.stats.errorReplies++
	} else {
		s.finishBlocked(t, nullArrayReply(t), false)
	}
	return true
}

// disconnectBlocked answers every blocked client with -UNBLOCKED and closes
// it after the reply: the node turned replica (Redis's
// disconnectAllBlockedClients in replicationSetMaster).
func (s *Server) disconnectBlocked() {
	if s.blk.n == 0 {
		return
	}
	for _, c := range s.blockedClients() {
		s.finishBlocked(c, resp.AppendError(nil, "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)"), true)
		s.stats.errorReplies++
	}
}

// blockedClients lists the clients blocked on keys, in blocking order per
// key (lock held).
func (s *Server) blockedClients() []*Client {
	var out []*Client
	seen := map[*Client]bool{}
	for _, l := range s.blk.keys {
		for _, c := range l {
			if !seen[c] && c.blk != nil && !c.blk.served {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// redirectBlocked answers the blocked clients whose keys this cluster node
// no longer serves (Redis's clusterRedirectBlockedClientIfNeeded, run from
// the cron): -CLUSTERDOWN when the cluster is down or the slot unassigned,
// -MOVED when another node owns the slot and this one is not importing it.
// A READONLY client of a replica keeps waiting for a read-only command on
// its master's slots.
func (s *Server) redirectBlocked() {
	if s.blk.n == 0 || s.cl.bus == nil || s.cl.view == nil {
		return
	}
	v := s.cl.view
	for _, c := range s.blockedClients() {
		msg := ""
		if !v.StateOK {
			msg = "CLUSTERDOWN The cluster is down"
		} else {
			slot := keyslot.Of(c.blk.keys[0])
			node := v.Owner[slot]
			write := c.blk.cmd == nil || c.blk.cmd.Flags&FlagWrite != 0
			if c.ReadOnly && !write && v.Master >= 0 && v.Master == node {
				node = v.Self
			}
			if _, importing := v.Importing[slot]; node != v.Self && !importing {
				if node < 0 {
					msg = "CLUSTERDOWN Hash slot not served"
				} else {
					msg = "MOVED " + strconv.Itoa(slot) + " " + v.Nodes[node].Addr()
				}
			}
		}
		if msg != "" {
			s.finishBlocked(c, resp.AppendError(nil, msg), false)
			s.stats.errorReplies++
		}
	}
}

// unblockDeletedStreamReaders answers the XREADGROUP clients blocked on a
// key that no longer holds a stream (Redis's
// unblockDeletedStreamReadgroupClients).
func (s *Server) unblockDeletedStreamReaders(wk watchedKey) {
	for _, c := range append([]*Client(nil), s.blk.keys[wk]...) {
		if b := c.blk; b != nil && !b.served && b.kind == store.KindStream && b.xgroup != nil {
			s.finishBlocked(c, resp.AppendError(nil, "UNBLOCKED the stream key no longer exists"), false)
			s.stats.errorReplies++
			s.countError("UNBLOCKED")
			if b.cmd != nil {
				b.cmd.fails++
			}
		}
	}
}

// signalFlushed marks as ready the keys clients wait for in db (all when
// db < 0) before a flush empties it.
func (s *Server) signalFlushed(db int) {
	if s.blk.n == 0 {
		return
	}
	for wk := range s.blk.keys {
		if db < 0 || wk.db == db {
			s.signalReady(wk)
		}
	}
}

// streamReady marks a stream key as ready for the clients blocked on it.
func (s *Server) streamReady(db int, key []byte) {
	if s.blk.n == 0 {
		return
	}
	s.signalReady(watchedKey{db, string(key)})
}

// serveBlockedStream serves one client blocked on the stream o
// (serveClientsBlockedOnStreamKey).
func (s *Server) serveBlockedStream(c *Client, b *blockedOn, wk watchedKey, o *store.Object) {
	st := o.Stream
	gt := b.xids[wk.key]
	r := &Client{s: s, proto: c.proto, db: wk.db, id: c.id}
	var g *store.StreamCG
	if b.xgroup != nil {
		if g = st.Group(string(b.xgroup)); g == nil {
			r.Error("NOGROUP the consumer group this client was blocked on no longer exists")
			if b.cmd != nil {
				b.cmd.fails++
			}
			s.finishBlocked(c, r.out, false)
			return
		}
		gt = g.LastID
	}
	if st.LastID.Cmp(gt) <= 0 {
		return
	}
	start, _ := gt.Incr()
	key := []byte(wk.key)
	s.beginBlock()
	var cons *store.StreamConsumer
	if g != nil {
		cons = streamConsumer(r, g, key, b.xgroup, string(b.xconsumer), b.xnoack)
	}
	if r.proto == 2 {
		r.Array(1)
		r.Array(2)
	} else {
		r.out = resp.AppendMap(r.out, 1)
	}
	r.Bulk(key)
	streamServe(r, r, st, start, b.count, key, g, cons, b.xgroup, b.xnoack, false)
	s.endBlock()
	s.finishBlocked(c, r.out, false)
}
