package checker

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redline-dev/redline/history"
)

// Verdicts of an unserved window.
const (
	FaultOutage = "fault-outage" // the fault struck the shard: an outage to expect
	AdminOutage = "admin-outage" // a journalled admin step on the shard's slots overlapped it
	// NotRecovered: the shard failed after every fault and step that
	// overlapped its outage had ended, and was never served again: a
	// result (RTO unbounded), not an outage to expect.
	NotRecovered = "not-recovered"
)

// Unserved is what an "unserved" attribution adds: the shard that went
// without serving, the span, and what the clients were told.
type Unserved struct {
	Shard  string  `json:"shard"`  // the shard's primary at the fault's start, "name (addr)"
	Window int     `json:"window"` // the fault window (-1: outside every window)
	FromS  float64 `json:"from_s"` // invocation of the first failed or indeterminate call
	// ToS is the completion of the first served call on the shard's slots
	// after its last failure; Recovered false when none came (ToS: the
	// last failure's end).
	ToS       float64        `json:"to_s"`
	Recovered bool           `json:"recovered"`
	Errors    map[string]int `json:"errors"` // class -> calls: CLUSTERDOWN, MOVED, TRYAGAIN, timeout, indeterminate ...
	// Topology is what the history says of the shard's serving node(s):
	// the node that served its slots again, and when.
	Topology []string `json:"topology,omitempty"`
}

// errorClass names what an unserved call was told.
func errorClass(c *call) string {
	if c.comp == nil {
		return "no completion"
	}
	e := c.comp.ErrorText()
	up := strings.ToUpper(e)
	for _, k := range []string{"CLUSTERDOWN", "TRYAGAIN", "MOVED", "ASK", "LOADING", "READONLY", "MASTERDOWN", "NOREPLICAS"} {
		if strings.HasPrefix(up, k) || strings.Contains(up, " "+k+" ") || strings.HasPrefix(up, "ERR "+k) {
			return k
		}
	}
	low := strings.ToLower(e)
	switch {
	case strings.Contains(low, "timeout"), strings.Contains(low, "deadline"):
		return "timeout"
	case strings.Contains(low, "refused"), strings.Contains(low, "reset"), strings.Contains(low, "eof"), strings.Contains(low, "broken pipe"):
		return "connection"
	case strings.Contains(low, "redirect"):
		return "MOVED" // a client gave up following redirections: a MOVED loop
	case e == "" && c.comp.Type == history.Info:
		return "indeterminate"
	case e == "":
		return "failed"
	}
	if f := strings.Fields(e); len(f) > 0 && len(f[0]) <= 24 {
		return f[0]
	}
	return "other"
}

// shardOutage is one shard's outage in one window, as attribution sees it.
type shardOutage struct {
	shard          string
	first, lastBad int64
	// lastTold, lastToldIdx: the invocation time and index of the last
	// failure that completed (-1: none did).
	lastTold, lastToldIdx int64
	lastBadEnd            int64
	recovered             int64 // inf when no served call came
	recoveredBy, key      string
	errors                map[string]int
}

// unserved attributes every shard-window whose outage was > 0 (the RTO
// checker's windows: a fault's start until the next one's) and the
// failures before the first fault, the outage found the same way.
func (a *attributor) unserved() []Attribution {
	pairs, err := history.Pairs(a.ops)
	if err != nil {
		return nil
	}
	calls := sortedByStart(Scope{}.callsOf(pairs))
	if len(calls) == 0 {
		return nil
	}
	return a.unservedOf(&wholeOutages{calls: calls}, runEnd(a.ops))
}

// outageSource is what unservedOf reads of a history's calls: the whole
// history's (wholeOutages), or what passes over a history file kept of
// them (scannedOutages). Each answers as a scan of the calls sorted by
// invocation time would.
type outageSource interface {
	// preFault is the invocation of the first call (by invocation) before
	// firstFault that was not served, invoked at or after 0 and before
	// limit (ok false: none).
	preFault(firstFault, limit int64) (int64, bool)
	// views are shardViews of the calls at the windows' starts.
	views(windows []Window, addrs map[string]string) []shardView
	// prepare is told the spans ([from, to)) and their views before the
	// first failed or recover.
	prepare(spans [][2]int64, views []shardView)
	// failed calls each call not served invoked in [from, to), in order.
	failed(from, to int64, each func(c *failure))
	// recover sets, for each outage of span si, the first call (by
	// invocation) a primary served on its shard's slots (shardOf)
	// invoked at or after its last failure.
	recover(si int, from int64, outs map[string]*shardOutage, shardOf func(key string) string)
}

