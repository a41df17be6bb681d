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

// CLIENT PAUSE support: commands wait (outside the lock) until the pause ends.
func (s *Server) paused(c *Client, argv [][]byte) bool {
	if s.pauseEnd.IsZero() {
		return false
	}
	if time.Now().After(s.pauseEnd) {
		s.pauseEnd = time.Time{}
		return false
	}
	if len(argv) >= 2 && strings.EqualFold(string(argv[0]), "client") &&
		(strings.EqualFold(string(argv[1]), "unpause") || strings.EqualFold(string(argv[1]), "pause")) {
		return false
	}
	if s.pauseAll {
		return true
	}
	cmd := s.Lookup(argv[0])
	if cmd == nil {
		return false
	}
	if cmd.Flags&(FlagWrite|FlagMayReplicate) != 0 {
		return true
	}
	// EVAL/EXEC may write.
	switch cmd.Name {
	case "eval", "evalsha", "exec":
		return true
	}
	return false
}

func (s *Server) waitPause(c *Client, argv [][]byte) {
	for {
		s.mu.Lock()
		still := s.paused(c, argv)
		end, ch := s.pauseEnd, s.pauseCh
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
	s.pauseEnd = time.Time{}
	close(s.pauseCh)
	s.pauseCh = make(chan struct{})
}
