// Package planted names the defects the planted-bug study plants into the
// reference server (docs/planted-bugs.md, scripts/planted-bug-study).
//
// Each defect is a one-line check at its hook site,
//
//	if planted.On(planted.WaitEarlyAck) { ... }
//
// In the shipped build On is a constant false (off.go): the compiler drops
// the branch and the linker everything only it reached, so no defect, no
// defect name and no way to select one is in bin/redline. Only a binary
// built with -tags plantedbugs (on.go) can switch one on, with the server
// directive `planted-bug <name>` (what `redline run --server-config
// 'planted-bug <name>'` passes to every node) or REDLINE_PLANTED_BUG.
package planted

// Bug is one planted defect. The names, and what real-world bug each
// mirrors, are in on.go and docs/planted-bugs.md.
type Bug uint8

const (
	// ReplSkipIncrby: INCRBY is applied but never propagated to replicas.
	ReplSkipIncrby Bug = iota
	// ReplicaReorder: a replica applies two consecutive stream commands
	// in reverse order.
	ReplicaReorder
	// PsyncWrongOffset: a replica asks PSYNC to continue one command
	// before its real offset, and applies that command twice.
	PsyncWrongOffset
	// WaitEarlyAck: WAIT counts every connected replica, acknowledged or not.
	WaitEarlyAck
	// PromoteNoEpoch: a replica that wins an election keeps its old
	// configEpoch instead of claiming the election's.
	PromoteNoEpoch
	// PrimaryIgnoresUpdate: a primary does not give up its slots to a
	// claim with a higher configEpoch (two primaries for one slot).
	PrimaryIgnoresUpdate
	// VoteTwice: a primary grants more than one vote in an epoch.
	VoteTwice
	// FailoverNoPause: the primary of a manual failover reports its offset
	// but keeps accepting writes.
	FailoverNoPause
	// MigrateLoseLastKey: MIGRATE ... KEYS sends every key but the last of
	// a batch and deletes them all.
	MigrateLoseLastKey
	// SetslotFlushImported: the importing node deletes the slot's keys
	// when CLUSTER SETSLOT NODE makes it the owner.
	SetslotFlushImported
	// ExecIgnoresWatch: EXEC runs a transaction whose watched key changed.
	ExecIgnoresWatch
	// RDBDropSets: loading an RDB (full sync, restart) skips set keys.
	RDBDropSets

	// NumBugs is the number of defects.
	NumBugs
)
