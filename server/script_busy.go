package server

import (
	"runtime"
	"strings"
	"time"
)

func (b *busyScript) begin(cancel func()) {
	b.mu.Lock()
	b.cancel = cancel
	b.mu.Unlock()
	b.wrote.Store(false)
	b.killed.Store(false)
	b.start.Store(time.Now().UnixNano())
}

// end reports whether the script was killed.
func (b *busyScript) end() bool {
	b.start.Store(0)
	b.mu.Lock()
	b.cancel = nil
	b.fn = nil
	b.mu.Unlock()
	return b.killed.Load()
}

// kill stops the running script; the reply is what SCRIPT KILL answers.
func (b *busyScript) kill(function bool) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cancel == nil || b.start.Load() == 0 {
		return "-NOTBUSY No scripts in execution right now.\r\n"
	}
	if function && b.fn == nil {
		return "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"
	}
	if !function && b.fn != nil {
		return "-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\r\n"
	}
	if b.wrote.Load() {
		return "-UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.\r\n"
	}
	b.killed.Store(true)
	b.cancel()
	return "+OK\r\n"
}

// lockOrBusy takes the server lock for a batch. While a script has been
// running for longer than busy-reply-threshold, it answers the command
// itself instead (BUSY, or SCRIPT KILL) and returns false.
//
// An event loop (inLoop) never blocks in Lock: it serves every connection of
// the loop, and one that waited there for a script that started meanwhile
// would keep all of them waiting instead of answering BUSY.
func (s *Server) lockOrBusy(c *Client, argv [][]byte, inLoop bool) bool {
	for i := 0; ; i++ {
		if s.busy.start.Load() == 0 && !inLoop {
			s.mu.Lock()
			s.unwatchLater(c)
			return true
		}
		if s.mu.TryLock() {
			s.unwatchLater(c)
			return true
		}
		started := s.busy.start.Load()
		if started != 0 && time.Since(time.Unix(0, started)) >= time.Duration(s.cfg.BusyReplyThreshold)*time.Millisecond {
			if len(argv) == 2 && strings.EqualFold(string(argv[0]), "script") && strings.EqualFold(string(argv[1]), "kill") {
				c.out = append(c.out, s.busy.kill(false)...)
				return false
			}
			if len(argv) == 2 && strings.EqualFold(string(argv[0]), "function") {
				if s.busy.functionCommand(c, argv[1]) {
					return false
				}
			}
			if len(argv) >= 2 && strings.EqualFold(string(argv[0]), "shutdown") && strings.EqualFold(string(argv[1]), "nosave") {
				s.requestShutdown()
				c.closeNow = true
				return false
			}
			if c.busyTransaction(argv) {
				return false
			}
			c.out = append(c.out, "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"...)
			return false
		}
		switch {
		case started != 0:
			time.Sleep(time.Millisecond)
		case i < 100:
			// Held briefly (cron, bus, a handed-over connection): let
			// the holder run on this processor.
			runtime.Gosched()
		default:
			time.Sleep(50 * time.Microsecond)
		}
	}
}

// busyTransaction handles the transaction side of a command that arrives
// while a script is busy, without the server lock, as Redis does: MULTI is
// allowed (it only changes the client's own state); EXEC is refused with
// EXECABORT and ends the transaction (its WATCHes are dropped when the
// client next takes the lock); any other command refused inside MULTI
// fails the transaction. It reports whether it answered the command.
func (c *Client) busyTransaction(argv [][]byte) bool {
	name := string(argv[0])
	switch {
	case strings.EqualFold(name, "multi") && len(argv) == 1:
		if c.multi {
			c.out = append(c.out, "-ERR MULTI calls can not be nested\r\n"...)
		} else {
			c.multi, c.queue, c.multiErr = true, nil, false
			c.out = append(c.out, "+OK\r\n"...)
		}
		return true
	case strings.EqualFold(name, "exec") && c.multi:
		c.resetMulti()
		c.unwatchPending = true
		c.out = append(c.out, "-EXECABORT Transaction discarded because of: BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"...)
		return true
	}
	if c.multi {
		c.multiErr = true
	}
	return false
}

// unwatchLater drops the WATCHes of a transaction that busyTransaction
// ended without the lock (lock held).
func (s *Server) unwatchLater(c *Client) {
	if c.unwatchPending {
		c.unwatchPending = false
		s.unwatchAll(c)
	}
}
