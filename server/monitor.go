package server

import (
	"strconv"
	"time"
)

// MONITOR as Redis 7.0: a monitoring client is sent, for every command the
// server runs, a status line "+<unix time with µs> [<db> <peer>] "cmd"
// "arg" ...", after the command ran (a script's commands show "lua" as the
// peer and follow the EVAL/FCALL line, which is sent before the script
// runs). Commands flagged admin or skip_monitor are not shown, secrets
// are "(redacted)" as in the slow log. The monitor's connection has a
// writer goroutine of its own (as a subscriber's), so lines go out while
// it sends nothing. With no monitor, the command path tests one length.

// stopMonitor takes c off the monitors (RESET, a closing connection).
func (s *Server) stopMonitor(c *Client) {
	if !c.monitor {
		return
	}
	c.monitor = false
	for i, m := range s.monitors {
		if m == c {
			s.monitors = append(s.monitors[:i], s.monitors[i+1:]...)
			break
		}
	}
}

// monitored reports whether a run of cmd is shown to monitors.
func monitored(cmd *Command, argv [][]byte) bool {
	f := cmd.Flags
	if sub := cmd.subcommand(argv); sub != nil {
		f = sub.Flags
	}
	return f&(FlagAdmin|FlagSkipMonitor) == 0
}

// feedMonitors sends one command line to every monitor (lock held).
func (s *Server) feedMonitors(c *Client, cmd *Command, argv [][]byte) {
	if len(s.monitors) == 0 || s.loading {
		return
	}
	name := cmd.Name
	if sub := cmd.subcommand(argv); sub != nil {
		name += "|" + sub.Name
	}
	red := redacted(name, argv)
	now := time.Now()
	b := []byte{'+'}
	b = strconv.AppendInt(b, now.Unix(), 10)
	b = append(b, '.')
	us := strconv.AppendInt(nil, int64(now.Nanosecond()/1000), 10)
	for i := len(us); i < 6; i++ {
		b = append(b, '0')
	}
	b = append(b, us...)
	b = append(b, " ["...)
	b = strconv.AppendInt(b, int64(c.db), 10)
	b = append(b, ' ')
	if c.inScript {
		b = append(b, "lua"...)
	} else {
		b = append(b, c.addr...)
	}
	b = append(b, "] "...)
	for i, a := range argv {
		if i > 0 {
			b = append(b, ' ')
		}
		if red[i] {
			a = []byte("(redacted)")
		}
		b = appendRepr(b, a)
	}
	b = append(b, "\r\n"...)
	for _, m := range s.monitors {
		m.out = append(m.out, b...)
		if m.ps != nil {
			m.ps.enqueue()
		}
	}
}

// appendRepr quotes a as Redis's sdscatrepr does.
func appendRepr(b, a []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, ch := range a {
		switch ch {
		case '\\', '"':
			b = append(b, '\\', ch)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\a':
			b = append(b, '\\', 'a')
		case '\b':
			b = append(b, '\\', 'b')
		default:
			if ch >= 0x20 && ch < 0x7f {
				b = append(b, ch)
			} else {
				b = append(b, '\\', 'x', hex[ch>>4], hex[ch&15])
			}
		}
	}
	return append(b, '"')
}

// feedScriptCall shows EVAL, EVALSHA or FCALL to monitors before the
// script runs, so that its commands follow it (they are skip_monitor).
func (c *Client) feedScriptCall(argv [][]byte) {
	if len(c.s.monitors) == 0 {
		return
	}
	if cmd := c.s.Lookup(argv[0]); cmd != nil {
		c.s.feedMonitors(c, cmd, argv)
	}
}
