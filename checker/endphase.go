package checker

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/redline-dev/redline/history"
)

type endPhase struct{ o Scope }

// EndPhase judges the end phase itself from the nemesis's "heal" entry:
// after healing every fault, the nemesis counts again, on every primary,
// each slot redline moved or opened (its end_phase record). A slot left
// open, owned by nobody or by two primaries, or with keys on a primary
// that does not own it is invalid: redline's own steps left the cluster
// worse than a user's operator would (redis-cli --cluster check would
// fail). A fault that could not be undone (a node not back), a cluster
// that did not converge, or a state redline could not account for leaves
// the run unknown: the checkers' final reads ran on a cluster nobody can
// vouch for. A run without faults has no end phase (not applicable).
// The record is a witness, not the truth: the key census of the history
// is read for every slot redline moved or opened (placements, journal),
// and a slot the census finds claimed twice, unowned, open or with keys
// outside its owner's shard that the record does not name is invalid
// (the census contradicts the record); a record that says "not healed"
// but names no problem contradicts itself (unknown).
// The roles at the end are judged too: a replica whose primary is itself
// a replica (chained replication, which Redis Cluster never sets up and
// a manual failover can leave behind: redis/redis#15472) is invalid,
// whether the record names it (the nemesis saw it last on every node's
// own account) or the heal entry's final CLUSTER NODES shows it; a final
// view that names a master it does not list, or lines it cannot read,
// leaves a run that is otherwise valid unknown.
func EndPhase(opts ...Scope) Checker { return endPhase{firstScope(opts)} }

func (e endPhase) Name() string { return e.o.name("end-phase") }

// EndProblem is one thing the end phase found not healed.
type EndProblem struct {
	Slot int    `json:"slot"`
	Kind string `json:"kind"` // unowned, conflict, stranded, open (slots); uncounted, unaccounted, heal-error, not-converged, replica-of-replica
	Node string `json:"node,omitempty"`
	Keys int64  `json:"keys,omitempty"`
	What string `json:"what"`
}

// slotKind says whether a problem is a slot redline left wrong.
func (p EndProblem) slotKind() bool {
	switch p.Kind {
	case "unowned", "conflict", "stranded", "open":
		return true
	}
	return false
}

// chainKind is the problem the nemesis records for a replica of a replica.
const chainKind = "replica-of-replica"

// endRecord is the heal entry's end_phase record and the final CLUSTER
// NODES recorded beside it (View, one node's, ViewOf's).
type endRecord struct {
	index        int64
	View         string
	ViewOf       string
	Healed       bool         `json:"healed"`
	SlotsChecked int          `json:"slots_checked"`
	Problems     []EndProblem `json:"problems"`
}

// endPhaseRecord finds the last heal's record; invoked says a heal began
// (its completion may be missing: the run crashed in the end phase), ok
// that the completion carries a record.
func endPhaseRecord(ops []history.Op) (rec endRecord, invoked, ok bool) {
	for i := range ops {
		op := &ops[i]
		if op.Process != history.Nemesis || op.F != history.Heal {
			continue
		}
		if op.Type == history.Invoke {
			invoked, ok = true, false
			continue
		}
		var d struct {
			End    *endRecord `json:"end_phase"`
			View   string     `json:"cluster_nodes_after"`
			ViewOf string     `json:"cluster_nodes_of"`
		}
		if json.Unmarshal(op.DetailRaw(), &d) == nil && d.End != nil {
			rec, ok = *d.End, true
			rec.index, rec.View, rec.ViewOf = op.Index, d.View, d.ViewOf
		}
	}
	return rec, invoked, ok
}

func (e endPhase) Check(_ context.Context, in *History) Result {
	ops := in.Ops
	rec, invoked, ok := endPhaseRecord(ops)
	switch {
	case !invoked:
		return NotApplicable("no end phase: the run had no fault to heal")
	case !ok:
		return Result{Valid: Unknown, Figures: &Verdict{
			Reason: "the end phase began but its completion carries no end_phase record (the run ended during the end phase, or a redline before this record)"}}
	}
	fig := &EndPhaseFigures{SlotsChecked: rec.SlotsChecked, Problems: len(rec.Problems), Index: rec.index}
	// The roles at the end: a chain either witness shows is invalid
	// before anything else is weighed (it is the end state itself).
	chains, lie := endChains(rec)
	if len(chains) > 0 {
		fig.ReplicaChains = ptr(len(chains))
		fig.ChainExamples = capList(chains, e.o.MaxExamples)
		fig.First = fmt.Sprintf("the end phase (op %d) left %d replicas replicating a replica (chained replication, "+
			"which Redis Cluster never sets up: redis/redis#15472); first: %s", rec.index, len(chains), chains[0].What)
		fig.Reason = fig.First
		return Result{Valid: Invalid, Figures: fig}
	}
	if lie != "" {
		fig.Roles = lie
	}
	// The record is a witness too: cross-examined against the key
	// census of the slots redline moved or opened and of the slots
	// holding the run's keys, and against itself.
	var contra []EndProblem
	if cen := in.censusOf(); cen != nil {
		contra = censusContradicts(rec, censusSlotProblems(cen, endPhaseSlots(ops, cen)))
		fig.CensusProblems = ptr(len(contra))
	} else {
		fig.Census = "none in the history: the record is not cross-examined"
	}
	if len(contra) > 0 {
		fig.CensusExamples = capList(contra, e.o.MaxExamples)
		fig.First = fmt.Sprintf("the census contradicts the end phase's record (op %d, healed %v, %d problems): %d problems with the slots redline moved or opened or that hold the run's keys that the record does not name; first: %s",
			rec.index, rec.Healed, len(rec.Problems), len(contra), contra[0].What)
		fig.Reason = fig.First
		return Result{Valid: Invalid, Figures: fig}
	}
	if len(rec.Problems) == 0 {
		if !rec.Healed {
			fig.Reason = fmt.Sprintf("the end phase (op %d) says it did not heal everything but names no problem: the record contradicts itself, and what was left unhealed is unknown", rec.index)
			return Result{Valid: Unknown, Figures: fig}
		}
		if in.censusOf() == nil && e.o.CensusExpected != "" {
			// A clean record nothing cross-examined is no evidence.
			return censusMissing(e.o.CensusExpected, fmt.Sprintf("the end phase's record (op %d) says healed, and nothing cross-examined it against where the keys are", rec.index))
		}
		if lie != "" {
			fig.Reason = fmt.Sprintf("the end phase (op %d) says healed, but its final CLUSTER NODES cannot vouch for the roles: %s", rec.index, lie)
			return Result{Valid: Unknown, Figures: fig}
		}
		return Result{Valid: Valid, Figures: fig}
	}
	v := Unknown
	slotProblems := 0
	first := ""
	for _, p := range rec.Problems {
		if p.slotKind() {
			slotProblems++
			if v != Invalid {
				first = p.What
			}
			v = Invalid
		} else if first == "" {
			first = p.What
		}
	}
	fig.SlotProblems = ptr(slotProblems)
	fig.Examples = capList(rec.Problems, e.o.MaxExamples)
	if v == Invalid {
		fig.First = fmt.Sprintf("the end phase (op %d) left %d of the %d slots redline moved or opened wrong; first: %s",
			rec.index, slotProblems, rec.SlotsChecked, first)
	} else {
		fig.Reason = fmt.Sprintf("the end phase (op %d) could not heal everything: %s", rec.index, first)
	}
	return Result{Valid: v, Figures: fig}
}

