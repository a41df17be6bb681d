package server

import (
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"time"
)

// SLOWLOG, LATENCY and the per-command latency histograms, as Redis 7.0
// keeps them: every command is timed (while slowlog-log-slower-than >= 0 or
// latency-monitor-threshold > 0); one slower than slowlog-log-slower-than
// microseconds is logged with its arguments (at most 32, each at most 128
// bytes, secrets redacted); one taking latency-monitor-threshold ms or more
// is a "command" (or "fast-command") latency event. Figures are this
// server's own timings, not Redis's.

// applyIntrospection reads the slowlog and latency directives.
func (s *Server) applyIntrospection() {
	in := &s.intro
	in.slowThreshold = int64(s.configInt("slowlog-log-slower-than", 10000))
	in.slowMax = s.configInt("slowlog-max-len", 128)
	in.latThreshold = int64(s.configInt("latency-monitor-threshold", 0))
	if len(in.slowlog) > in.slowMax {
		in.slowlog = in.slowlog[:in.slowMax]
	}
	// Commands are timed for the histograms (latency-tracking, on by
	// default as in Redis), the slow log and the latency monitor.
	s.slowStats = s.configValue("latency-tracking") != "no" || in.slowThreshold >= 0 || in.latThreshold > 0
}

// recordCall is called after each command with its duration.
func (s *Server) recordCall(c *Client, cmd *Command, argv [][]byte, d time.Duration) {
	in := &s.intro
	us := d.Microseconds()
	name := cmd.Name
	if len(cmd.Subcommands) > 0 {
		if sub := cmd.subcommand(argv); sub != nil {
			name += "|" + sub.Name
		}
	}
	var h *cmdHistogram
	if len(cmd.Subcommands) == 0 && cmd.hist != nil && cmd.histGen == in.histGen {
		h = cmd.hist // the map lookup by name cost as much as a GET
	} else {
		h = in.hist[name]
		if h == nil {
			if in.hist == nil {
				in.hist = map[string]*cmdHistogram{}
			}
			h = &cmdHistogram{}
			in.hist[name] = h
		}
		if len(cmd.Subcommands) == 0 {
			cmd.hist, cmd.histGen = h, in.histGen
		}
	}
	h.calls++
	h.buckets[bits.Len64(uint64(max(us, 1))-1)]++
	if in.latThreshold > 0 && d.Milliseconds() >= in.latThreshold {
		ev := "command"
		if cmd.Flags&FlagFast != 0 {
			ev = "fast-command"
		}
		s.latencySample(ev, d.Milliseconds())
	}
	if b := c.blk; b != nil && !b.served && b.slowArgv == nil {
		// It blocked: logged when served (slowlogServed).
		b.slowUs = us
		b.slowArgv = make([][]byte, len(argv))
		for i, a := range argv {
			b.slowArgv[i] = copyBytes(a)
		}
		return
	}
	if in.slowThreshold >= 0 && us >= in.slowThreshold && cmd.Flags&FlagSkipSlowlog == 0 {
		s.slowlogPush(c, name, argv, us)
	}
}

// slowlogServed logs a blocked command that was just served with its
// original arguments (BLPOP, not the LPOP it propagates as), its time the
// blocking call's and the serving's, as Redis's updateStatsOnUnblock.
func (s *Server) slowlogServed(c *Client, b *blockedOn, start int64) {
	in := &s.intro
	if b.slowArgv == nil || !b.served || b.cmd == nil {
		return
	}
	us := b.slowUs + (nanotime()-start)/1000
	if in.slowThreshold >= 0 && us >= in.slowThreshold && b.cmd.Flags&FlagSkipSlowlog == 0 {
		s.slowlogPush(c, b.cmd.Name, b.slowArgv, us)
	}
	b.slowArgv = nil
}

func (s *Server) latencySample(event string, ms int64) {
	in := &s.intro
	if in.events == nil {
		in.events = map[string]*latencyEvent{}
	}
	ev := in.events[event]
	if ev == nil {
		ev = &latencyEvent{}
		in.events[event] = ev
	}
	now := time.Now().Unix()
	if n := len(ev.samples); n > 0 && ev.samples[n-1].at == now {
		ev.samples[n-1].ms = max(ev.samples[n-1].ms, ms)
	} else {
		ev.samples = append(ev.samples, latencySample{now, ms})
		if len(ev.samples) > 160 {
			ev.samples = ev.samples[1:]
		}
	}
	ev.max = max(ev.max, ms)
}

