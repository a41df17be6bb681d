package server

import "strings"

// The planted-bug study's longer defects (server/internal/planted). They are
// called only from `if planted.On(...)` branches, which the shipped build
// compiles away, so the linker leaves them out of bin/redline.

// plantedHold is the replica-reorder defect: a replica holds a plain data
// write of its master's stream and runs it after the command that follows
// it, as a replica applying its stream on several threads might (lock held).
// It reports whether it ran or held args.
func (r *replState) plantedHold(mc *Client, args [][]byte) bool {
	if r.plantedHeld == nil {
		if len(args) < 2 || !plantedPlainWrite(string(args[0])) {
			return false
		}
		for _, a := range args {
			r.plantedHeld = append(r.plantedHeld, append([]byte(nil), a...))
		}
		return true
	}
	r.s.execInternal(mc, args)
	r.plantedRelease(mc)
	return true
}

// plantedRelease runs the held write, if any (the end of what was read).
func (r *replState) plantedRelease(mc *Client) {
	if held := r.plantedHeld; held != nil {
		r.plantedHeld = nil
		r.s.execInternal(mc, held)
	}
}

func plantedPlainWrite(name string) bool {
	switch strings.ToLower(name) {
	case "set", "incrby", "decrby", "sadd", "rpush":
		return true
	}
	return false
}
