package checker

import "fmt"

// The explanations of the figures and anomaly classes the checkers write,
// kept beside the checkers that compute them (as porcupine's models carry
// their Describe functions): the report, the CLI and anyone reading
// results.json explain a figure by asking here instead of keeping a table
// of their own. A figure or class not listed has no explanation yet ("").

// figureWhy explains the figures a checker reports an anomaly with: here
// those several checkers write alike; each checker adds its own
// (ExplainFigures, in its file).
var figureWhy = map[string]string{
	"lost":           "acknowledged writes are missing from the final read: the cluster answered OK and later forgot them (typically: asynchronous replication had not copied them when a replica was promoted, or a primary cut off in a minority accepted them before it was demoted)",
	"unexpected":     "values appear that no client ever tried to write: corruption, or a write recorded wrongly",
	"stale_reads":    "reads returned a value older than one a completed write had already replaced (typically: a read served by a node that was no longer the primary)",
	"anomalous_keys": "no order of the operations on these keys explains every result, so the register is not linearizable; each key's porcupine page shows the longest order that works and the op that breaks it",

	// The lock checker's (lock.go).
	"double_holds":           "two clients held one lock at the same time, both acknowledged and neither expired nor released: the lock was handed out twice (after-failover-loss: the first was acknowledged by a primary a fault then struck, without a satisfied WAIT, and the second taken on another node, as Redis Cluster's asynchronous replication allows; unexplained: no such evidence)",
	"fence_regressions":      "a lock's fencing token did not rise between two acquisitions one after the other, or two acquisitions got the same one: a resource guarded by the fence could not tell the older holder from the newer",
	"lost_while_held":        "a lock's holder found it gone when it released it, before its ttl could have run out: the lock vanished under its holder (a failover, a restart, a clock jump); reported, not judged, as no second holder was seen",
	"released_anothers_lock": "a release deleted a lock after its own had certainly expired and another client had acquired it: compare-and-delete must prevent that",

	// The queue and ttl checkers (queue.go, ttl.go).
	"lost_after_failover_loss":       "acknowledged messages lost where the evidence supports the documented loss: the primary that acknowledged the enqueue was struck by a fault (not a clock fault) afterwards and its WAIT was not satisfied (Redis Cluster replicates asynchronously); still a loss",
	"lost_unexplained":               "acknowledged messages lost with no fault on the acknowledging node after the ack, or despite a satisfied WAIT: nothing documented explains them",
	"duplicates":                     "messages delivered more than once (a claim of a pending entry, a move lost in a failover, a message still queued at the end that was delivered already): allowed, as a reliable queue delivers at least once",
	"pending_at_end":                 "messages delivered but not acknowledged at the end: in the list queue's processing list or the stream group's pending entries list, where a consumer can recover them",
	"acks_lost":                      "messages whose acknowledgement removed them (LREM or XACK answered 1) but that were pending again at the end: the acknowledgement was lost (a failover); they will be delivered again",
	"acks_found_nothing":             "acknowledgements that found their message neither in the processing list nor pending (LREM or XACK answered 0): its delivery was lost (a failover) or it was claimed and acknowledged already",
	"id_regressions":                 "stream entries added after another had been acknowledged that got a lower id: the stream's tail was lost in a failover and its ids were handed out again",
	"recovered":                      "messages whose enqueue had an unknown outcome but that were delivered or found at the end: the enqueue did happen",
	"undrained_queues":               "queues with no successful final drain: what they still held at the end, and their pending entries, are not known (an acknowledged message never delivered there makes the verdict unknown)",
	"pairs_judged":                   "pairs of observations of one key (an acknowledged set, PEXPIRE or PERSIST, or a read of its value and PTTL), one completed before the other began, with no write that could have run between them: each must agree with the deadline the first allows",
	"pairs_skipped_concurrent_write": "pairs of observations with a write between them that may have run (an indeterminate one may land any time after its invocation): not judged",
	"anomalies_clock":                "deadlines broken with a clock fault in between: a server measures expiry on its own clock, so a clock moved back keeps a key alive and one moved forward expires it early (documented)",
	"anomalies_after_failover":       "deadlines broken across a fault on a node that served one observation, the other served by another node: asynchronous replication lost the write that set or removed the expiry, or a promoted replica answered from its copy (documented)",
	"anomalies_unexplained":          "deadlines broken with no clock fault and no failover in between: nothing documented explains them",
}

// cycleWhy explains the classes of the list-append checker (Elle's names).
var cycleWhy = map[string]string{
	"G0":                 "write cycle: transactions overwrote each other in an order no serial execution allows (ww edges only)",
	"G1a":                "aborted read: a transaction read a value written by a transaction that failed",
	"G1b":                "intermediate read: a transaction read a value its writer later overwrote within the same transaction",
	"G1c":                "circular information flow: a cycle of write and read dependencies (ww, wr)",
	"G-single":           "read skew: a cycle with exactly one anti-dependency (rw): one transaction missed a write it should have seen",
	"G2":                 "anti-dependency cycle: several rw edges, transactions each missed the other's write",
	"G0-realtime":        "a write cycle once real-time order is added: violates strict serializability",
	"G1c-realtime":       "a wr/ww cycle once real-time order is added: a transaction observed the past after a later one had completed",
	"G-single-realtime":  "a cycle with one rw edge once real-time order is added: a read missed a write that had completed before the read began",
	"G2-realtime":        "a cycle with several rw edges once real-time order is added: reads missed writes completed before they began",
	"duplicate-appends":  "the same value was appended twice",
	"duplicate-elements": "a list holds the same element twice: an append was applied twice",
	"garbage-read":       "a read returned an element no transaction appended",
	"incompatible-order": "two reads of a list disagree on the order of its elements",
	"internal":           "a transaction did not see its own earlier writes",
}

// edgeWhy says what an edge of a cycle means.
var edgeWhy = map[string]string{
	"ww": "wrote next after", "wr": "was read by", "rw": "read a state overwritten by", "realtime": "completed before the start of",
}

// DescribeFigure says in words what a checker's figure (or list of
// instances) of that name means; "" when it has no explanation.
func DescribeFigure(name string) string { return figureWhy[name] }

// ExplainFigures adds the explanations of a checker's figures, kept in the
// checker's own file (or a workload's own folder) beside the code that
// computes them, so that a new checker touches no table here:
//
//	var _ = checker.ExplainFigures(map[string]string{"double_holds": "..."})
//
// A figure name means one thing wherever it is written: a name explained
// twice in different words is a programming error, and panics at start.
func ExplainFigures(why map[string]string) struct{} {
	for name, text := range why {
		if old, ok := figureWhy[name]; ok && old != text {
			panic(fmt.Sprintf("checker: figure %q explained twice, differently:\n%s\n%s", name, old, text))
		}
		figureWhy[name] = text
	}
	return struct{}{}
}

// DescribeClass says in words what an anomaly class of the list-append
// checker (Elle's names) means; "" for a class it does not know.
func DescribeClass(class string) string { return cycleWhy[class] }

// DescribeEdge says what a dependency edge of a cycle (ww, wr, rw,
// realtime) means, as a phrase between two transactions; "" for another.
func DescribeEdge(kind string) string { return edgeWhy[kind] }
