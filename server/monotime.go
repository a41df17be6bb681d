package server

import _ "unsafe" // for go:linkname

// nanotime is the runtime's monotonic clock. Every command is timed (for
// INFO commandstats, SLOWLOG and LATENCY, as Redis times every call), and
// time.Now reads the wall clock too, which doubles the cost on the hot path
// of pipelined commands; the monotonic reading is all a duration needs.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64
