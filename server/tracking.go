package server

import (
	"sort"
	"strconv"
	"strings"
	"time"
)

// CLIENT REPLY ON|OFF|SKIP: replies of a client in OFF mode, or of the one
// command after SKIP, are dropped after the command ran.
const (
	replyOn       = 0
	replyOff      = 1
	replySkipNext = 2 // set by CLIENT REPLY SKIP for the next command
)

// pushesReply names the commands whose replies are Pub/Sub notifications,
// which CLIENT REPLY OFF and SKIP do not silence.
func pushesReply(name string) bool {
	switch name {
	case "subscribe", "psubscribe", "ssubscribe", "unsubscribe", "punsubscribe", "sunsubscribe":
		return true
	}
	return false
}

// dropReply runs after a command that started in mode: the replies it
// produced from mark on (none when mark < 0) are dropped when the mode
// says so.
func (c *Client) dropReply(mark int, mode uint8) {
	switch mode {
	case replyOff:
		if c.replyMode == replyOff && mark >= 0 && len(c.out) >= mark {
			c.out = c.out[:mark]
		}
	case replySkipNext:
		// the SKIP command itself ran with mode on; this is the next one,
		// unless it was CLIENT REPLY ON, whose OK goes out (as in Redis)
		if c.replyMode == replySkipNext {
			if mark >= 0 && len(c.out) >= mark {
				c.out = c.out[:mark]
			}
			c.replyMode = replyOn
		}
	}
}

// CLIENT TRACKING: server-assisted client-side caching as in Redis 7.0.
// Keys read by a tracking client (read-only commands; OPTIN/OPTOUT with
// CLIENT CACHING) are remembered, and when a command, expiry or flush
// changes one the client gets an invalidation: a RESP3 push
// ["invalidate", [keys]] or, with REDIRECT to a RESP2 client subscribed to
// __redis__:invalidate, a message on that channel. BCAST clients get every
// key under their prefixes. A tracking connection leaves the event loop
// (as a subscriber does) so that pushes reach it between its commands.

func (s *Server) tracking() *trackingState {
	if s.trk == nil {
		s.trk = &trackingState{clients: map[*Client]*clientTracking{}, keys: map[string]map[*Client]struct{}{},
			prefixes: map[string]map[*Client]struct{}{}, bcastPending: map[string]map[string]*Client{},
			maxKeys: s.configInt("tracking-table-max-keys", 1000000)}
	}
	return s.trk
}

func overlaps(a, b string) bool {
	n := min(len(a), len(b))
	return a[:n] == b[:n]
}

// trackingOff disables tracking for c (CLIENT TRACKING off, disconnect).
func (s *Server) trackingOff(c *Client) {
	t := s.trk
	if t == nil {
		return
	}
	ct := t.clients[c]
	if ct == nil {
		return
	}
	for _, p := range ct.prefixes {
		if m := t.prefixes[p]; m != nil {
			delete(m, c)
			if len(m) == 0 {
				delete(t.prefixes, p)
				delete(t.bcastPending, p)
			}
		}
	}
	delete(t.clients, c)
}

func (s *Server) clientByID(id int64) *Client {
	s.clientsMu.Lock()
	defer s.clientsMu.Unlock()
	return s.clients[id]
}

// trackAfter runs after each command (lock held): it remembers the keys a
// tracking client read and invalidates the keys a write changed.
func (s *Server) trackAfter(c *Client, cmd *Command, argv [][]byte, wrote bool) {
	t := s.trk
	inScript := c.inScript && s.scripts != nil && s.scripts.caller != nil
	if inScript {
		c = s.scripts.caller // a script's reads and writes are its caller's
	}
	if ct := t.clients[c]; ct != nil {
		roScript := cmd.Name == "eval_ro" || cmd.Name == "evalsha_ro" || cmd.Name == "fcall_ro" // only what they run counts
		if cmd.Flags&FlagReadonly != 0 && !roScript && !ct.bcast && cmd.Flags&FlagPubSub == 0 {
			if !((ct.optin && !ct.caching) || (ct.optout && ct.caching)) {
				var read [][]byte
				if inScript {
					read = t.scriptKeys
				} else {
					for _, i := range cmd.KeyIndexes(argv) {
						read = append(read, argv[i])
					}
				}
				for _, kb := range read {
					k := string(kb)
					m := t.keys[k]
					if m == nil {
						m = map[*Client]struct{}{}
						t.keys[k] = m
					}
					if _, had := m[c]; !had {
						m[c] = struct{}{}
						t.items++
					}
				}
			}
		}
		if cmd.Name != "client" && !c.multi {
			ct.caching = false
		}
	}
	if wrote {
		for _, i := range cmd.KeyIndexes(argv) {
			s.trackInvalidate(c, string(argv[i]))
		}
	}
}