// EndPhaseFigures are the end-phase checker's figures: the end phase's
// record (op Index) and what the census says of it.
type EndPhaseFigures struct {
	SlotsChecked int   `json:"slots_checked"`
	Problems     int   `json:"problems"`
	Index        int64 `json:"index"`
	// CensusProblems counts the census' contradictions of the record (nil:
	// no census in the history, and Census says so).
	CensusProblems *int         `json:"census_problems,omitempty"`
	Census         string       `json:"census,omitempty"`
	CensusExamples []EndProblem `json:"census_examples,omitempty"`
	SlotProblems   *int         `json:"slot_problems,omitempty"`
	Examples       []EndProblem `json:"examples,omitempty"`
	// ReplicaChains counts the replicas left replicating a replica (nil:
	// none); Roles says why the final view could not vouch for the roles
	// ("": it could, or there was none: a redline before that view).
	ReplicaChains *int         `json:"replica_chains,omitempty"`
	ChainExamples []EndProblem `json:"chain_examples,omitempty"`
	Roles         string       `json:"roles,omitempty"`
	Verdict
}

// endChains are the replicas of replicas the end shows: the record's
// own (each node's account, after they lasted), else those of the final
// CLUSTER NODES (the record names its chains by sentence, not by node,
// so the two are not merged). lie says why that view cannot be read for
// roles ("" when it can, or when there is none).
func endChains(rec endRecord) (chains []EndProblem, lie string) {
	for _, p := range rec.Problems {
		if p.Kind == chainKind {
			chains = append(chains, p)
		}
	}
	if rec.View == "" {
		return chains, ""
	}
	seen, lie := viewChains(rec.View, rec.ViewOf)
	if len(chains) == 0 {
		chains = seen
	}
	return chains, lie
}

// viewChains reads a CLUSTER NODES text (of node of) for replicas whose
// master is itself a replica. A line that is not one, a node id given
// twice, a replica of no master or of one the view does not list is a
// lie: the roles are not vouched for (and the chains found are still
// reported).
func viewChains(text, of string) (chains []EndProblem, lie string) {
	lines, bad := parseSample(text)
	var lies []string
	if bad != "" {
		lies = append(lies, bad)
	}
	byID := map[string]nodeLine{}
	for _, l := range lines {
		if _, dup := byID[l.id]; dup || !nodeID(l.id) || (l.master != "-" && !nodeID(l.master)) {
			lies = append(lies, fmt.Sprintf("the line of %q (master %q) is no node's, or a second one", cut(l.id, 40), cut(l.master, 40)))
			continue
		}
		byID[l.id] = l
	}
	replica := func(l nodeLine) bool { return l.has("slave") || l.has("replica") }
	for _, l := range lines {
		if byID[l.id].addr != l.addr || !replica(l) {
			continue
		}
		up, ok := byID[l.master]
		switch {
		case l.master == "-":
			lies = append(lies, fmt.Sprintf("%s (%s) is a replica of no master", cut(l.id, 8), l.addr))
		case !ok:
			lies = append(lies, fmt.Sprintf("%s (%s) is a replica of %s, a node the view does not list", cut(l.id, 8), l.addr, cut(l.master, 8)))
		case replica(up):
			chains = append(chains, EndProblem{Kind: chainKind, Node: l.addr, What: fmt.Sprintf("in %s's final CLUSTER NODES, %s (%s) replicates %s (%s), which is itself a replica (of %s)",
				of, cut(l.id, 8), l.addr, cut(up.id, 8), up.addr, cut(up.master, 8))})
		}
	}
	if len(lines) == 0 && bad == "" {
		lies = append(lies, "it lists no node")
	}
	if len(lies) > 0 {
		lie = fmt.Sprintf("%s's CLUSTER NODES: %d unreadable or contradictory lines; first: %s", of, len(lies), lies[0])
	}
	return chains, lie
}

// nodeID says whether s is a cluster node id (40 hex digits).
func nodeID(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// cut is s cut to n bytes.
func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