// failure is a call not served, as the unserved attribution counts it.
type failure struct {
	start, end, index int64
	key, class        string
	told              bool // it completed (a fail or an info), not left open
}

func failureOf(c *call) failure {
	return failure{start: c.start, end: c.end, index: c.index, key: c.inv.Key, class: errorClass(c), told: c.comp != nil}
}

// unservedOf is unserved of the calls src reads, in a run ending at
// runEnd.
func (a *attributor) unservedOf(src outageSource, runEnd int64) []Attribution {
	addrs := a.addrs
	windows := slices.Clone(a.windows)
	sort.SliceStable(windows, func(i, j int) bool { return windows[i].Start < windows[j].Start })
	// The span before the first fault is a window of its own (index -1),
	// starting at the first failure there.
	type span struct {
		w        int
		from, to int64
	}
	var spans []span
	firstFault := runEnd + 1
	if len(windows) > 0 {
		firstFault = windows[0].Start
	}
	if from, ok := src.preFault(firstFault, a.finalReadsOr(runEnd+1)); ok {
		spans = append(spans, span{-1, from, firstFault})
	}
	for i, w := range windows {
		to := runEnd + 1
		if i+1 < len(windows) {
			to = windows[i+1].Start
		}
		spans = append(spans, span{i, w.Start, to})
	}
	vw := make([]Window, len(spans))
	for i, s := range spans {
		vw[i] = Window{Start: s.from}
		if s.w >= 0 {
			vw[i] = windows[s.w]
		}
	}
	views := src.views(vw, addrs)
	bounds := make([][2]int64, len(spans))
	for i, s := range spans {
		bounds[i] = [2]int64{s.from, s.to}
	}
	src.prepare(bounds, views)
	busy := map[int]int64{}
	var out []Attribution
	for si, s := range spans {
		v := &views[si]
		shardOf := func(key string) string {
			if n := v.shardOf(key); n != "" {
				return n
			}
			return "unknown"
		}
		outs := map[string]*shardOutage{}
		var order []string
		src.failed(s.from, s.to, func(c *failure) {
			if c.start < busy[history.Keyslot(c.key)] {
				return
			}
			sh := shardOf(c.key)
			o := outs[sh]
			if o == nil {
				o = &shardOutage{shard: sh, first: c.start, recovered: inf, key: c.key, errors: map[string]int{}, lastTold: -1}
				outs[sh] = o
				order = append(order, sh)
			}
			o.lastBad, o.lastBadEnd = c.start, c.end
			if c.told {
				o.lastTold, o.lastToldIdx = c.start, c.index
			}
			if c.end == inf {
				o.lastBadEnd = c.start
			}
			o.errors[c.class]++
		})
		if len(outs) > 0 {
			src.recover(si, s.from, outs, shardOf)
		}
		v.slotNode.each(func(slot int, node string) {
			if o := outs[node]; o != nil {
				busy[slot] = max(busy[slot], o.recovered)
			}
		})
		for _, sh := range order {
			if len(out) >= MaxAttributions {
				return out
			}
			out = append(out, a.unservedOne(outs[sh], s.w, windows, v))
		}
	}
	return out
}

// wholeOutages is an outageSource of the calls in memory, sorted by
// invocation.
type wholeOutages struct{ calls []call }

func (w *wholeOutages) preFault(firstFault, limit int64) (int64, bool) {
	for i := range w.calls {
		c := &w.calls[i]
		if c.start >= firstFault {
			break
		}
		if !c.served() && c.start >= 0 && c.start < limit {
			return c.start, true
		}
	}
	return 0, false
}

func (w *wholeOutages) views(windows []Window, addrs map[string]string) []shardView {
	return shardViews(w.calls, windows, addrs)
}

