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
