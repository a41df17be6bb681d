package harness

import (
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/workloads"
)

// liveSeq feeds lw a client op: its invocation, then its completion.
func liveSeq(lw *liveWatch, p int, f, key string, in any, typ history.Type, out any, replica bool) {
	inv := history.Op{Process: history.Process(p), Type: history.Invoke, F: f, Key: key}
	inv.SetValue(in)
	lw.observe(&inv)
	comp := history.Op{Process: history.Process(p), Type: typ, F: f, Key: key}
	comp.SetValue(out)
	comp.SetReplica(replica)
	lw.observe(&comp)
}

func newCounterWatch(t *testing.T) (*liveWatch, string) {
	t.Helper()
	c, err := workloads.New("counter", workloads.Config{Prefix: "t:"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := workloads.New("set", workloads.Config{Prefix: "t:"})
	if err != nil {
		t.Fatal(err)
	}
	return newLiveWatch([]workloads.Workload{c, s}), c.KeyPrefix() + "0"
}

func TestLiveWatchCountsFaultsAndJudgesCounterBounds(t *testing.T) {
	lw, k := newCounterWatch(t)
	for _, f := range []string{history.StartOf("partition"), history.StopOf("partition"), history.StartOf("kill")} {
		lw.observe(&history.Op{Process: history.Nemesis, Type: history.Invoke, F: f})
		lw.observe(&history.Op{Process: history.Nemesis, Type: history.Info, F: f})
	}
	if lw.Faults() != 2 {
		t.Fatalf("faults %d, want 2 starts", lw.Faults())
	}
	liveSeq(lw, 1, "add", k, 3, history.OK, nil, false)
	liveSeq(lw, 1, "add", k, 2, history.Fail, nil, false) // did not apply
	liveSeq(lw, 2, "read", k, nil, history.OK, 3, false)
	if v := lw.Verdicts(); !strings.Contains(v, "counter: none so far") || !strings.Contains(v, "set: at the end") {
		t.Fatalf("verdicts %q after honest reads", v)
	}
	// A replica may lag: 0 below 3 is allowed there, never on a primary.
	liveSeq(lw, 2, "read", k, nil, history.OK, 0, true)
	if v := lw.Verdicts(); !strings.Contains(v, "none so far") {
		t.Fatalf("a stale replica read is documented, not an anomaly: %q", v)
	}
	for _, tc := range []struct {
		name string
		out  any
	}{
		{"below what was acknowledged", 1},
		{"above every increment sent (the failed add of 2 did not apply)", 5},
		{"garbage", "x"},
	} {
		before := lw.counters[0].anomalies
		liveSeq(lw, 2, "read", k, nil, history.OK, tc.out, false)
		if lw.counters[0].anomalies != before+1 {
			t.Fatalf("%s: read %v not flagged (verdicts %q)", tc.name, tc.out, lw.Verdicts())
		}
	}
	if v := lw.Verdicts(); !strings.Contains(v, "counter: 3 reads out of bounds so far") {
		t.Fatalf("verdicts %q", v)
	}
	if a := lw.FirstAnomalies(); len(a) != 1 || !strings.Contains(a[0], "below the 3 acknowledged") {
		t.Fatalf("first anomaly %q", a)
	}
}

// A key given a delta the bounds do not cover (negative, garbage) is left
// to the checker at the end: no live anomaly is invented from it.
func TestLiveWatchLeavesAnUnjudgeableKeyToTheEnd(t *testing.T) {
	lw, k := newCounterWatch(t)
	liveSeq(lw, 1, "add", k, -4, history.OK, nil, false)
	liveSeq(lw, 2, "read", k, nil, history.OK, -4, false)
	if v := lw.Verdicts(); !strings.Contains(v, "none so far") {
		t.Fatalf("verdicts %q: a key with a negative delta is not judged live", v)
	}
	// A completion with no invocation (a torn or foreign entry) is ignored.
	lw.observe(&history.Op{Process: 9, Type: history.OK, F: "read", Key: k})
}

func TestPlainProgressInterval(t *testing.T) {
	for _, tc := range []struct{ limit, want string }{{"30s", "5s"}, {"10m", "5s"}, {"1h", "30s"}, {"8h", "1m0s"}} {
		d, _ := time.ParseDuration(tc.limit)
		if got := plainEvery(d).String(); got != tc.want {
			t.Fatalf("plainEvery(%s) = %s, want %s", tc.limit, got, tc.want)
		}
	}
}
