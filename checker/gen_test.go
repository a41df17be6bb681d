package checker

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/redline-dev/redline/history"
)

// Generators of large synthetic histories for tests and benchmarks. Each
// simulates clients against a correct store: every op takes effect at a
// point inside its [call, return] interval, so the history is valid unless
// a test injects an anomaly afterwards.

type simOp struct {
	proc       int
	f, key     string
	in, out    []byte // raw JSON
	call, lin  int64
	ret        int64
	typ        history.Type
	err        string
	wait       *history.Wait
	applied    bool // the effect took place (for info ops, maybe not)
	completion bool // false: never completed
}

func rawInt(n int64) []byte { return strconv.AppendInt(nil, n, 10) }

// emit turns simulated ops into a time-ordered history.
func emit(sim []simOp) []history.Op {
	ops := make([]history.Op, 0, 2*len(sim))
	for _, s := range sim {
		ops = append(ops, history.Op{Time: s.call, Process: history.Process(s.proc), Type: history.Invoke, F: s.f, Key: s.key, Value: s.in})
		if s.completion {
			ops = append(ops, history.Op{Time: s.ret, Process: history.Process(s.proc), Type: s.typ, F: s.f, Key: s.key, Value: s.out, Ext: history.NewExt(history.Ext{Error: s.err, Wait: s.wait})})
		}
	}
	slices.SortStableFunc(ops, func(a, b history.Op) int { return cmpInt(a.Time, b.Time) })
	for i := range ops {
		ops[i].Index = int64(i)
	}
	return ops
}

// timeline gives each of `clients` sequential clients per key call, lin and
// return times; info ops retire the process (fresh id from *nextProc).
type timeline struct {
	r        *rand.Rand
	clients  int
	now      []int64
	proc     []int
	nextProc *int
}

func newTimeline(r *rand.Rand, clients int, nextProc *int) *timeline {
	t := &timeline{r: r, clients: clients, now: make([]int64, clients), proc: make([]int, clients), nextProc: nextProc}
	for i := range t.proc {
		t.proc[i] = *nextProc
		*nextProc++
		t.now[i] = int64(r.IntN(1000)) * 1000
	}
	return t
}

// next picks the client that is free earliest and schedules an op on it.
func (t *timeline) next() (client int, call, lin, ret int64) {
	c := 0
	for i := range t.now {
		if t.now[i] < t.now[c] {
			c = i
		}
	}
	call = t.now[c] + int64(t.r.IntN(200_000))
	lin = call + int64(t.r.IntN(300_000)) + 1
	ret = lin + int64(t.r.IntN(300_000)) + 1
	t.now[c] = ret
	return c, call, lin, ret
}

func (t *timeline) retire(c int) {
	t.proc[c] = *t.nextProc
	*t.nextProc++
}

// genRegister: nkeys keys, opsPerKey ops each, read/write/cas over values
// 0..9, a fraction infoFrac of writes and cas indeterminate (half of which
// took effect).
func genRegister(seed uint64, nkeys, opsPerKey, clients int, infoFrac float64) []history.Op {
	r := rand.New(rand.NewPCG(seed, 1))
	var sim []simOp
	nextProc := 0
	for k := range nkeys {
		key := fmt.Sprintf("r%d", k)
		tl := newTimeline(r, clients, &nextProc)
		start := len(sim)
		for range opsPerKey {
			c, call, lin, ret := tl.next()
			s := simOp{proc: tl.proc[c], key: key, call: call, lin: lin, ret: ret, typ: history.OK, completion: true}
			switch x := r.IntN(10); {
			case x < 5:
				s.f = "read"
			case x < 8:
				s.f = "write"
				s.in = rawInt(int64(r.IntN(10)))
			default:
				s.f = "cas"
				s.in = []byte(fmt.Sprintf("[%d,%d]", r.IntN(10), r.IntN(10)))
			}
			if s.f != "read" && r.Float64() < infoFrac {
				s.typ = history.Info
				s.err = "i/o timeout"
				s.applied = r.IntN(2) == 0
				tl.retire(c)
			} else {
				s.applied = true
			}
			sim = append(sim, s)
		}
		// Apply in linearization order.
		ops := sim[start:]
		order := make([]int, len(ops))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return cmpInt(ops[a].lin, ops[b].lin) })
		var cur int64
		exists := false
		for _, i := range order {
			s := &ops[i]
			switch s.f {
			case "read":
				if exists {
					s.out = rawInt(cur)
				} else {
					s.out = []byte("null")
				}
			case "write":
				if s.applied {
					cur, _ = strconv.ParseInt(string(s.in), 10, 64)
					exists = true
				}
			case "cas":
				var o, n int64
				fmt.Sscanf(string(s.in), "[%d,%d]", &o, &n)
				match := exists && cur == o
				if s.typ == history.Info {
					if s.applied && match {
						cur = n
					}
					continue
				}
				if match {
					cur = n
				} else {
					s.typ = history.Fail
					s.err = "cas-mismatch"
				}
			}
		}
	}
	return emit(sim)
}
