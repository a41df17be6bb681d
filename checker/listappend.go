package checker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/redline-dev/redline/history"
)

// ListAppendDetects lists the anomaly classes the list-append checker
// detects, in the order reported. The -realtime classes are cycles that
// need a real-time edge (a transaction that committed before another
// began): they break strict serializability, not serializability.
var ListAppendDetects = []string{
	"G0", "G1a", "G1b", "G1c", "G-single", "G2",
	"G0-realtime", "G1c-realtime", "G-single-realtime", "G2-realtime",
	"internal", "incompatible-order", "garbage-read", "duplicate-elements", "duplicate-appends",
	"lost-append", "fractured-appends", "garbage",
}

// ListAppendDoesNotDetect says what this checker cannot see.
var ListAppendDoesNotDetect = []string{
	"process-order anomalies (no edges between successive transactions of one client beyond real time)",
	"the order of appends no read ever observed (no edges for them); an acknowledged append missing from its key's latest read is reported as lost-append",
	"predicate anomalies (there are no predicate reads in list-append)",
}

// ListAppendTxn is the f of a list-append transaction (workloads/txn.go).
const ListAppendTxn = "txn"

type listAppend struct{ o Scope }

// ListAppend checks list-append transactions (Elle's model) by building the
// ww / wr / rw dependency graph from the version orders the reads reveal and
// looking for cycles, plus the non-cyclic anomalies (aborted and
// intermediate reads, internal inconsistency, incompatible orders).
func ListAppend(opts ...Scope) Checker { return listAppend{firstScope(opts)} }

func (l listAppend) Name() string { return l.o.name("list-append") }

type laMop struct {
	append bool
	k      string
	v      int64   // append
	list   []int64 // read result
	known  bool    // read result known
}

type laTxn struct {
	c      call
	mops   []laMop
	status history.Type // OK, Fail or Info
}

// parseTxn reads a transaction's micro-ops: a fast path for the plain
// shape the workloads write, and encoding/json for anything else.
func parseTxn(raw json.RawMessage) ([]laMop, error) {
	if m, ok := fastTxn(raw); ok {
		return m, nil
	}
	return slowTxn(raw)
}

// fastTxn scans [["append","k",1],["r","k",[1,2]],["r","k",null]] without
// reflection. It gives up (ok=false) on anything unusual.
func fastTxn(b []byte) (out []laMop, ok bool) {
	i := 0
	ws := func() {
		for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
			i++
		}
	}
	expect := func(c byte) bool {
		ws()
		if i < len(b) && b[i] == c {
			i++
			return true
		}
		return false
	}
	str := func() (string, bool) {
		ws()
		if i >= len(b) || b[i] != '"' {
			return "", false
		}
		j := i + 1
		for j < len(b) && b[j] != '"' {
			if b[j] == '\\' {
				return "", false
			}
			j++
		}
		if j >= len(b) {
			return "", false
		}
		s := string(b[i+1 : j])
		i = j + 1
		return s, true
	}
	num := func() (int64, bool) {
		ws()
		j := i
		if j < len(b) && b[j] == '-' {
			j++
		}
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		n, err := strconv.ParseInt(string(b[i:j]), 10, 64)
		if err != nil {
			return 0, false
		}
		i = j
		return n, true
	}
	if !expect('[') {
		return nil, false
	}
	if expect(']') {
		return []laMop{}, true
	}
	for {
		if !expect('[') {
			return nil, false
		}
		f, ok1 := str()
		if !ok1 || !expect(',') {
			return nil, false
		}
		k, ok2 := str()
		if !ok2 || !expect(',') {
			return nil, false
		}
		m := laMop{k: k}
		switch f {
		case "append":
			v, ok := num()
			if !ok {
				return nil, false
			}
			m.append, m.v = true, v
		case "r":
			ws()
			switch {
			case bytes.HasPrefix(b[i:], []byte("null")):
				i += 4
			case expect('['):
				m.known, m.list = true, []int64{}
				if !expect(']') {
					for {
						v, ok := num()
						if !ok {
							return nil, false
						}
						m.list = append(m.list, v)
						if expect(']') {
							break
						}
						if !expect(',') {
							return nil, false
						}
					}
				}
			default:
				return nil, false
			}
		default:
			return nil, false
		}
		if !expect(']') {
			return nil, false
		}
		out = append(out, m)
		if expect(']') {
			ws()
			return out, i == len(b)
		}
		if !expect(',') {
			return nil, false
		}
	}
}

