package checker

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/redline-dev/redline/history"
)

// What a checker that lives outside this package (in its workload's own
// folder: workloads/lock, workloads/queue, workloads/ttl) builds on: the
// client ops of its scope as calls, the fault windows, the anomalies it
// gathers and the verdict of a history that cannot be paired. The
// checkers here use the unexported forms of the same.

// Call is one client operation of a history: its invocation and its
// completion (nil when the history ended first), with their times; End
// is Inf when the op never completed.
type Call struct {
	Inv, Comp  *history.Op
	Start, End int64
}

// Inf is the end of an operation whose outcome is unknown: later than
// anything in any history.
const Inf = inf

// Outcome is the completion's type; info when there is none.
func (c *Call) Outcome() history.Type { return (&call{inv: c.Inv, comp: c.Comp}).outcome() }

// OK, Failed and Indeterminate classify the outcome.
func (c *Call) OK() bool            { return c.Outcome() == history.OK }
func (c *Call) Failed() bool        { return c.Outcome() == history.Fail }
func (c *Call) Indeterminate() bool { return (&call{inv: c.Inv, comp: c.Comp}).indeterminate() }

// Wait is the completion's WAIT, if any.
func (c *Call) Wait() *history.Wait { return (&call{inv: c.Inv, comp: c.Comp}).wait() }

// Misordered says why c cannot be believed as ordered ("" when it can):
// a completion before its invocation, an index given twice, or a
// completion's index not after its invocation's. It records c's index in
// indexes.
func (c *Call) Misordered(indexes map[int64]bool) string {
	return misordered(&call{inv: c.Inv, comp: c.Comp, start: c.Start, end: c.End, index: c.Inv.Index}, indexes)
}

// Calls pairs the history and keeps the client ops of the scope, as
// calls (a copy: the history's own are shared by its checkers).
func (o Scope) Calls(h *History) ([]Call, error) {
	if h.compact {
		// Its ops are shared among calls alike, without their indexes.
		return nil, errors.New("a compact partition's calls are for the checkers of this package")
	}
	cs, err := o.calls(h)
	if err != nil {
		return nil, err
	}
	out := make([]Call, len(cs))
	for i, c := range cs {
		out[i] = Call{Inv: c.inv, Comp: c.comp, Start: c.start, End: c.end}
	}
	return out, nil
}

// WithDefaults is the scope a checker runs with: 50 examples a list
// unless told.
func (o Scope) WithDefaults() Scope { return o.withDefaults() }

// NameOr is the checker's name: the scope's, else def.
func (o Scope) NameOr(def string) string { return o.name(def) }

// Windows are the history's fault windows; NodeAddrs the addresses of its
// nodes' names (both computed once per History).
func (s *History) Windows() []Window            { return s.windowsOf() }
func (s *History) NodeAddrs() map[string]string { return s.nodeAddrsOf() }

// FaultOnNode names the first fault window, not a clock fault, that
// overlaps [from, to] and names node (by address, or by a name whose
// address is node): what may have demoted the primary that acknowledged
// an op. "" when none does, or node is unknown.
func FaultOnNode(ws []Window, addrs map[string]string, node string, from, to int64) string {
	if node == "" {
		return ""
	}
	for _, w := range ws {
		if strings.HasPrefix(w.Fault, "clock") || w.Start > to || w.End < from {
			continue
		}
		for _, n := range w.Nodes {
			if n == node || addrs[n] == node {
				return fmt.Sprintf("%s %ss-%ss on %s", w.Fault, trimS(sec(w.Start)), trimS(sec(w.End)), n)
			}
		}
	}
	return ""
}

// ClockFaultOnNode names the first clock fault window overlapping [from,
// to] that struck one of nodes (a node's name or address), "" when none
// did: a server measures expiry on its own clock, so a clock moved forward
// expires a key early (documented).
func ClockFaultOnNode(ws []Window, addrs map[string]string, from, to int64, nodes ...string) string {
	return FaultKindOnNode(ws, addrs, "clock", from, to, nodes...)
}