func (w *wholeOutages) prepare([][2]int64, []shardView) {}

func (w *wholeOutages) lo(from int64) int {
	return sort.Search(len(w.calls), func(i int) bool { return w.calls[i].start >= from })
}

func (w *wholeOutages) failed(from, to int64, each func(c *failure)) {
	for i := w.lo(from); i < len(w.calls) && w.calls[i].start < to; i++ {
		if c := &w.calls[i]; !c.served() {
			f := failureOf(c)
			each(&f)
		}
	}
}

func (w *wholeOutages) recover(_ int, from int64, outs map[string]*shardOutage, shardOf func(string) string) {
	waiting := len(outs)
	for i := w.lo(from); i < len(w.calls) && waiting > 0; i++ {
		c := &w.calls[i]
		if !c.servedByPrimary() {
			continue
		}
		if o := outs[shardOf(c.inv.Key)]; o != nil && o.recovered == inf && c.start >= o.lastBad {
			o.recovered = c.end
			if c.comp != nil {
				o.recoveredBy = c.comp.Node
			}
			waiting--
		}
	}
}

// finalReadsOr is the final reads' start, or def when none.
func (a *attributor) finalReadsOr(def int64) int64 {
	if a.finalReads >= 0 {
		return a.finalReads
	}
	return def
}

