package ttl

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"github.com/redline-dev/redline/checker"
	"slices"
	"strings"
	"time"
)

// ClockSlack is the stated clock-uncertainty bound of the ttl checker:
// a server counts a ttl from its own clock in whole milliseconds and the
// history times its ops on the harness's clock; a deadline is judged
// broken only when it is missed by more than this (beyond the window
// between an op's invocation and its completion, which is always allowed).
const ClockSlack = 5 * time.Millisecond

// The explanations of the ttl checker's figures (checker.DescribeFigure).
var _ = checker.ExplainFigures(map[string]string{
	"pairs_judged":                   "pairs of observations of one key (an acknowledged set, PEXPIRE or PERSIST, or a read of its value and PTTL), one completed before the other began, with no write that could have run between them: each must agree with the deadline the first allows",
	"pairs_skipped_concurrent_write": "pairs of observations with a write between them that may have run (an indeterminate one may land any time after its invocation): not judged",
	"anomalies_clock":                "deadlines broken with a clock fault in between: a server measures expiry on its own clock, so a clock moved back keeps a key alive and one moved forward expires it early (documented)",
	"anomalies_after_failover":       "deadlines broken across a fault on a node that served one observation, the other served by another node or by the same one after it was struck (a replaced primary rejoins with its replacement's data): asynchronous replication lost the write that set or removed the expiry, or a promoted replica answered from its copy (documented)",
	"anomalies_after_power_loss":     "deadlines broken across a power cut of a node that served one observation: it restarted without what it had not fsynced (appendfsync everysec loses up to a second of acknowledged writes, documented), so the write that set or removed the expiry may be gone",
	"anomalies_unexplained":          "deadlines broken with no clock fault and no failover in between: nothing documented explains them",
})

type ttlChecker struct{ o checker.Scope }

// Checker judges a history of the ttl workload against the deadlines the
// server acknowledged. Each key (or hash field) is a sequence of
// observations: an acknowledged SET (its value, an expiry between its
// invocation and its completion plus the ttl, or none), an acknowledged
// PEXPIRE that answered 1 (an expiry so bounded), a PERSIST that answered
// 1 (no expiry any more), a read (value and PTTL: an expiry between its
// invocation and completion plus the PTTL). Two observations one after
// the other (the first completed before the second began) with no write
// of the key that could have run between them (any set, pexpire, persist
// or final not certainly failed whose span meets theirs; an indeterminate
// one may land any time after its invocation) must agree, up to
// ClockSlack:
//
//   - read-after-deadline: the second saw the key although it began after
//     the latest instant the first allows for its expiry.
//   - gone-after-persist: the key (field) was gone although a PERSIST had
//     removed its expiry; gone-without-expiry: gone although it was set
//     without one (or read with none); expired-early: gone before the
//     earliest instant its expiry allows.
//   - ttl-grew: the second's expiry is later than the first's allows (or
//     it has none any more) with no write that set it.
//   - value-changed, resurrected: another value, or the key back after it
//     was gone, with no write in between.
//   - unexpected: a value read that no set wrote, or whose set certainly
//     failed; garbage: a reply that cannot be (a PTTL of -2 beside a value,
//     a reply code no command gives).
//
// Each anomaly is classified: clock (a clock fault window overlaps the
// two observations: a server measures expiry on its own clock, so a clock
// moved back keeps a key alive and a clock moved forward expires it
// early, as Redis documents), after-failover (a fault, not a clock fault,
// struck a node that served one of them and another node served the
// second: asynchronous replication lost a write, or a promoted replica
// answered from its copy) or unexplained. All are invalid: the deadline
// the server acknowledged was not kept; the classification says whether
// the documentation predicts it.
//
// Unknown when ops cannot be read, when an op completed before it was
// invoked or an index is used twice, when an op follows its key's final,
// or when no pair of observations could be judged. The hash-field part
// is not applicable when the probe says the server lacks the commands
// (Redis < 7.4, the reference server): said in the figures and the why.
func Checker(opts ...checker.Scope) checker.Checker {
	var o checker.Scope
	if len(opts) > 0 {
		o = opts[0]
	}
	return ttlChecker{o.WithDefaults()}
}

func (t ttlChecker) Name() string { return t.o.NameOr("ttl") }

