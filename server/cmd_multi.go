package server

import "github.com/redline-dev/redline/server/internal/planted"

// The transaction commands: MULTI, EXEC, DISCARD, WATCH, UNWATCH.

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
	if c.watchBad && !planted.On(planted.ExecIgnoresWatch) {
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
		if e := c.aclExecRefusal(cmd, q); e != "" {
			c.Error(e)
			continue
		}
		c.exec(cmd, q)
	}
	s.endBlock()
}

// multiCommands are the transaction commands' specs.
func multiCommands() []*Command {
	return []*Command{
		newCmd("multi", 1, FlagNoScript|FlagLoading|FlagStale|FlagFast|FlagAllowBusy, 0, 0, 0, cmdMulti, "transactions"),
		newCmd("exec", 1, FlagNoScript|FlagLoading|FlagStale|FlagSkipSlowlog, 0, 0, 0, cmdExec, "transactions"),
		newCmd("discard", 1, FlagNoScript|FlagLoading|FlagStale|FlagFast|FlagAllowBusy, 0, 0, 0, cmdDiscard, "transactions"),
		newCmd("watch", -2, FlagNoScript|FlagLoading|FlagStale|FlagFast|FlagAllowBusy, 1, -1, 1, cmdWatch, "transactions"),
		newCmd("unwatch", 1, FlagNoScript|FlagLoading|FlagStale|FlagFast|FlagAllowBusy, 0, 0, 0, cmdUnwatch, "transactions"),
	}
}