func slowTxn(raw json.RawMessage) ([]laMop, error) {
	var items [][]json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, err
	}
	out := make([]laMop, 0, len(items))
	for _, it := range items {
		if len(it) != 3 {
			return nil, fmt.Errorf("micro-op %s: want [f, key, value]", it)
		}
		var f, k string
		if err := json.Unmarshal(it[0], &f); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(it[1], &k); err != nil {
			var n int64
			if json.Unmarshal(it[1], &n) != nil {
				return nil, err
			}
			k = fmt.Sprint(n)
		}
		m := laMop{k: k}
		switch f {
		case "append":
			v, ok := history.ParseInt(it[2])
			if !ok {
				return nil, fmt.Errorf("append of %s: want an integer", it[2])
			}
			m.append, m.v = true, v
		case "r":
			if string(bytes.TrimSpace(it[2])) == "null" {
				break
			}
			l, ok := history.ParseInts(it[2])
			if !ok {
				return nil, fmt.Errorf("read of %s: want a list of integers within int64", it[2])
			}
			m.list, m.known = l, true
		default:
			return nil, fmt.Errorf("micro-op %q: want append or r", f)
		}
		out = append(out, m)
	}
	return out, nil
}

// Edge kinds of the dependency graph.
const (
	ww = 1 << iota
	wr
	rw
	rt // real time: the first committed before the second began
)

// laGraph is the dependency graph: data edges with their justification, and
// real-time edges kept apart, compactly (there are many).
type laGraph struct {
	adj [][]laEdge
	rt  [][]int32
	// keys are the data edges' keys, by their number (laEdge.k).
	keys []string
}

func (g *laGraph) deg(v int) int { return len(g.adj[v]) + len(g.rt[v]) }

func (g *laGraph) edge(v, i int) laEdge {
	if i < len(g.adj[v]) {
		return g.adj[v][i]
	}
	return laEdge{to: g.rt[v][i-len(g.adj[v])], typ: rt}
}

func edgeName(t uint8) string {
	switch t {
	case ww:
		return "ww"
	case wr:
		return "wr"
	case rt:
		return "realtime"
	}
	return "rw"
}

type laEdge struct {
	to  int32
	k   int32 // the key, by its number in the graph's keys: 24 bytes an edge, not 32
	typ uint8
	v   int64 // the version that justifies the edge
}

// anomalyLog gathers counts and capped examples per class.
type anomalyLog struct {
	max      int
	count    map[string]int
	examples map[string][]any
	// at is, when not nil, each example's place in the order a whole check
	// adds them: the index of the transaction looked at (each class is
	// added in one scan of the transactions, in their order), so that the
	// logs of partials merge (mergeLAPartials).
	at map[string][]int64
}

// add records one instance of class, found looking at the transaction of
// index at.
func (a *anomalyLog) add(at int64, class string, ex any) {
	a.count[class]++
	if len(a.examples[class]) < a.max {
		a.examples[class] = append(a.examples[class], ex)
		if a.at != nil {
			a.at[class] = append(a.at[class], at)
		}
	}
}

func (l listAppend) Check(ctx context.Context, in *History) Result {
	calls, err := l.o.calls(in)
	if err != nil {
		return invalidHistory(err)
	}
	return l.judge([]*laPartial{l.analyze(calls, false)})
}

// laPartial is what the list-append checker finds in some of a history's
// transactions, all those of their keys (the whole history, or one or
// more of its slot partitions): everything but the cycles, which judge
// finds in the graph of every partial's transactions. It holds no op: the
// transactions are vertices (a few numbers each and their data edges), so
// that partials of partitions merge in memory bounded by the run's
// transactions and edges, not its ops and values.
type laPartial struct {
	an        *anomalyLog
	malformed int
	// keys is how many keys a committed read saw; reads the committed
	// reads; neverRead the keys with acknowledged appends no read began
	// after, sorted.
	keys, reads int
	neverRead   []string
	// txns are the transactions in the order of their invocations, their
	// data edges (ww, wr, rw) to one another; edgeKeys the edges' keys,
	// by number.
	txns     []laVertex
	edgeKeys []string
	// keyHashes are the hashes of every key a transaction names, when
	// asked for (analyze): partitions that share one are analysed again
	// together (txnUnits).
	keyHashes []uint64
}

