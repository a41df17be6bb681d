package checker

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/redline-dev/redline/history"
)

// Property tests (issue 10, "keep it closed"): seeded random small
// histories per checker, anomalies injected on purpose, each judged by a
// brute-force oracle written apart from the checker: an exhaustive search
// over orders for registers and list-append, direct counting for counters,
// sets and bank. A checker that disagrees with its oracle on any seed
// fails the build. Every op has a process of its own, so that pairing
// never depends on retirement, and all times are distinct.

const propertySeeds = 400

// randInterval picks a random [start, end] in a shared window, so that
// ops overlap.
func randInterval(r *rand.Rand, lo, hi int64) (int64, int64) {
	a := lo + int64(r.IntN(int(hi-lo)))
	b := a + 1 + int64(r.IntN(int(hi-lo)))
	return a, b
}

// uniq makes times distinct: time*64 plus a counter (histories here have
// far fewer than 64 entries).
type uniq struct{ n int64 }

func (u *uniq) t(x int64) int64 { u.n++; return x*64 + u.n%64 }

// linearOrder picks a linearization point inside each op's [start, end]
// and returns the ops' indexes in that order: a correct store applies them
// so.
func linearOrder(r *rand.Rand, n int, span func(int) (int64, int64)) []int {
	lin := make([]int64, n)
	idx := make([]int, n)
	for i := range lin {
		s, e := span(i)
		lin[i] = s + int64(r.IntN(int(e-s)+1))
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmpInt(lin[a], lin[b]) })
	return idx
}

// writeOutcome draws a write's outcome: mostly ok, sometimes indeterminate
// (applied or not), rarely failed (not applied).
func writeOutcome(r *rand.Rand) (history.Type, bool) {
	switch x := r.IntN(10); {
	case x < 7:
		return history.OK, true
	case x < 9:
		return history.Info, r.IntN(2) == 0
	}
	return history.Fail, false
}

// ---------- registers: exhaustive search over orders ----------

type pReg struct {
	kind       string // read, write, cas
	a, b       int64
	start, end int64 // end = inf when indeterminate
	outcome    history.Type
	mismatch   bool // cas that failed its compare (observation)
	exists     bool // read result
	v          int64
}

// regOracle: is there an order of the determinate ops (ok ops and cas
// mismatches), plus any subset of the indeterminate writes and cas,
// respecting real time, in which every read and cas sees the register?
func regOracle(ops []pReg) bool {
	n := len(ops)
	must := 0
	for i, o := range ops {
		if o.outcome != history.Info {
			must |= 1 << i
		}
	}
	type st struct {
		mask   int
		exists bool
		v      int64
	}
	seen := map[st]bool{}
	var dfs func(mask int, exists bool, v int64) bool
	dfs = func(mask int, exists bool, v int64) bool {
		if mask&must == must {
			return true
		}
		k := st{mask, exists, v}
		if seen[k] {
			return false
		}
		seen[k] = true
		for i := 0; i < n; i++ {
			if mask&(1<<i) != 0 {
				continue
			}
			ready := true
			for j := 0; j < n; j++ {
				if j != i && mask&(1<<j) == 0 && ops[j].outcome != history.Info && ops[j].end < ops[i].start {
					ready = false
					break
				}
			}
			if !ready {
				continue
			}
			o := ops[i]
			ne, nv, ok := exists, v, true
			match := exists && v == o.a
			switch {
			case o.kind == "read":
				ok = o.exists == exists && (!exists || o.v == v)
			case o.kind == "write":
				ne, nv = true, o.a
			case o.kind == "cas" && o.mismatch:
				ok = !match
			case o.kind == "cas" && o.outcome == history.OK:
				ok = match
				ne, nv = true, o.b
			case o.kind == "cas": // indeterminate: swaps if it matches
				if match {
					ne, nv = true, o.b
				}
			}
			if ok && dfs(mask|1<<i, ne, nv) {
				return true
			}
		}
		return false
	}
	return dfs(0, false, 0)
}