// trackInvalidate is Redis's trackingInvalidateKey: by is the client that
// changed key (nil for expiry).
func (s *Server) trackInvalidate(by *Client, key string) {
	t := s.trk
	if t == nil {
		return
	}
	for p := range t.prefixes {
		if strings.HasPrefix(key, p) {
			m := t.bcastPending[p]
			if m == nil {
				m = map[string]*Client{}
				t.bcastPending[p] = m
			}
			m[key] = by
		}
	}
	ids := t.keys[key]
	if ids == nil {
		return
	}
	delete(t.keys, key)
	t.items -= len(ids)
	for target := range ids {
		ct := t.clients[target]
		if ct == nil || ct.bcast || (ct.noloop && target == by) {
			continue
		}
		s.sendInvalidation(target, ct, []string{key}, false)
	}
}

// trackFlushBcast sends the pending BCAST invalidations, one array of
// keys per prefix and client.
func (s *Server) trackFlushBcast() {
	t := s.trk
	if t == nil || len(t.bcastPending) == 0 {
		return
	}
	for p, keys := range t.bcastPending {
		for target := range t.prefixes[p] {
			ct := t.clients[target]
			var ks []string
			for k, by := range keys {
				if ct.noloop && by == target {
					continue
				}
				ks = append(ks, k)
			}
			if len(ks) > 0 {
				sort.Strings(ks)
				s.sendInvalidation(target, ct, ks, false)
			}
		}
		delete(t.bcastPending, p)
	}
}

// trackFlushAll is FLUSHALL/FLUSHDB: every tracking client is told that
// everything is invalid (a null key list) and the table is emptied.
func (s *Server) trackFlushAll() {
	t := s.trk
	if t == nil {
		return
	}
	for c, ct := range t.clients {
		s.sendInvalidation(c, ct, nil, true)
	}
	t.keys = map[string]map[*Client]struct{}{}
	t.items = 0
}

var trackingChannel = []byte("__redis__:invalidate")

// trackDone sends what the command's own client was owed.
func (s *Server) trackDone(c *Client) {
	t := s.trk
	if t == nil || t.running != c {
		return
	}
	t.running = nil
	if c.multi {
		return // a queued command: nothing ran
	}
	pending := t.self
	t.self = nil
	if ct := t.clients[c]; ct != nil {
		for _, ks := range pending {
			s.sendInvalidation(c, ct, ks, ks == nil)
		}
	}
}

// sendInvalidation delivers to the tracking client c (or its redirect).
func (s *Server) sendInvalidation(c *Client, ct *clientTracking, keys []string, all bool) {
	if t := s.trk; t != nil && c == t.running && ct.redirect == 0 {
		if all {
			keys = nil
		}
		t.self = append(t.self, keys)
		return
	}
	target := c
	redirected := false
	if ct.redirect != 0 {
		target = s.clientByID(ct.redirect)
		// A client that quit or was killed is gone for Redis, which frees it
		// before serving anyone else; here its connection may not have
		// closed yet.
		if target == nil || target.closeNow || target.killed.Load() {
			ct.broken = true
			if c.proto == 3 {
				s.deliverPush(c, func(p *Client) {
					p.pushHeader(2)
					p.BulkString("tracking-redir-broken")
					p.Int(ct.redirect)
				})
			}
			return
		}
		redirected = true
	}
	var head func(p *Client)
	switch {
	case target.proto == 3:
		head = func(p *Client) {
			p.pushHeader(2)
			p.BulkString("invalidate")
		}
	case redirected && target.ps != nil && target.ps.subscriptions() > 0:
		head = func(p *Client) {
			p.pushHeader(3)
			p.Bulk(msgMessage)
			p.Bulk(trackingChannel)
		}
	default:
		return
	}
	s.deliverPush(target, func(p *Client) {
		head(p)
		if all {
			p.Null()
		} else {
			p.Array(len(keys))
			for _, k := range keys {
				p.BulkString(k)
			}
		}
	})
}

