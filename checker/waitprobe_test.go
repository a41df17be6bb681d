package checker

import (
	"context"
	"strings"
	"testing"

	"github.com/redline-dev/redline/history"
)

// probeHist is one acknowledged add of key k with a WAIT that counted acked
// replicas, its reply and the probes recorded after it.
func probeHist(t *testing.T, key string, acked int, reply string, probes ...history.WaitProbe) []history.Op {
	t.Helper()
	h := &hist{}
	start(h)
	c := h.call(0, "add", key, 1, 100, history.OK, nil, 110)
	h.servedBy(addr1)
	if probes != nil || acked != 0 {
		c.SetWait(&history.Wait{Want: 1, Acked: acked, Reply: reply, Probes: probes})
	}
	return h.done()
}

func sp(s string) *string { return &s }

func TestWaitProbe(t *testing.T) {
	r := history.WaitProbe{Node: addr4}
	with := func(v *string, err string) history.WaitProbe { p := r; p.Value, p.Error = v, err; return p }
	for _, tc := range []struct {
		name   string
		kind   ProbeKind
		acked  int
		reply  string
		probes []history.WaitProbe
		want   string // valid, invalid, unknown, n/a
		class  string
	}{
		{"counter replica holds the increment", ProbeAtLeast, 1, "5", []history.WaitProbe{with(sp("7"), "")}, "valid", ""},
		{"counter replica below the reply", ProbeAtLeast, 1, "5", []history.WaitProbe{with(sp("3"), "")}, "invalid", "wait-overcounted"},
		{"counter replica has no key", ProbeAtLeast, 1, "5", []history.WaitProbe{with(nil, "")}, "invalid", "wait-overcounted"},
		{"counter probe failed", ProbeAtLeast, 1, "5", []history.WaitProbe{with(nil, "i/o timeout")}, "unknown", ""},
		{"counter replica answers garbage", ProbeAtLeast, 1, "5", []history.WaitProbe{with(sp("abc"), "")}, "invalid", "garbage"},
		{"counter write's own reply is garbage", ProbeAtLeast, 1, "x5", []history.WaitProbe{with(sp("7"), "")}, "invalid", "garbage"},
		{"counter write's own reply missing", ProbeAtLeast, 1, "", []history.WaitProbe{with(sp("7"), "")}, "invalid", "garbage"},
		{"WAIT counted 2, one replica probed", ProbeAtLeast, 2, "5", []history.WaitProbe{with(sp("7"), "")}, "unknown", ""},
		{"WAIT counted 2, one of two holds", ProbeAtLeast, 2, "5", []history.WaitProbe{with(sp("7"), ""), with(sp("4"), "")}, "invalid", "wait-overcounted"},
		{"WAIT counted 1, one of two holds", ProbeAtLeast, 1, "5", []history.WaitProbe{with(sp("7"), ""), with(sp("4"), "")}, "valid", ""},
		{"WAIT counted 2, one holds, one failed", ProbeAtLeast, 2, "5", []history.WaitProbe{with(sp("7"), ""), with(nil, "LOADING")}, "unknown", ""},
		{"probes beside a WAIT that counted none", ProbeAtLeast, 0, "5", []history.WaitProbe{with(sp("7"), "")}, "invalid", "garbage"},
		{"probes beside a WAIT with no reply", ProbeAtLeast, -1, "5", []history.WaitProbe{with(sp("7"), "")}, "invalid", "garbage"},
		{"no probe at all", ProbeAtLeast, 1, "5", nil, "n/a", ""},
		{"set replica has the element", ProbeMember, 1, "", []history.WaitProbe{with(sp("1"), "")}, "valid", ""},
		{"set replica lacks the element", ProbeMember, 1, "", []history.WaitProbe{with(sp("0"), "")}, "invalid", "wait-overcounted"},
		{"set replica answers nil", ProbeMember, 1, "", []history.WaitProbe{with(nil, "")}, "invalid", "garbage"},
		{"set replica answers 2", ProbeMember, 1, "", []history.WaitProbe{with(sp("2"), "")}, "invalid", "garbage"},
		// Two replicas per primary (replicas 2 below): WAIT's one may be
		// the replica not probed.
		{"two replicas, WAIT 1, the one probed lacks it", ProbeMember, 1, "", []history.WaitProbe{with(sp("0"), "")}, "unknown", ""},
		{"two replicas, WAIT 1, both probed, none holds", ProbeMember, 1, "", []history.WaitProbe{with(sp("0"), ""), with(sp("0"), "")}, "invalid", "wait-overcounted"},
		{"two replicas, WAIT 1, the one probed holds", ProbeMember, 1, "", []history.WaitProbe{with(sp("1"), "")}, "valid", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := keyIn(t, "c:", 0, 5460)
			ops := probeHist(t, key, tc.acked, tc.reply, tc.probes...)
			replicas := 0
			if strings.HasPrefix(tc.name, "two replicas") {
				replicas = 2
			}
			res := WaitProbeOf(tc.kind, replicas, Scope{KeyPrefix: "c:"}).Check(context.Background(), NewHistory(ops))
			got := res.Valid.String()
			if res.NotApplicable != "" {
				got = "n/a"
			}
			if got != tc.want {
				t.Fatalf("verdict %s (%s), want %s; figures %v", got, res.NotApplicable, tc.want, res.Figures)
			}
			if tc.class != "" && !strings.Contains(res.Why(), tc.class) {
				t.Fatalf("why %q does not name %s", res.Why(), tc.class)
			}
		})
	}
}
