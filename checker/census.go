package checker

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/redline-dev/redline/history"
)

type censusCheck struct{ o Scope }

// Census cross-examines the end phase's key census against what was
// written: the census is a witness like any other, and a value it finds
// that no write could have produced is garbage (the server holds it, or
// the census lies), recorded raw and flagged. A key written with write
// and cas (a register) must hold one of the values written; a key only
// added to must hold, as a string, a count within what the adds not known
// to have failed sum up to (a counter), or, as a set, only elements they
// added. A write that failed certainly did not happen, so its value is no
// explanation. A key of any other kind (a list, a bank account, a key
// also deleted), or whose value the census could not read, is not judged.
// A history without a census, or none of whose keys can be judged, is not
// applicable, unless the census was expected (Scope.CensusExpected): its
// absence is then unknown, named.
func Census(opts ...Scope) Checker { return censusCheck{firstScope(opts)} }

func (c censusCheck) Name() string { return c.o.name("census") }

// keyWrites is what the history's ops could have left in one key.
type keyWrites struct {
	kind     string // "register", "add" (counter or set, by the census' type), "" (not judged)
	values   map[string]bool
	sum, neg int64 // the adds not known to have failed: positive and negative deltas
	ints     bool  // every add's value is an integer
	first    int64 // the key's first op's index
}

func censusWrites(calls []call) map[string]*keyWrites {
	out := map[string]*keyWrites{}
	for i := range calls {
		addCensusWrite(out, &calls[i])
	}
	return out
}

// addCensusWrite adds what cl could have left in its key to out.
func addCensusWrite(out map[string]*keyWrites, cl *call) {
	k := cl.inv.Key
	if k == "" {
		return
	}
	w := out[k]
	if w == nil {
		w = &keyWrites{values: map[string]bool{}, ints: true, first: cl.index}
		out[strings.Clone(k)] = w
	}
	w.first = min(w.first, cl.index)
	kind := ""
	switch f := cl.inv.Name(); {
	case isRead(string(f)) || f == ScriptLoad:
		// A SCRIPT LOAD names the key it is for (the script
		// workload's) but writes nothing to it.
		return
	case f == OpWrite || f == OpCAS:
		kind = "register"
	case f == OpAdd:
		kind = "add"
	default:
		w.kind = "-" // a kind the census cannot judge
		return
	}
	if w.kind == "" {
		w.kind = kind
	} else if w.kind != kind {
		w.kind = "-"
	}
	if cl.failed() {
		return
	}
	switch kind {
	case "register":
		w.values[strings.Clone(writeValue(cl.inv))] = true
	case "add":
		w.values[strings.Clone(writeValue(cl.inv))] = true
		if d, ok := cl.inv.Int(); ok {
			if d >= 0 {
				w.sum += d
			} else {
				w.neg += d
			}
		} else {
			w.ints = false
		}
	}
}

// censusGarbage says why a census copy cannot be what the writes left
// ("" when it can, or cannot be judged).
func censusGarbage(w *keyWrites, k history.CensusKey) string {
	if k.Error != "" {
		return ""
	}
	switch w.kind {
	case "register":
		if k.Value == nil {
			if k.Type != "" && k.Type != "string" {
				return fmt.Sprintf("a %s, where only strings were written", k.Type)
			}
			return ""
		}
		if !w.values[*k.Value] {
			return fmt.Sprintf("%q, a value no write or cas sent (%s)", *k.Value, valueList(w.values))
		}
	case "add":
		switch {
		case k.Type == "set":
			for _, m := range k.Members {
				if !w.values[m] {
					return fmt.Sprintf("the member %q, which no add sent (%s)", m, valueList(w.values))
				}
			}
			if int64(len(w.values)) < k.Len {
				return fmt.Sprintf("%d members, more than the %d elements ever added", k.Len, len(w.values))
			}
		case k.Value != nil && w.ints:
			v, err := strconv.ParseInt(*k.Value, 10, 64)
			if err != nil {
				return fmt.Sprintf("%q, which is no count", *k.Value)
			}
			if v > w.sum || v < w.neg {
				return fmt.Sprintf("%d, outside what the increments not known to have failed add up to (%d..%d)", v, w.neg, w.sum)
			}
		}
	}
	return ""
}

// valueList names a few values: "values sent: 1, 2".
func valueList(m map[string]bool) string {
	vs := make([]string, 0, len(m))
	for v := range m {
		vs = append(vs, v)
	}
	sort.Strings(vs)
	if len(vs) == 0 {
		return "none was sent without failing"
	}
	if len(vs) > 8 {
		return fmt.Sprintf("values sent: %s ... (%d)", strings.Join(vs[:8], ", "), len(vs))
	}
	return "values sent: " + strings.Join(vs, ", ")
}

