package store

import _ "unsafe" // for go:linkname

// nanotime is the runtime's monotonic clock, the one the server reads for
// Clock.NowMsAt (server/monotime.go): a rebase pairs a fresh reading of it
// with time.Now.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64