func (a *attributor) unservedOne(o *shardOutage, wi int, windows []Window, v *shardView) Attribution {
	at := Attribution{Checker: "rto", Kind: "unserved", Key: o.key, Slot: history.Keyslot(o.key)}
	to := o.recovered
	if to == inf {
		to = o.lastBadEnd
	}
	u := &Unserved{Shard: a.nodeName(o.shard), Window: wi, FromS: sec(o.first), ToS: sec(to), Recovered: o.recovered != inf, Errors: o.errors}
	if o.shard == "unknown" {
		u.Shard = "unknown (no op had been served on the slots before)"
	}
	at.Unserved = u
	shardName := a.bareName(o.shard)
	var slots []int
	v.slotNode.each(func(slot int, n string) {
		if n == o.shard {
			slots = append(slots, slot)
		}
	})
	if len(slots) == 0 {
		slots = []int{at.Slot}
	}
	slices.Sort(slots)
	involved := map[string]bool{}
	if shardName != "" {
		involved[shardName] = true
	}
	// Topology: who served the shard's slots again.
	promoted := ""
	if o.recoveredBy != "" {
		by := a.bareName(o.recoveredBy)
		if o.recoveredBy != o.shard {
			promoted = a.nodeName(o.recoveredBy)
			u.Topology = append(u.Topology, fmt.Sprintf("the shard's slots were served again by %s, not its primary at the fault's start %s, from %ss (a promotion or a slot move)", promoted, a.nodeName(o.shard), trimS(sec(o.recovered))))
		} else {
			u.Topology = append(u.Topology, fmt.Sprintf("the shard's slots were served again by the same primary %s from %ss", a.nodeName(o.shard), trimS(sec(o.recovered))))
		}
		if by != "" {
			involved[by] = true
		}
	}
	sampled, sampledNew := a.sampledOwners(slots[0], o.first, to)
	u.Topology = append(u.Topology, sampled...)
	// The fault windows and the journalled steps overlapping the span.
	var struck, other []string
	// causesEnd: when the last fault window and journalled step that
	// overlapped the outage ended (inf: one had not ended by the last
	// failure, so the outage may still be its doing).
	causesEnd, struckEnd := int64(-1), int64(-1)
	for i, w := range windows {
		if w.Start > to || (w.End >= 0 && w.End < o.first && i != wi) {
			continue
		}
		s := fmt.Sprintf("%s %s-%ss", w.Fault, trimS(sec(w.Start)), trimS(sec(w.End)))
		if len(w.Nodes) > 0 {
			s += " on " + strings.Join(w.Nodes, ",")
		}
		at.Faults = append(at.Faults, s)
		end := w.End
		if end >= o.lastTold {
			end = inf
		}
		causesEnd = max(causesEnd, end)
		if shardName != "" && slices.Contains(w.Nodes, shardName) {
			struck = append(struck, s)
			struckEnd = max(struckEnd, w.End)
		} else {
			other = append(other, s)
		}
	}
	var touching []AttrStep
	moments := []int64{o.first, to}
	for _, j := range a.steps {
		end := j.end
		if end < 0 {
			end = 1 << 62
		}
		if j.begin > to || end < o.first {
			continue
		}
		onNode := shardName != "" && (a.bareName(j.from) == shardName || a.bareName(j.to) == shardName)
		onSlots := slices.ContainsFunc(j.slots, func(s int) bool { _, ok := slices.BinarySearch(slots, s); return ok })
		st := AttrStep{Seq: j.seq, Kind: j.kind, State: j.state, Slots: slotList(j.slots), From: a.nodeName(j.from),
			To: a.nodeName(j.to), Touches: onSlots || onNode, Error: j.err, TimeS: sec(j.begin)}
		if st.Touches {
			touching = append(touching, st)
			moments = append(moments, j.begin, j.end)
			if j.end < 0 || j.end >= o.lastTold {
				causesEnd = inf
			} else {
				causesEnd = max(causesEnd, j.end)
			}
		}
		at.Steps = append(at.Steps, st)
	}
	if len(at.Steps) > 12 {
		at.Steps = at.Steps[:12]
	}
	moments = slices.DeleteFunc(moments, func(m int64) bool { return m < 0 || m >= 1<<62 })
	slices.Sort(moments)
	at.Logs = a.logLines(at.Slot, o.first, to, involved, moments)

	dur := fmt.Sprintf("%ss unserved (%ss-%ss", trimS(sec(to-o.first)), trimS(sec(o.first)), trimS(sec(to)))
	if !u.Recovered {
		dur += ", not served again"
	}
	dur += "; " + errorsText(o.errors) + ")"
	switch {
	case !u.Recovered && causesEnd >= 0 && causesEnd < o.lastTold:
		// Every fault and step that could explain the outage had ended
		// when the shard still failed, and it never served again: the
		// cluster did not recover, which no fault excuses.
		at.Verdict = NotRecovered
		cause := "the last fault or journalled step overlapping it"
		switch {
		case len(struck) > 0:
			cause = "the fault " + struck[len(struck)-1]
		case len(other) > 0:
			cause = "the fault " + other[len(other)-1]
		case len(touching) > 0:
			cause = fmt.Sprintf("journalled step #%d (%s)", touching[0].Seq, touching[0].Kind)
		}
		at.Why = fmt.Sprintf("%s: not recovered: %s ended at %ss, yet the shard of %s still failed %ss later (op %d at %ss) and was never served again: RTO unbounded, an outage no fault excuses",
			dur, cause, trimS(sec(causesEnd)), orNone(shardName), trimS(sec(o.lastTold-causesEnd)), o.lastToldIdx, trimS(sec(o.lastTold)))
	case len(touching) > 0:
		t := touching[0]
		at.Verdict = AdminOutage
		at.Why = fmt.Sprintf("%s: journalled step #%d (%s of slots %s, %s -> %s, %s) touched the shard's slots or nodes during the outage", dur, t.Seq, t.Kind, t.Slots, orNone(t.From), orNone(t.To), t.State)
		if t.Error != "" {
			at.Why += "; the step failed: " + t.Error
		}
		if len(struck) > 0 {
			at.Why += "; the fault " + struck[0] + " struck the shard too"
		}
	case len(struck) > 0:
		at.Verdict = FaultOutage
		at.Why = fmt.Sprintf("%s: expected outage: the fault %s struck the shard's primary %s", dur, struck[0], orNone(shardName))
		if promoted != "" {
			at.Why += fmt.Sprintf(", until %s (a replica promoted) served its slots at +%ss", promoted, trimS(sec(o.recovered-o.first)))
		} else if u.Recovered {
			at.Why += fmt.Sprintf(", until it served again at +%ss", trimS(sec(o.recovered-o.first)))
		}
		if u.Recovered && struckEnd >= 0 && o.recovered > struckEnd {
			// Expected while the fault lasted, not beyond: say how long
			// the shard took once it was over.
			at.Why += fmt.Sprintf("; the fault ended at %ss and the shard served again only %ss after it", trimS(sec(struckEnd)), trimS(sec(o.recovered-struckEnd)))
		}
	case len(other) > 0 && o.errors["CLUSTERDOWN"] > 0:
		at.Verdict = FaultOutage
		at.Why = fmt.Sprintf("%s: the cluster said CLUSTERDOWN during the fault %s (on other nodes than the shard's primary %s: the cluster as a whole stopped serving)", dur, other[0], orNone(shardName))
	default:
		at.Verdict = AttrUnknown
		at.Why = dur + ": "
		if len(other) > 0 {
			at.Why += fmt.Sprintf("the fault %s struck other nodes than the shard's primary %s and no journalled step touched its slots: why this shard stopped serving is unknown", other[0], orNone(shardName))
		} else {
			at.Why += "no fault window and no journalled step overlapped the outage: its cause is not in the history"
		}
	}
	if promoted == "" && sampledNew != "" {
		at.Why += fmt.Sprintf("; the sampled topology shows %s owning the shard's slots by the end of the outage (a promotion or a slot move)", sampledNew)
	}
	return at
}

