package checker

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// TTLValue is the value of a ttl op (workloads/ttl.go writes them; one
// type for every op). Field is set on the hash-field ops (HSET +
// HPEXPIRE, HPERSIST, HPTTL: Redis 7.4's hash-field expiration), empty on
// the key ops (SET ... PX, PEXPIRE, PERSIST, PTTL).
//   - set: invoke {value, ttl_ms} (ttl 0: no expiry); ok the same.
//   - pexpire: invoke {ttl_ms}; ok adds reply (PEXPIRE: 1 set, 0 no key;
//     HPEXPIRE's code for the field: 1 set, -2 no field).
//   - persist: invoke {}; ok adds reply (PERSIST: 1 removed, 0 no key or
//     no expiry; HPERSIST: 1 removed, -1 no expiry, -2 no field).
//   - read: ok {got, pttl} in one MULTI (GET/HGET and PTTL/HPTTL): got
//     absent and pttl -2 when there is no key (field); pttl -1 when it has
//     no expiry.
//   - final: a read, then DEL of the key, in one MULTI: once traffic has
//     ended (the end phase must not see a key expire between the reads of
//     a primary and its replica); no op of its key may follow it.
//   - probe (an init op): ok {hash_field_expiry, missing}: whether the
//     server has HPEXPIRE, HPERSIST and HPTTL (COMMAND INFO).
type TTLValue struct {
	Field string  `json:"field,omitempty"`
	Value string  `json:"value,omitempty"`
	TTLms int64   `json:"ttl_ms,omitempty"`
	Reply *int64  `json:"reply,omitempty"`
	Got   *string `json:"got,omitempty"`
	PTTL  *int64  `json:"pttl,omitempty"`

	HashFieldExpiry *bool    `json:"hash_field_expiry,omitempty"`
	Missing         []string `json:"missing,omitempty"`
}

// The ttl workload's ops, by their "f" (workloads/ttl.go writes them); its
// reads are OpRead.
const (
	// TTLSet sets a key (or hash field) to a unique value, with or
	// without an expiry.
	TTLSet = "set"
	// TTLPExpire moves an expiry (PEXPIRE, HPEXPIRE).
	TTLPExpire = "pexpire"
	// TTLPersist removes an expiry (PERSIST, HPERSIST).
	TTLPersist = "persist"
	// TTLFinal reads, then deletes, a key once traffic has ended.
	TTLFinal = "final"
	// TTLProbe asks whether the server has hash-field expiration (an
	// init op).
	TTLProbe = "probe"
)

// TTLClockSlack is the stated clock-uncertainty bound of the ttl checker:
// a server counts a ttl from its own clock in whole milliseconds and the
// history times its ops on the harness's clock; a deadline is judged
// broken only when it is missed by more than this (beyond the window
// between an op's invocation and its completion, which is always allowed).
const TTLClockSlack = 5 * time.Millisecond

type ttlChecker struct{ o Scope }

// TTL judges a history of the ttl workload against the deadlines the
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
// TTLClockSlack:
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
func TTL(opts ...Scope) Checker { return ttlChecker{firstScope(opts)} }

func (t ttlChecker) Name() string { return t.o.name("ttl") }

// ttlObs is one observation of a key (field).
type ttlObs struct {
	c       *call
	present bool
	value   *string // nil: unknown (a pexpire or persist says only that it exists)
	lo, hi  int64   // the expiry lies in [lo, hi]; inf, inf: no expiry
	persist bool    // a PERSIST removed the expiry
}

