package checker

import (
	"math/rand/v2"
	"testing"

	"github.com/anishathalye/porcupine"

	"github.com/redline-dev/redline/harness/history"
)

// randomRegister builds a small random history, linearizable or not: a few
// processes, values 0..2, reads with arbitrary results, writes and cas that
// may be indeterminate.
func randomRegister(r *rand.Rand) []history.Op {
	var h hist
	procs := 2 + r.IntN(3)
	now := make([]int64, procs)
	id := make([]int, procs)
	next := procs
	for i := range id {
		id[i] = i
	}
	n := 4 + r.IntN(9)
	last := -1 // last value written in generation order: reads favour it
	for range n {
		p := r.IntN(procs)
		t0 := now[p] + int64(r.IntN(3))
		t1 := t0 + 1 + int64(r.IntN(6))
		now[p] = t1 + 1
		v := r.IntN(3)
		switch r.IntN(4) {
		case 0, 1:
			var out any = r.IntN(3)
			switch {
			case r.IntN(3) > 0 && last >= 0:
				out = last
			case r.IntN(6) == 0:
				out = nil
			}
			h.call(id[p], "read", "k", nil, t0, history.OK, out, t1)
		case 2:
			typ := history.OK
			if r.IntN(3) == 0 {
				typ = history.Info
			}
			h.call(id[p], "write", "k", v, t0, typ, nil, t1)
			last = v
			if typ == history.Info {
				id[p], next = next, next+1
			}
		case 3:
			switch r.IntN(3) {
			case 0:
				nv := r.IntN(3)
				h.call(id[p], "cas", "k", []int{v, nv}, t0, history.OK, nil, t1)
				last = nv
			case 1:
				h.call(id[p], "cas", "k", []int{v, r.IntN(3)}, t0, history.Fail, nil, t1)
				h.withErr("cas-mismatch")
			default:
				h.call(id[p], "cas", "k", []int{v, r.IntN(3)}, t0, history.Info, nil, t1)
				id[p], next = next, next+1
			}
		}
	}
	return h.done()
}

// TestPooledModelMatchesPlain checks the pooled model against porcupine's
// plain treatment (indeterminate writes at infinity) on random histories.
func TestPooledModelMatchesPlain(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 7))
	var ok, illegal int
	for i := range 6000 {
		ops := randomRegister(r)
		calls, err := Options{}.calls(ops)
		if err != nil {
			t.Fatal(err)
		}
		byKey, _ := registerOps(calls)
		rops := byKey["k"]
		plain := porcupine.CheckOperations(registerModel, buildOps(rops, false))
		pooled := porcupine.CheckOperations(pooledRegisterModel, buildOps(rops, true))
		if plain != pooled {
			for _, op := range ops {
				t.Logf("%d %s %s %s %s %s", op.Time/msec, op.Process, op.Type, op.F, op.Value, op.Error)
			}
			t.Fatalf("history %d: plain model says %v, pooled says %v", i, plain, pooled)
		}
		if plain {
			ok++
		} else {
			illegal++
		}
	}
	t.Logf("%d linearizable, %d not", ok, illegal)
	if ok < 500 || illegal < 500 {
		t.Fatalf("random histories too one-sided: %d linearizable, %d not", ok, illegal)
	}
}
