package server

import (
	"runtime/metrics"
	"strings"

	"github.com/redline-dev/redline/server/config"
)

// maxmemory with Redis's default policy, noeviction: while the heap holds
// more than maxmemory, commands flagged denyoom are refused with -OOM (also
// while queueing in MULTI, so EXEC aborts), as Redis's processCommand does.
// Nothing is evicted. The heap figure is refreshed by the cron and on
// CONFIG SET maxmemory; with maxmemory 0 (the default) nothing is measured
// and the command path only tests one integer.
type oomState struct {
	max  int64 // maxmemory in bytes, 0 = none
	used int64 // heap bytes in use at the last refresh
}

const errOOM = "OOM command not allowed when used memory > 'maxmemory'."

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}

// setMaxmemory reads maxmemory (start, CONFIG SET) and measures the heap.
func (s *Server) setMaxmemory() {
	s.oom.max = 0
	if kv := s.cfg.Get("maxmemory", func(p, n string) bool { return p == n }); len(kv) > 0 {
		s.oom.max, _ = config.ParseMemory(kv[0][1])
	}
	s.refreshUsedMemory()
}

func (s *Server) refreshUsedMemory() {
	if s.oom.max <= 0 {
		s.oom.used = 0 // a later maxmemory compares against a fresh figure
		return
	}
	metrics.Read(heapSample)
	s.oom.used = int64(heapSample[0].Value.Uint64())
}

// oomRefusal is the -OOM reply for a denyoom command over maxmemory.
func (s *Server) oomRefusal(c *Client, cmd *Command, argv [][]byte) string {
	if s.oom.used <= s.oom.max {
		return ""
	}
	if strings.EqualFold(cmd.Name, "exec") {
		// A transaction with a command that may use memory is refused
		// whole (Redis's mstate.cmd_flags & CMD_DENYOOM): EXECABORT.
		if c.multi {
			for _, q := range c.queue {
				if qc := s.Lookup(q[0]); qc != nil && qc.effectiveFlags(q)&FlagDenyOOM != 0 {
					return errOOM
				}
			}
		}
		return ""
	}
	if s.commandFlags(cmd, argv)&FlagDenyOOM == 0 {
		return ""
	}
	if c.inScript && s.scripts != nil && s.scripts.allowOOM {
		return ""
	}
	return errOOM
}
