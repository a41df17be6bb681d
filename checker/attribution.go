package checker

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/redline-dev/redline/history"
)

// Attribution says what happened to one anomaly the checkers found (a
// lost acknowledged write, a stale read, a key no order explains): the
// node that acknowledged the write, where the key is at the end (the key
// census), the fault windows and journalled admin steps between the
// acknowledgement and the read that missed it, the servers' own log lines
// of that span, and a verdict in words. It is a pure function of the
// history (which carries the census and the journal) and the log lines
// passed in: `redline check` attributes a stored run the same way.
type Attribution struct {
	Checker string `json:"checker"`
	// Kind: "lost-write" (an acknowledged write no final read holds),
	// "set-aside" (an acknowledged write missing from its key at the end
	// and kept in a set-aside copy of it), "stale-read", "not-linearizable"
	// (a register key), "lost-increment" (a counter below its acknowledged
	// increments), "unexpected-increment" (a counter above every increment
	// sent: an excess, no loss), or the checker's class name.
	Kind string    `json:"kind"`
	Key  string    `json:"key"`
	Slot int       `json:"slot"`
	Ack  *AttrOp   `json:"ack,omitempty"`  // the acknowledged write
	Miss *AttrOp   `json:"miss,omitempty"` // the read that missed it
	Copy []KeyCopy `json:"census,omitempty"`
	// Owner is who serves the key's slot at the end, as most answering
	// nodes see it (name, or id when no node of the census has it).
	Owner  string     `json:"owner,omitempty"`
	Faults []string   `json:"faults,omitempty"` // fault windows in between, in words
	Steps  []AttrStep `json:"steps,omitempty"`  // journalled admin steps in between
	Logs   []string   `json:"log_lines,omitempty"`
	// Verdict is one of the verdicts below: "server-lost" (the server
	// lost it), "admin-stranded" (an admin step stranded it),
	// "admin-set-aside" (an admin step set it aside: kept under another
	// name, not lost), ... or "unknown"; Why says which evidence decided
	// it, in words, and where the write is when it is anywhere.
	Verdict string `json:"verdict"`
	Why     string `json:"why"`
	// Unserved is set for kind "unserved": a shard that went without
	// serving in a fault window (or outside every window).
	Unserved *Unserved `json:"unserved,omitempty"`
}

// CensusSummary is what the key census says as a whole: how many copies
// of the run's keys it found, and which keys sit on a node whose shard
// does not serve their slot (stranded: unreachable for clients, and a
// sign of an interrupted migration), whatever the checkers found.
type CensusSummary struct {
	Nodes      int      `json:"nodes"`
	Unanswered []string `json:"unanswered,omitempty"`
	Copies     int      `json:"copies"`
	Stranded   int      `json:"stranded"`
	Examples   []string `json:"stranded_examples,omitempty"` // "key (slot s) on n3, served by n2"
	// InOpenSlots counts the copies outside their slot's shard on a node
	// whose shard has that slot MIGRATING or IMPORTING (not in Stranded).
	InOpenSlots  int      `json:"in_open_slots"`
	OpenExamples []string `json:"open_slot_examples,omitempty"`
	// SetAside counts the set-aside copies of the run's keys (a key with
	// different copies on both sides of a move: one kept under the key's
	// name, the other beside it), not in Copies; a set-aside copy on a
	// node whose shard does not serve its slot is also in Stranded.
	SetAside        int      `json:"set_aside"`
	SetAsideExample []string `json:"set_aside_examples,omitempty"` // "NAME (copy of KEY from n2) on n1"
}

