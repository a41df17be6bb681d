package checker

import (
	"strings"
	"testing"

	"github.com/redline-dev/redline/history"
)

const n4 = "10.0.0.4:6379" // n2's replica

// failover records one failover of the failover nemesis: its start's
// invocation at t0 and its completion at t1 (the replica reported itself
// primary), as the nemesis writes them.
func (h *hist) failover(t0, t1 int64, mode string, replica, primary string) {
	h.event(t0, history.Invoke, "start-failover", []string{replica, primary}, map[string]any{"mode": mode})
	h.event(t1, history.Info, "start-failover", []string{replica, primary}, map[string]any{"mode": mode, "promoted": true})
}

// setAcrossFailover: key a lives on n1 (replica n3), key b on n2 (replica
// n4). Element 1 of a is acknowledged by n1 at 100 ms, before the
// failover of shard a in mode aMode (1000-1200 ms); the final read of a
// (n3, its new primary) misses it. With takeoverB, a TAKEOVER of shard b
// loses b's element 7 as well. With killA, n1 is killed (and restarted)
// between the add and the failover.
func setAcrossFailover(aMode string, takeoverB, killA bool) []history.Op {
	var h hist
	h.nodesEvent(map[string]string{"n1": n1, "n2": n2, "n3": n3, "n4": n4})
	h.call(0, "add", "a", 1, 90, history.OK, nil, 100)
	h.on(n1)
	h.call(1, "add", "b", 7, 90, history.OK, nil, 100)
	h.on(n2)
	h.call(0, "add", "a", 2, 110, history.OK, nil, 120)
	h.on(n1)
	if killA {
		h.nemesis(300, "start-kill", "n1")
		h.nemesis(600, "stop-kill", "n1")
	}
	h.failover(1000, 1200, aMode, "n3", "n1")
	if takeoverB {
		h.failover(1500, 1550, "takeover", "n4", "n2")
	}
	h.nemesis(4900, "final-reads")
	h.call(2, "read", "a", nil, 5000, history.OK, []int{2}, 5010)
	h.on(n3)
	bFinal := []int{7}
	if takeoverB {
		bFinal = []int{}
	}
	h.call(3, "read", "b", nil, 5000, history.OK, bFinal, 5010)
	if takeoverB {
		h.on(n4)
	} else {
		h.on(n2)
	}
	return h.done()
}

// Gap failover-no-pause (docs/planted-bugs.md): a loss only a default
// failover explains is invalid on its own, also beside a TAKEOVER that
// lost writes elsewhere in the run; a FORCE or TAKEOVER's loss, or one a
// kill in between explains, is not this checker's.
func TestDefaultFailoverLossIsInvalid(t *testing.T) {
	r := check(t, DefaultFailover(RPOOptions{Kind: "set"}), setAcrossFailover("default", false, false))
	wantValid(t, r, Invalid)
	if typed[*DefaultFailoverFigures](t, r).LostByDefaultFailover != 1 || !strings.Contains(r.Why(), "default CLUSTER FAILOVER") || !strings.Contains(r.Why(), "op ") {
		t.Fatalf("figures %v", r.Figures)
	}

	r = check(t, DefaultFailover(RPOOptions{Kind: "set"}), setAcrossFailover("default", true, false))
	wantValid(t, r, Invalid)
	if typed[*DefaultFailoverFigures](t, r).LostByDefaultFailover != 1 || typed[*DefaultFailoverFigures](t, r).LostExplainedByOthers != 1 {
		t.Fatalf("beside a takeover elsewhere: figures %v", r.Figures)
	}
	// The set checker is invalid either way: it cannot tell them apart.
	wantValid(t, check(t, Set(), setAcrossFailover("takeover", false, false)), Invalid)

	for _, mode := range []string{"takeover", "force"} {
		r = check(t, DefaultFailover(RPOOptions{Kind: "set"}), setAcrossFailover(mode, true, false))
		if r.NotApplicable == "" {
			t.Fatalf("%s only: want not applicable, got %v %v", mode, r.Valid, r.Figures)
		}
	}
	r = check(t, DefaultFailover(RPOOptions{Kind: "set"}), setAcrossFailover("default", false, true))
	wantValid(t, r, Valid)
	if typed[*DefaultFailoverFigures](t, r).LostExplainedByOthers != 1 {
		t.Fatalf("a kill in between explains the loss: figures %v", r.Figures)
	}
}