func (t ttlChecker) Check(_ context.Context, in *History) Result {
	calls, err := t.o.calls(in)
	if err != nil {
		return invalidHistory(err)
	}
	an := newAnomalies(t.o.MaxExamples)
	fig := map[string]any{"clock_slack_ms": TTLClockSlack.Milliseconds()}
	var malformed []string
	bad := func(c *call, what string) {
		if len(malformed) < t.o.MaxExamples {
			malformed = append(malformed, fmt.Sprintf("op %d (%s %s): %s", c.inv.Index, c.inv.F, c.inv.Key, what))
		}
		fig["skipped_malformed"] = toInt(fig["skipped_malformed"]) + 1
	}
	read := func(raw json.RawMessage) (TTLValue, bool) {
		var v TTLValue
		if len(raw) == 0 || string(raw) == "null" || json.Unmarshal(raw, &v) != nil {
			return v, false
		}
		return v, true
	}
	slack := int64(TTLClockSlack)
	counts := map[string]int{}
	writes := map[string][]*call{} // by unit
	obs := map[string][]ttlObs{}
	finals := map[string]*call{}
	written := map[string]map[string]*call{} // unit -> value -> its set
	var probe *TTLValue
	type ttlSeen struct {
		u string
		o ttlObs
	}
	var seen []ttlSeen
	hashOps := 0
	indexes := map[int64]bool{}
	unitOf := func(c *call, v TTLValue) string {
		if v.Field != "" {
			return c.inv.Key + "\x00" + v.Field
		}
		return c.inv.Key
	}
	for i := range calls {
		c := &calls[i]
		if why := misordered(c, indexes); why != "" {
			bad(c, why)
			continue
		}
		v, ok := read(c.inv.Value)
		if !ok && c.inv.Name() != OpRead && c.inv.F != TTLFinal && c.inv.F != TTLPersist && c.inv.F != TTLProbe {
			bad(c, "its invocation cannot be read")
			continue
		}
		if c.inv.F == TTLProbe {
			if c.ok() {
				if out, ok := read(c.comp.Value); ok && out.HashFieldExpiry != nil {
					probe = &out
				} else {
					an.garbage(c, "a probe must say whether the server has hash-field expiration")
				}
			}
			continue
		}
		switch c.inv.Name() {
		case TTLSet, TTLPExpire, TTLPersist, OpRead, TTLFinal:
		default:
			bad(c, "not an op of the ttl workload")
			continue
		}
		u := unitOf(c, v)
		if v.Field != "" {
			hashOps++
		}
		counts[c.inv.F+"s"]++
		counts[c.inv.F+"s_"+c.outcome().String()]++
		// Finals are retried until one succeeds: a final may follow one
		// that did not (certainly) succeed; nothing else may follow one.
		if f := finals[u]; f != nil && c.start > f.start && (c.inv.F != TTLFinal || f.ok()) {
			bad(c, fmt.Sprintf("an op of a key after its final read-and-delete (op %d)", f.inv.Index))
			continue
		}
		var out TTLValue
		if c.ok() {
			var ok bool
			if out, ok = read(c.comp.Value); !ok && c.inv.F != TTLSet {
				an.garbage(c, "its reply cannot be read")
				continue
			}
		}
		switch c.inv.Name() {
		case TTLSet:
			if v.Value == "" || v.TTLms < 0 {
				bad(c, "a set needs a value and a ttl not below 0")
				continue
			}
			if written[u] == nil {
				written[u] = map[string]*call{}
			}
			if written[u][v.Value] != nil {
				bad(c, fmt.Sprintf("value %q was set by op %d too: values are unique per run", v.Value, written[u][v.Value].inv.Index))
				continue
			}
			written[u][v.Value] = c
			if !c.failed() {
				writes[u] = append(writes[u], c)
			}
			if c.ok() {
				val := v.Value
				o := ttlObs{c: c, present: true, value: &val, lo: inf, hi: inf}
				if v.TTLms > 0 {
					o.lo, o.hi = c.start+v.TTLms*1e6, c.end+v.TTLms*1e6
				}
				obs[u] = append(obs[u], o)
			}
		case TTLPExpire:
			if v.TTLms <= 0 {
				bad(c, fmt.Sprintf("ttl %d ms is not above 0", v.TTLms))
				continue
			}
			if !c.failed() {
				writes[u] = append(writes[u], c)
			}
			if c.ok() {
				switch {
				case out.Reply == nil || *out.Reply != 1 && *out.Reply != 0 && *out.Reply != -2:
					an.garbage(c, "PEXPIRE answers 1 or 0 (HPEXPIRE 1 or -2 here)")
				case *out.Reply == 1:
					obs[u] = append(obs[u], ttlObs{c: c, present: true, lo: c.start + v.TTLms*1e6, hi: c.end + v.TTLms*1e6})
				}
			}
		case TTLPersist:
			if !c.failed() {
				writes[u] = append(writes[u], c)
			}
			if c.ok() {
				switch {
				case out.Reply == nil || *out.Reply < -2 || *out.Reply > 1:
					an.garbage(c, "PERSIST answers 1 or 0 (HPERSIST 1, -1 or -2)")
				case *out.Reply == 1:
					obs[u] = append(obs[u], ttlObs{c: c, present: true, lo: inf, hi: inf, persist: true})
				}
			}
		case OpRead, TTLFinal:
			if c.inv.F == TTLFinal && !c.failed() {
				finals[u] = c
				writes[u] = append(writes[u], c) // it deletes
			}
			if !c.ok() {
				continue
			}
			switch {
			case out.PTTL == nil || *out.PTTL < -2:
				an.garbage(c, "a read must carry the key's PTTL (-2, -1 or the ms left)")
				continue
			case *out.PTTL == -2 && out.Got != nil:
				an.garbage(c, "a value beside a PTTL of -2 (no such key)")
				continue
			case *out.PTTL != -2 && out.Got == nil:
				an.garbage(c, "no value beside a PTTL that says the key exists")
				continue
			}
			o := ttlObs{c: c, present: *out.PTTL != -2, value: out.Got, lo: inf, hi: inf}
			if *out.PTTL >= 0 {
				o.lo, o.hi = c.start+*out.PTTL*1e6, c.end+*out.PTTL*1e6
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
		if s == nil || s.failed() || s.start > c.end {
			why := "no set of this key wrote this value"
			if s != nil && s.failed() {
				why = fmt.Sprintf("its set (op %d) certainly failed", s.inv.Index)
			} else if s != nil {
				why = fmt.Sprintf("its set (op %d) began after the read ended", s.inv.Index)
			}
			an.add("unexpected", map[string]any{"index": c.inv.Index, "key": c.inv.Key, "value": *r.o.value, "why": why})
			continue
		}
		obs[r.u] = append(obs[r.u], r.o)
	}
	windows := in.windowsOf()
	addrs := in.nodeAddrsOf()
	units := make([]string, 0, len(obs))
	for u := range obs {
		units = append(units, u)
	}
	slices.Sort(units)
	judged, skipped := 0, 0
	classes := map[string]int{}
	for _, u := range units {
		os := obs[u]
		ws := writes[u]
		byEnd := slices.Clone(os)
		slices.SortStableFunc(byEnd, func(a, b ttlObs) int { return cmp.Compare(a.c.end, b.c.end) })
		byStart := slices.Clone(os)
		slices.SortStableFunc(byStart, func(a, b ttlObs) int { return cmp.Compare(a.c.start, b.c.start) })
		p := -1
		for _, o2 := range byStart {
			for p+1 < len(byEnd) && byEnd[p+1].c.end < o2.c.start {
				p++
			}
			if p < 0 {
				continue
			}
			if f := o2.c.inv.Name(); f != OpRead && f != TTLFinal {
				continue // a write changes what it observes: only reads are held to what came before
			}
			o1 := byEnd[p] // the last observation completed before o2 began
			interfered := false
			for _, w := range ws {
				if w != o1.c && w != o2.c && w.start < o2.c.end && w.end > o1.c.start {
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
			case o1.present && o2.present && o1.hi != inf && o2.c.start > o1.hi+slack:
				class, why = "read-after-deadline", fmt.Sprintf("seen %s ms after the latest expiry op %d allows", fmtMs(o2.c.start-o1.hi), o1.c.inv.Index)
			case o1.present && !o2.present && o1.lo == inf && o1.persist:
				class, why = "gone-after-persist", fmt.Sprintf("gone although op %d removed its expiry", o1.c.inv.Index)
			case o1.present && !o2.present && o1.lo == inf:
				class, why = "gone-without-expiry", fmt.Sprintf("gone although op %d saw it without an expiry", o1.c.inv.Index)
			case o1.present && !o2.present && o2.c.end < o1.lo-slack:
				class, why = "expired-early", fmt.Sprintf("gone %s ms before the earliest expiry op %d allows", fmtMs(o1.lo-o2.c.end), o1.c.inv.Index)
			case o1.present && o2.present && o1.hi != inf && o2.lo > o1.hi+slack:
				if o2.lo == inf {
					class, why = "ttl-grew", fmt.Sprintf("its expiry (op %d) is gone without a PERSIST", o1.c.inv.Index)
				} else {
					class, why = "ttl-grew", fmt.Sprintf("its expiry is %s ms later than op %d allows, with no write that set it", fmtMs(o2.lo-o1.hi), o1.c.inv.Index)
				}
			case o1.present && o2.present && o1.value != nil && o2.value != nil && *o1.value != *o2.value:
				class, why = "value-changed", fmt.Sprintf("value %q where op %d saw %q, with no write in between", *o2.value, o1.c.inv.Index, *o1.value)
			case !o1.present && o2.present:
				class, why = "resurrected", fmt.Sprintf("back after op %d found it gone, with no write in between", o1.c.inv.Index)
			}
			if class == "" {
				continue
			}
			kind := ttlClassify(windows, addrs, o1.c, o2.c)
			classes[kind]++
			key, field, _ := strings.Cut(u, "\x00")
			ex := map[string]any{"index": o2.c.inv.Index, "key": key, "first": o1.c.inv.Index, "second": o2.c.inv.Index,
				"classification": kind, "why": why, "first_node": o1.c.comp.Node, "second_node": o2.c.comp.Node}
			if field != "" {
				ex["field"] = field
			}
			an.add(class, ex)
		}
	}
	for _, n := range []string{"sets", "sets_ok", "sets_fail", "sets_info", "pexpires", "pexpires_ok", "persists", "persists_ok",
		"reads", "reads_ok", "finals", "finals_ok"} {
		fig[n] = counts[n]
	}
	fig["keys"] = len(units)
	fig["pairs_judged"] = judged
	fig["pairs_skipped_concurrent_write"] = skipped
	fig["anomalies_clock"] = classes["clock"]
	fig["anomalies_after_failover"] = classes["after-failover"]
	fig["anomalies_unexplained"] = classes["unexplained"]
	fig["hash_field_ops"] = hashOps
	hashNote := ""
	switch {
	case probe != nil && !*probe.HashFieldExpiry && hashOps == 0:
		hashNote = fmt.Sprintf("hash-field expiration not applicable: the server lacks %s (Redis < 7.4)", strings.Join(probe.Missing, ", "))
		fig["hash_field_expiry"] = "not applicable: the server lacks " + strings.Join(probe.Missing, ", ")
	case probe != nil && !*probe.HashFieldExpiry:
		// The workload sends none there: the history contradicts itself.
		malformed = append(malformed, fmt.Sprintf("%d hash-field ops in a run whose probe found no hash-field expiration", hashOps))
		fig["skipped_malformed"] = toInt(fig["skipped_malformed"]) + hashOps
	case probe != nil:
		fig["hash_field_expiry"] = "judged"
	case hashOps == 0:
		hashNote = "hash-field expiration not applicable: no hash-field op in the history (no probe recorded)"
		fig["hash_field_expiry"] = "not applicable: no hash-field op"
	default:
		fig["hash_field_expiry"] = "judged"
	}
	an.into(fig)
	if n := an.total(); n > 0 {
		fig["anomaly_types"] = slices.Clone(an.order)
		w := an.describe()
		if d := classes["clock"] + classes["after-failover"] + classes["unexplained"]; d > 0 {
			w = fmt.Sprintf("the server did not keep %d acknowledged deadlines or values (%d with a clock fault in between: expiry is measured on each node's clock, as Redis documents; "+
				"%d after a failover: asynchronous replication; %d unexplained); ", d, classes["clock"], classes["after-failover"], classes["unexplained"]) + w
		}
		if len(malformed) > 0 {
			fig["malformed"] = malformed
		}
		if hashNote != "" {
			w += "; " + hashNote
		}
		fig["why"] = w
		return Result{Valid: Invalid, Figures: Map(fig)}
	}
	if len(malformed) > 0 {
		fig["malformed"] = malformed
		w := fmt.Sprintf("%d ttl ops cannot be judged (first: %s): what they wrote is unknown", toInt(fig["skipped_malformed"]), malformed[0])
		fig["why"], fig["error"] = w, w
		return Result{Valid: Unknown, Figures: Map(fig)}
	}
	if judged == 0 {
		w := "no two observations of a key could be compared (none, or a write that may have run between every pair): no deadline to judge"
		fig["why"], fig["error"] = w, w
		return Result{Valid: Unknown, Figures: Map(fig)}
	}
	w := fmt.Sprintf("%d pairs of observations of %d keys kept their acknowledged deadlines (within %d ms of clock slack); %d pairs had a write that may have run between them, not judged",
		judged, len(units), TTLClockSlack.Milliseconds(), skipped)
	if hashNote != "" {
		w += "; " + hashNote
	}
	fig["why"] = w
	return Result{Valid: Valid, Figures: Map(fig)}
}

// ttlClassify says what may explain an anomaly between two observations:
// "clock" when a clock fault window overlaps them on a node that served
// one of them (or names no node, or they name none: it cannot be ruled
// out), "after-failover" when another fault struck a node that served one
// of them and they were served by different nodes, else "unexplained".
func ttlClassify(ws []Window, addrs map[string]string, a, b *call) string {
	served := func(n string) bool {
		return n != "" && (n == a.comp.Node || n == b.comp.Node || addrs[n] == a.comp.Node || addrs[n] == b.comp.Node)
	}
	for _, w := range ws {
		if !strings.HasPrefix(w.Fault, "clock") || w.Start > b.end || w.End < a.start {
			continue
		}
		if len(w.Nodes) == 0 || a.comp.Node == "" && b.comp.Node == "" {
			return "clock"
		}
		for _, n := range w.Nodes {
			if served(n) {
				return "clock"
			}
		}
	}
	na, nb := a.comp.Node, b.comp.Node
	if na != "" && nb != "" && na != nb {
		if lockNodeStruck(ws, addrs, na, a.start, b.end) != "" || lockNodeStruck(ws, addrs, nb, a.start, b.end) != "" {
			return "after-failover"
		}
	}
	return "unexplained"
}

func fmtMs(ns int64) string { return trimS(ms(ns)) }