func genRegisterProp(r *rand.Rand) ([]pReg, []history.Op) {
	n := 2 + r.IntN(6)
	var u uniq
	ops := make([]pReg, n)
	for i := range ops {
		s, e := randInterval(r, 0, 40)
		ops[i].start, ops[i].end = u.t(s), u.t(e)
		switch x := r.IntN(10); {
		case x < 4:
			ops[i].kind = "read"
		case x < 7:
			ops[i].kind, ops[i].a = "write", int64(r.IntN(3))
		default:
			ops[i].kind, ops[i].a, ops[i].b = "cas", int64(r.IntN(3)), int64(r.IntN(3))
		}
	}
	// A correct register, at the linearization points.
	order := linearOrder(r, n, func(i int) (int64, int64) { return ops[i].start, ops[i].end })
	exists, v := false, int64(0)
	for _, i := range order {
		o := &ops[i]
		o.outcome = history.OK
		applied := true
		if o.kind != "read" && r.IntN(7) == 0 {
			o.outcome = history.Info
			applied = r.IntN(2) == 0
		}
		switch o.kind {
		case "read":
			o.exists, o.v = exists, v
		case "write":
			if applied {
				exists, v = true, o.a
			}
		case "cas":
			match := exists && v == o.a
			if applied && match {
				exists, v = true, o.b
			}
			if o.outcome == history.OK && !match {
				o.outcome, o.mismatch = history.Fail, true
			}
		}
	}
	// Inject: a read returns something else.
	if r.IntN(2) == 0 {
		var reads []int
		for i, o := range ops {
			if o.kind == "read" {
				reads = append(reads, i)
			}
		}
		if len(reads) > 0 {
			i := reads[r.IntN(len(reads))]
			ops[i].exists = r.IntN(4) != 0
			ops[i].v = int64(r.IntN(3))
		}
	}
	var h hist
	for i := range ops {
		o := &ops[i]
		var in, out any
		switch o.kind {
		case "write":
			in = o.a
		case "cas":
			in = []int64{o.a, o.b}
		case "read":
			if o.exists {
				out = o.v
			}
		}
		h.call(i, o.kind, "r", in, o.start, o.outcome, out, o.end)
		if o.mismatch {
			h.withErr("cas-mismatch")
		}
		if o.outcome == history.Info {
			o.end = inf
		}
	}
	return ops, h.done()
}

func TestPropertyRegister(t *testing.T) {
	for seed := range uint64(propertySeeds) {
		r := rand.New(rand.NewPCG(seed, 1))
		ops, h := genRegisterProp(r)
		legal := regOracle(ops)
		want := Valid
		okReads, okWrites := 0, 0
		for _, o := range ops {
			switch {
			case o.kind == "read":
				okReads++
			case o.outcome == history.OK:
				okWrites++
			}
		}
		switch {
		case !legal:
			want = Invalid
		case okReads == 0 || okWrites == 0:
			want = Unknown
		}
		got := check(t, Linearizable(LinearizableOptions{NoVisualization: true}), h)
		if got.Valid != want {
			t.Fatalf("seed %d: checker %v, oracle %v\n%s\nfigures %v", seed, got.Valid, want, dumpOps(h), got.Figures)
		}
	}
}

func dumpOps(ops []history.Op) string {
	s := ""
	for _, o := range ops {
		s += fmt.Sprintf("  %d t=%d p=%v %s %s %s v=%s err=%s\n", o.Index, o.Time/msec, o.Process, o.Type, o.F, o.Key, o.Value, o.ErrorText())
	}
	return s
}

// ---------- counters: direct counting ----------

type pCounterOp struct {
	key        string
	read       bool
	delta      int64
	start, end int64
	outcome    history.Type
	applied    bool
	value      int64
	final      bool
}

func genCounterProp(r *rand.Rand) []pCounterOp {
	var u uniq
	keys := []string{"a", "b"}[:1+r.IntN(2)]
	var ops []pCounterOp
	n := 2 + r.IntN(8)
	for range n {
		s, e := randInterval(r, 0, 40)
		o := pCounterOp{key: keys[r.IntN(len(keys))], start: u.t(s), end: u.t(e)}
		if r.IntN(3) == 0 {
			o.read, o.outcome = true, history.OK
		} else {
			o.delta = 1 + int64(r.IntN(3))
			o.outcome, o.applied = writeOutcome(r)
		}
		ops = append(ops, o)
	}
	// Final reads after everything, most of the time.
	for _, k := range keys {
		if r.IntN(8) == 0 {
			continue
		}
		ops = append(ops, pCounterOp{key: k, read: true, final: true, outcome: history.OK, start: u.t(200), end: u.t(201)})
	}
	// A correct counter at linearization points.
	idx := linearOrder(r, len(ops), func(i int) (int64, int64) { return ops[i].start, ops[i].end })
	val := map[string]int64{}
	for _, i := range idx {
		o := &ops[i]
		if o.read {
			o.value = val[o.key]
		} else if o.applied {
			val[o.key] += o.delta
		}
	}
	if r.IntN(2) == 0 { // inject: a read off by a little
		var reads []int
		for i, o := range ops {
			if o.read {
				reads = append(reads, i)
			}
		}
		if len(reads) > 0 {
			ops[reads[r.IntN(len(reads))]].value += int64(r.IntN(7) - 3)
		}
	}
	return ops
}