// deliverPush appends a push that build writes to t's output, as Redis
// appends it to the client's output buffer whichever client's command
// produced it (server lock held), and sees that it goes out now rather
// than with t's next reply:
//   - a client with a writer (a subscriber, a tracking client: they
//     leave the event loop) gets it through the writer;
//   - the client whose command runs now, and an internal client, get it
//     in out;
//   - any other client (a RESP3 redirect target served by an event loop
//     or by its own goroutine) is owned by a goroutine that writes its
//     out without the lock, so the push waits in t.foreign and the owner
//     is woken as a blocked client's is; it moves the push to out before
//     its next batch (takeForeign). Before this, a redirect target served
//     by a loop got the push only with its next reply, and its out was
//     written by two goroutines at once (Redis's unit/tracking, "Tracking
//     gets notification on tracking table key eviction" and the RESP3
//     redirect tests waited for it).
func (s *Server) deliverPush(t *Client, build func(p *Client)) {
	owner := t.ps != nil && t.ps.conn != nil
	running := s.trk != nil && s.trk.running == t
	internal := t.conn == nil && t.loop == nil
	if owner || running || internal {
		build(t)
		if owner {
			t.ps.enqueue()
		}
		return
	}
	scratch := Client{proto: t.proto}
	build(&scratch)
	t.foreign = append(t.foreign, scratch.out...)
	t.foreignPending.Store(true)
	s.wakeOwner(t)
}

// takeForeign moves the pushes other clients' commands left for c to its
// output (the owner's goroutine, before a batch).
func (s *Server) takeForeign(c *Client) {
	s.mu.Lock()
	c.out = append(c.out, c.foreign...)
	c.foreign = nil
	c.foreignPending.Store(false)
	s.mu.Unlock()
}

// trackingClients is INFO's tracking_clients.
func (s *Server) trackingClients() int {
	if s.trk == nil {
		return 0
	}
	return len(s.trk.clients)
}

// selfInfoLine is CLIENT LIST/INFO's line for the client asking: as in
// Redis, its query buffer still holds the command being run, and redir is
// its tracking redirection.
func (c *Client) selfInfoLine(now time.Time, argv [][]byte) string {
	line := c.infoLine(now)
	n := len(strconv.Itoa(len(argv))) + 3
	for _, a := range argv {
		n += len(strconv.Itoa(len(a))) + 3 + len(a) + 2
	}
	line = strings.Replace(line, " qbuf=0 ", " qbuf="+strconv.Itoa(n)+" ", 1)
	if c.s.trk != nil {
		if ct := c.s.trk.clients[c]; ct != nil {
			line = strings.Replace(line, " redir=-1 ", " redir="+strconv.FormatInt(ct.redirect, 10)+" ", 1)
		}
	}
	return line
}

// flushNow writes a closing subscriber's pending output from the calling
// goroutine (the writer may not run again before the connection closes).
func (ps *subscriber) flushNow() {
	if ps.conn == nil {
		return
	}
	ps.mu.Lock()
	b := ps.pending
	ps.pending = nil
	ps.mu.Unlock()
	if len(b) > 0 {
		ps.conn.SetWriteDeadline(time.Now().Add(time.Second))
		ps.conn.Write(b)
	}
}

// trackServedBlocked invalidates the keys a served blocked client changed
// (the popped key and an LMOVE's destination). Its own invalidations
// follow its reply r, as Redis sends them after the unblocked command's
// response (the client is the one "running" meanwhile).
func (s *Server) trackServedBlocked(c, r *Client, db int, key, target []byte) {
	t := s.trk
	running, self := t.running, t.self
	t.running, t.self = c, nil
	_ = db // tracking is keyed by name across databases, as in Redis
	s.trackInvalidate(c, string(key))
	if target != nil {
		s.trackInvalidate(c, string(target))
	}
	s.trackFlushBcast()
	pending := t.self
	t.running, t.self = running, self
	ct := t.clients[c]
	if ct == nil {
		return
	}
	out := c.out
	c.out = r.out
	for _, ks := range pending {
		s.sendInvalidation(c, ct, ks, ks == nil)
	}
	r.out, c.out = c.out, out
}

// trackingLimitKeys is Redis's trackingLimitUsedSlots (cron and before
// every command, so a client in MULTI gets the invalidation before its
// QUEUED): while the
// tracking table holds more keys than tracking-table-max-keys (0 = no
// limit), random keys leave it and their clients get the invalidation,
// at most a few hundred keys a round as Redis's effort grows.
func (s *Server) trackingLimitKeys() {
	t := s.trk
	if t == nil {
		return
	}
	max := t.maxKeys
	if max <= 0 || len(t.keys) <= max {
		return
	}
	for effort := 100 * 10; len(t.keys) > max && effort > 0; effort-- {
		for key, ids := range t.keys { // map order is random
			delete(t.keys, key)
			t.items -= len(ids)
			for target := range ids {
				if ct := t.clients[target]; ct != nil && !ct.bcast {
					s.sendInvalidation(target, ct, []string{key}, false)
				}
			}
			break
		}
	}
}

// trackingTotals are INFO's tracking_total_keys, _items and _prefixes.
func (s *Server) trackingTotals() (keys, items, prefixes int) {
	if t := s.trk; t != nil {
		return len(t.keys), t.items, len(t.prefixes)
	}
	return 0, 0, 0
}
