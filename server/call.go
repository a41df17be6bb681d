package server

import (
	"bytes"
	"strings"
	"time"
)

// call runs one command: lookup, arity (the command's and its
// subcommand's, from the table), auth, ACL, the node's refusals, MULTI
// queueing, the handler, then propagation and WATCH invalidation.
func (c *Client) call(argv [][]byte) { c.callCmd(c.s.Lookup(argv[0]), argv) }

// callCmd is call with argv[0] already looked up (nil: unknown command).
//
// The path of every command a client sends has no defer: with its many
// returns Go cannot open-code them, and the runtime's deferred calls cost
// about a tenth of a pipelined GET (callgrind). CLIENT REPLY OFF/SKIP, rare,
// takes the wrapper that restores the reply buffer.
func (c *Client) callCmd(cmd *Command, argv [][]byte) {
	if c.replyMode != replyOn {
		c.callCmdReplyMode(cmd, argv)
		return
	}
	if cmd == nil {
		c.unknownCommand(argv)
		return
	}
	c.cmd = cmd
	c.lastCmd = cmd.Name
	c.checkAndRun(cmd, argv)
	c.s.afterCommand(c, cmd)
}

// callCmdReplyMode is callCmd for a client whose replies CLIENT REPLY
// drops.
func (c *Client) callCmdReplyMode(cmd *Command, argv [][]byte) {
	mark := len(c.out)
	if cmd != nil && pushesReply(cmd.Name) {
		mark = -1 // Pub/Sub notifications go out even so, as Redis's CLIENT_PUSHING
	}
	defer c.dropReply(mark, c.replyMode)
	if cmd == nil {
		c.unknownCommand(argv)
		return
	}
	c.cmd = cmd
	c.lastCmd = cmd.Name
	defer c.s.afterCommand(c, cmd)
	c.checkAndRun(cmd, argv)
}

// unknownCommand answers a command name that is not in the table.
func (c *Client) unknownCommand(argv [][]byte) {
	c.rejectQueued()
	var b strings.Builder
	b.WriteString("ERR unknown command '")
	b.WriteString(trunc(argv[0], 128))
	b.WriteString("', with args beginning with: ")
	for _, a := range argv[1:] {
		b.WriteString("'")
		b.WriteString(trunc(a, 128))
		b.WriteString("' ")
		if b.Len() > 1024 {
			break
		}
	}
	c.Error(b.String())
}

// checkAndRun refuses the command or queues or runs it: arity, auth, the
// node's refusals, MULTI.
func (c *Client) checkAndRun(cmd *Command, argv [][]byte) {
	s := c.s
	if !checkArity(cmd.Arity, len(argv)) {
		c.reject(ErrArity(cmd.Name))
		return
	}
	if sub := cmd.subcommand(argv); sub != nil && !checkArity(sub.Arity, len(argv)) {
		c.reject("ERR wrong number of arguments for '" + cmd.Name + "|" + sub.Name + "' command")
		return
	} else if cmd.Protected && !c.s.protectedAllowed(c, "enable-debug-command") {
		c.reject("ERR " + strings.ToUpper(cmd.Name) + " command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.")
		return
	} else if sub == nil && len(cmd.Subcommands) > 0 && len(argv) > 1 {
		// Refused before queueing, so MULTI ends in EXECABORT as in Redis.
		c.reject("ERR unknown subcommand '" + trunc(argv[1], 128) + "'. Try " + strings.ToUpper(cmd.Name) + " HELP.")
		return
	}
	if !c.authenticated && cmd.Flags&FlagNoAuth == 0 && c.authRequired() {
		c.reject(ErrNoAuth)
		return
	}
	if c.multi && cmd.Flags&FlagNoMulti != 0 {
		c.reject("ERR Command not allowed inside a transaction")
		return
	}
	if u := c.user; u != nil && !u.Unrestricted() {
		if e := c.aclRefusal(cmd, argv); e != "" {
			c.reject(e)
			return
		}
	}
	if c.ps != nil {
		if e := pubsubRefusal(c, cmd); e != "" {
			c.reject(e)
			return
		}
	}
	if e := s.refusal(c, cmd, argv); e != "" {
		c.reject(e)
		return
	}
	if c.multi && !isTxControl(cmd.Name) {
		q := make([][]byte, len(argv))
		for i, a := range argv {
			q[i] = append([]byte(nil), a...)
		}
		c.queue = append(c.queue, q)
		c.Simple("QUEUED")
		return
	}
	c.exec(cmd, argv)
}

