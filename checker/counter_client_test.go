package checker

import (
	"strings"
	"testing"

	"github.com/redline-dev/redline/history"
)

// A client library that resent an add after losing its reply applied it
// twice: the final value exceeds every attempted increment (unexpected),
// and the verdict names the resent op as the likely cause.
func TestCounterNamesResentAdds(t *testing.T) {
	var h hist
	h.call(0, "add", "c", 3, 0, history.OK, nil, 10).SetAttempts(2, 1)
	h.call(1, "add", "c", 1, 20, history.OK, nil, 30)
	h.nemesis(40, "final-reads")
	h.call(1, "read", "c", nil, 50, history.OK, 7, 55) // 3 twice + 1
	r := check(t, Counter(), h.done())
	wantValid(t, r, Invalid)
	if fig[int64](t, r, "unexpected") != 3 || fig[int](t, r, "resent_adds") != 1 {
		t.Fatalf("figures %v", r.Figures)
	}
	if why, _ := r.Values()["why"].(string); !strings.Contains(why, "sent 1 increments again") || !strings.Contains(why, "ops #0)") {
		t.Fatalf("why %q does not name the resent add", why)
	}
}

// Replica reads below the bounds are stale reads: counted, not lost
// increments, not invalid; a primary read below them still is invalid.
func TestCounterReplicaReadsAreStale(t *testing.T) {
	var h hist
	h.call(0, "add", "c", 2, 0, history.OK, nil, 10)
	h.call(0, "add", "c", 2, 20, history.OK, nil, 30)
	h.call(1, "read", "c", nil, 40, history.OK, 2, 45).SetReplica(true) // missed one ack
	h.call(1, "read", "c", nil, 50, history.OK, 4, 55).SetReplica(true)
	h.call(1, "read", "c", nil, 60, history.OK, 4, 65)
	h.call(0, "add", "c", 1, 500, history.Fail, nil, 510) // a write was wanted until 500 ms
	h.nemesis(600, "final-reads")
	h.call(1, "read", "c", nil, 700, history.OK, 4, 705)
	r := check(t, Counter(), h.done())
	wantValid(t, r, Valid)
	if fig[int](t, r, "replica_reads") != 2 || fig[int](t, r, "stale_reads") != 1 {
		t.Fatalf("figures %v", r.Figures)
	}
	// From the last ack (30 ms) to the last add wanted (500 ms).
	if g := fig[float64](t, r, "longest_write_gap_ms"); g != 470 {
		t.Fatalf("longest write gap %v ms, want 470", g)
	}
}
