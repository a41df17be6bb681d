//go:build !unix

package server

// cpuTimes has no getrusage to read here: INFO cpu reports 0.
func cpuTimes() (user, sys float64) { return 0, 0 }
