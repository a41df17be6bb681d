package server

import (
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func notifySignals() <-chan os.Signal {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	return ch
}

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

func cmdWatch(c *Client, argv [][]byte) {
	if c.multi {
		c.Error("ERR WATCH inside MULTI is not allowed")
		return
	}
	s := c.s
	for _, k := range argv[1:] {
		s.dbs[c.db].Get(k) // expire lazily before watching
		wk := watchedKey{c.db, string(k)}
		dup := false
		for _, w := range c.watched {
			if w == wk {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		c.watched = append(c.watched, wk)
		s.watchers[wk] = append(s.watchers[wk], c)
	}
	c.OK()
}

func cmdUnwatch(c *Client, argv [][]byte) {
	c.s.unwatchAll(c)
	c.OK()
}

func cmdMulti(c *Client, argv [][]byte) {
	if c.multi {
		c.Error("ERR MULTI calls can not be nested")
		return
	}
	c.multi = true
	c.queue = nil
	c.multiErr = false
	c.OK()
}

func cmdDiscard(c *Client, argv [][]byte) {
	if !c.multi {
		c.Error("ERR DISCARD without MULTI")
		return
	}
	c.resetMulti()
	c.s.unwatchAll(c)
	c.OK()
}

func (c *Client) resetMulti() {
	c.multi = false
	c.queue = nil
	c.multiErr = false
}

func cmdExec(c *Client, argv [][]byte) {
	s := c.s
	if !c.multi {
		c.Error("ERR EXEC without MULTI")
		return
	}
	queue := c.queue
	if c.multiErr {
		c.resetMulti()
		s.unwatchAll(c)
		c.Error("EXECABORT Transaction discarded because of previous errors.")
		return
	}
	// A watched key may also have expired since WATCH.
	// Lookups expire them lazily, which touches the watchers.
	for _, wk := range c.watched {
		s.dbs[wk.db].GetString(wk.key)
	}
	if c.watchBad {
		c.resetMulti()
		s.unwatchAll(c)
		c.NullArray()
		return
	}
	c.resetMulti()
	s.unwatchAll(c)
	c.Array(len(queue))
	s.beginBlock()
	for _, q := range queue {
		cmd := s.Lookup(q[0])
		if cmd == nil {
			c.Error("ERR unknown command")
			continue
		}
		c.cmd = cmd
		c.exec(cmd, q)
	}
	s.endBlock()
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