func (c censusCheck) Check(_ context.Context, in *History) Result {
	cen := in.censusOf()
	if cen == nil {
		if c.o.CensusExpected != "" {
			return censusMissing(c.o.CensusExpected, "the keys' final values were not cross-examined against what was written")
		}
		return NotApplicable("no key census in the history (the end phase took none): nothing to cross-examine")
	}
	calls, err := c.o.calls(in)
	if err != nil {
		return invalidHistory(err)
	}
	return c.judge(cen, censusWrites(calls))
}

// NewStream: the census checker streams (StreamChecker).
func (c censusCheck) NewStream(t *Tail) Stream {
	s := &censusStream{c: c, t: t, cen: t.censusOf(), writes: map[string]*keyWrites{}}
	if s.cen != nil {
		s.keys = map[string]bool{}
		for _, n := range s.cen.Nodes {
			for k := range n.Keys {
				s.keys[k] = true
			}
			for k := range n.Asides {
				s.keys[k] = true
			}
		}
	}
	return s
}

// censusStream is what the census checker needs of the client ops: what
// they could have left in each key the census found (known before the
// pass: the census is a nemesis entry, or census.json). Its state grows
// with the census' keys and the distinct values written to them (a
// set's members: what the census itself holds), not with the ops.
type censusStream struct {
	c      censusCheck
	t      *Tail
	cen    *history.Census
	keys   map[string]bool
	writes map[string]*keyWrites
}

func (s *censusStream) Call(cl *call, _ int) {
	if s.cen != nil && s.c.o.keep(cl.inv) && s.keys[cl.inv.Key] {
		addCensusWrite(s.writes, cl)
	}
}

func (s *censusStream) End(context.Context) Result {
	if s.cen == nil {
		if s.c.o.CensusExpected != "" {
			return censusMissing(s.c.o.CensusExpected, "the keys' final values were not cross-examined against what was written")
		}
		return NotApplicable("no key census in the history (the end phase took none): nothing to cross-examine")
	}
	if r, bad := s.t.pairErr(); bad {
		return r
	}
	return s.c.judge(s.cen, s.writes)
}

// judge cross-examines the census cen against what the ops could have
// left in its keys.
func (c censusCheck) judge(cen *history.Census, writes map[string]*keyWrites) Result {
	judged, garbage := 0, 0
	var examples []map[string]any
	first := ""
	judge := func(n history.CensusNode, key, name string, k history.CensusKey) {
		w := writes[key]
		if w == nil || (w.kind != "register" && w.kind != "add") || k.Error != "" {
			return
		}
		judged++
		why := censusGarbage(w, k)
		if why == "" {
			return
		}
		garbage++
		where := n.Name + " (" + n.Role + ")"
		if name != key {
			where = fmt.Sprintf("%s, in its set-aside copy %s", where, name)
		}
		if first == "" {
			first = fmt.Sprintf("the census finds key %s on %s holding %s: no write could have produced it (the key's ops begin at op %d)", key, where, why, w.first)
		}
		if len(examples) < c.o.MaxExamples {
			raw, _ := json.Marshal(k)
			examples = append(examples, map[string]any{"key": key, "node": n.Name, "role": n.Role, "name": name,
				"census": string(raw), "why": why, "index": w.first})
		}
	}
	for _, n := range cen.Nodes {
		for _, key := range sortedKeysOf(n.Keys) {
			judge(n, key, key, n.Keys[key])
		}
		for _, key := range sortedKeysOf(n.Asides) {
			for _, as := range n.Asides[key] {
				judge(n, key, as.Name, as.CensusKey)
			}
		}
	}
	if judged == 0 {
		return NotApplicable("no key of the census was written in a way it can judge (register writes, counter or set adds)")
	}
	fig := &CensusFigures{CopiesJudged: judged, Garbage: garbage}
	if garbage > 0 {
		fig.Examples = examples
		fig.Reason, fig.First = first, first
		return Result{Valid: Invalid, Figures: fig}
	}
	return Result{Valid: Valid, Figures: fig}
}

// CensusFigures are the census checker's figures: the key copies it
// judged and those holding a value no write could have produced.
type CensusFigures struct {
	CopiesJudged int              `json:"copies_judged"`
	Garbage      int              `json:"garbage"`
	Examples     []map[string]any `json:"examples,omitempty"`
	Verdict
}