func isTxControl(name string) bool {
	switch name {
	case "exec", "discard", "multi", "watch", "quit", "reset":
		return true
	}
	return false
}

// reject refuses a command before it runs. A refused EXEC discards the
// transaction with EXECABORT, as Redis's rejectCommand does.
func (c *Client) reject(msg string) {
	c.rejectQueued()
	if c.cmd != nil {
		c.cmd.rejected++
	}
	if c.cmd != nil && c.cmd.Name == "exec" {
		// Monitors saw MULTI and not the queued commands: EXEC ends it.
		c.s.feedMonitors(c, c.cmd, [][]byte{[]byte("exec")})
		c.resetMulti()
		c.s.unwatchAll(c)
		c.Error("EXECABORT Transaction discarded because of: " + strings.TrimPrefix(msg, "ERR "))
		return
	}
	c.Error(msg)
}

// rejectQueued marks the transaction as failed when a command is refused
// while queueing (EXEC then replies EXECABORT).
func (c *Client) rejectQueued() {
	if c.multi {
		c.multiErr = true
	}
}

// exec runs a checked command and propagates it if it changed the dataset.
func (c *Client) exec(cmd *Command, argv [][]byte) {
	s := c.s
	if s.trk != nil && !c.inScript && s.trk.running == nil {
		s.trk.running = c // its own invalidations wait for its reply
		defer s.trackDone(c)
	}
	c.execCmd(cmd, argv)
}

// execCmd is exec without the tracking bookkeeping (no defer on the path
// of every command).
func (c *Client) execCmd(cmd *Command, argv [][]byte) {
	s := c.s
	// One reading of the monotonic clock gives the command both its
	// time (the DB's cached now, as Redis's updateCachedTime in call) and
	// the start of its duration; time.Now reads two clocks.
	start := nanotime()
	if !c.inScript { // a script's commands share the time of its start (scripting.call)
		s.db(c.db).TickAt(start)
	}
	dirty := s.dirty
	c.propSet = false
	s.stats.errSeen = s.stats.errorReplies
	cmd.handlerFor(argv)(c, argv)
	if s.stats.errorReplies != s.stats.errSeen {
		cmd.fails++
		s.stats.errSeen = s.stats.errorReplies
	}
	cmd.calls++
	s.stats.commands++
	if s.slowStats {
		d := time.Duration(nanotime() - start)
		cmd.usec += d.Microseconds()
		if !c.inScript {
			s.recordCall(c, cmd, argv, d)
		}
	}
	if s.trk != nil {
		s.trackAfter(c, cmd, argv, s.dirty != dirty && cmd.Flags&FlagWrite != 0)
	}
	if len(s.monitors) > 0 && monitored(cmd, argv) {
		s.feedMonitors(c, cmd, argv)
	}
	if s.dirty != dirty && cmd.Flags&FlagWrite != 0 {
		if c.propSet {
			if len(c.propArgv) > 0 {
				s.propagate(c.db, c.propArgv)
			}
		} else {
			s.propagate(c.db, argv)
		}
		if s.oom.accounting {
			s.rechargeKeys(c.db, cmd, argv)
		}
		if len(s.watchers) > 0 {
			for _, i := range cmd.KeyIndexes(argv) {
				if i != c.untouched {
					s.touch(c.db, argv[i])
				}
			}
		}
	}
	c.propSet = false
	c.propArgv = nil
	c.untouched = 0
}

// trunc is Redis's "%.128s" of an argument in an error reply: at most n
// bytes, and, as C's printf reads a NUL-terminated string, nothing from
// the first NUL byte on ("unknown subcommand '\x00'" is "unknown
// subcommand ”" from redis-server 7.0.15).
func trunc(b []byte, n int) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}

// cstr is Redis's "%s" of an argument in an error reply
// (addReplyErrorFormat): the argument up to its first NUL byte.
func cstr(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