// A guest run's failover the seed picked as TAKEOVER ran coordinated: its
// loss is judged as a default failover's.
func TestDefaultFailoverGuestCoordinatedIsDefault(t *testing.T) {
	ops := setAcrossFailover("takeover", false, false)
	for i := range ops {
		if ops[i].F == "start-failover" && ops[i].Type == history.Info {
			ops[i].SetDetail([]byte(`{"mode":"takeover","promoted":true,"guest_coordinated":"the seed picked takeover"}`))
		}
	}
	wantValid(t, check(t, DefaultFailover(RPOOptions{Kind: "set"}), ops), Invalid)
}

// An element seen on the new primary after the switch, and missing at the
// end, was not lost by the failover.
func TestDefaultFailoverSeenAfterTheSwitchIsNotItsLoss(t *testing.T) {
	var h hist
	h.nodesEvent(map[string]string{"n1": n1, "n3": n3})
	h.call(0, "add", "a", 1, 90, history.OK, nil, 100)
	h.on(n1)
	h.failover(1000, 1200, "default", "n3", "n1")
	h.call(1, "read", "a", nil, 4000, history.OK, []int{1}, 4010)
	h.on(n3)
	h.call(1, "read", "a", nil, 5000, history.OK, []int{}, 5010)
	h.on(n3)
	r := check(t, DefaultFailover(RPOOptions{Kind: "set"}), h.done())
	wantValid(t, r, Valid)
	if typed[*DefaultFailoverFigures](t, r).LostExplainedByNoFault != 1 {
		t.Fatalf("figures %v", r.Figures)
	}
}

// A counter's deficit that rises across a default failover, with nothing
// else on the shard, is invalid; across a TAKEOVER it is not.
func TestDefaultFailoverCounterDeficit(t *testing.T) {
	for _, mode := range []string{"default", "takeover"} {
		var h hist
		h.nodesEvent(map[string]string{"n1": n1, "n3": n3})
		h.event(0, history.Invoke, "start-failover", []string{"n3", "n1"}, map[string]any{"mode": "default"})
		h.event(1, history.Info, "start-failover", []string{"n3", "n1"}, map[string]any{"mode": "default", "promoted": true, "skipped": "no reachable replica", "error": "x"})
		for i := range 5 {
			h.call(0, "add", "c", 1, int64(100+10*i), history.OK, nil, int64(105+10*i))
			h.on(n1)
		}
		h.call(1, "read", "c", nil, 200, history.OK, 5, 210)
		h.on(n1)
		h.call(0, "add", "c", 1, 300, history.OK, nil, 305)
		h.on(n1)
		h.failover(1000, 1200, mode, "n3", "n1")
		h.nemesis(4900, "final-reads")
		h.call(1, "read", "c", nil, 5000, history.OK, 4, 5010)
		h.on(n3)
		r := check(t, DefaultFailover(RPOOptions{Kind: "counter"}), h.done())
		if mode == "takeover" {
			if r.NotApplicable == "" {
				t.Fatalf("takeover: %v %v", r.Valid, r.Figures)
			}
			continue
		}
		wantValid(t, r, Invalid)
		if typed[*DefaultFailoverFigures](t, r).LostByDefaultFailover != 2 {
			t.Fatalf("figures %v", r.Figures)
		}
	}
}

// unpromotedRun: shard a's default failover (n3 over n1, 1000 ms) ends
// with n3 still a replica and the nemesis's evidence; nothing is lost (the
// final read holds every add). With kill, n2 is killed over the failover.
func unpromotedRun(evidence map[string]any, kill bool) []history.Op {
	var h hist
	h.nodesEvent(map[string]string{"n1": n1, "n2": n2, "n3": n3, "n4": n4})
	h.call(0, "add", "a", 1, 90, history.OK, nil, 100)
	h.on(n1)
	if kill {
		h.nemesis(900, "start-kill", "n2")
		h.nemesis(7000, "stop-kill", "n2")
	}
	h.event(1000, history.Invoke, "start-failover", []string{"n3", "n1"}, map[string]any{"mode": "default"})
	d := map[string]any{"mode": "default", "promoted": false, "error": "n3 was not promoted within 10s", "waited_ms": 10000}
	if evidence != nil {
		d["unpromoted_evidence"] = evidence
	}
	h.event(11000, history.Info, "start-failover", []string{"n3", "n1"}, d)
	h.nemesis(11900, "final-reads")
	h.call(2, "read", "a", nil, 12000, history.OK, []int{1}, 12010)
	h.on(n1)
	return h.done()
}

