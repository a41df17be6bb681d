package workloads

import "github.com/redline-dev/redline/history"

// Keyslot is Redis Cluster's slot of a key (see history.Keyslot, its one
// home: the checkers group keys by slot too).
func Keyslot(key string) int { return history.Keyslot(key) }