// laVertex is a transaction as the dependency graph and the examples need
// it: its op's index and process, its outcome and times, and its data
// edges out, to transactions of the same partial.
type laVertex struct {
	index      int64
	process    history.Process
	status     history.Type
	start, end int64
	adj        []laEdge
}

// ref names a transaction in an example.
func (v *laVertex) ref() map[string]any {
	return map[string]any{"index": v.index, "process": v.process.String(), "status": v.status.String()}
}

// analyze finds in calls' transactions every anomaly but the cycles, and
// their data edges; with hashKeys, the hashes of the keys they name.
func (l listAppend) analyze(calls []call, hashKeys bool) *laPartial {
	an := &anomalyLog{max: l.o.MaxExamples, count: map[string]int{}, examples: map[string][]any{}, at: map[string][]int64{}}
	txns, malformed := parseListAppend(calls, an)
	ref := func(t int) map[string]any {
		return map[string]any{"index": txns[t].c.index, "process": txns[t].c.inv.Process.String(), "status": txns[t].status.String()}
	}
	at := func(t int) int64 { return txns[t].c.index }

	// Who appended what. final[k][v]: v was the writer's last append to k.
	writers := map[string]map[int64]laWriter{}
	for ti, t := range txns {
		last := map[string]int{}
		for mi, m := range t.mops {
			if m.append {
				last[m.k] = mi
			}
		}
		for mi, m := range t.mops {
			if !m.append {
				continue
			}
			w := writers[m.k]
			if w == nil {
				w = map[int64]laWriter{}
				writers[m.k] = w
			}
			if prev, dup := w[m.v]; dup {
				an.add(at(ti), "duplicate-appends", map[string]any{"key": m.k, "value": m.v, "txns": []any{ref(prev.t), ref(ti)}})
				continue
			}
			w[m.v] = laWriter{t: ti, final: last[m.k] == mi}
		}
	}

	// Per-read checks and the longest read per key.
	longest := map[string][]int64{}
	for ti, t := range txns {
		if t.status != history.OK {
			continue
		}
		// Internal consistency: what this txn must see of its own writes.
		type seen struct {
			read    []int64
			hasRead bool
			since   []int64
		}
		own := map[string]*seen{}
		for _, m := range t.mops {
			s := own[m.k]
			if s == nil {
				s = &seen{}
				own[m.k] = s
			}
			if m.append {
				s.since = append(s.since, m.v)
				continue
			}
			if !m.known {
				continue
			}
			okInternal := true
			if s.hasRead {
				okInternal = slices.Equal(m.list, append(slices.Clone(s.read), s.since...))
			} else if len(s.since) > 0 {
				okInternal = len(m.list) >= len(s.since) && slices.Equal(m.list[len(m.list)-len(s.since):], s.since)
			}
			if !okInternal {
				an.add(at(ti), "internal", map[string]any{"txn": ref(ti), "key": m.k, "read": m.list})
			}
			s.read, s.hasRead, s.since = m.list, true, nil

			dups := map[int64]bool{}
			for _, v := range m.list {
				if dups[v] {
					an.add(at(ti), "duplicate-elements", map[string]any{"txn": ref(ti), "key": m.k, "value": v, "read": m.list})
					break
				}
				dups[v] = true
				w, ok := writers[m.k][v]
				switch {
				case !ok:
					an.add(at(ti), "garbage-read", map[string]any{"txn": ref(ti), "key": m.k, "value": v})
				case txns[w.t].status == history.Fail:
					an.add(at(ti), "G1a", map[string]any{"reader": ref(ti), "writer": ref(w.t), "key": m.k, "value": v})
				}
			}
			if n := len(m.list); n > 0 {
				if w, ok := writers[m.k][m.list[n-1]]; ok && !w.final && w.t != ti {
					an.add(at(ti), "G1b", map[string]any{"reader": ref(ti), "writer": ref(w.t), "key": m.k, "value": m.list[n-1]})
				}
			}
			if w, ok := fracturedAppends(txns, writers[m.k], ti, m.k, m.list); ok {
				an.add(at(ti), "fractured-appends", map[string]any{"reader": ref(ti), "writer": ref(w), "key": m.k, "read": m.list})
			}
			if len(m.list) > len(longest[m.k]) {
				longest[m.k] = m.list
			}
		}
	}
	// Every read must be a prefix of the longest one of its key (reported
	// once per transaction and key).
	for ti, t := range txns {
		if t.status != history.OK {
			continue
		}
		flagged := map[string]bool{}
		for _, m := range t.mops {
			if m.append || !m.known || flagged[m.k] {
				continue
			}
			lg := longest[m.k]
			if !slices.Equal(m.list, lg[:min(len(m.list), len(lg))]) {
				flagged[m.k] = true
				an.add(at(ti), "incompatible-order", map[string]any{"txn": ref(ti), "key": m.k, "read": m.list, "longest": lg})
			}
		}
	}
	neverRead, reads, _ := lostAppends(txns, an, ref)

	// The data edges of the dependency graph over transactions, each
	// naming its key by its number in keys.
	adj := make([][]laEdge, len(txns))
	edge := func(a, b int, typ uint8, k int32, v int64) {
		if a == b {
			return
		}
		adj[a] = append(adj[a], laEdge{to: int32(b), typ: typ, k: k, v: v})
	}
	writerOf := func(k string, v int64) (int, bool) {
		w, ok := writers[k][v]
		if !ok || txns[w.t].status == history.Fail {
			return 0, false
		}
		return w.t, true
	}
	keys := make([]string, 0, len(longest))
	for k := range longest {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	number := make(map[string]int32, len(keys))
	for ki, k := range keys {
		number[k] = int32(ki)
		order := longest[k]
		for i := 1; i < len(order); i++ {
			a, ok1 := writerOf(k, order[i-1])
			b, ok2 := writerOf(k, order[i])
			if ok1 && ok2 {
				edge(a, b, ww, int32(ki), order[i])
			}
		}
	}
	eachRead(txns, func(ti int, m laMop) {
		order := longest[m.k]
		n := len(m.list)
		if n > len(order) || !slices.Equal(m.list, order[:n]) {
			return // incompatible: no place in the order
		}
		k := number[m.k]
		if n > 0 {
			if w, ok := writerOf(m.k, m.list[n-1]); ok {
				edge(w, ti, wr, k, m.list[n-1])
			}
		}
		if n < len(order) {
			if w, ok := writerOf(m.k, order[n]); ok {
				edge(ti, w, rw, k, order[n])
			}
		}
	})
	p := &laPartial{an: an, malformed: malformed, keys: len(longest), reads: reads, neverRead: neverRead,
		txns: make([]laVertex, len(txns)), edgeKeys: keys}
	for i, t := range txns {
		p.txns[i] = laVertex{index: t.c.index, process: t.c.inv.Process, status: t.status,
			start: t.c.start, end: t.c.end, adj: adj[i]}
	}
	if hashKeys {
		p.keyHashes = txnKeyHashes(txns)
	}
	return p
}

// judge merges the partials (of disjoint keys) into the whole's analysis,
// finds the cycles in the graph of all their transactions (real-time
// edges are run-wide: they link transactions of any partials) and gives
// the verdict.
func (l listAppend) judge(parts []*laPartial) Result {
	m := mergeLAPartials(parts, l.o.MaxExamples)
	txns := m.txns
	adj := make([][]laEdge, len(txns))
	for i := range txns {
		adj[i] = txns[i].adj
	}
	ref := func(t int) map[string]any { return txns[t].ref() }
	g := &laGraph{adj: adj, rt: realtimeEdges(txns), keys: m.edgeKeys}
	an := m.an
	l.cycles(g, an, ref)

	classes := []string{}
	anomalies := map[string]ListAppendClass{}
	for _, c := range ListAppendDetects {
		if n := an.count[c]; n > 0 {
			classes = append(classes, c)
			anomalies[c] = ListAppendClass{Count: n, Examples: an.examples[c]}
		}
	}
	var st [3]int
	for _, t := range txns {
		switch t.status {
		case history.OK:
			st[0]++
		case history.Fail:
			st[1]++
		default:
			st[2]++
		}
	}
	malformed, reads, neverRead := m.malformed, m.reads, m.neverRead
	fig := &ListAppendFigures{
		TxnsOK:        st[0],
		TxnsFail:      st[1],
		TxnsInfo:      st[2],
		Keys:          m.keys,
		Detects:       ListAppendDetects,
		DoesNotDetect: ListAppendDoesNotDetect,
		AnomalyTypes:  classes,
		Anomalies:     anomalies,
	}
	if malformed > 0 {
		fig.SkippedMalformed = malformed
	}
	if len(neverRead) > 0 {
		fig.NeverReadKeys = ptr(capList(neverRead, l.o.MaxExamples))
	}
	res := Result{Valid: Valid, Figures: fig}
	switch {
	case len(classes) > 0:
		res.Valid = Invalid
		for _, c := range classes {
			fig.because("%d %s (%s)", an.count[c], c, describeLA(an.examples[c]))
		}
	case st[0]+st[1]+st[2] == 0 && malformed == 0:
		return NotApplicable("no list-append transaction attempted")
	case st[0] == 0:
		res.Valid = Unknown
		fig.because("no committed transaction: nothing to judge")
	case reads == 0:
		res.Valid = Unknown
		fig.because("no committed read: nothing to judge")
	case len(neverRead) > 0:
		res.Valid = Unknown
		fig.because("%d keys have acknowledged appends no read began after (no final read), so whether they survived is unknown: %s", len(neverRead), firstKeys(neverRead))
	}
	if res.Valid == Unknown {
		fig.Error = fig.Reason
	}
	malformedUnknown(&res, malformed)
	return res
}

// ListAppendFigures are the list-append checker's figures: the anomaly
// classes (Elle's names) found, with their instances, and what the
// checker detects and does not.
type ListAppendFigures struct {
	TxnsOK           int                        `json:"txns_ok"`
	TxnsFail         int                        `json:"txns_fail"`
	TxnsInfo         int                        `json:"txns_info"`
	Keys             int                        `json:"keys"`
	Detects          []string                   `json:"detects"`
	DoesNotDetect    []string                   `json:"does_not_detect"`
	AnomalyTypes     []string                   `json:"anomaly_types"`
	Anomalies        map[string]ListAppendClass `json:"anomalies"`
	SkippedMalformed int                        `json:"skipped_malformed,omitempty"`
	NeverReadKeys    *[]string                  `json:"never_read_keys,omitempty"`
	Verdict
}

// ListAppendClass is one anomaly class the list-append checker found:
// how many, and the first instances (cycles with their edges, or ops).
type ListAppendClass struct {
	Count    int   `json:"count"`
	Examples []any `json:"examples"`
}

// lostAppends compares each key's latest committed read (by invocation) with
// the appends: an append whose transaction certainly committed (it was
// acknowledged, or another of its appends was read) before that read began
// and is missing from it was lost. Each lost append is reported once; only
// acknowledged ones are returned (for RPO). It returns the keys with acknowledged appends that no read
// began after (nothing says whether they survived) and the number of
// committed reads.
func lostAppends(txns []*laTxn, an *anomalyLog, ref func(int) map[string]any) (neverRead []string, reads int, lost []lostWrite) {
	type latest struct {
		t     int
		start int64
		list  []int64
	}
	last := map[string]*latest{}
	eachRead(txns, func(ti int, m laMop) {
		reads++
		t := txns[ti]
		if l := last[m.k]; l == nil || t.c.start > l.start || (t.c.start == l.start && ti > l.t) {
			last[m.k] = &latest{t: ti, start: t.c.start, list: m.list}
		}
	})
	// A transaction is known to have committed once acknowledged, or once a
	// read of another transaction saw one of its appends (EXEC is atomic):
	// from the end of that read on, and in that very read, all of its
	// appends must be there too.
	type sighting struct {
		end     int64
		readers map[int]bool
	}
	seen := map[string]map[int64]*sighting{} // key -> value -> who saw it
	eachRead(txns, func(ri int, m laMop) {
		if seen[m.k] == nil {
			seen[m.k] = map[int64]*sighting{}
		}
		for _, v := range m.list {
			sg := seen[m.k][v]
			if sg == nil {
				sg = &sighting{end: inf, readers: map[int]bool{}}
				seen[m.k][v] = sg
			}
			sg.end = min(sg.end, txns[ri].c.end)
			sg.readers[ri] = true
		}
	})
	never := map[string]bool{}
	for ti, t := range txns {
		if t.status == history.Fail {
			continue
		}
		known := inf // when the transaction certainly committed
		if t.status == history.OK {
			known = t.c.end
		}
		readers := map[int]bool{}
		for _, m := range t.mops {
			if sg := seen[m.k][m.v]; m.append && sg != nil {
				known = min(known, sg.end)
				for r := range sg.readers {
					readers[r] = true
				}
			}
		}
		if known == inf {
			continue
		}
		reported := map[string]bool{}
		for _, m := range t.mops {
			if !m.append {
				continue
			}
			l := last[m.k]
			if l == nil || (l.start <= known && !readers[l.t]) {
				if t.status == history.OK {
					never[m.k] = true
				}
				continue
			}
			id := m.k + "\x00" + strconv.FormatInt(m.v, 10)
			if !reported[id] && !slices.Contains(l.list, m.v) {
				reported[id] = true
				an.add(t.c.index, "lost-append", map[string]any{"txn": ref(ti), "key": m.k, "value": m.v, "final_read": ref(l.t)})
				if t.status == history.OK {
					lost = append(lost, lostWrite{c: t.c, key: m.k})
				}
			}
		}
	}
	for k := range never {
		neverRead = append(neverRead, k)
	}
	sort.Strings(neverRead)
	return neverRead, reads, lost
}

// eachRead calls f for every read, with its result known, of a committed
// transaction.
func eachRead(txns []*laTxn, f func(ti int, m laMop)) {
	for ti, t := range txns {
		if t.status != history.OK {
			continue
		}
		for _, m := range t.mops {
			if !m.append && m.known {
				f(ti, m)
			}
		}
	}
}

// laWriter is who appended a value: the transaction, and whether it was its
// last append to the key.
type laWriter struct {
	t     int
	final bool
}

// fracturedAppends finds a transaction (other than the reader) whose
// appends to key k a read shows other than as one block in the order it
// appended them: a transaction is atomic, so a read that holds any of its
// appends holds them all, together, in order.
func fracturedAppends(txns []*laTxn, writers map[int64]laWriter, reader int, k string, list []int64) (int, bool) {
	checked := map[int]bool{}
	for p, v := range list {
		w, ok := writers[v]
		if !ok || w.t == reader || checked[w.t] || txns[w.t].status == history.Fail {
			continue
		}
		checked[w.t] = true
		var block []int64
		for _, m := range txns[w.t].mops {
			if m.append && m.k == k {
				block = append(block, m.v)
			}
		}
		if p+len(block) > len(list) || !slices.Equal(list[p:p+len(block)], block) {
			return w.t, true
		}
	}
	return 0, false
}

// parseListAppend reads the txn ops of a history for the list-append
// checkers; garbage replies go to an, malformed invocations are counted.
func parseListAppend(calls []call, an *anomalyLog) (txns []*laTxn, malformed int) {
	for _, c := range calls {
		if c.inv.F != ListAppendTxn {
			continue
		}
		t := &laTxn{c: c}
		src := c.inv.Value
		switch {
		case c.ok():
			t.status = history.OK
			if c.comp.HasValue() {
				src = c.comp.Value
			}
		case c.failed():
			t.status = history.Fail
		default:
			t.status = history.Info
		}
		mops, err := parseTxn(src)
		if err != nil && t.status == history.OK && c.comp.HasValue() {
			// The reply is garbage, but EXEC ran: keep the appends of the
			// invocation, with nothing known of its reads.
			an.add(c.index, "garbage", map[string]any{"txn": map[string]any{"index": c.index}, "index": c.index, "value": rawString(c.comp.Value), "why": err.Error()})
			mops, err = parseTxn(c.inv.Value)
		}
		if err != nil {
			malformed++
			continue
		}
		t.mops = mops
		txns = append(txns, t)
	}
	return txns, malformed
}

// describeLA names the first list-append examples by key and op index.
func describeLA(ex []any) string {
	var ms []map[string]any
	for _, e := range ex {
		m, ok := e.(map[string]any)
		if !ok {
			// A cycle: its first step names the first transaction.
			if steps, ok := e.([]any); ok && len(steps) > 0 {
				m, _ = steps[0].(map[string]any)
			}
		}
		if m == nil {
			continue
		}
		d := map[string]any{}
		for _, f := range []string{"txn", "reader"} {
			if r, ok := m[f].(map[string]any); ok {
				d["index"] = r["index"]
				break
			}
		}
		if i, ok := m["index"]; ok {
			d["index"] = i
		}
		if k, ok := m["key"]; ok {
			d["key"] = k
		}
		ms = append(ms, d)
	}
	return describeExamples(ms)
}

// realtimeEdges links each committed transaction to those (committed or
// indeterminate) that began after it committed, sparsely: a transaction depends on the "frontier" of
// committed transactions when it begins, and when it commits it replaces in
// the frontier those it depended on. The transitive closure is the full
// real-time order.
func realtimeEdges(txns []laVertex) [][]int32 {
	type ev struct {
		t      int64
		commit bool
		i      int
	}
	var evs []ev
	for i, t := range txns {
		switch t.status {
		case history.OK:
			evs = append(evs, ev{t.start, false, i}, ev{t.end, true, i})
		case history.Info:
			// An indeterminate transaction that took effect did so after
			// every transaction committed before it began: edges into it,
			// none out of it (it never completed).
			evs = append(evs, ev{t.start, false, i})
		}
	}
	// Invocations first at equal times: touching intervals are concurrent.
	slices.SortFunc(evs, func(x, y ev) int {
		if c := cmpInt(x.t, y.t); c != 0 {
			return c
		}
		switch {
		case x.commit == y.commit:
			return 0
		case !x.commit:
			return -1
		}
		return 1
	})
	out := make([][]int32, len(txns))
	deps := make([][]int32, len(txns))
	mark := make([]int, len(txns)) // commit number that marked a txn as a dependency
	var frontier []int32
	commits := 0
	for _, e := range evs {
		if !e.commit {
			deps[e.i] = slices.Clone(frontier)
			for _, f := range frontier {
				out[f] = append(out[f], int32(e.i))
			}
			continue
		}
		commits++
		for _, d := range deps[e.i] {
			mark[d] = commits
		}
		next := frontier[:0]
		for _, f := range frontier {
			if mark[f] != commits {
				next = append(next, f)
			}
		}
		frontier = append(next, int32(e.i))
		deps[e.i] = nil
	}
	return out
}

// cycles finds the strongly connected components of the dependency graph
// and classifies the cycles in each: G0 (ww only), G1c (ww and wr, at least
// one wr), G-single (exactly one rw) and G2 (several rw); then, with the
// real-time edges added, the same classes of cycles that need a real-time
// edge (G0-realtime, G1c-realtime, G-single-realtime, G2-realtime): those
// violate strict serializability only. Counts are of components showing the
// class; each comes with one example cycle.
func (l listAppend) cycles(g *laGraph, an *anomalyLog, ref func(int) map[string]any) {
	const maxTries = 200
	describe := func(p []laEdge, from int) []any {
		var steps []any
		cur := from
		for _, e := range p {
			st := ref(cur)
			st["edge"] = edgeName(e.typ)
			if e.typ != rt {
				st["key"] = g.keys[e.k]
				st["value"] = e.v
			}
			steps = append(steps, st)
			cur = int(e.to)
		}
		return steps
	}
	hasKind := func(p []laEdge, kind uint8) bool {
		return slices.ContainsFunc(p, func(e laEdge) bool { return e.typ == kind })
	}
	// closeCycle looks, over the given kinds, for a path back from the end
	// of edge e (leaving a) to a; the cycle must satisfy ok.
	type found struct {
		cyc  []laEdge
		from int
	}
	search := func(members []int, in func(int) bool, start uint8, kinds uint8, ok func([]laEdge) bool) *found {
		tries := 0
		for _, a := range members {
			for i := range g.deg(a) {
				e := g.edge(a, i)
				if e.typ != start || !in(int(e.to)) {
					continue
				}
				if tries++; tries > maxTries {
					return nil
				}
				if p := path(g, int(e.to), a, kinds, in); p != nil {
					if cyc := append([]laEdge{e}, p...); ok(cyc) {
						return &found{cyc, a}
					}
				}
			}
		}
		return nil
	}
	always := func([]laEdge) bool { return true }

	for _, realtime := range []bool{false, true} {
		kinds := uint8(ww | wr | rw)
		suffix := ""
		if realtime {
			kinds |= rt
			suffix = "-realtime"
		}
		comp := sccs(g, kinds)
		groups := map[int][]int{}
		for v, c := range comp {
			groups[c] = append(groups[c], v)
		}
		ids := make([]int, 0, len(groups))
		for c, vs := range groups {
			if len(vs) > 1 {
				ids = append(ids, c)
			}
		}
		sort.Ints(ids)
		for _, c := range ids {
			members := groups[c]
			in := func(v int) bool { return comp[v] == c }
			base := uint8(ww | wr)
			if realtime {
				base |= rt
			}
			needRT := func(p []laEdge) bool { return !realtime || hasKind(p, rt) }
			// G0 / G1c: cycles without rw edges.
			if !realtime {
				for i, v := range members {
					if i >= maxTries {
						break
					}
					if p := cycleThrough(g, v, ww, in); p != nil {
						an.add(-1, "G0", describe(p, v))
						break
					}
				}
				if f := search(members, in, wr, ww|wr, always); f != nil {
					an.add(-1, "G1c", describe(f.cyc, f.from))
				}
			} else if f := search(members, in, rt, base, always); f != nil {
				class := "G0-realtime"
				if hasKind(f.cyc, wr) {
					class = "G1c-realtime"
				}
				an.add(-1, class, describe(f.cyc, f.from))
			}
			// G-single: one rw edge closed by the others; else G2.
			if f := search(members, in, rw, base, needRT); f != nil {
				an.add(-1, "G-single"+suffix, describe(f.cyc, f.from))
			} else if f := search(members, in, rw, kinds, func(p []laEdge) bool {
				return needRT(p) && !l.singleRW(p)
			}); f != nil {
				an.add(-1, "G2"+suffix, describe(f.cyc, f.from))
			}
		}
	}
}

func (listAppend) singleRW(p []laEdge) bool {
	n := 0
	for _, e := range p {
		if e.typ == rw {
			n++
		}
	}
	return n == 1
}

// path finds a shortest path from a to b over edges of the given kinds
// within the component, or nil. a == b gives an empty, non-nil path.
func path(g *laGraph, a, b int, kinds uint8, in func(int) bool) []laEdge {
	if a == b {
		return []laEdge{}
	}
	prev := map[int]laEdge{}
	from := map[int]int{a: -1}
	queue := []int{a}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for i := range g.deg(v) {
			e := g.edge(v, i)
			w := int(e.to)
			if e.typ&kinds == 0 || !in(w) {
				continue
			}
			if _, seen := from[w]; seen {
				continue
			}
			from[w], prev[w] = v, e
			if w == b {
				var p []laEdge
				for x := b; x != a; x = from[x] {
					p = append(p, prev[x])
				}
				slices.Reverse(p)
				return p
			}
			queue = append(queue, w)
		}
	}
	return nil
}

