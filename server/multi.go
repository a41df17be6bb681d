package server

import (
	"strings"
	"time"
)

// touch invalidates the transactions of clients watching key.
func (s *Server) touch(db int, key []byte) {
	ws := s.watchers[watchedKey{db, string(key)}]
	for _, c := range ws {
		c.watchBad = true
	}
}

// touchAll invalidates the watchers of the keys db holds, before FLUSHDB or
// FLUSHALL empties it (db < 0 = all): as Redis's touchAllWatchedKeysInDb, a
// watched key that does not exist is not changed by a flush. (A key already
// expired when it was watched does not exist here: WATCH expires it.)
func (s *Server) touchAll(db int) {
	for k, ws := range s.watchers {
		if db >= 0 && k.db != db || !s.dbs[k.db].Has(k.key) {
			continue
		}
		for _, c := range ws {
			c.watchBad = true
		}
	}
}

func (s *Server) unwatchAll(c *Client) {
	for _, wk := range c.watched {
		ws := s.watchers[wk]
		for i, x := range ws {
			if x == c {
				ws = append(ws[:i], ws[i+1:]...)
				break
			}
		}
		if len(ws) == 0 {
			delete(s.watchers, wk)
		} else {
			s.watchers[wk] = ws
		}
	}
	c.watched = nil
	c.watchBad = false
}

func (c *Client) resetMulti() {
	c.multi = false
	c.queue = nil
	c.multiErr = false
}

// CLIENT PAUSE support: commands wait (outside the lock) until the pause
// ends. What waits is Redis's processCommand's choice: under WRITE, a
// command whose flags (a script's declared ones, getCommandFlags) write or
// may replicate, and EXEC of a transaction holding one; a command with the
// wrong arity is answered at once.
func (s *Server) paused(c *Client, argv [][]byte) bool {
	if s.pauseEnd.IsZero() {
		return false
	}
	if time.Now().After(s.pauseEnd) {
		s.endPause()
		return false
	}
	if len(argv) >= 2 && strings.EqualFold(string(argv[0]), "client") &&
		(strings.EqualFold(string(argv[1]), "unpause") || strings.EqualFold(string(argv[1]), "pause")) {
		return false
	}
	cmd := s.Lookup(argv[0])
	if cmd == nil || !checkArity(cmd.Arity, len(argv)) {
		return false
	}
	if s.pauseAll {
		return true
	}
	if s.commandFlags(cmd, argv)&(FlagWrite|FlagMayReplicate) != 0 {
		return true
	}
	if cmd.Name == "exec" && c.multi {
		for _, q := range c.queue {
			if qc := s.Lookup(q[0]); qc != nil && s.commandFlags(qc, q)&(FlagWrite|FlagMayReplicate) != 0 {
				return true
			}
		}
	}
	return false
}

// endPause ends a pause whose time has passed or that CLIENT UNPAUSE
// ended: expiry resumes.
func (s *Server) endPause() {
	s.pauseEnd = time.Time{}
	s.expirePaused = false
	s.applyExpireMode()
}

// applyExpireMode sets whether keys whose time has passed are deleted: not
// on a replica (its primary's DELs arrive in the stream) nor while clients
// are paused (Redis 7.0 neither expires actively nor lazily then, so the
// dataset does not change during a pause); such keys still read as gone.
func (s *Server) applyExpireMode() {
	for _, db := range s.dbs {
		db.NoLazyExpire = s.replicaKeyspace || s.expirePaused
	}
}

func (s *Server) waitPause(c *Client, argv [][]byte) {
	counted := false
	defer func() {
		if counted {
			s.mu.Lock()
			s.pausedClients--
			s.mu.Unlock()
		}
	}()
	for {
		s.mu.Lock()
		still := s.paused(c, argv)
		end, ch := s.pauseEnd, s.pauseCh
		if still != counted {
			// A paused client counts in INFO blocked_clients, as
			// Redis's blockPostponeClient.
			counted = still
			if still {
				s.pausedClients++
			} else {
				s.pausedClients--
			}
		}
		s.mu.Unlock()
		if !still {
			return
		}
		t := time.NewTimer(time.Until(end))
		select {
		case <-t.C:
		case <-ch:
		case <-s.shutdown:
			t.Stop()
			return
		}
		t.Stop()
	}
}

func (s *Server) unpause() {
	s.endPause()
	s.repl.sendPendingAck()
	close(s.pauseCh)
	s.pauseCh = make(chan struct{})
}
