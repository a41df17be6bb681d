package checker

import (
	"fmt"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"
)

// The pooled register model: a faster, equivalent way to check keys with
// indeterminate writes.
//
// Porcupine handles an indeterminate write by letting it return at
// infinity; with dozens of them on one key the search has to consider which
// subset took effect where, and explodes. Here an indeterminate write of v
// becomes instead a zero-length "enable" op at its invocation time that puts
// v into a pool of pending writes; any later op may first apply one pending
// write (taking it out of the pool). A pending write is applied lazily, just
// before the first op that needs it: a read or successful cas of v when the
// register holds something else, a cas mismatch on the current value, or an
// indeterminate cas whose old value it supplies. That is as general as
// "took effect at some point after its call, or never": between the true
// point and the lazy one no op observes the register (an op that did would
// be the lazy point), and a pending write left in the pool is one that never
// took effect (or did, last). The state is the set of configurations
// (value, pool) reachable so far, with dominated ones (same value, a smaller
// pool) dropped. A differential test checks it against the plain model.
//
// Indeterminate cas ops stay at infinity in the exact form above. In the
// quick form (casPooled) they are pending items too, but a lazy application
// only tries short chains: one pending write, one pending cas from the
// current value, or a pending write then a pending cas. Longer chains can be
// needed, so the quick form's "ok" is sound and its "illegal" is not: an
// illegal verdict is always re-checked with the exact form.

const (
	regEnable    = regCASMismatch + 1 + iota // an indeterminate write's value becomes pending
	regEnableCAS                             // an indeterminate cas becomes pending (quick form)
)

// casItem is a pending cas from a to b.
type casItem struct{ a, b int64 }

// cmpCAS orders pending cas by new value first, so that those producing a
// given value are found by binary search.
func cmpCAS(x, y casItem) int {
	if x.b != y.b {
		return cmpInt(x.b, y.b)
	}
	return cmpInt(x.a, y.a)
}

func casHash(c casItem) uint64 { return itemHash(c.a)*31 + itemHash(c.b)*0x100000001B3 + 5 }

func casWith(pool []casItem, c casItem) []casItem {
	i, _ := slices.BinarySearchFunc(pool, c, cmpCAS)
	out := make([]casItem, 0, len(pool)+1)
	out = append(out, pool[:i]...)
	out = append(out, c)
	return append(out, pool[i:]...)
}

func casWithout(pool []casItem, c casItem) []casItem {
	i, _ := slices.BinarySearchFunc(pool, c, cmpCAS)
	out := make([]casItem, 0, len(pool)-1)
	out = append(out, pool[:i]...)
	return append(out, pool[i+1:]...)
}

func subCAS(a, b []casItem) bool {
	j := 0
	for _, x := range a {
		for j < len(b) && cmpCAS(b[j], x) < 0 {
			j++
		}
		if j == len(b) || b[j] != x {
			return false
		}
		j++
	}
	return true
}

type poolCfg struct {
	exists bool
	cur    int64
	pool   []int64   // sorted multiset of pending writes
	cas    []casItem // sorted multiset of pending cas (quick form only)
	ph     uint64    // hash of both pools, kept up to date: a sum of item hashes
}

func itemHash(v int64) uint64 {
	x := uint64(v) * 0x9E3779B97F4A7C15
	x ^= x >> 29
	return x*0xBF58476D1CE4E5B9 + 1
}

type poolState []poolCfg

func cmpCfg(a, b poolCfg) int {
	switch {
	case a.exists != b.exists:
		if !a.exists {
			return -1
		}
		return 1
	case a.cur != b.cur:
		return cmpInt(a.cur, b.cur)
	case len(a.pool) != len(b.pool):
		return len(a.pool) - len(b.pool)
	}
	return slices.Compare(a.pool, b.pool)
}

func poolHas(pool []int64, v int64) bool {
	_, ok := slices.BinarySearch(pool, v)
	return ok
}

func poolWithout(pool []int64, v int64) []int64 {
	i, _ := slices.BinarySearch(pool, v)
	out := make([]int64, 0, len(pool)-1)
	out = append(out, pool[:i]...)
	return append(out, pool[i+1:]...)
}

func poolWith(pool []int64, v int64) []int64 {
	i, _ := slices.BinarySearch(pool, v)
	out := make([]int64, 0, len(pool)+1)
	out = append(out, pool[:i]...)
	out = append(out, v)
	return append(out, pool[i:]...)
}

// subMultiset reports whether a ⊆ b (both sorted).
func subMultiset(a, b []int64) bool {
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j == len(b) || b[j] != x {
			return false
		}
		j++
	}
	return true
}