func counterHistory(ops []pCounterOp) []history.Op {
	var h hist
	for i, o := range ops {
		if o.final {
			continue
		}
		if o.read {
			h.call(i, "read", o.key, nil, o.start, o.outcome, o.value, o.end)
		} else {
			h.call(i, "add", o.key, o.delta, o.start, o.outcome, nil, o.end)
		}
	}
	h.nemesis(199*64, "final-reads")
	for i, o := range ops {
		if o.final {
			h.call(i, "read", o.key, nil, o.start, o.outcome, o.value, o.end)
		}
	}
	return h.done()
}

// counterOracle counts directly: each read between the acknowledged sum
// before it began and the attempted sum before it ended; no read below one
// that completed before it began; lost = acknowledged minus final, at most
// acknowledged. Unknown without acknowledged adds, reads, or a final read
// of a key with acknowledged adds.
func counterOracle(ops []pCounterOp) (Validity, int64) {
	invalid := false
	acked := map[string]int64{}
	okAdds, reads := 0, 0
	var lost int64
	finals := map[string]*pCounterOp{}
	for i := range ops {
		o := &ops[i]
		if !o.read {
			if o.outcome == history.OK {
				okAdds++
				acked[o.key] += o.delta
			}
			continue
		}
		reads++
		var lo, hi int64
		for _, a := range ops {
			if a.read || a.key != o.key {
				continue
			}
			if a.outcome == history.OK && a.end < o.start {
				lo += a.delta
			}
			if a.outcome != history.Fail && a.start <= o.end {
				hi += a.delta
			}
		}
		if o.value < lo || o.value > hi {
			invalid = true
		}
		for _, p := range ops {
			if p.read && p.key == o.key && p.end < o.start && p.value > o.value {
				invalid = true
			}
		}
		if o.final {
			finals[o.key] = o
			lost += min(acked[o.key], max(0, lo-o.value))
		}
	}
	switch {
	case invalid:
		return Invalid, lost
	case okAdds == 0 || reads == 0:
		return Unknown, lost
	}
	for k, a := range acked {
		if a > 0 && finals[k] == nil {
			return Unknown, lost
		}
	}
	return Valid, lost
}

func TestPropertyCounter(t *testing.T) {
	for seed := range uint64(propertySeeds) {
		r := rand.New(rand.NewPCG(seed, 2))
		ops := genCounterProp(r)
		h := counterHistory(ops)
		want, lost := counterOracle(ops)
		got := check(t, Counter(), h)
		if got.Valid != want || typed[*CounterFigures](t, got).Lost != lost {
			t.Fatalf("seed %d: checker %v lost %v, oracle %v lost %d\n%s\nfigures %v", seed, got.Valid, got.Values()["lost"], want, lost, dumpOps(h), got.Figures)
		}
	}
}

// ---------- sets: direct counting ----------

type pSetOp struct {
	key        string
	read       bool
	elem       int64
	start, end int64
	outcome    history.Type
	applied    bool
	vals       []int64
}