// censusSlotProblems is what the census shows wrong with each of slots,
// as the end phase's record would name it: a slot two primaries claim
// (each one's own CLUSTER NODES line serves it: conflict), a slot no
// answering node sees served (unowned), a slot a node has MIGRATING or
// IMPORTING (open), keys of the slot on a node outside the shard that
// serves it (stranded).
func censusSlotProblems(c *history.Census, slots []int) []EndProblem {
	var out []EndProblem
	answered := slices.ContainsFunc(c.Nodes, func(n history.CensusNode) bool { return len(n.View) > 0 })
	for _, slot := range slots {
		votes := map[string]int{}
		var claimants []string
		for _, n := range c.Nodes {
			if o := n.OwnerOf(slot); o != "" {
				votes[o]++
			}
			if n.Role != "primary" {
				continue
			}
			for _, p := range n.View {
				if p.Myself && p.Primary && p.Serves(slot) {
					claimants = append(claimants, n.Name)
				}
			}
		}
		owner, best := "", 0
		for id, v := range votes {
			if v > best || (v == best && id < owner) {
				owner, best = id, v
			}
		}
		ownerName := owner
		if n, ok := c.Node(owner); ok {
			ownerName = n.Name
		}
		if len(claimants) > 1 {
			out = append(out, EndProblem{Slot: slot, Kind: "conflict",
				What: fmt.Sprintf("slot %d is claimed by %s (each primary's own CLUSTER NODES line serves it)", slot, strings.Join(claimants, " and "))})
		}
		if owner == "" && answered {
			out = append(out, EndProblem{Slot: slot, Kind: "unowned", What: fmt.Sprintf("slot %d is served by no node in any answering node's view", slot)})
		}
		for _, n := range c.Nodes {
			if slices.Contains(n.Migrating, slot) || slices.Contains(n.Importing, slot) {
				out = append(out, EndProblem{Slot: slot, Kind: "open", Node: n.Name, What: fmt.Sprintf("slot %d is MIGRATING or IMPORTING on %s", slot, n.Name)})
			}
		}
		if owner == "" {
			continue
		}
		for _, n := range c.Nodes {
			shard := n.ID
			if n.Role == "replica" {
				shard = n.Primary
			}
			if shard == owner || c.OpenSlot(n, slot) {
				continue
			}
			var keys []string
			for k := range n.Keys {
				if history.Keyslot(k) == slot {
					keys = append(keys, k)
				}
			}
			if len(keys) == 0 {
				continue
			}
			sort.Strings(keys)
			out = append(out, EndProblem{Slot: slot, Kind: "stranded", Node: n.Name, Keys: int64(len(keys)),
				What: fmt.Sprintf("slot %d: %d keys on %s (%s, e.g. %s), which does not own the slot (%s does)", slot, len(keys), n.Name, n.Role, keys[0], ownerName)})
		}
	}
	return out
}

// movedSlots are the slots redline moved or opened, as the history
// journals them: the migrate fault's placement records and the journal's
// steps.
func movedSlots(ops []history.Op) []int {
	seen := map[int]bool{}
	for _, r := range handoffRecords(ops) {
		for _, p := range r.places {
			seen[p.Slot] = true
		}
	}
	for i := range ops {
		op := &ops[i]
		if op.Process != history.Nemesis || op.F != history.Journal {
			continue
		}
		var st struct {
			Slots []int `json:"slots"`
		}
		if json.Unmarshal(op.DetailRaw(), &st) == nil {
			for _, s := range st.Slots {
				seen[s] = true
			}
		}
	}
	out := make([]int, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// endPhaseSlots are the slots the end phase's census is read for: those
// redline moved or opened (movedSlots) and every slot holding one of the
// run's keys on some node. A slot no migration touched can still end
// claimed twice, open, or with a key off its owner's shard (a failover
// that left two primaries, a repair gone wrong, or a census that lies):
// the record's "clean" is believed for none of them.
func endPhaseSlots(ops []history.Op, c *history.Census) []int {
	seen := map[int]bool{}
	for _, s := range movedSlots(ops) {
		seen[s] = true
	}
	for _, n := range c.Nodes {
		for k := range n.Keys {
			seen[history.Keyslot(k)] = true
		}
	}
	out := make([]int, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// censusContradicts is the census' problems with slots that the end
// phase's record does not name (same slot and kind).
func censusContradicts(rec endRecord, cps []EndProblem) []EndProblem {
	named := map[[2]string]bool{}
	for _, p := range rec.Problems {
		named[[2]string{strconv.Itoa(p.Slot), p.Kind}] = true
	}
	var out []EndProblem
	for _, p := range cps {
		if !named[[2]string{strconv.Itoa(p.Slot), p.Kind}] {
			out = append(out, p)
		}
	}
	return out
}

// censusMissing is the verdict of a checker that needs the run's key
// census when the census, expected (why), is gone: unknown, saying what
// went unjudged.
func censusMissing(why, unjudged string) Result {
	return Result{Valid: Unknown, Figures: &MissingCensus{Census: "missing", Verdict: Verdict{
		Reason: fmt.Sprintf("the key census is missing (no census entry in the history, no census.json) although the run's recorder takes one at the end of every run (%s): %s", why, unjudged),
	}}}
}

// MissingCensus are the figures of a checker that needs the key census
// when it is missing.
type MissingCensus struct {
	Census string `json:"census"`
	Verdict
}
