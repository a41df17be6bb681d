package checker

import (
	"testing"

	"github.com/redline-dev/redline/history"
)

func TestSetClean(t *testing.T) {
	var h hist
	h.call(0, "add", "s", 1, 0, history.OK, nil, 10)
	h.call(1, "read", "s", nil, 5, history.OK, []int{}, 8)
	h.call(0, "add", "s", 2, 20, history.OK, nil, 30)
	h.call(2, "add", "s", 3, 20, history.Info, nil, 30) // lands
	h.call(3, "add", "s", 4, 20, history.Info, nil, 30) // does not
	h.call(4, "add", "s", 5, 20, history.Fail, nil, 30)
	h.call(1, "read", "s", nil, 40, history.OK, []int{1, 2}, 50)
	h.nemesis(60, "final-reads")
	h.call(1, "read", "s", nil, 70, history.OK, []int{1, 2, 3}, 80)
	r := check(t, Set(), h.done())
	wantValid(t, r, Valid)
	if fig[int](t, r, "lost") != 0 || fig[int](t, r, "recovered") != 1 || fig[int](t, r, "unexpected") != 0 || fig[int](t, r, "stale_reads") != 0 {
		t.Fatalf("figures %v", r.Figures)
	}
	lat := fig[Quantiles](t, r, "visibility_latency_ms")
	if lat.Count != 3 || val(lat.Max) != 50.0 { // 1: 40-0, 2: 40-20, 3: 70-20
		t.Fatalf("latency %v", lat)
	}
}

func TestSetLostWithWaitSplit(t *testing.T) {
	var h hist
	h.call(0, "add", "s", 1, 0, history.OK, nil, 10)
	h.withWait(1, 1)
	h.call(0, "add", "s", 2, 11, history.OK, nil, 20)
	h.withWait(1, 0)
	h.call(0, "add", "s", 3, 21, history.OK, nil, 30)
	h.call(0, "add", "s", 4, 31, history.OK, nil, 40)
	h.withWait(1, 1)
	h.call(0, "add", "s", 5, 41, history.OK, nil, 50)
	h.withWait(1, -1) // WAIT got no reply
	h.call(1, "read", "s", nil, 60, history.OK, []int{1, 2, 3, 4, 5}, 70)
	h.nemesis(80, "final-reads")
	h.call(1, "read", "s", nil, 90, history.OK, []int{4}, 95)
	r := check(t, Set(), h.done())
	wantValid(t, r, Invalid)
	if fig[int](t, r, "lost") != 4 || fig[int64](t, r, "wait_satisfied") != 1 || fig[int64](t, r, "wait_unsatisfied") != 2 || fig[int64](t, r, "no_wait") != 1 {
		t.Fatalf("figures %v", r.Figures)
	}
	lost := fig[[]map[string]any](t, r, "lost_elements")
	if len(lost) != 4 || lost[0]["element"] != int64(1) || lost[0]["ack_s"] != 0.01 || lost[0]["wait"] != "wait_satisfied" {
		t.Fatalf("lost_elements %v", lost)
	}
}

func TestSetUnexpectedStaleAndUnackedLoss(t *testing.T) {
	var h hist
	h.call(0, "add", "s", 1, 0, history.OK, nil, 10)
	h.call(1, "read", "s", nil, 20, history.OK, []int{}, 25) // stale: 1 was acked
	h.call(1, "read", "s", nil, 30, history.OK, []int{1}, 35)
	h.call(2, "add", "s", 2, 40, history.Info, nil, 45)
	h.call(3, "add", "s", 3, 40, history.Fail, nil, 45)
	h.call(1, "read", "s", nil, 50, history.OK, []int{1, 2, 3, 99}, 55)
	h.nemesis(60, "final-reads")
	h.call(1, "read", "s", nil, 70, history.OK, []int{1}, 75) // 2 seen, then gone
	r := check(t, Set(), h.done())
	wantValid(t, r, Invalid)
	if fig[int](t, r, "stale_reads") != 1 || fig[int](t, r, "unexpected") != 2 || fig[int](t, r, "lost_unacked") != 1 || fig[int](t, r, "lost") != 0 {
		t.Fatalf("figures %v", r.Figures)
	}
}

func TestSetNeverReadIsUnknown(t *testing.T) {
	var h hist
	h.call(1, "read", "s", nil, 0, history.OK, []int{}, 5)
	h.call(0, "add", "s", 1, 10, history.OK, nil, 20)
	r := check(t, Set(), h.done())
	wantValid(t, r, Unknown)
	if fig[int](t, r, "never_read") != 1 {
		t.Fatalf("figures %v", r.Figures)
	}
}