// SummarizeCensus summarizes a census (nil: none taken).
func SummarizeCensus(c *history.Census) *CensusSummary {
	if c == nil {
		return nil
	}
	a := &attributor{census: c, names: map[string]string{}}
	for _, n := range c.Nodes {
		a.names[n.Addr] = n.Name
	}
	out := &CensusSummary{Nodes: len(c.Nodes)}
	owners := map[int]string{}
	for _, n := range c.Nodes {
		if n.Error != "" && len(n.View) == 0 {
			out.Unanswered = append(out.Unanswered, n.Name)
		}
		keys := make([]string, 0, len(n.Keys))
		for k := range n.Keys {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		copies := len(keys)
		for _, k := range sortedKeysOf(n.Asides) {
			for _, as := range n.Asides[k] {
				out.SetAside++
				if len(out.SetAsideExample) < 10 {
					out.SetAsideExample = append(out.SetAsideExample, fmt.Sprintf("%s (copy of %s from %s) on %s", as.Name, k, as.From, n.Name))
				}
				keys = append(keys, as.Name)
			}
		}
		for i, k := range keys {
			if i < copies {
				out.Copies++
			}
			slot := history.Keyslot(k)
			owner, ok := owners[slot]
			if !ok {
				owner, _ = a.ownerOf(slot)
				owners[slot] = owner
			}
			shard := n.ID
			if n.Role == "replica" {
				shard = n.Primary
			}
			if owner == "" || shard == owner {
				continue
			}
			if c.OpenSlot(n, slot) {
				out.InOpenSlots++
				if len(out.OpenExamples) < 10 {
					out.OpenExamples = append(out.OpenExamples, fmt.Sprintf("%s (slot %d) on %s, served by %s", k, slot, n.Name, a.bareNameOr(owner)))
				}
				continue
			}
			out.Stranded++
			if len(out.Examples) < 10 {
				out.Examples = append(out.Examples, fmt.Sprintf("%s (slot %d) on %s, served by %s", k, slot, n.Name, a.bareNameOr(owner)))
			}
		}
	}
	return out
}

func sortedKeysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (a *attributor) bareNameOr(id string) string {
	if n := a.bareName(id); n != "" {
		return n
	}
	return a.nodeName(id)
}

// Verdicts of an attribution.
const (
	ServerLost    = "server-lost"
	AdminStranded = "admin-stranded"
	// AdminOverwritten: the slot's owner holds another copy of the key
	// and a journalled step moved the slot's keys in between (a MIGRATE
	// with REPLACE, or a copy that came back over it); not stranded.
	AdminOverwritten = "admin-overwritten"
	// AdminStaleRead: a read returned an older value while a journalled
	// step had the key's slot in hand, and the slot's owner holds the
	// write at the end: the step let a node serve the slot without it
	// for a while (an undo that closed the owner before the keys came
	// back), nothing was lost.
	AdminStaleRead = "admin-stale-read"
	// AdminSetAside: the write is missing from its key at the end but a
	// set-aside copy of the key holds it: a journalled "set-aside" step
	// found different copies on both sides of a move, kept the
	// destination's under the key's name and the source's (with the
	// write) beside it. Not lost; not in the key either.
	AdminSetAside = "admin-set-aside"
	AttrUnknown   = "unknown"
)

// VerdictWords is a verdict as the report says it.
func VerdictWords(v string) string {
	switch v {
	case ServerLost:
		return "the server lost it"
	case AdminStranded:
		return "an admin step stranded it"
	case AdminOverwritten:
		return "an admin step overwrote it"
	case AdminStaleRead:
		return "an admin step served it stale"
	case AdminSetAside:
		return "an admin step set it aside (kept under another name, not lost)"
	case FaultOutage:
		return "the fault did it"
	case AdminOutage:
		return "an admin step did it"
	case NotRecovered:
		return "not recovered: the shard never served again after its fault ended"
	}
	return "unknown"
}

// AttrOp is one op an attribution names.
type AttrOp struct {
	Index int64   `json:"index"`
	F     string  `json:"f"`
	TimeS float64 `json:"time_s"`
	Node  string  `json:"node,omitempty"` // name (address) that served it
	Value string  `json:"value,omitempty"`
}

// KeyCopy is one node's copy of the key at the end (the census).
type KeyCopy struct {
	Node  string `json:"node"`
	Role  string `json:"role"`
	Owner bool   `json:"owner"` // the node belongs to the shard serving the slot
	// Open: the node's shard has the slot MIGRATING or IMPORTING (a
	// migration left half-way: clients reach the key by ASK, if at all).
	Open  bool   `json:"open_slot,omitempty"`
	Holds string `json:"holds"` // "yes", "no" (another value), "unknown" (value unread: why)
	Value string `json:"value,omitempty"`
	// Aside is the name of a set-aside copy of the key (the census lists
	// it under the key), From the node its copy came from; "" for the key
	// under its own name.
	Aside string `json:"aside,omitempty"`
	From  string `json:"aside_from,omitempty"`
}

// AttrStep is one journalled admin step between the ack and the miss.
type AttrStep struct {
	Seq     int     `json:"seq"`
	Kind    string  `json:"kind"`
	State   string  `json:"state"`
	Slots   string  `json:"slots,omitempty"`
	From    string  `json:"from,omitempty"`
	To      string  `json:"to,omitempty"`
	Touches bool    `json:"touches_slot"`
	Error   string  `json:"error,omitempty"`
	TimeS   float64 `json:"time_s"`
}

// LogLine is one line of a server's own log, placed on the history's
// timeline (Time in ns since the run started; -1 when its time is unknown).
type LogLine struct {
	Node string
	Time int64
	Text string
}

// MaxAttributions bounds the anomalies attributed one by one.
const MaxAttributions = 50

// suspect is an anomaly instance as the checkers' figures name it.
type suspect struct {
	checker, kind, key string
	index              int64 // the op's invocation index, -1 when only the key is named
	value              string
	// counter is set for a counter key: what its final read had to hold.
	counter *counterWant
}

// counterWant is what a counter's final read had to be within: lower is
// what the acknowledged increments before it add up to (a copy of the key
// holding at least that holds every one of them), upper every increment
// invoked by its end. A counter's census copy is judged against these, not
// against one increment's delta.
type counterWant struct {
	lower, upper int64
	known        bool // both bounds read from the figures
	// revealed is the first read that showed the loss and whole the last
	// read before it that held every acknowledged increment (-1 when the
	// figures name none): the loss happened between them, and the faults
	// of that stretch are the candidates, not those near the final read.
	revealed, whole int64
}

// holds says whether a counter's census copy holds what the anomaly is
// about: for a lost increment every acknowledged increment (at least
// lower), for an unexpected one the excess (above upper).
func (w *counterWant) holds(k history.CensusKey, kind string) string {
	if k.Error != "" || k.Value == nil || !w.known {
		return "unknown"
	}
	v, err := strconv.ParseInt(*k.Value, 10, 64)
	switch {
	case err != nil:
		return "no" // no integer: garbage, no counter value at all
	case kind == "unexpected-increment" && v > w.upper,
		kind != "unexpected-increment" && v >= w.lower:
		return "yes"
	}
	return "no"
}

// Attribute attributes the anomalies of s (their first instances, as the
// checkers' figures name them) from the history ops and the servers' log
// lines, then every window in which a shard went unserved (kind
// "unserved"). It returns nil when there is nothing to attribute.
func Attribute(ops []history.Op, s Summary, logs []LogLine) []Attribution {
	return AttributeWithTopology(ops, s, logs, nil)
}

// TopologySample is one line of a run's topology.jsonl: ns since the
// history's start and CLUSTER NODES with each node's own line.
type TopologySample struct {
	Time         int64  `json:"time"`
	ClusterNodes string `json:"cluster_nodes"`
}

// AttributeWithTopology is Attribute with the topology the runner sampled
// while the run went on: an unserved window then says who owned the
// shard's slots before, during and after it, and when that changed (the
// history alone only shows who served the next op).
func AttributeWithTopology(ops []history.Op, s Summary, logs []LogLine, topo []TopologySample) []Attribution {
	a := newAttributor(ops, logs)
	a.setTopology(topo)
	return a.attributeAll(suspects(s), a.unserved)
}

// attributeAll attributes the suspects, then the unserved windows.
func (a *attributor) attributeAll(sus []suspect, unserved func() []Attribution) []Attribution {
	out := make([]Attribution, 0, len(sus))
	missed := map[string]bool{} // checker, key and missing read already attributed
	for _, x := range sus {
		at := a.attribute(x)
		if at.Miss != nil {
			id := at.Checker + "\x00" + at.Key + "\x00" + strconv.FormatInt(at.Miss.Index, 10)
			if missed[id] && x.kind == "not-linearizable" {
				continue // the same read as a stale read of the key: one story
			}
			missed[id] = true
		}
		out = append(out, at)
	}
	out = append(out, unserved()...)
	if len(out) == 0 {
		return nil
	}
	return out
}

// suspects reads the instances from the figures: lists of examples with a
// key (and an op index), and lists of keys, under the names the checkers
// use. A figure is read through JSON so that a summary read back from
// results.json gives the same instances as a live one.
func suspects(s Summary) []suspect {
	names := make([]string, 0, len(s.Checkers))
	for n := range s.Checkers {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []suspect
	seen := map[string]bool{}
	add := func(x suspect) {
		id := x.checker + "\x00" + x.kind + "\x00" + x.key + "\x00" + strconv.FormatInt(x.index, 10) + "\x00" + x.value
		if seen[id] || len(out) >= MaxAttributions {
			return
		}
		seen[id] = true
		out = append(out, x)
	}
	examples := func(name, kind string, v any, valueField string) {
		var ex []map[string]any
		if !reJSON(v, &ex) {
			return
		}
		for _, e := range ex {
			k, _ := e["key"].(string)
			if k == "" {
				continue
			}
			idx := int64(-1)
			if f, ok := e["index"].(float64); ok {
				idx = int64(f)
			}
			val := ""
			if valueField != "" && e[valueField] != nil {
				val = jsonText(e[valueField])
			}
			add(suspect{name, kind, k, idx, val, nil})
		}
	}
	for _, name := range names {
		r := s.Checkers[name]
		if r.Valid != Invalid {
			continue
		}
		ev := evidenceOf(r)
		examples(name, "lost-write", ev.lostElements, "element")
		examples(name, "set-aside", ev.setAsideElements, "element")
		examples(name, "stale-read", ev.staleReadSamples, "")
		var lostKeys []map[string]any
		if reJSON(ev.lostKeys, &lostKeys) {
			// A counter key below its acknowledged increments lost some;
			// one above every increment sent has an excess, no loss.
			for _, e := range lostKeys {
				k, _ := e["key"].(string)
				if k == "" {
					continue
				}
				num := func(n string) (int64, bool) { f, ok := e[n].(float64); return int64(f), ok }
				idx := int64(-1)
				if i, ok := num("final_index"); ok {
					idx = i
				}
				lo, okLo := num("lower")
				if !okLo {
					lo, okLo = num("acked") // results.json before the bounds were kept
				}
				hi, okHi := num("upper")
				if !okHi {
					hi, okHi = num("attempted")
				}
				kind := "lost-increment"
				if lost, _ := num("lost"); lost == 0 {
					if u, _ := num("unexpected"); u > 0 {
						kind = "unexpected-increment"
					}
				}
				want := &counterWant{lower: lo, upper: hi, known: okLo && okHi, revealed: -1, whole: -1}
				if kind == "lost-increment" {
					if r, ok := num("revealed_index"); ok {
						want.revealed = r
						if w, ok := num("whole_before_index"); ok {
							want.whole = w
						}
					}
				}
				add(suspect{checker: name, kind: kind, key: k, index: idx, counter: want})
			}
		}
		var keys []string
		if reJSON(ev.anomalousKeys, &keys) {
			for _, k := range keys {
				add(suspect{name, "not-linearizable", k, -1, "", nil})
			}
		}
		var classes map[string]struct {
			Examples []map[string]any `json:"examples"`
		}
		if reJSON(ev.anomalies, &classes) {
			cs := make([]string, 0, len(classes))
			for c := range classes {
				cs = append(cs, c)
			}
			sort.Strings(cs)
			for _, c := range cs {
				if strings.Contains(c, "lost") || strings.Contains(c, "stale") {
					examples(name, c, classes[c].Examples, "value")
				}
			}
		}
	}
	return out
}

// evidence are the instances a result names that attribution follows:
// the lost and set-aside elements, the stale reads, the counter keys
// out of bounds, the keys no order explains and the anomalies by class
// (nil: the result has none of that kind).
type evidence struct {
	lostElements, setAsideElements, staleReadSamples, lostKeys, anomalousKeys, anomalies any
}

// evidenceOf reads r's instances from its checker's typed figures (a Map,
// a checker not typed yet, by their names).
func evidenceOf(r Result) evidence {
	f := r.Figures
	if s, ok := f.(storedFigures); ok {
		f = s.Figures
	}
	orNil := func(ok bool, v any) any {
		if !ok {
			return nil
		}
		return v
	}
	switch f := f.(type) {
	case *SetFigures:
		return evidence{lostElements: f.LostElements, setAsideElements: orNil(f.SetAsideElements != nil, f.SetAsideElements),
			anomalies: orNil(f.Anomalies != nil, f.Anomalies)}
	case *CounterFigures:
		return evidence{staleReadSamples: orNil(f.StaleReadSamples != nil, f.StaleReadSamples), lostKeys: f.LostKeys,
			anomalies: orNil(f.Anomalies != nil, f.Anomalies)}
	case *LinearizableFigures:
		return evidence{staleReadSamples: orNil(f.StaleReadSamples != nil, f.StaleReadSamples), anomalousKeys: f.AnomalousKeys,
			anomalies: orNil(f.Anomalies != nil, f.Anomalies)}
	case *ListAppendFigures:
		return evidence{anomalies: f.Anomalies}
	case *HandoffFigures:
		return evidence{anomalousKeys: f.AnomalousKeys}
	case interface{ anomalyClasses() []string }:
		// The other checkers that flag anomalies by class.
		var an Anomalies
		switch f := f.(type) {
		case *BankFigures:
			an = f.Anomalies
		case *WaitProbeFigures:
			an = f.Anomalies
		case *EpochFigures:
			an = f.Anomalies
		case *ElectionFigures:
			an = f.Anomalies
		case *ReplicaCensusFigures:
			an = f.Anomalies
		}
		return evidence{anomalies: orNil(an != nil, an)}
	case AnomalyFigures:
		an := f.FlaggedAnomalies()
		return evidence{anomalies: orNil(an != nil, an)}
	case Map:
		return evidence{lostElements: f["lost_elements"], setAsideElements: f["set_aside_elements"], staleReadSamples: f["stale_read_samples"],
			lostKeys: f["lost_keys"], anomalousKeys: f["anomalous_keys"], anomalies: f["anomalies"]}
	}
	return evidence{}
}

func reJSON(v any, into any) bool {
	if v == nil {
		return false
	}
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	return json.Unmarshal(b, into) == nil
}

func jsonText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// attributor holds what every attribution of one history looks up.
type attributor struct {
	ops        []history.Op
	byKey      map[string][]history.Pair
	byIndex    map[int64]history.Pair
	census     *history.Census
	windows    []Window
	addrs      map[string]string // node name -> address (the nodes entries)
	steps      []journalStep
	names      map[string]string // address -> node name
	finalReads int64
	logs       []LogLine
	topo       []TopologySample // sorted by time
	// topoNote says the samples were not in time order in the file ("":
	// they were); topoContra are the instants whose samples disagree.
	topoNote   string
	topoContra map[int64]bool
	// dupIndex counts the entries of each op index given more than once:
	// such an index names no one op.
	dupIndex map[int64]int
}

// setTopology keeps the samples sorted by time (a copy: the file's order
// is no evidence of when a sample was taken, its time is), noting a
// disorder and the instants whose samples contradict each other.
func (a *attributor) setTopology(topo []TopologySample) {
	out, contra := topologyDisorder(topo)
	a.topo = slices.Clone(topo)
	slices.SortStableFunc(a.topo, func(x, y TopologySample) int { return cmpInt(x.Time, y.Time) })
	if len(out) > 0 {
		i := out[0]
		a.topoNote = fmt.Sprintf("the topology file's samples were out of time order (sample %d at %ss came after one at %ss): read in time order", i+1, trimS(sec(topo[i].Time)), trimS(sec(maxTimeBefore(topo, i))))
	}
	for _, c := range contra {
		if a.topoContra == nil {
			a.topoContra = map[int64]bool{}
		}
		a.topoContra[topo[c[0]].Time] = true
	}
}

type journalStep struct {
	seq               int
	kind, state, note string
	slots             []int
	from, to, err     string
	begin, end        int64
	keys, aside       []string // a set-aside step's keys and their copies' names
}

func newAttributor(ops []history.Op, logs []LogLine) *attributor {
	return newAttributorUntil(ops, logs, runEnd(ops))
}

// newAttributorUntil is newAttributor of a run that ends at end (its
// latest time): ops may then be only a part of the history, its nemesis
// entries and the client ops the attributions name (AttributeScanned).
func newAttributorUntil(ops []history.Op, logs []LogLine, end int64) *attributor {
	a := &attributor{ops: ops, byKey: map[string][]history.Pair{}, byIndex: map[int64]history.Pair{},
		names: map[string]string{}, finalReads: finalReadsStart(ops), logs: logs}
	if pairs, err := history.Pairs(ops); err == nil {
		for _, p := range pairs {
			a.byKey[p.Invoke.Key] = append(a.byKey[p.Invoke.Key], p)
			a.byIndex[p.Invoke.Index] = p
		}
	}
	a.addrs = nodeAddrs(ops)
	for n, addr := range a.addrs {
		a.names[addr] = n
	}
	for _, d := range duplicateIndices(ops) {
		if a.dupIndex == nil {
			a.dupIndex = map[int64]int{}
		}
		a.dupIndex[d.index] = len(d.at)
	}
	a.windows = windowsUntil(ops, end)
	a.census = history.CensusOf(ops)
	bySeq := map[int]*journalStep{}
	for i := range ops {
		op := &ops[i]
		if op.Process != history.Nemesis {
			continue
		}
		switch op.F {
		case "journal":
			var st struct {
				Seq   int      `json:"seq"`
				State string   `json:"state"`
				Kind  string   `json:"kind"`
				Slots []int    `json:"slots"`
				From  string   `json:"from"`
				To    string   `json:"to"`
				Note  string   `json:"note"`
				Error string   `json:"error"`
				Keys  []string `json:"keys"`
				Aside []string `json:"aside"`
			}
			if json.Unmarshal(op.DetailRaw(), &st) != nil || st.Seq == 0 {
				continue
			}
			j := bySeq[st.Seq]
			if j == nil {
				j = &journalStep{seq: st.Seq, begin: op.Time, end: -1}
				bySeq[st.Seq] = j
			}
			j.kind, j.state, j.slots, j.from, j.to, j.note, j.err = st.Kind, st.State, st.Slots, st.From, st.To, st.Note, st.Error
			j.keys, j.aside = st.Keys, st.Aside
			if st.State != "begin" {
				j.end = op.Time
			}
		}
	}
	for _, j := range bySeq {
		a.steps = append(a.steps, *j)
	}
	slices.SortFunc(a.steps, func(x, y journalStep) int { return x.seq - y.seq })
	if a.census != nil {
		for _, n := range a.census.Nodes {
			if n.Addr != "" && a.names[n.Addr] == "" {
				a.names[n.Addr] = n.Name
			}
		}
	}
	return a
}

// nodeName names a node by address, id or name: "n3 (10.0.0.3:6379)".
func (a *attributor) nodeName(s string) string {
	if s == "" {
		return ""
	}
	if n := a.names[s]; n != "" {
		return n + " (" + s + ")"
	}
	if a.census != nil {
		for _, n := range a.census.Nodes {
			if n.ID == s || n.Name == s {
				return n.Name
			}
			for _, p := range n.View {
				if p.ID == s && a.names[p.Addr] != "" {
					return a.names[p.Addr]
				}
			}
		}
	}
	if len(s) > 12 {
		return s[:8] + "..."
	}
	return s
}

func isRead(f string) bool { return history.OpName(f) == OpRead || strings.HasPrefix(f, "read-") }

func served(p history.Pair) bool { return p.Completion != nil && p.Completion.Type == history.OK }

// writeValue is the value a write leaves in the key: a write's value, a
// cas's new value, an add's element.
func writeValue(op *history.Op) string {
	switch op.Name() {
	case OpCAS:
		if vs, ok := op.Ints(); ok && len(vs) == 2 {
			return strconv.FormatInt(vs[1], 10)
		}
	case OpWrite, OpAdd:
		var v any
		if json.Unmarshal(op.Value, &v) == nil {
			return jsonText(v)
		}
	default:
		if valueWrites[op.Name()] {
			var v any
			if json.Unmarshal(op.Value, &v) == nil {
				return jsonText(v)
			}
		}
	}
	return ""
}

// valueWrites are a workload's own ops that leave their value in the key,
// as a write does (workloads/ttl's set), registered by the workload that
// sends them (ValueWrites).
var valueWrites = map[history.OpName]bool{}

// ValueWrites registers ops that leave their value in their key, at init,
// so that the attribution can tell which write a read saw:
//
//	var _ = checker.ValueWrites(Set)
func ValueWrites(ops ...history.OpName) struct{} {
	for _, op := range ops {
		valueWrites[op] = true
	}
	return struct{}{}
}

func (a *attributor) opRef(p history.Pair, done bool) *AttrOp {
	op := p.Invoke
	t := op.Time
	node := ""
	if p.Completion != nil {
		node = p.Completion.Node
		if done {
			t = p.Completion.Time
		}
	}
	r := &AttrOp{Index: op.Index, F: op.F, TimeS: sec(t), Node: a.nodeName(node)}
	if isRead(op.F) {
		if p.Completion != nil {
			r.Value = rawString(p.Completion.Value)
		}
	} else {
		r.Value = writeValue(op)
	}
	return r
}

// finalRead is the first served read of key at or after the final-reads
// marker (the last served read when there is no marker).
func (a *attributor) finalRead(key string) (history.Pair, bool) {
	var last history.Pair
	found := false
	for _, p := range a.byKey[key] {
		if !isRead(p.Invoke.F) || !served(p) {
			continue
		}
		if a.finalReads >= 0 && p.Invoke.Time >= a.finalReads {
			return p, true
		}
		last, found = p, true
	}
	return last, found && a.finalReads < 0
}

// lastAckBefore is the latest acknowledged write of key that completed
// before t (and, when value is set, left that value).
func (a *attributor) lastAckBefore(key string, t int64, value string) (history.Pair, bool) {
	var best history.Pair
	found := false
	for _, p := range a.byKey[key] {
		if isRead(p.Invoke.F) || !served(p) || p.Completion.Time >= t {
			continue
		}
		if value != "" && writeValue(p.Invoke) != value {
			continue
		}
		if !found || p.Completion.Time > best.Completion.Time {
			best, found = p, true
		}
	}
	return best, found
}

func (a *attributor) attribute(x suspect) (at Attribution) {
	at = Attribution{Checker: x.checker, Kind: x.kind, Key: x.key, Slot: history.Keyslot(x.key)}
	if n := a.dupIndex[x.index]; x.index >= 0 && n > 1 {
		// The history gives this index to more than one entry: which op
		// the checker named cannot be said, and picking one would name
		// an op that may have nothing to do with the anomaly.
		at.Verdict = AttrUnknown
		at.Why = fmt.Sprintf("op index %d names %d entries of the history (two ops given one index: the file is garbage there, see the run-files checker): which op the checker meant cannot be said, and none is picked", x.index, n)
		return at
	}
	var ack, miss history.Pair
	haveAck, haveMiss := false, false
	if p, ok := a.byIndex[x.index]; ok && x.index >= 0 {
		if isRead(p.Invoke.F) {
			miss, haveMiss = p, true
		} else {
			ack, haveAck = p, served(p)
		}
	}
	if !haveMiss {
		miss, haveMiss = a.finalRead(x.key)
	}
	if !haveAck && haveMiss {
		ack, haveAck = a.lastAckBefore(x.key, miss.Invoke.Time, x.value)
	}
	from, to := int64(0), int64(1<<62)
	if haveAck {
		at.Ack = a.opRef(ack, true)
		from = ack.Completion.Time
	}
	if haveMiss {
		at.Miss = a.opRef(miss, false)
		to = miss.Invoke.Time
	}
	var reveal history.Pair
	haveReveal := false
	if x.counter != nil && x.counter.revealed >= 0 && a.dupIndex[x.counter.revealed] <= 1 {
		// A counter's loss shows first at the read that named it: the
		// stretch to judge ends there and begins at the last read that
		// still held every acknowledged increment (or at the start when
		// none did), whatever came between it and the final read. An
		// index that names no read of this key, or more than one entry,
		// is no evidence: the final read's stretch stays.
		if p, ok := a.byIndex[x.counter.revealed]; ok && isRead(p.Invoke.F) && p.Invoke.Key == x.key && p.Completion != nil {
			reveal, haveReveal = p, true
			to = p.Invoke.Time
			from = 0
			if w, ok := a.byIndex[x.counter.whole]; ok && x.counter.whole >= 0 && a.dupIndex[x.counter.whole] <= 1 &&
				isRead(w.Invoke.F) && w.Invoke.Key == x.key && w.Completion != nil && w.Completion.Time < to {
				from = w.Completion.Time
			}
		}
	}
	want := x.value
	if want == "" && haveAck {
		want = writeValue(ack.Invoke)
	}
	hold := func(k history.CensusKey) string { return holds(k, want) }
	if x.counter != nil {
		// A counter's copy holds the acknowledged total, not the last
		// increment's delta.
		hold = func(k history.CensusKey) string { return x.counter.holds(k, x.kind) }
	}
	var evidence []string
	failover := false
	for _, w := range a.windows {
		if w.Start > to || w.End < from {
			continue
		}
		s := fmt.Sprintf("%s %s-%ss", w.Fault, trimS(sec(w.Start)), trimS(sec(w.End)))
		if len(w.Nodes) > 0 {
			s += " on " + strings.Join(w.Nodes, ",")
		}
		at.Faults = append(at.Faults, s)
		switch {
		case strings.Contains(w.Fault, "failover"), strings.Contains(w.Fault, "kill"),
			strings.Contains(w.Fault, "partition"), strings.Contains(w.Fault, "pause"), strings.Contains(w.Fault, "member"),
			strings.Contains(w.Fault, "power"):
			failover = true
		}
	}
	var touching []AttrStep
	for _, j := range a.steps {
		end := j.end
		if end < 0 {
			end = 1 << 62
		}
		if j.begin > to || end < from {
			continue
		}
		st := AttrStep{Seq: j.seq, Kind: j.kind, State: j.state, Slots: slotList(j.slots), From: a.nodeName(j.from),
			To: a.nodeName(j.to), Touches: slices.Contains(j.slots, at.Slot), Error: j.err, TimeS: sec(j.begin)}
		if st.Touches {
			touching = append(touching, st)
		}
		if j.kind == "failover" {
			failover = true
		}
		at.Steps = append(at.Steps, st)
	}
	// Steps that touch the key's slot first, then the others (bounded).
	slices.SortStableFunc(at.Steps, func(x, y AttrStep) int {
		if x.Touches != y.Touches {
			if x.Touches {
				return -1
			}
			return 1
		}
		return x.Seq - y.Seq
	})
	if len(at.Steps) > 12 {
		at.Steps = at.Steps[:12]
	}
	involved := map[string]bool{}
	involve := func(s string) {
		if n := a.bareName(s); n != "" {
			involved[n] = true
		}
	}
	if haveAck {
		involve(ack.Completion.Node)
	}
	if haveMiss && miss.Completion != nil {
		involve(miss.Completion.Node)
	}
	// The moments whose log lines matter: the ack, the read, and each
	// journalled step on the slot in between (its nodes are involved).
	moments := []int64{from, to}
	for _, j := range a.steps {
		if j.begin <= to && (j.end < 0 || j.end >= from) && slices.Contains(j.slots, at.Slot) {
			involve(j.from)
			involve(j.to)
			moments = append(moments, j.begin, j.end)
		}
	}
	moments = slices.DeleteFunc(moments, func(m int64) bool { return m < 0 || m >= 1<<62 })
	slices.Sort(moments)
	defer func() { at.Logs = a.logLines(at.Slot, from, to, involved, moments) }()

	if x.kind == "unexpected-increment" {
		// An excess, not a loss: no write went missing, so none of the
		// verdicts below (who lost or stranded it) applies.
		at.Verdict = AttrUnknown
		at.Why = a.counterExcess(x, miss, haveMiss)
		if a.census == nil {
			at.Why += "; no key census in the history: whether the nodes hold the excess too is unknown"
			return at
		}
	}
	if a.census == nil {
		at.Verdict = AttrUnknown
		at.Why = "no key census in the history (the end phase did not take one): where the key is at the end is unknown"
		if len(touching) > 0 {
			at.Why += fmt.Sprintf("; journalled step #%d (%s) touched slot %d in between", touching[0].Seq, touching[0].Kind, at.Slot)
		}
		return at
	}
	owner, unanswered := a.ownerOf(at.Slot)
	at.Owner = a.nodeName(owner)
	involve(owner)
	var stranded, onOwner, asideHolds []KeyCopy
	for _, n := range a.census.Nodes {
		shard := n.ID
		if n.Role == "replica" {
			shard = n.Primary
		}
		for _, as := range n.Asides[x.key] {
			c := KeyCopy{Node: n.Name, Role: n.Role, Holds: hold(as.CensusKey), Value: censusValue(as.CensusKey), Aside: as.Name, From: as.From}
			c.Owner = owner != "" && shard == owner
			c.Open = !c.Owner && a.census.OpenSlot(n, at.Slot)
			involved[n.Name] = true
			at.Copy = append(at.Copy, c)
			if c.Holds == "yes" {
				asideHolds = append(asideHolds, c)
			}
		}
		k, ok := n.Keys[x.key]
		if !ok {
			continue
		}
		c := KeyCopy{Node: n.Name, Role: n.Role, Holds: hold(k)}
		c.Value = censusValue(k)
		c.Owner = owner != "" && shard == owner
		c.Open = !c.Owner && a.census.OpenSlot(n, at.Slot)
		involved[n.Name] = true
		at.Copy = append(at.Copy, c)
		if c.Owner {
			onOwner = append(onOwner, c)
		} else if c.Holds != "no" {
			stranded = append(stranded, c)
		}
	}
	ackNode := ""
	if haveAck {
		ackNode = ack.Completion.Node
		if n, ok := a.census.Node(ackNode); ok && n.Role == "replica" {
			evidence = append(evidence, fmt.Sprintf("the acknowledging node %s is a replica at the end (demoted)", a.nodeName(ackNode)))
			failover = true
		} else if ok && n.Role == "primary" && owner != "" && n.ID != owner {
			evidence = append(evidence, fmt.Sprintf("the acknowledging node %s no longer serves slot %d", a.nodeName(ackNode), at.Slot))
		}
	}
	ownerHolds := slices.ContainsFunc(onOwner, func(c KeyCopy) bool { return c.Holds == "yes" && c.Role == "primary" })
	ownerOther := slices.IndexFunc(onOwner, func(c KeyCopy) bool { return c.Holds == "no" && c.Role == "primary" })
	// A primary's set-aside copy first, then a replica's.
	slices.SortStableFunc(asideHolds, func(x, y KeyCopy) int {
		if (x.Role == "primary") != (y.Role == "primary") {
			if x.Role == "primary" {
				return -1
			}
			return 1
		}
		return 0
	})
	switch {
	case x.kind == "unexpected-increment":
		// Said above; the census adds what the slot's owner holds.
		i := slices.IndexFunc(onOwner, func(c KeyCopy) bool { return c.Role == "primary" })
		switch {
		case i < 0:
			at.Why += fmt.Sprintf("; the census finds no copy on the slot's owner %s", orNone(at.Owner))
		case onOwner[i].Holds == "yes":
			at.Why += fmt.Sprintf("; the slot's owner %s holds %s at the end: the excess is in the key", onOwner[i].Node, onOwner[i].Value)
		default:
			at.Why += fmt.Sprintf("; the slot's owner %s holds %s at the end (%s)", onOwner[i].Node, orNone(onOwner[i].Value), onOwner[i].Holds)
		}
		return at
	case len(asideHolds) > 0 && !ownerHolds:
		// Where the write is, is known: kept under another name. That
		// comes before "stranded" (a copy of the key elsewhere holding
		// the write unknown): the write itself is found.
		at.Verdict = AdminSetAside
		c := asideHolds[0]
		place := c.Role
		if c.Owner {
			place += ", the slot's owner"
		} else {
			place += ", not the slot's shard"
		}
		at.Why = fmt.Sprintf("the write is kept in the set-aside copy %s on %s (%s), the copy that was on %s", c.Aside, c.Node, place, c.From)
		if st, ok := a.asideStep(x.key, c.Aside); ok {
			at.Why += fmt.Sprintf(", which journalled step #%d (set-aside of slot %s, %s -> %s, %s) restored there when both sides of a move held different copies of the key", st.seq, slotList(st.slots), orNone(a.nodeName(st.from)), orNone(a.nodeName(st.to)), st.state)
		}
		kept := "no copy"
		if i := slices.IndexFunc(onOwner, func(c KeyCopy) bool { return c.Role == "primary" }); i >= 0 {
			kept = "the copy on " + onOwner[i].Node
			if onOwner[i].Value != "" {
				kept += " (" + onOwner[i].Value + ")"
			}
		}
		at.Why += fmt.Sprintf("; the key's own name holds %s: not lost, but not in the key until the copies are merged", kept)
	case len(stranded) > 0:
		at.Verdict = AdminStranded
		var where []string
		for _, c := range stranded {
			w := c.Node + " (" + c.Role + ")"
			if c.Open {
				w = c.Node + " (" + c.Role + ", its shard has the slot MIGRATING/IMPORTING: a migration left half-way)"
			}
			where = append(where, w)
		}
		serve := "which does not serve"
		if len(where) > 1 {
			serve = "none of which serves"
		}
		at.Why = fmt.Sprintf("the key is still on %s, %s slot %d (served by %s at the end)", strings.Join(where, ", "), serve, at.Slot, orNone(at.Owner))
		if len(touching) > 0 {
			at.Why += fmt.Sprintf("; journalled step #%d (%s %s) touched the slot in between", touching[0].Seq, touching[0].Kind, touching[0].State)
		} else {
			at.Why += "; no journalled step of redline's touched the slot in between: a migration not by redline, or the server's own doing"
		}
	case len(touching) > 0 && ownerOther >= 0:
		// Nothing stranded: the owner has the key, with another value.
		at.Verdict = AdminOverwritten
		t, c := touching[0], onOwner[ownerOther]
		at.Why = fmt.Sprintf("the slot's owner %s holds another copy of the key at the end (%s), and journalled step #%d (%s of slots %s, %s -> %s, %s) moved slot %d's keys between the acknowledgement and the read: a copy without the write took its place", c.Node, orNone(c.Value), t.Seq, t.Kind, t.Slots, orNone(t.From), orNone(t.To), t.State, at.Slot)
		for _, st := range touching {
			if st.Kind == "set-aside" {
				at.Why += fmt.Sprintf("; step #%d set a different copy aside on %s (kept under another name in the slot)", st.Seq, orNone(st.To))
				break
			}
		}
	case len(touching) > 0 && !ownerHolds:
		at.Verdict = AdminStranded
		t := touching[0]
		at.Why = fmt.Sprintf("journalled step #%d (%s of slots %s, %s -> %s, %s) touched slot %d between the acknowledgement and the read", t.Seq, t.Kind, t.Slots, orNone(t.From), orNone(t.To), t.State, at.Slot)
		if len(at.Copy) == 0 {
			at.Why += "; the key is on no node at the end"
		}
		if t.Error != "" {
			at.Why += "; the step failed: " + t.Error
		}
	case len(touching) > 0 && ownerHolds && x.kind == "stale-read":
		at.Verdict = AdminStaleRead
		t := touching[0]
		at.Why = fmt.Sprintf("the read was served by %s with an older value while journalled step #%d (%s of slots %s, %s -> %s, %s) had slot %d in hand between the acknowledgement and the read; the slot's owner %s holds the write at the end: the step let a node serve the slot without the write, nothing was lost",
			orNone(nodeOfMiss(at)), t.Seq, t.Kind, t.Slots, orNone(t.From), orNone(t.To), t.State, at.Slot, orNone(at.Owner))
	case ownerHolds && x.kind != "stale-read":
		at.Verdict = AttrUnknown
		at.Why = fmt.Sprintf("the census finds the value on the slot's owner %s at the end, yet the read missed it: the read was served elsewhere (%s) or the value came back after it", orNone(at.Owner), orNone(nodeOfMiss(at)))
	case len(unanswered) > 0 && len(onOwner) == 0:
		at.Verdict = AttrUnknown
		at.Why = fmt.Sprintf("the key is on no node that answered, but %s did not answer the census: the key may be there", strings.Join(unanswered, ", "))
	case a.census.Truncated && len(at.Copy) == 0:
		at.Verdict = AttrUnknown
		at.Why = "the census was truncated (too many keys) and does not list the key"
	default:
		at.Verdict = ServerLost
		if x.kind == "stale-read" {
			at.Why = fmt.Sprintf("the read was served by %s with an older value; ", orNone(nodeOfMiss(at)))
		}
		switch {
		case ownerHolds:
			at.Why += fmt.Sprintf("the slot's owner %s holds the write at the end and no journalled step touched slot %d in between", orNone(at.Owner), at.Slot)
		case len(at.Copy) == 0:
			at.Why += fmt.Sprintf("the key is on no node at the end and no journalled step touched slot %d in between", at.Slot)
		default:
			at.Why += fmt.Sprintf("the slot's owner %s holds another value at the end and no journalled step touched slot %d in between", orNone(at.Owner), at.Slot)
		}
		if failover {
			at.Why += "; a failover, kill, partition or pause came in between"
		} else if len(at.Faults) == 0 {
			at.Why += "; no fault came in between"
		}
	}
	if len(evidence) > 0 {
		at.Why += "; " + strings.Join(evidence, "; ")
	}
	if x.counter != nil && x.counter.known && haveMiss && miss.Completion != nil {
		at.Why += fmt.Sprintf("; the final read (op %d) returned %s, the acknowledged increments before it add up to %d",
			miss.Invoke.Index, orNone(rawString(miss.Completion.Value)), x.counter.lower)
	}
	if haveReveal {
		at.Why += fmt.Sprintf("; the loss first showed at op %d (%.3fs, read %s)", reveal.Invoke.Index, float64(reveal.Invoke.Time)/1e9,
			orNone(rawString(reveal.Completion.Value)))
		if from > 0 {
			at.Why += fmt.Sprintf(", after a read that held every acknowledged increment ended at %.3fs: the faults named are those of that stretch", float64(from)/1e9)
		} else {
			at.Why += ", and no read before it held every acknowledged increment: the faults named are those before it"
		}
	}
	return at
}

// counterExcess says in words what a counter key above every increment
// sent shows: its final read, the bound it exceeds, and the adds the
// client library resent (each may have applied twice).
func (a *attributor) counterExcess(x suspect, miss history.Pair, haveMiss bool) string {
	w := "a counter value above every increment attempted"
	if haveMiss && miss.Completion != nil {
		w = fmt.Sprintf("the final read (op %d) returned %s", miss.Invoke.Index, orNone(rawString(miss.Completion.Value)))
		if v, ok := history.ParseInt(miss.Completion.Value); ok && x.counter.known {
			w += fmt.Sprintf(", %d above every increment invoked before it ended (%d in all)", v-x.counter.upper, x.counter.upper)
		}
	}
	w += ": an excess, not a loss: an increment applied more than once, or a value no increment produced"
	var resent []int64
	for _, p := range a.byKey[x.key] {
		if !isRead(p.Invoke.F) && p.Completion != nil && p.Completion.ResentCount() > 0 {
			resent = append(resent, p.Invoke.Index)
		}
	}
	if len(resent) > 0 {
		w += fmt.Sprintf("; the client library sent %s again after an attempt of unknown outcome: each may have applied twice", "ops "+indexList(capList(resent, 5)))
	} else {
		w += "; no add of the key was resent by the client library"
	}
	return w
}

// asideStep is the journalled set-aside step that put key's copy under
// the name aside (ok false: the history journals none).
func (a *attributor) asideStep(key, aside string) (journalStep, bool) {
	for i := len(a.steps) - 1; i >= 0; i-- {
		j := a.steps[i]
		if j.kind != "set-aside" {
			continue
		}
		for k := range j.keys {
			if j.keys[k] == key && k < len(j.aside) && j.aside[k] == aside {
				return j, true
			}
		}
	}
	return journalStep{}, false
}

// censusValue is a census copy's value as an attribution shows it.
func censusValue(k history.CensusKey) string {
	switch {
	case k.Value != nil:
		return *k.Value
	case k.Type == "set":
		return fmt.Sprintf("set of %d", k.Len)
	case k.Error != "":
		return "unread: " + k.Error
	}
	return ""
}

func nodeOfMiss(at Attribution) string {
	if at.Miss == nil {
		return ""
	}
	return at.Miss.Node
}

func orNone(s string) string {
	if s == "" {
		return "no node"
	}
	return s
}

func trimS(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// holds says whether a census copy holds the value want: "yes", "no", or
// "unknown" (no value to compare, or the node would not say).
func holds(k history.CensusKey, want string) string {
	switch {
	case k.Error != "" || want == "":
		return "unknown"
	case k.Value != nil:
		if *k.Value == want {
			return "yes"
		}
		return "no"
	case k.Type == "set":
		if slices.Contains(k.Members, want) {
			return "yes"
		}
		if int64(len(k.Members)) < k.Len {
			return "unknown" // not every member recorded
		}
		return "no"
	}
	return "unknown"
}

// ownerOf is the id most answering nodes name as the slot's server, and
// the nodes that did not answer.
func (a *attributor) ownerOf(slot int) (string, []string) {
	votes := map[string]int{}
	var unanswered []string
	for _, n := range a.census.Nodes {
		if n.Error != "" && len(n.View) == 0 {
			unanswered = append(unanswered, n.Name)
			continue
		}
		if o := n.OwnerOf(slot); o != "" {
			votes[o]++
		}
	}
	best, bestN := "", 0
	for id, v := range votes {
		if v > bestN || (v == bestN && id < best) {
			best, bestN = id, v
		}
	}
	return best, unanswered
}

// logKeywords are what a server's log line must mention to be relevant
// to a lost key (besides its slot number).
var logKeywords = []string{"failover", "election", "fail", "master", "primary", "replica", "slave", "migrat",
	"import", "epoch", "cluster state", "demot", "promot", "sync", "setslot"}

// maxLogLines bounds the log lines of one attribution.
const maxLogLines = 24

// logLines picks the servers' lines that tell what happened to a key:
// those in [from-2s, to+2s] that mention its slot (any node), and, from the
// nodes involved (nil: every node), those that mention a failover,
// election, FAIL, migration ... within 2 s of each moment that matters
// (the ack, the journalled steps on the slot, the read), a few per
// moment: at most maxLogLines, in time order.
func (a *attributor) logLines(slot int, from, to int64, involved map[string]bool, moments []int64) []string {
	const slack = int64(2e9)
	slotWord := strconv.Itoa(slot)
	perMoment := max(4, maxLogLines/max(1, len(moments)))
	taken := make([]int, len(moments))
	var picked []LogLine
	for _, l := range a.logs {
		if l.Time < 0 || l.Time < from-slack || l.Time > to+slack {
			continue
		}
		if containsWord(l.Text, slotWord) {
			picked = append(picked, l)
			continue
		}
		if involved != nil && !involved[l.Node] {
			continue
		}
		low := strings.ToLower(l.Text)
		if !slices.ContainsFunc(logKeywords, func(k string) bool { return strings.Contains(low, k) }) {
			continue
		}
		for i, m := range moments {
			if l.Time >= m-slack && l.Time <= m+slack && taken[i] < perMoment {
				taken[i]++
				picked = append(picked, l)
				break
			}
		}
	}
	picked = capList(picked, maxLogLines)
	out := make([]string, 0, len(picked))
	for _, l := range picked {
		out = append(out, fmt.Sprintf("%s %.3fs: %s", l.Node, sec(l.Time), l.Text))
	}
	return out
}

// bareName is the node name of an address, id or name ("" when unknown).
func (a *attributor) bareName(s string) string {
	if s == "" {
		return ""
	}
	if n := a.names[s]; n != "" {
		return n
	}
	if a.census != nil {
		for _, n := range a.census.Nodes {
			if n.ID == s || n.Name == s {
				return n.Name
			}
		}
	}
	return ""
}

// containsWord reports whether w occurs in s not inside a longer number.
func containsWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		before := j == 0 || s[j-1] < '0' || s[j-1] > '9'
		after := j+len(w) >= len(s) || s[j+len(w)] < '0' || s[j+len(w)] > '9'
		if before && after {
			return true
		}
		i = j + 1
	}
}

// slotList renders slots as ranges: "5-7,100".
func slotList(slots []int) string {
	s := slices.Clone(slots)
	slices.Sort(s)
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if i == j {
			parts = append(parts, strconv.Itoa(s[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", s[i], s[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
