package checker

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/redline-dev/redline/history"
)

// TestSegmentedMatchesWhole compares the segmented check (tiny segments)
// with porcupine on the whole key, on generated histories with and without
// indeterminate ops, intact or with one read changed at random.
func TestSegmentedMatchesWhole(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	var cut, ok, illegal int
	for i := range 400 {
		info := 0.0
		if i%3 == 0 {
			info = 0.1
		}
		ops := genRegister(uint64(i), 1, 60+r.IntN(200), 2+r.IntN(2), info)
		if i%2 == 1 {
			var reads []int
			for j := range ops {
				if ops[j].F == "read" && ops[j].Type == history.OK {
					reads = append(reads, j)
				}
			}
			if len(reads) > 0 {
				ops[reads[r.IntN(len(reads))]].SetValue(r.IntN(10))
			}
		}
		calls, _ := Scope{}.calls(NewHistory(ops))
		byKey, _, _ := registerOps(calls)
		rops := byKey["r0"]
		if segs, _ := segments(rops, 10); len(segs) > 0 {
			cut++
		}
		pops, model := porcupineOps(rops)
		whole := porcupine.CheckOperationsTimeout(model, pops, time.Minute)
		seg := checkSegmented(rops, time.Minute, 10)
		if whole != seg {
			t.Fatalf("history %d: whole key %v, segmented %v", i, whole, seg)
		}
		if whole == porcupine.Ok {
			ok++
		} else {
			illegal++
		}
	}
	t.Logf("%d histories segmented; %d linearizable, %d not", cut, ok, illegal)
	if cut < 200 || ok < 100 || illegal < 50 {
		t.Fatalf("too few cases exercised: %d segmented, %d ok, %d illegal", cut, ok, illegal)
	}
}

func TestSegments(t *testing.T) {
	var h hist
	// Two quiescent points (after 10 and after 30), then an info write.
	h.call(0, "write", "k", 1, 0, history.OK, nil, 5)
	h.call(1, "read", "k", nil, 2, history.OK, 1, 10)
	h.call(0, "write", "k", 2, 20, history.OK, nil, 30)
	h.call(1, "write", "k", 3, 40, history.OK, nil, 50)
	h.call(0, "write", "k", 4, 60, history.Info, nil, 70)
	h.call(1, "read", "k", nil, 80, history.OK, 4, 90)
	calls, _ := Scope{}.calls(NewHistory(h.done()))
	byKey, _, _ := registerOps(calls)
	segs, tail := segments(byKey["k"], 1)
	if len(segs) != 3 || len(segs[0]) != 2 || len(segs[1]) != 1 || len(segs[2]) != 1 || len(tail) != 2 {
		t.Fatalf("segments %d (%v), tail %d", len(segs), segs, len(tail))
	}
	if got := checkSegmented(byKey["k"], time.Minute, 1); got != porcupine.Ok {
		t.Fatalf("verdict %v", got)
	}
}