// ttlObs is one observation of a key (field).
type ttlObs struct {
	c       *checker.Call
	present bool
	value   *string // nil: unknown (a pexpire or persist says only that it exists)
	lo, hi  int64   // the expiry lies in [lo, hi]; checker.Inf, checker.Inf: no expiry
	persist bool    // a PERSIST removed the expiry
}

func (t ttlChecker) Check(_ context.Context, in *checker.History) checker.Result {
	p, err := t.analyze(in)
	if err != nil {
		return checker.InvalidHistory(err)
	}
	return t.verdict(p)
}

// CheckPartitions is Check on a history given as slot partitions
// (checker.PartitionChecker): a key's ops, its hash field's with them, are
// all in one partition, and the fault windows are run-wide, so each
// partition is analysed as Check analyses the whole and the partials add
// up (merge). The one finding that is not a key's, the server's probe, is
// the last one of the history, by index. It holds one partition's ttl ops
// and their analysis at a time.
func (t ttlChecker) CheckPartitions(ctx context.Context, n int, load checker.PartitionLoader) (checker.Result, error) {
	m, err := checker.MergePartitions(ctx, n, load, t.o.Filter(), t.analyze, (*ttlPartial).merge, t.newPartial, nil)
	if err != nil {
		return checker.PartitionStopped(err)
	}
	return t.verdict(m), nil
}

// ttlPartial is what the ttl checker found in a history or in one
// partition of it: counts, and the first findings of each list by where a
// check of the whole history finds them (checker.Pos: the scan of the
// calls by index, then the values read, then the keys in name order).
type ttlPartial struct {
	an        *checker.Findings
	malformed *checker.Firsts[string]
	counts    map[string]int
	classes   map[string]int
	units     int
	judged    int
	skipped   int
	hashOps   int
	// probe is the last acknowledged probe's reply, at index probeAt.
	probe   *Value
	probeAt int64
}

func (t ttlChecker) newPartial() *ttlPartial {
	return &ttlPartial{an: checker.NewFindings(t.o.MaxExamples), malformed: checker.NewFirsts[string](t.o.MaxExamples),
		counts: map[string]int{}, classes: map[string]int{}}
}

// merge adds q, a partial of other keys, to p.
func (p *ttlPartial) merge(q *ttlPartial) {
	p.an.Merge(q.an)
	p.malformed.Merge(q.malformed)
	for k, n := range q.counts {
		p.counts[k] += n
	}
	for k, n := range q.classes {
		p.classes[k] += n
	}
	p.units += q.units
	p.judged += q.judged
	p.skipped += q.skipped
	p.hashOps += q.hashOps
	if q.probe != nil && (p.probe == nil || q.probeAt > p.probeAt) {
		p.probe, p.probeAt = q.probe, q.probeAt
	}
}

// The passes of the ttl checker over a history, in the order it makes
// them (checker.Pos.Phase).
const (
	ttlScan  = iota // the calls, by index
	ttlReads        // the values read, by index
	ttlUnits        // the keys (fields), by name
)