// errorsText is a class count in words: "CLUSTERDOWN x3, timeout x1".
func errorsText(m map[string]int) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if m[ks[i]] != m[ks[j]] {
			return m[ks[i]] > m[ks[j]]
		}
		return ks[i] < ks[j]
	})
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprintf("%s x%d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// sampledOwners reads the sampled topology around [from, to]: who owned
// slot in the last sample before from, and each change in the samples
// until a second after to, in words ("sampled topology at ...s: ..."),
// and the node that owned it at the end when that is another than at the
// start (a promotion or a slot move), else "".
func (a *attributor) sampledOwners(slot int, from, to int64) ([]string, string) {
	type state struct {
		owner string // address
		fail  bool
	}
	// The last sample at or before from, and those until a second after
	// to (the runner samples every 500 ms: the picture at the span's end).
	lo, hi := 0, len(a.topo)
	for i, smp := range a.topo {
		if smp.Time <= from {
			lo = i
		}
		if smp.Time > to+int64(time.Second) {
			hi = i
			break
		}
	}
	var out []string
	if a.topoNote != "" {
		out = append(out, a.topoNote)
	}
	var first, last state
	var seen bool
	for _, smp := range a.topo[lo:hi] {
		if a.topoContra[smp.Time] {
			// Samples of one instant that disagree: neither is believed.
			line := fmt.Sprintf("sampled topology at %ss contradicts itself (samples of that instant differ): not read", trimS(sec(smp.Time)))
			if !slices.Contains(out, line) {
				out = append(out, line)
			}
			continue
		}
		st := state{}
		for _, line := range strings.Split(smp.ClusterNodes, "\n") {
			f := strings.Fields(line)
			if len(f) < 8 || !strings.Contains(f[2], "master") {
				continue
			}
			for _, r := range f[8:] {
				if strings.HasPrefix(r, "[") {
					continue
				}
				lo, hi, ok := strings.Cut(r, "-")
				l, err1 := strconv.Atoi(lo)
				h := l
				var err2 error
				if ok {
					h, err2 = strconv.Atoi(hi)
				}
				if err1 == nil && err2 == nil && slot >= l && slot <= h {
					addr, _, _ := strings.Cut(f[1], "@")
					st = state{owner: addr, fail: strings.Contains(f[2], "fail") && !strings.Contains(f[2], "fail?")}
				}
			}
		}
		if seen && st == last {
			continue
		}
		w := "owned by " + orNone(a.nodeName(st.owner))
		if st.owner == "" {
			w = "owned by no node"
		}
		if st.fail {
			w += ", marked failed"
		}
		out = append(out, fmt.Sprintf("sampled topology at %ss: slot %d %s", trimS(sec(smp.Time)), slot, w))
		if !seen {
			first = st
		}
		last, seen = st, true
	}
	if seen && last.owner != "" && last.owner != first.owner {
		return out, a.nodeName(last.owner)
	}
	return out, ""
}