// PowerFaultOnNode is ClockFaultOnNode for power faults: a node whose power
// was cut restarts without what it had not fsynced (appendfsync everysec
// loses up to a second of acknowledged writes, documented).
func PowerFaultOnNode(ws []Window, addrs map[string]string, from, to int64, nodes ...string) string {
	return FaultKindOnNode(ws, addrs, "power", from, to, nodes...)
}

// FaultKindOnNode names the first window of a fault of kind (its name's
// prefix) overlapping [from, to] that struck one of nodes, "" when none did.
func FaultKindOnNode(ws []Window, addrs map[string]string, kind string, from, to int64, nodes ...string) string {
	for _, w := range ws {
		if !strings.HasPrefix(w.Fault, kind) || w.Start > to || w.End < from {
			continue
		}
		for _, n := range w.Nodes {
			for _, node := range nodes {
				if node != "" && (n == node || addrs[n] == node) {
					return fmt.Sprintf("%s %ss-%ss on %s", w.Fault, trimS(sec(w.Start)), trimS(sec(w.End)), n)
				}
			}
		}
	}
	return ""
}

// FaultOver names the first fault window overlapping [from, to], "" when
// none does.
func FaultOver(ws []Window, from, to int64) string {
	for _, w := range ws {
		if w.Start <= to && w.End >= from {
			return fmt.Sprintf("%s %ss-%ss", w.Fault, trimS(sec(w.Start)), trimS(sec(w.End)))
		}
	}
	return ""
}

// Ms converts nanoseconds to milliseconds with microsecond precision, as
// every figure in milliseconds is written; FormatMs writes it in words.
func Ms(ns int64) float64      { return ms(ns) }
func FormatMs(ns int64) string { return trimS(ms(ns)) }

// InvalidHistory is the verdict on a history that cannot be paired.
func InvalidHistory(err error) Result { return invalidHistory(err) }

// FirstKeys names the first few keys of a list.
func FirstKeys(keys []string) string { return firstKeys(keys) }

// DecodeJSON decodes an op's raw value as T; ok is false for an empty or
// undecodable value.
func DecodeJSON[T any](raw json.RawMessage) (T, bool) { return decodeJSON[T](raw) }

// AnomalyRecorder gathers the ops a checker flags, by class, each with its
// op index, so that a verdict can name its first instances in words; its
// Figure is the checker's Anomalies.
type AnomalyRecorder struct{ a *anomalies }

// NewAnomalyRecorder keeps up to max examples of each class.
func NewAnomalyRecorder(max int) AnomalyRecorder { return AnomalyRecorder{newAnomalies(max)} }

// Add records one instance of class; ex should carry "index" (the op's
// invocation index) and "key" where they apply.
func (a AnomalyRecorder) Add(class string, ex map[string]any) { a.a.add(class, ex) }

// Garbage flags a completion whose value cannot be what the workload
// wrote: the raw reply is kept as it was recorded.
func (a AnomalyRecorder) Garbage(c *Call, why string) {
	a.a.garbage(&call{inv: c.Inv, comp: c.Comp, index: c.Inv.Index}, why)
}

// Total is the number of anomalies; Count those of one class; Classes the
// classes in the order first seen.
func (a AnomalyRecorder) Total() int              { return a.a.total() }
func (a AnomalyRecorder) Count(class string) int  { return a.a.count[class] }
func (a AnomalyRecorder) Classes() []string       { return a.a.order }
func (a AnomalyRecorder) Describe() string        { return a.a.describe() }
func (a AnomalyRecorder) Into(fig map[string]any) { a.a.into(fig) }

// Figure is the "anomalies" figure ({class: {count, examples}}), nil when
// there are none: for typed figures (`json:"anomalies,omitempty"`).
func (a AnomalyRecorder) Figure() Anomalies { return a.a.classes() }

// ServedErrors adds fail errors that are an op's own answer, not
// unavailability (see servedErrors): a workload's refusals, registered by
// the folder that writes them, at init:
//
//	var _ = checker.ServedErrors(Held, NotOwner)
func ServedErrors(errs ...string) struct{} {
	servedErrors = append(servedErrors, errs...)
	return struct{}{}
}