// analyze is the ttl checker's pass over the calls of in; an error is a
// history that cannot be paired.
func (t ttlChecker) analyze(in *checker.History) (*ttlPartial, error) {
	calls, err := t.o.Calls(in)
	if err != nil {
		return nil, err
	}
	part := t.newPartial()
	var seq int64 // the order of the findings: the whole's within a key
	at := func(phase int, key string, index int64) checker.Pos {
		seq++
		return checker.Pos{Phase: phase, Key: key, At: index, Seq: seq}
	}
	an := anAt{part.an, at}
	bad := func(c *checker.Call, what string) {
		part.malformed.Add(at(ttlScan, "", c.Inv.Index), fmt.Sprintf("op %d (%s %s): %s", c.Inv.Index, c.Inv.F, c.Inv.Key, what))
	}
	read := func(raw json.RawMessage) (Value, bool) {
		var v Value
		if len(raw) == 0 || string(raw) == "null" || json.Unmarshal(raw, &v) != nil {
			return v, false
		}
		return v, true
	}
	slack := int64(ClockSlack)
	counts := part.counts
	writes := map[string][]*checker.Call{} // by unit
	obs := map[string][]ttlObs{}
	finals := map[string]*checker.Call{}
	written := map[string]map[string]*checker.Call{} // unit -> value -> its set
	type ttlSeen struct {
		u string
		o ttlObs
	}
	var seen []ttlSeen
	indexes := map[int64]bool{}
	unitOf := func(c *checker.Call, v Value) string {
		if v.Field != "" {
			return c.Inv.Key + "\x00" + v.Field
		}
		return c.Inv.Key
	}
	for i := range calls {
		c := &calls[i]
		if why := c.Misordered(indexes); why != "" {
			bad(c, why)
			continue
		}
		v, ok := read(c.Inv.Value)
		if !ok && c.Inv.Name() != checker.OpRead && c.Inv.Name() != Final && c.Inv.Name() != Persist && c.Inv.Name() != Probe {
			bad(c, "its invocation cannot be read")
			continue
		}
		if c.Inv.Name() == Probe {
			if c.OK() {
				if out, ok := read(c.Comp.Value); ok && out.HashFieldExpiry != nil {
					part.probe, part.probeAt = &out, c.Inv.Index
				} else {
					an.Garbage(c, "a probe must say whether the server has hash-field expiration")
				}
			}
			continue
		}
		switch c.Inv.Name() {
		case Set, PExpire, Persist, checker.OpRead, Final:
		default:
			bad(c, "not an op of the ttl workload")
			continue
		}
		u := unitOf(c, v)
		if v.Field != "" {
			part.hashOps++
		}
		counts[c.Inv.F+"s"]++
		counts[c.Inv.F+"s_"+c.Outcome().String()]++
		// Finals are retried until one succeeds: a final may follow one
		// that did not (certainly) succeed; nothing else may follow one.
		if f := finals[u]; f != nil && c.Start > f.Start && (c.Inv.Name() != Final || f.OK()) {
			bad(c, fmt.Sprintf("an op of a key after its final read-and-delete (op %d)", f.Inv.Index))
			continue
		}
		var out Value
		if c.OK() {
			var ok bool
			if out, ok = read(c.Comp.Value); !ok && c.Inv.Name() != Set {
				an.Garbage(c, "its reply cannot be read")
				continue
			}
		}
		switch c.Inv.Name() {
		case Set:
			if v.Value == "" || v.TTLms < 0 {
				bad(c, "a set needs a value and a ttl not below 0")
				continue
			}
			if written[u] == nil {
				written[u] = map[string]*checker.Call{}
			}
			if written[u][v.Value] != nil {
				bad(c, fmt.Sprintf("value %q was set by op %d too: values are unique per run", v.Value, written[u][v.Value].Inv.Index))
				continue
			}
			written[u][v.Value] = c
			if !c.Failed() {
				writes[u] = append(writes[u], c)
			}
			if c.OK() {
				val := v.Value
				o := ttlObs{c: c, present: true, value: &val, lo: checker.Inf, hi: checker.Inf}
				if v.TTLms > 0 {
					o.lo, o.hi = c.Start+v.TTLms*1e6, c.End+v.TTLms*1e6
				}
				obs[u] = append(obs[u], o)
			}
		case PExpire:
			if v.TTLms <= 0 {
				bad(c, fmt.Sprintf("ttl %d ms is not above 0", v.TTLms))
				continue
			}
			if !c.Failed() {
				writes[u] = append(writes[u], c)
			}
			if c.OK() {
				switch {
				case out.Reply == nil || *out.Reply != 1 && *out.Reply != 0 && *out.Reply != -2:
					an.Garbage(c, "PEXPIRE answers 1 or 0 (HPEXPIRE 1 or -2 here)")
				case *out.Reply == 1:
					obs[u] = append(obs[u], ttlObs{c: c, present: true, lo: c.Start + v.TTLms*1e6, hi: c.End + v.TTLms*1e6})
				}
			}
		case Persist:
			if !c.Failed() {
				writes[u] = append(writes[u], c)
			}
			if c.OK() {
				switch {
				case out.Reply == nil || *out.Reply < -2 || *out.Reply > 1:
					an.Garbage(c, "PERSIST answers 1 or 0 (HPERSIST 1, -1 or -2)")
				case *out.Reply == 1:
					obs[u] = append(obs[u], ttlObs{c: c, present: true, lo: checker.Inf, hi: checker.Inf, persist: true})
				}
			}
		case checker.OpRead, Final:
			if c.Inv.Name() == Final && !c.Failed() {
				finals[u] = c
				writes[u] = append(writes[u], c) // it deletes
			}
			if !c.OK() {
				continue
			}
			switch {
			case out.PTTL == nil || *out.PTTL < -2:
				an.Garbage(c, "a read must carry the key's PTTL (-2, -1 or the ms left)")
				continue
			case *out.PTTL == -2 && out.Got != nil:
				an.Garbage(c, "a value beside a PTTL of -2 (no such key)")
				continue
			case *out.PTTL != -2 && out.Got == nil:
				an.Garbage(c, "no value beside a PTTL that says the key exists")
				continue
			}
			o := ttlObs{c: c, present: *out.PTTL != -2, value: out.Got, lo: checker.Inf, hi: checker.Inf}
			if *out.PTTL >= 0 {
				o.lo, o.hi = c.Start+*out.PTTL*1e6, c.End+*out.PTTL*1e6
			}
			if o.present {
				seen = append(seen, ttlSeen{u, o})
				continue // kept once its value's set is known to be real
			}
			obs[u] = append(obs[u], o)
		}
	}
	// Values read, against the sets (a read may be invoked before the set
	// of the value it returns, so this waits for every set).
	for _, r := range seen {
		c := r.o.c
		s := written[r.u][*r.o.value]
		if s == nil || s.Failed() || s.Start > c.End {
			why := "no set of this key wrote this value"
			if s != nil && s.Failed() {
				why = fmt.Sprintf("its set (op %d) certainly failed", s.Inv.Index)
			} else if s != nil {
				why = fmt.Sprintf("its set (op %d) began after the read ended", s.Inv.Index)
			}
			an.addAt(ttlReads, "", c.Inv.Index, "unexpected", map[string]any{"index": c.Inv.Index, "key": c.Inv.Key, "value": *r.o.value, "why": why})
			continue
		}
		obs[r.u] = append(obs[r.u], r.o)
	}
	windows := in.Windows()
	addrs := in.NodeAddrs()
	units := make([]string, 0, len(obs))
	for u := range obs {
		units = append(units, u)
	}
	slices.Sort(units)
	judged, skipped := 0, 0
	classes := part.classes
	for _, u := range units {
		os := obs[u]
		ws := writes[u]
		byEnd := slices.Clone(os)
		slices.SortStableFunc(byEnd, func(a, b ttlObs) int { return cmp.Compare(a.c.End, b.c.End) })
		byStart := slices.Clone(os)
		slices.SortStableFunc(byStart, func(a, b ttlObs) int { return cmp.Compare(a.c.Start, b.c.Start) })
		p := -1
		for _, o2 := range byStart {
			for p+1 < len(byEnd) && byEnd[p+1].c.End < o2.c.Start {
				p++
			}
			if p < 0 {
				continue
			}
			if f := o2.c.Inv.Name(); f != checker.OpRead && f != Final {
				continue // a write changes what it observes: only reads are held to what came before
			}
			o1 := byEnd[p] // the last observation completed before o2 began
			interfered := false
			for _, w := range ws {
				if w != o1.c && w != o2.c && w.Start < o2.c.End && w.End > o1.c.Start {
					interfered = true
					break
				}
			}
			if interfered {
				skipped++
				continue
			}
			judged++
			class, why := "", ""
			switch {
			case o1.present && o2.present && o1.hi != checker.Inf && o2.c.Start > o1.hi+slack:
				class, why = "read-after-deadline", fmt.Sprintf("seen %s ms after the latest expiry op %d allows", checker.FormatMs(o2.c.Start-o1.hi), o1.c.Inv.Index)
			case o1.present && !o2.present && o1.lo == checker.Inf && o1.persist:
				class, why = "gone-after-persist", fmt.Sprintf("gone although op %d removed its expiry", o1.c.Inv.Index)
			case o1.present && !o2.present && o1.lo == checker.Inf:
				class, why = "gone-without-expiry", fmt.Sprintf("gone although op %d saw it without an expiry", o1.c.Inv.Index)
			case o1.present && !o2.present && o2.c.End < o1.lo-slack:
				class, why = "expired-early", fmt.Sprintf("gone %s ms before the earliest expiry op %d allows", checker.FormatMs(o1.lo-o2.c.End), o1.c.Inv.Index)
			case o1.present && o2.present && o1.hi != checker.Inf && o2.lo > o1.hi+slack:
				if o2.lo == checker.Inf {
					class, why = "ttl-grew", fmt.Sprintf("its expiry (op %d) is gone without a PERSIST", o1.c.Inv.Index)
				} else {
					class, why = "ttl-grew", fmt.Sprintf("its expiry is %s ms later than op %d allows, with no write that set it", checker.FormatMs(o2.lo-o1.hi), o1.c.Inv.Index)
				}
			case o1.present && o2.present && o1.value != nil && o2.value != nil && *o1.value != *o2.value:
				class, why = "value-changed", fmt.Sprintf("value %q where op %d saw %q, with no write in between", *o2.value, o1.c.Inv.Index, *o1.value)
			case !o1.present && o2.present:
				class, why = "resurrected", fmt.Sprintf("back after op %d found it gone, with no write in between", o1.c.Inv.Index)
			}
			if class == "" {
				continue
			}
			kind := ttlClassify(windows, addrs, o1.c, o2.c)
			classes[kind]++
			key, field, _ := strings.Cut(u, "\x00")
			ex := map[string]any{"index": o2.c.Inv.Index, "key": key, "first": o1.c.Inv.Index, "second": o2.c.Inv.Index,
				"classification": kind, "why": why, "first_node": o1.c.Comp.Node, "second_node": o2.c.Comp.Node}
			if field != "" {
				ex["field"] = field
			}
			an.addAt(ttlUnits, u, 0, class, ex)
		}
	}
	part.units, part.judged, part.skipped = len(units), judged, skipped
	return part, nil
}