func genSetProp(r *rand.Rand) []pSetOp {
	var u uniq
	keys := []string{"a", "b"}[:1+r.IntN(2)]
	var ops []pSetOp
	n := 2 + r.IntN(8)
	for i := range n {
		s, e := randInterval(r, 0, 40)
		o := pSetOp{key: keys[r.IntN(len(keys))], start: u.t(s), end: u.t(e)}
		if r.IntN(3) == 0 {
			o.read, o.outcome = true, history.OK
		} else {
			o.elem = int64(i + 1)
			o.outcome, o.applied = writeOutcome(r)
		}
		ops = append(ops, o)
	}
	for _, k := range keys {
		if r.IntN(8) != 0 {
			ops = append(ops, pSetOp{key: k, read: true, outcome: history.OK, start: u.t(200), end: u.t(201)})
		}
	}
	idx := linearOrder(r, len(ops), func(i int) (int64, int64) { return ops[i].start, ops[i].end })
	content := map[string][]int64{}
	for _, i := range idx {
		o := &ops[i]
		if o.read {
			o.vals = slices.Clone(content[o.key])
			slices.Sort(o.vals)
		} else if o.applied {
			content[o.key] = append(content[o.key], o.elem)
		}
	}
	var reads []int
	for i, o := range ops {
		if o.read {
			reads = append(reads, i)
		}
	}
	if len(reads) > 0 && r.IntN(2) == 0 { // inject
		o := &ops[reads[r.IntN(len(reads))]]
		switch x := r.IntN(3); {
		case x == 0 && len(o.vals) > 0:
			o.vals = slices.Delete(o.vals, 0, 1)
		case x == 1:
			o.vals = append(o.vals, 999)
		case len(o.vals) > 0:
			o.vals = append(o.vals, o.vals[0])
		}
	}
	return ops
}

func setHistory(ops []pSetOp) []history.Op {
	var h hist
	for i, o := range ops {
		if o.read {
			h.call(i, "read", o.key, nil, o.start, o.outcome, o.vals, o.end)
			if o.vals == nil {
				h.ops[len(h.ops)-1].SetValue([]int64{})
			}
		} else {
			h.call(i, "add", o.key, o.elem, o.start, o.outcome, nil, o.end)
		}
	}
	return h.done()
}

// setOracle: an element is known once its add is acknowledged or a read
// that saw it ended; it is lost when its key's latest read began after
// that and lacks it. Read-but-never-added, failed adds read, and members
// listed twice are invalid. Unknown without acknowledged adds, reads, or a
// read after an acknowledged add.
func setOracle(ops []pSetOp) (Validity, int) {
	invalid := false
	lostAcked := 0
	okAdds, reads := 0, 0
	never := false
	latest := map[string]*pSetOp{}
	for i := range ops {
		o := &ops[i]
		if !o.read {
			if o.outcome == history.OK {
				okAdds++
			}
			continue
		}
		reads++
		if l := latest[o.key]; l == nil || o.start > l.start {
			latest[o.key] = o
		}
		seen := map[int64]bool{}
		for _, v := range o.vals {
			if seen[v] {
				invalid = true
			}
			seen[v] = true
			added := false
			for _, a := range ops {
				if !a.read && a.key == o.key && a.elem == v && a.outcome != history.Fail {
					added = true
				}
			}
			if !added {
				invalid = true
			}
		}
	}
	for _, a := range ops {
		if a.read || a.outcome == history.Fail {
			continue
		}
		known := int64(inf)
		if a.outcome == history.OK {
			known = a.end
		}
		for _, o := range ops {
			if o.read && o.key == a.key && slices.Contains(o.vals, a.elem) {
				known = min(known, o.end)
			}
		}
		if known == inf {
			continue
		}
		l := latest[a.key]
		switch {
		case l != nil && slices.Contains(l.vals, a.elem):
		case l != nil && l.start > known:
			invalid = true
			if a.outcome == history.OK {
				lostAcked++
			}
		case a.outcome == history.OK:
			never = true
		}
	}
	switch {
	case invalid:
		return Invalid, lostAcked
	case okAdds == 0 || reads == 0 || never:
		return Unknown, lostAcked
	}
	return Valid, lostAcked
}

func TestPropertySet(t *testing.T) {
	for seed := range uint64(propertySeeds) {
		r := rand.New(rand.NewPCG(seed, 3))
		ops := genSetProp(r)
		h := setHistory(ops)
		want, lost := setOracle(ops)
		got := check(t, Set(), h)
		// A read with a duplicate member is garbage and left out, so its
		// elements' losses are not counted: compare lost only then.
		if got.Valid != want || (want != Invalid || got.Values()["anomalies"] == nil) && typed[*SetFigures](t, got).Lost != lost {
			t.Fatalf("seed %d: checker %v lost %v, oracle %v lost %d\n%s\nfigures %v", seed, got.Valid, got.Values()["lost"], want, lost, dumpOps(h), got.Figures)
		}
	}
}

// ---------- bank: direct counting ----------

