package checker

// The client ops that several workloads write and several checkers read,
// by their "f" in the history (history/doc.go says what each carries).
// A workload writes its ops by these names and the checkers read them by
// the same, so the two cannot drift apart; the ops only one workload has
// are named beside the checker that judges them (LockAcquire, QueueAck,
// TTLSet, BankTransfer ...).
const (
	// OpRead reads a key's value (register, counter, set, script, ttl);
	// the replica, RPO, coverage and write-pause checkers know a read of
	// any workload by it.
	OpRead = "read"
	// OpWrite sets a register (SET).
	OpWrite = "write"
	// OpCAS is a register's compare-and-set.
	OpCAS = "cas"
	// OpAdd adds a delta (counter, script) or a member (set).
	OpAdd = "add"
	// OpIncr is a counter's add by INCR: without a value it adds 1.
	OpIncr = "incr"
)