// anAt records findings at their place in the whole check: the scan's by
// the call's index (Garbage), the others where they say.
type anAt struct {
	f  *checker.Findings
	at func(phase int, key string, index int64) checker.Pos
}

func (a anAt) Garbage(c *checker.Call, why string) {
	a.f.Garbage(a.at(ttlScan, "", c.Inv.Index), c, why)
}

func (a anAt) addAt(phase int, key string, index int64, class string, ex map[string]any) {
	a.f.Add(a.at(phase, key, index), class, ex)
}

// verdict is the result of the ttl checker on what it found, of the
// whole history or merged from its partitions.
func (t ttlChecker) verdict(p *ttlPartial) checker.Result {
	an := p.an.Recorder()
	fig := &Figures{ClockSlackMs: ClockSlack.Milliseconds()}
	malformed := p.malformed.Items()
	fig.SkippedMalformed = p.malformed.Count()
	counts, classes, probe, hashOps, judged, skipped := p.counts, p.classes, p.probe, p.hashOps, p.judged, p.skipped
	nunits := p.units
	fig.Sets = counts["sets"]
	fig.SetsOK = counts["sets_ok"]
	fig.SetsFail = counts["sets_fail"]
	fig.SetsInfo = counts["sets_info"]
	fig.Pexpires = counts["pexpires"]
	fig.PexpiresOK = counts["pexpires_ok"]
	fig.Persists = counts["persists"]
	fig.PersistsOK = counts["persists_ok"]
	fig.Reads = counts["reads"]
	fig.ReadsOK = counts["reads_ok"]
	fig.Finals = counts["finals"]
	fig.FinalsOK = counts["finals_ok"]
	fig.Keys = nunits
	fig.PairsJudged = judged
	fig.PairsSkippedConcurrentWrite = skipped
	fig.AnomaliesClock = classes["clock"]
	fig.AnomaliesAfterFailover = classes["after-failover"]
	fig.AnomaliesAfterPowerLoss = classes["after-power-loss"]
	fig.AnomaliesUnexplained = classes["unexplained"]
	fig.HashFieldOps = hashOps
	hashNote := ""
	switch {
	case probe != nil && !*probe.HashFieldExpiry && hashOps == 0:
		hashNote = fmt.Sprintf("hash-field expiration not applicable: the server lacks %s (Redis < 7.4)", strings.Join(probe.Missing, ", "))
		fig.HashFieldExpiry = "not applicable: the server lacks " + strings.Join(probe.Missing, ", ")
	case probe != nil && !*probe.HashFieldExpiry:
		// The workload sends none there: the history contradicts itself.
		malformed = append(malformed, fmt.Sprintf("%d hash-field ops in a run whose probe found no hash-field expiration", hashOps))
		fig.SkippedMalformed = fig.SkippedMalformed + hashOps
	case probe != nil:
		fig.HashFieldExpiry = "judged"
	case hashOps == 0:
		hashNote = "hash-field expiration not applicable: no hash-field op in the history (no probe recorded)"
		fig.HashFieldExpiry = "not applicable: no hash-field op"
	default:
		fig.HashFieldExpiry = "judged"
	}
	fig.Anomalies = an.Figure()
	if n := an.Total(); n > 0 {
		fig.AnomalyTypes = slices.Clone(an.Classes())
		w := an.Describe()
		if d := classes["clock"] + classes["after-failover"] + classes["after-power-loss"] + classes["unexplained"]; d > 0 {
			power := ""
			if n := classes["after-power-loss"]; n > 0 {
				power = fmt.Sprintf("%d after a power cut of a node that served them: it lost what it had not fsynced; ", n)
			}
			w = fmt.Sprintf("the server did not keep %d acknowledged deadlines or values (%d with a clock fault in between: expiry is measured on each node's clock, as Redis documents; "+
				"%d after a failover: asynchronous replication; %s%d unexplained); ", d, classes["clock"], classes["after-failover"], power, classes["unexplained"]) + w
		}
		if len(malformed) > 0 {
			fig.Malformed = malformed
		}
		if hashNote != "" {
			w += "; " + hashNote
		}
		fig.Reason = w
		return checker.Result{Valid: checker.Invalid, Figures: fig}
	}
	if len(malformed) > 0 {
		fig.Malformed = malformed
		w := fmt.Sprintf("%d ttl ops cannot be judged (first: %s): what they wrote is unknown", fig.SkippedMalformed, malformed[0])
		fig.Reason, fig.Error = w, w
		return checker.Result{Valid: checker.Unknown, Figures: fig}
	}
	if judged == 0 {
		w := "no two observations of a key could be compared (none, or a write that may have run between every pair): no deadline to judge"
		fig.Reason, fig.Error = w, w
		return checker.Result{Valid: checker.Unknown, Figures: fig}
	}
	w := fmt.Sprintf("%d pairs of observations of %d keys kept their acknowledged deadlines (within %d ms of clock slack); %d pairs had a write that may have run between them, not judged",
		judged, nunits, ClockSlack.Milliseconds(), skipped)
	if hashNote != "" {
		w += "; " + hashNote
	}
	fig.Reason = w
	return checker.Result{Valid: checker.Valid, Figures: fig}
}