func TestPropertyBank(t *testing.T) {
	accts := []string{"g:a0", "g:a1", "g:a2"}
	for seed := range uint64(propertySeeds) {
		r := rand.New(rand.NewPCG(seed, 4))
		var h hist
		init := map[string]int64{}
		for _, a := range accts {
			init[a] = 10
		}
		h.call(0, "init", "g", init, 0, history.OK, nil, 1)
		bal := map[string]int64{"g:a0": 10, "g:a1": 10, "g:a2": 10}
		var reads []map[string]int64
		now := int64(2)
		for p := 1; p < 2+r.IntN(8); p++ {
			if r.IntN(3) == 0 {
				m := map[string]int64{}
				for k, v := range bal {
					m[k] = v
				}
				reads = append(reads, m)
				continue
			}
			from, to := accts[r.IntN(3)], accts[r.IntN(3)]
			amt := int64(1 + r.IntN(8))
			typ := history.Fail
			if from != to && bal[from] >= amt {
				bal[from] -= amt
				bal[to] += amt
				typ = history.OK
			}
			h.call(p, "transfer", "g", map[string]any{"from": from, "to": to, "amount": amt}, now, typ, nil, now+1)
			now += 2
		}
		if len(reads) > 0 && r.IntN(2) == 0 { // inject
			m := reads[r.IntN(len(reads))]
			switch r.IntN(4) {
			case 0: // money moves inside the read: same sum, maybe negative
				m["g:a0"] -= 15
				m["g:a1"] += 15
			case 1:
				m["g:a2"]++
			case 2:
				m["g:zz"] = m["g:a2"]
				delete(m, "g:a2")
			default:
				delete(m, "g:a1")
			}
		}
		// Oracle: every read holds exactly the accounts, sums to 30, none
		// negative; unknown without reads.
		want := Unknown
		if len(reads) > 0 {
			want = Valid
		}
		for i, m := range reads {
			var sum int64
			names := []string{}
			for k, v := range m {
				sum += v
				names = append(names, k)
				if v < 0 {
					want = Invalid
				}
			}
			slices.Sort(names)
			if sum != 30 || !slices.Equal(names, accts) {
				want = Invalid
			}
			h.call(100+i, "read-all", "g", nil, now, history.OK, m, now+1)
			now += 2
		}
		if got := check(t, Bank(0), h.done()); got.Valid != want {
			t.Fatalf("seed %d: checker %v, oracle %v; reads %v\nfigures %v", seed, got.Valid, want, reads, got.Figures)
		}
	}
}

// ---------- list-append: exhaustive search over serial orders ----------

type pMop struct {
	app  bool
	k    string
	v    int64
	read []int64 // ok read result (nil = unknown)
}

type pTxn struct {
	mops       []pMop
	start, end int64
	outcome    history.Type
	applied    bool
}

// laOracle: is there an order of the committed transactions plus any subset
// of the indeterminate ones, respecting real time (a transaction that
// committed before another began comes first), in which every read of a
// committed transaction sees exactly the appends before it? That is strict
// serializability of list-append.
func laOracle(txns []pTxn) bool {
	n := len(txns)
	must := 0
	for i, t := range txns {
		if t.outcome == history.OK {
			must |= 1 << i
		}
	}
	seen := map[string]bool{}
	var dfs func(mask int, state map[string][]int64) bool
	dfs = func(mask int, state map[string][]int64) bool {
		if mask&must == must {
			return true
		}
		key := fmt.Sprint(mask, state)
		if seen[key] {
			return false
		}
		seen[key] = true
		for i := 0; i < n; i++ {
			t := txns[i]
			if mask&(1<<i) != 0 || t.outcome == history.Fail {
				continue
			}
			ready := true
			for j := 0; j < n; j++ {
				if j != i && mask&(1<<j) == 0 && txns[j].outcome == history.OK && txns[j].end < t.start {
					ready = false
					break
				}
			}
			if !ready {
				continue
			}
			next := map[string][]int64{}
			for k, v := range state {
				next[k] = v
			}
			ok := true
			for _, m := range t.mops {
				if m.app {
					next[m.k] = append(slices.Clone(next[m.k]), m.v)
				} else if t.outcome == history.OK && m.read != nil && !slices.Equal(m.read, next[m.k]) {
					ok = false
					break
				}
			}
			if ok && dfs(mask|1<<i, next) {
				return true
			}
		}
		return false
	}
	return dfs(0, map[string][]int64{})
}

