package checker

import "github.com/redline-dev/redline/history"

// The client ops that several workloads write and several checkers read,
// by their "f" in the history (history/doc.go says what each carries).
// A workload writes its ops by these names and the checkers read them by
// the same, so the two cannot drift apart; the ops only one workload has
// are named beside the checker that judges them (BankTransfer ...) or, for
// a workload in its own folder, in that folder (lock.Acquire, queue.Ack,
// ttl.Set).
const (
	// OpRead reads a key's value (register, counter, set, script, ttl);
	// the replica, RPO, coverage and write-pause checkers know a read of
	// any workload by it.
	OpRead history.OpName = "read"
	// OpWrite sets a register (SET).
	OpWrite history.OpName = "write"
	// OpCAS is a register's compare-and-set.
	OpCAS history.OpName = "cas"
	// OpAdd adds a delta (counter, script) or a member (set).
	OpAdd history.OpName = "add"
	// OpIncr is a counter's add by INCR: without a value it adds 1.
	OpIncr history.OpName = "incr"
)
