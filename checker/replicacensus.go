package checker

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/redline-dev/redline/history"
)

type replicaCensus struct{ o Scope }

// ReplicaCensus holds each replica to its primary's keys at the end of the
// run. The end phase waits, after healing and the final reads, until every
// replica reports its primary's replication id and offset with its link
// up, then the census reads the run's keys on every node with their
// replication state before and after (history.CensusRepl). A replica in
// sync by that record must hold exactly its primary's copies of the run's
// keys (type, value or members, size): a key missing on either side, or
// a copy that differs, is a replica-divergence, invalid. A replica (and
// its primary) double-applying a resent command, dropping a type while
// loading an RDB, or applying the stream out of order is seen here
// without a promotion.
//
// The replication record is a witness too: a replica not in sync by it
// (the wait gave up, offsets that differ or moved, a link not up, a
// primary the census does not have, an offset below 0, a record missing
// for one node while others carry it, a wait that says "in sync" of pairs
// whose offsets differ) is unknown for that replica, named, never valid.
// A census with no replication record at all (an older redline's) or no
// replica is not applicable; a missing census is unknown when expected
// (Scope.CensusExpected).
func ReplicaCensus(opts ...Scope) Checker { return replicaCensus{firstScope(opts)} }

func (c replicaCensus) Name() string { return c.o.name("replica-census") }

// ReplicaDivergence is the replica census' anomaly class.
const ReplicaDivergence = "replica-divergence"

// copyDiffers says how two copies of one key differ ("" when they do not,
// or cannot be compared: either could not be read).
func copyDiffers(p, r history.CensusKey) string {
	if p.Error != "" || r.Error != "" {
		return ""
	}
	switch {
	case p.Type != r.Type:
		return fmt.Sprintf("a %s on the primary, a %s on the replica", p.Type, r.Type)
	case (p.Value == nil) != (r.Value == nil) || (p.Value != nil && *p.Value != *r.Value):
		return fmt.Sprintf("%s on the primary, %s on the replica", showValue(p.Value), showValue(r.Value))
	case p.Len != r.Len:
		return fmt.Sprintf("size %d on the primary, %d on the replica", p.Len, r.Len)
	case !slices.Equal(p.Members, r.Members):
		return fmt.Sprintf("members differ (%d listed on the primary, %d on the replica)", len(p.Members), len(r.Members))
	}
	return ""
}

func showValue(v *string) string {
	if v == nil {
		return "no value"
	}
	return fmt.Sprintf("%q", *v)
}

func (c replicaCensus) Check(_ context.Context, in *History) Result {
	cen := in.censusOf()
	if cen == nil {
		if c.o.CensusExpected != "" {
			return censusMissing(c.o.CensusExpected, "no replica was held to its primary's keys")
		}
		return NotApplicable("no key census in the history: no replica to hold to its primary")
	}
	var replicas []history.CensusNode
	var silent []string
	withRepl := 0
	for _, n := range cen.Nodes {
		if n.Repl != nil {
			withRepl++
		}
		if n.Role == "replica" {
			replicas = append(replicas, n)
		}
		if n.Role == "" {
			silent = append(silent, n.Name)
		}
	}
	if cen.ReplicaSync == nil && withRepl == 0 {
		return NotApplicable("the census records no replication state (taken by a redline before the replica census): no replica can be held to its primary")
	}
	if len(replicas) == 0 {
		if cen.ReplicaSync == nil {
			return Result{Valid: Unknown, Figures: &Verdict{Reason: "the census carries replication state but no record of the wait for the replicas to sync (replica_sync): the record is incomplete"}}
		}
		return NotApplicable("no node of the census is a replica")
	}
	var unknown []string
	if cen.ReplicaSync == nil {
		unknown = append(unknown, "the census carries replication state but no record of the wait for the replicas to sync (replica_sync)")
	} else if !cen.ReplicaSync.InSync {
		why := cen.ReplicaSync.Why
		if why == "" {
			why = "the record says not in sync and names no replica"
		}
		unknown = append(unknown, "the replicas never synced with their primaries: "+why)
	}
	if len(silent) > 0 {
		unknown = append(unknown, fmt.Sprintf("%s did not answer the census (a replica among them is held to nothing)", strings.Join(silent, ", ")))
	}
	judged, compared, diverged := 0, 0, 0
	var examples []map[string]any
	first := ""
	for _, r := range replicas {
		if why := cen.ReplicaOutOfSync(r); why != "" {
			if cen.ReplicaSync != nil && cen.ReplicaSync.InSync {
				why += " (although the wait for sync says every replica was in sync)"
			}
			unknown = append(unknown, why)
			continue
		}
		p, _ := cen.Node(r.Primary)
		judged++
		keys := map[string]bool{}
		for k := range p.Keys {
			keys[k] = true
		}
		for k := range r.Keys {
			keys[k] = true
		}
		for _, k := range sortedKeysOf(keys) {
			pk, onP := p.Keys[k]
			rk, onR := r.Keys[k]
			why := ""
			switch {
			case onP && onR:
				compared++
				why = copyDiffers(pk, rk)
			case cen.Truncated:
				// A key beyond the census' cap on one side is unknown.
				continue
			case onP:
				why = fmt.Sprintf("on the primary (a %s), missing on the replica", pk.Type)
			default:
				why = fmt.Sprintf("on the replica (a %s), missing on the primary", rk.Type)
			}
			if why == "" {
				continue
			}
			diverged++
			if first == "" {
				first = fmt.Sprintf("replica %s, in sync with its primary %s (offset %d), differs on key %s: %s", r.Name, p.Name, p.Repl.Offset, k, why)
			}
			if len(examples) < c.o.MaxExamples {
				examples = append(examples, map[string]any{"key": k, "replica": r.Name, "primary": p.Name, "offset": p.Repl.Offset, "why": why})
			}
		}
	}
	fig := &ReplicaCensusFigures{Replicas: len(replicas), ReplicasJudged: judged, KeysCompared: compared, DivergedKeys: diverged}
	if cen.ReplicaSync != nil {
		fig.SyncWaitedMs = ptr(cen.ReplicaSync.WaitedMS)
	}
	if diverged > 0 {
		invalidOne(&fig.OneClass, &fig.Verdict, ReplicaDivergence, diverged, examples, first, unknown)
		return Result{Valid: Invalid, Figures: fig}
	}
	if len(unknown) > 0 {
		fig.Unjudged = unknown
		fig.Reason = fmt.Sprintf("not every replica could be held to its primary's keys (%d of %d were): %s", judged, len(replicas), strings.Join(unknown, "; "))
		return Result{Valid: Unknown, Figures: fig}
	}
	return Result{Valid: Valid, Figures: fig}
}

// ReplicaCensusFigures are the replica-census checker's figures.
type ReplicaCensusFigures struct {
	Replicas       int `json:"replicas"`
	ReplicasJudged int `json:"replicas_judged"`
	KeysCompared   int `json:"keys_compared"`
	DivergedKeys   int `json:"diverged_keys"`
	// SyncWaitedMs is how long the census waited for the replicas to
	// sync; nil without a record of that wait.
	SyncWaitedMs *int64 `json:"sync_waited_ms,omitempty"`
	OneClass
	Verdict
}

// The figures this checker explains (describe.go).
var _ = ExplainFigures(map[string]string{
	"diverged_keys": "keys whose copy on a replica differs from its primary's (or exists on one side only) although the replica was in sync with the primary (same replication id and offset) when both were read",
})