func (s *Server) slowlogPush(c *Client, name string, argv [][]byte, us int64) {
	in := &s.intro
	if in.slowMax <= 0 {
		return
	}
	red := redacted(name, argv)
	n := min(len(argv), 32)
	args := make([]string, 0, n)
	for i := 0; i < n; i++ {
		if i == n-1 && len(argv) > 32 {
			args = append(args, fmt.Sprintf("... (%d more arguments)", len(argv)-31))
			break
		}
		a := argv[i]
		switch {
		case red[i]:
			args = append(args, "(redacted)")
		case len(a) > 128:
			args = append(args, fmt.Sprintf("%s... (%d more bytes)", a[:128], len(a)-128))
		default:
			args = append(args, string(a))
		}
	}
	e := slowEntry{id: in.slowID, at: time.Now().Unix(), usec: us, argv: args, addr: c.addr, name: c.name}
	in.slowID++
	in.slowlog = append([]slowEntry{e}, in.slowlog...)
	if len(in.slowlog) > in.slowMax {
		in.slowlog = in.slowlog[:in.slowMax]
	}
}

// helpReply sends a HELP reply: the lines as status replies.
func helpReply(c *Client, lines ...string) {
	c.Array(len(lines))
	for _, l := range lines {
		c.Simple(l)
	}
}

func (in *introState) eventNames() []string {
	names := make([]string, 0, len(in.events))
	for n := range in.events {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (in *introState) doctor() string {
	if len(in.events) == 0 {
		return "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sleep tonight.\n"
	}
	var b strings.Builder
	b.WriteString("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n")
	for i, n := range in.eventNames() {
		ev := in.events[n]
		var sum int64
		for _, sm := range ev.samples {
			sum += sm.ms
		}
		fmt.Fprintf(&b, "%d. %s: %d latency spikes (average %dms, mean deviation 0ms, period %d sec). Worst all time event %dms.\n",
			i+1, n, len(ev.samples), sum/int64(len(ev.samples)), max(1, ev.samples[len(ev.samples)-1].at-ev.samples[0].at), ev.max)
	}
	b.WriteString("\nI have a few advices for you:\n\n- Check your commands: latency-monitor-threshold is " + strconv.FormatInt(in.latThreshold, 10) + " milliseconds; use SLOWLOG GET to see the slow ones.\n")
	return b.String()
}

// latencyGraph draws the samples as columns of '#' (a simplified version
// of Redis's sparkline), newest on the right.
func latencyGraph(event string, ev *latencyEvent) string {
	var b strings.Builder
	lo, hi := ev.samples[0].ms, ev.samples[0].ms
	for _, sm := range ev.samples {
		lo, hi = min(lo, sm.ms), max(hi, sm.ms)
	}
	fmt.Fprintf(&b, "%s - high %d ms, low %d ms (all time high %d ms)\n", event, hi, lo, ev.max)
	b.WriteString(strings.Repeat("-", 80) + "\n")
	const rows = 4
	for r := rows; r >= 1; r-- {
		for _, sm := range ev.samples {
			if hi > 0 && sm.ms*rows >= hi*int64(r) {
				b.WriteByte('#')
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteByte('\n')
	}
	b.WriteString(strings.Repeat("-", len(ev.samples)) + "\n")
	return b.String()
}

func (s *Server) latencyHistogram(c *Client, names [][]byte) {
	in := &s.intro
	var keys []string
	if len(names) == 0 {
		for k, h := range in.hist {
			if h.calls > 0 {
				keys = append(keys, k)
			}
		}
	} else {
		seen := map[string]bool{}
		for _, a := range names {
			n := strings.ToLower(string(a))
			if strings.Contains(n, "|") {
				if h := in.hist[n]; h != nil && h.calls > 0 && !seen[n] {
					keys, seen[n] = append(keys, n), true
				}
				continue
			}
			for k, h := range in.hist {
				if (k == n || strings.HasPrefix(k, n+"|")) && h.calls > 0 && !seen[k] {
					keys, seen[k] = append(keys, k), true
				}
			}
		}
	}
	sort.Strings(keys)
	c.Map(len(keys))
	for _, k := range keys {
		h := in.hist[k]
		c.BulkString(k)
		c.Map(2)
		c.BulkString("calls")
		c.Int(h.calls)
		c.BulkString("histogram_usec")
		var rows [][2]int64
		var cum int64
		for i, n := range h.buckets {
			if n == 0 {
				continue
			}
			cum += n
			rows = append(rows, [2]int64{int64(1) << i, cum})
		}
		c.Map(len(rows))
		for _, r := range rows {
			c.Int(r[0])
			c.Int(r[1])
		}
	}
}

// resetIntroStats is CONFIG RESETSTAT's part: the histograms.
func (s *Server) resetIntroStats() { s.intro.hist = nil; s.intro.histGen++ }
