package ttl

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"github.com/redline-dev/redline/checker"
	"slices"
	"strings"
)

// refCheck is the ttl checker's Check as it was before it judged slot
// partitions (commit 414be9f), kept to show that Check's results did not
// change: TestCheckAsBefore.
func (t ttlChecker) refCheck(_ context.Context, in *checker.History) checker.Result {
	calls, err := t.o.Calls(in)
	if err != nil {
		return checker.InvalidHistory(err)
	}
	an := checker.NewAnomalyRecorder(t.o.MaxExamples)
	fig := &Figures{ClockSlackMs: ClockSlack.Milliseconds()}
	var malformed []string
	bad := func(c *checker.Call, what string) {
		if len(malformed) < t.o.MaxExamples {
			malformed = append(malformed, fmt.Sprintf("op %d (%s %s): %s", c.Inv.Index, c.Inv.F, c.Inv.Key, what))
		}
		fig.SkippedMalformed = fig.SkippedMalformed + 1
	}
	read := func(raw json.RawMessage) (Value, bool) {
		var v Value
		if len(raw) == 0 || string(raw) == "null" || json.Unmarshal(raw, &v) != nil {
			return v, false
		}
		return v, true
	}
	slack := int64(ClockSlack)
	counts := map[string]int{}
	writes := map[string][]*checker.Call{} // by unit
	obs := map[string][]ttlObs{}
	finals := map[string]*checker.Call{}
	written := map[string]map[string]*checker.Call{} // unit -> value -> its set
	var probe *Value
	type ttlSeen struct {
		u string
		o ttlObs
	}
	var seen []ttlSeen
	hashOps := 0
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
					probe = &out
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
			hashOps++
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
			an.Add("unexpected", map[string]any{"index": c.Inv.Index, "key": c.Inv.Key, "value": *r.o.value, "why": why})
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
	classes := map[string]int{}
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
			an.Add(class, ex)
		}
	}
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
	fig.Keys = len(units)
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
		judged, len(units), ClockSlack.Milliseconds(), skipped)
	if hashNote != "" {
		w += "; " + hashNote
	}
	fig.Reason = w
	return checker.Result{Valid: checker.Valid, Figures: fig}
}