func genListAppendProp(r *rand.Rand) []pTxn {
	var u uniq
	keys := []string{"x", "y"}[:1+r.IntN(2)]
	n := 2 + r.IntN(5)
	var txns []pTxn
	next := int64(1)
	for range n {
		s, e := randInterval(r, 0, 30)
		t := pTxn{start: u.t(s), end: u.t(e)}
		for range 1 + r.IntN(2) {
			m := pMop{k: keys[r.IntN(len(keys))]}
			if r.IntN(2) == 0 {
				m.app, m.v = true, next
				next++
			}
			t.mops = append(t.mops, m)
		}
		switch x := r.IntN(10); {
		case x < 8:
			t.outcome, t.applied = history.OK, true
		case x < 9:
			t.outcome, t.applied = history.Info, r.IntN(2) == 0
		default:
			t.outcome = history.Fail
		}
		txns = append(txns, t)
	}
	if r.IntN(6) != 0 { // a final read of every key, most of the time
		t := pTxn{start: u.t(200), end: u.t(201), outcome: history.OK, applied: true}
		for _, k := range keys {
			t.mops = append(t.mops, pMop{k: k})
		}
		txns = append(txns, t)
	}
	idx := linearOrder(r, len(txns), func(i int) (int64, int64) { return txns[i].start, txns[i].end })
	state := map[string][]int64{}
	for _, i := range idx {
		t := &txns[i]
		if !t.applied {
			continue
		}
		for j := range t.mops {
			m := &t.mops[j]
			if m.app {
				state[m.k] = append(slices.Clone(state[m.k]), m.v)
			} else {
				m.read = append([]int64{}, state[m.k]...)
			}
		}
	}
	var reads [][2]int
	for i, t := range txns {
		for j, m := range t.mops {
			if !m.app && t.outcome == history.OK {
				reads = append(reads, [2]int{i, j})
			}
		}
	}
	if len(reads) > 0 && r.IntN(2) == 0 { // inject
		p := reads[r.IntN(len(reads))]
		m := &txns[p[0]].mops[p[1]]
		switch x := r.IntN(4); {
		case x == 0 && len(m.read) > 0:
			m.read = slices.Delete(m.read, len(m.read)-1, len(m.read)) // lost tail
		case x == 1 && len(m.read) > 1:
			m.read[0], m.read[1] = m.read[1], m.read[0]
		case x == 2:
			m.read = append(m.read, 999)
		case len(m.read) > 0:
			m.read = slices.Delete(m.read, 0, 1)
		}
	}
	return txns
}

func listAppendHistory(txns []pTxn) []history.Op {
	var h hist
	for i, t := range txns {
		var in, out [][]any
		for _, m := range t.mops {
			if m.app {
				in = append(in, []any{"append", m.k, m.v})
				out = append(out, []any{"append", m.k, m.v})
			} else {
				in = append(in, []any{"r", m.k, nil})
				out = append(out, []any{"r", m.k, m.read})
			}
		}
		var o any
		if t.outcome == history.OK {
			o = out
		}
		h.call(i, "txn", "{g}", in, t.start, t.outcome, o, t.end)
	}
	return h.done()
}

func TestPropertyListAppend(t *testing.T) {
	for seed := range uint64(propertySeeds) {
		r := rand.New(rand.NewPCG(seed, 5))
		txns := genListAppendProp(r)
		h := listAppendHistory(txns)
		legal := laOracle(txns)
		got := check(t, ListAppend(), h)
		// No false VALID: an order-less history is never valid. No false
		// positive: an invalid verdict has no serial order behind it.
		// With an order and evidence, valid.
		bad := !legal && got.Valid == Valid || legal && got.Valid == Invalid
		if legal && got.Valid == Unknown {
			// Only for want of evidence: no commit, no read, or an
			// acknowledged append no read began after.
			bad = got.Values()["never_read_keys"] == nil && typed[*ListAppendFigures](t, got).TxnsOK != 0 && !noCommittedRead(txns)
		}
		if bad {
			t.Fatalf("seed %d: checker %v, oracle legal=%v\n%s\nfigures %v", seed, got.Valid, legal, dumpOps(h), got.Figures)
		}
	}
}

func noCommittedRead(txns []pTxn) bool {
	for _, t := range txns {
		for _, m := range t.mops {
			if !m.app && t.outcome == history.OK {
				return false
			}
		}
	}
	return true
}