// Gap failover-no-pause, closed with F011's evidence: a coordinated
// failover that did not happen although the primary knew its replica, no
// window of Redis's rules was open and no other fault overlapped it is a
// broken promise the run cannot pass (unknown); one the evidence explains
// is not judged; one without evidence, or with garbage for a record, is
// unknown.
func TestUnexplainedUnpromotedFailoverIsNeverValid(t *testing.T) {
	clean := map[string]any{"primary_knows_replica": true, "in_election_window": false, "in_vote_window": false}
	r := check(t, FailoverPromotions(), unpromotedRun(clean, false))
	wantValid(t, r, Unknown)
	if typed[*FailoverPromotionFigures](t, r).UnpromotedUnexplained != 1 || !strings.Contains(r.Why(), "did not happen") {
		t.Fatalf("figures %v", r.Figures)
	}
	explained := []map[string]any{
		{"primary_knows_replica": false, "in_election_window": false, "in_vote_window": false},
		{"primary_knows_replica": true, "in_election_window": true, "in_vote_window": false},
		{"primary_knows_replica": true, "in_election_window": false, "in_vote_window": true},
		{"in_election_window": false}, // the primary's view unknown: not judged as unexplained
	}
	for _, ev := range explained {
		if r := check(t, FailoverPromotions(), unpromotedRun(ev, false)); r.Valid == Unknown {
			t.Errorf("evidence %v explains it; got unknown: %s", ev, r.Why())
		}
	}
	if r := check(t, FailoverPromotions(), unpromotedRun(clean, true)); r.Valid == Unknown {
		t.Errorf("a kill overlapping it explains it; got unknown: %s", r.Why())
	}
	short := unpromotedRun(clean, false)
	for i := range short {
		if short[i].Type == history.Info && short[i].F == "start-failover" {
			short[i].SetDetail([]byte(strings.Replace(string(short[i].DetailRaw()), `"waited_ms":10000`, `"waited_ms":4000`, 1)))
		}
	}
	if r := check(t, FailoverPromotions(), short); r.Valid == Unknown {
		t.Errorf("a wait cut short before Redis's 5 s timeout (the run ended): not judged; got unknown: %s", r.Why())
	}
	// No evidence is unknown, never a promotion that happened: a record
	// without the nemesis's evidence, one without its promotion, and
	// garbage where the record should be.
	if r := check(t, FailoverPromotions(), unpromotedRun(nil, false)); r.Valid != Unknown || !strings.Contains(r.Why(), "no evidence") {
		t.Errorf("no evidence: want unknown; got %v: %s", r.Valid, r.Why())
	}
	lie := func(detail string) []history.Op {
		ops := unpromotedRun(clean, false)
		for i := range ops {
			if ops[i].Type == history.Info && ops[i].F == "start-failover" {
				ops[i].SetDetail([]byte(detail))
			}
		}
		return ops
	}
	for _, d := range []string{`{"mode":"default","waited_ms":10000}`, `{"waited_ms":10000}`, `{"mode":"default","promoted":"no"}`} {
		if r := check(t, FailoverPromotions(), lie(d)); r.Valid != Unknown {
			t.Errorf("record %s: want unknown; got %v: %s", d, r.Valid, r.Why())
		}
	}
	// A CLUSTER FAILOVER that got no OK promised nothing.
	if r := check(t, FailoverPromotions(), lie(`{"mode":"default","error":"i/o timeout"}`)); r.Valid == Unknown {
		t.Errorf("an unanswered command: not judged; got unknown: %s", r.Why())
	}
}