// cycleThrough finds a cycle through v using only the given edge kinds.
func cycleThrough(g *laGraph, v int, kinds uint8, in func(int) bool) []laEdge {
	for i := range g.deg(v) {
		e := g.edge(v, i)
		if e.typ&kinds == 0 || !in(int(e.to)) {
			continue
		}
		if p := path(g, int(e.to), v, kinds, in); p != nil {
			return append([]laEdge{e}, p...)
		}
	}
	return nil
}

// sccs labels each vertex with its strongly connected component (Tarjan's
// algorithm, iterative so that long chains do not exhaust the stack).
func sccs(g *laGraph, kinds uint8) []int {
	n := len(g.adj)
	index := make([]int, n)
	low := make([]int, n)
	comp := make([]int, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = -1
		comp[i] = -1
	}
	var stack []int
	type frame struct{ v, next int }
	counter, ncomp := 0, 0
	for root := range n {
		if index[root] >= 0 {
			continue
		}
		call := []frame{{root, 0}}
		index[root], low[root] = counter, counter
		counter++
		stack = append(stack, root)
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			v := f.v
			if f.next < g.deg(v) {
				e := g.edge(v, f.next)
				f.next++
				if e.typ&kinds == 0 {
					continue
				}
				w := int(e.to)
				if index[w] < 0 {
					index[w], low[w] = counter, counter
					counter++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{w, 0})
				} else if onStack[w] {
					low[v] = min(low[v], index[w])
				}
				continue
			}
			if low[v] == index[v] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = ncomp
					if w == v {
						break
					}
				}
				ncomp++
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].v
				low[p] = min(low[p], low[v])
			}
		}
	}
	return comp
}