// stepCfg appends to out the configurations c can reach by the op.
func stepCfg(out []poolCfg, c poolCfg, in regInput, o regOutput) []poolCfg {
	holds := func(v int64) bool { return c.exists && c.cur == v }
	// produce appends the configurations where pending items, applied just
	// now, make the register hold x (it does not already).
	produce := func(x int64, then int64) {
		if poolHas(c.pool, x) {
			out = append(out, poolCfg{true, then, poolWithout(c.pool, x), c.cas, c.ph - itemHash(x)})
		}
		first, _ := slices.BinarySearchFunc(c.cas, casItem{a: -1 << 63, b: x}, cmpCAS)
		for i := first; i < len(c.cas) && c.cas[i].b == x; i++ {
			ci := c.cas[i]
			if i > first && c.cas[i-1] == ci {
				continue
			}
			rest := casWithout(c.cas, ci)
			switch {
			case holds(ci.a):
				out = append(out, poolCfg{true, then, c.pool, rest, c.ph - casHash(ci)})
			case poolHas(c.pool, ci.a):
				out = append(out, poolCfg{true, then, poolWithout(c.pool, ci.a), rest, c.ph - casHash(ci) - itemHash(ci.a)})
			}
		}
	}
	switch in.kind {
	case regEnable:
		return append(out, poolCfg{c.exists, c.cur, poolWith(c.pool, in.a), c.cas, c.ph + itemHash(in.a)})
	case regEnableCAS:
		ci := casItem{in.a, in.b}
		return append(out, poolCfg{c.exists, c.cur, c.pool, casWith(c.cas, ci), c.ph + casHash(ci)})
	case regRead:
		switch {
		case !o.exists:
			if !c.exists {
				out = append(out, c)
			}
		case holds(o.v):
			out = append(out, c)
		default:
			produce(o.v, o.v)
		}
	case regWrite:
		out = append(out, poolCfg{true, in.a, c.pool, c.cas, c.ph})
	case regCAS:
		if o.known { // swapped
			if holds(in.a) {
				return append(out, poolCfg{true, in.b, c.pool, c.cas, c.ph})
			}
			produce(in.a, in.b)
			return out
		}
		// Indeterminate (exact form only): no effect (it never ran, or ran
		// last), or it swapped, possibly after a pending write supplied its
		// old value.
		out = append(out, c)
		switch {
		case holds(in.a):
			out = append(out, poolCfg{true, in.b, c.pool, c.cas, c.ph})
		case poolHas(c.pool, in.a):
			out = append(out, poolCfg{true, in.b, poolWithout(c.pool, in.a), c.cas, c.ph - itemHash(in.a)})
		}
	case regCASMismatch:
		if !holds(in.a) {
			return append(out, c)
		}
		// The register holds old: only a pending item applied just before,
		// moving it to another value, explains the mismatch.
		for i, v := range c.pool {
			if v == in.a || (i > 0 && c.pool[i-1] == v) {
				continue
			}
			out = append(out, poolCfg{true, v, poolWithout(c.pool, v), c.cas, c.ph - itemHash(v)})
		}
		for i, ci := range c.cas {
			if ci.a != in.a || ci.b == in.a || (i > 0 && c.cas[i-1] == ci) {
				continue
			}
			out = append(out, poolCfg{true, ci.b, c.pool, casWithout(c.cas, ci), c.ph - casHash(ci)})
		}
	}
	return out
}

// prune sorts configurations and drops duplicates and dominated ones.
func prune(cfgs []poolCfg) poolState {
	if len(cfgs) == 1 {
		return poolState(cfgs)
	}
	slices.SortFunc(cfgs, cmpCfg)
	out := cfgs[:0]
	for i, c := range cfgs {
		dominated := false
		for j := range cfgs {
			if j == i || cfgs[j].exists != c.exists || cfgs[j].cur != c.cur ||
				len(c.pool) > len(cfgs[j].pool) || len(c.cas) > len(cfgs[j].cas) {
				continue
			}
			smaller := len(c.pool) < len(cfgs[j].pool) || len(c.cas) < len(cfgs[j].cas)
			if subMultiset(c.pool, cfgs[j].pool) && subCAS(c.cas, cfgs[j].cas) && (smaller || j < i) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, c)
		}
	}
	return poolState(out)
}

var pooledRegisterModel = porcupine.Model{
	Init: func() any { return poolState{{}} },
	Step: func(st, in, out any) (bool, any) {
		s := st.(poolState)
		i := in.(regInput)
		o := out.(regOutput)
		var next []poolCfg
		for _, c := range s {
			next = stepCfg(next, c, i, o)
		}
		if len(next) == 0 {
			return false, s
		}
		return true, prune(next)
	},
	Equal: func(a, b any) bool {
		x, y := a.(poolState), b.(poolState)
		return slices.EqualFunc(x, y, func(p, q poolCfg) bool {
			return p.ph == q.ph && p.exists == q.exists && p.cur == q.cur && slices.Equal(p.pool, q.pool) && slices.Equal(p.cas, q.cas)
		})
	},
	Hash: func(st any) uint64 {
		h := uint64(14695981039346656037)
		for _, c := range st.(poolState) {
			x := uint64(c.cur)*0x9E3779B97F4A7C15 + c.ph
			if c.exists {
				x ^= 1
			}
			h = (h ^ x) * 1099511628211
		}
		return h
	},
	DescribeOperation: func(in, out any) string {
		i := in.(regInput)
		switch i.kind {
		case regEnable:
			return fmt.Sprintf("write(%d) -> ? (pending)", i.a)
		case regEnableCAS:
			return fmt.Sprintf("cas(%d, %d) -> ? (pending)", i.a, i.b)
		}
		return registerModel.DescribeOperation(in, out)
	},
	DescribeState: func(st any) string {
		var parts []string
		for _, c := range st.(poolState) {
			v := "nil"
			if c.exists {
				v = fmt.Sprint(c.cur)
			}
			if len(c.pool) > 0 {
				v += fmt.Sprintf(" pending writes %v", c.pool)
			}
			if len(c.cas) > 0 {
				v += fmt.Sprintf(" pending cas %v", c.cas)
			}
			parts = append(parts, v)
		}
		return strings.Join(parts, " | ")
	},
	DescribeOperationMetadata: describeMeta,
}