// ttlClassify says what may explain an anomaly between two observations:
// "clock" when a clock fault window overlaps them on a node that served
// one of them (or names no node, or they name none: it cannot be ruled
// out), "after-power-loss" when a power cut struck a node that served one
// of them (it restarts without what it had not fsynced), "after-failover"
// when another fault struck a node that served one of them and they were
// served by different nodes, or struck the one node that served both (a
// replaced primary rejoins with its replacement's data), else
// "unexplained".
func ttlClassify(ws []checker.Window, addrs map[string]string, a, b *checker.Call) string {
	served := func(n string) bool {
		return n != "" && (n == a.Comp.Node || n == b.Comp.Node || addrs[n] == a.Comp.Node || addrs[n] == b.Comp.Node)
	}
	for _, w := range ws {
		if !strings.HasPrefix(w.Fault, "clock") || w.Start > b.End || w.End < a.Start {
			continue
		}
		if len(w.Nodes) == 0 || a.Comp.Node == "" && b.Comp.Node == "" {
			return "clock"
		}
		for _, n := range w.Nodes {
			if served(n) {
				return "clock"
			}
		}
	}
	na, nb := a.Comp.Node, b.Comp.Node
	if checker.PowerFaultOnNode(ws, addrs, a.Start, b.End, na, nb) != "" {
		// The node lost what it had not fsynced: the write that set or
		// removed the expiry may be gone (documented).
		return "after-power-loss"
	}
	if na != "" && nb != "" && na != nb {
		if checker.FaultOnNode(ws, addrs, na, a.Start, b.End) != "" || checker.FaultOnNode(ws, addrs, nb, a.Start, b.End) != "" {
			return "after-failover"
		}
	}
	if na != "" && na == nb && checker.FaultOnNode(ws, addrs, na, a.Start, b.End) != "" {
		// One node served both, and a fault struck it in between: a
		// primary cut off, paused or killed is replaced, and rejoins as
		// its replacement's replica with its replacement's data, so the
		// same address answers from another history (asynchronous
		// replication, documented).
		return "after-failover"
	}
	return "unexplained"
}
