package checker

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/redline-dev/redline/history"
)

// withHeal appends a heal invoke and, unless end is nil, its completion
// carrying end as the end_phase record.
func withHeal(ops []history.Op, end map[string]any) []history.Op {
	ops = append(ops, history.Op{Index: int64(len(ops)), Time: 60e6, Process: history.Nemesis, Type: history.Invoke, F: "heal"})
	if end != nil {
		b, _ := json.Marshal(map[string]any{"end_phase": end})
		ops = append(ops, history.Op{Index: int64(len(ops)), Time: 70e6, Process: history.Nemesis, Type: history.Info, F: "heal",
			Ext: history.NewExt(history.Ext{Detail: b})})
	}
	return ops
}

func TestEndPhase(t *testing.T) {
	sl := history.Keyslot("{s}a")
	base := handoffHistory(t, []map[string]any{{"slot": sl, "from": "n1", "to": "n2", "method": "classic", "state": "failed",
		"before": []string{"{s}a", "{s}b"}, "src": []string{}, "dst": []string{"{s}a", "{s}b", "{s}c"}}})
	ctx := context.Background()
	if r := EndPhase().Check(ctx, NewHistory(base)); r.NotApplicable == "" {
		t.Fatalf("no heal: %v %v, want not applicable", r.Valid, r.Figures)
	}
	// Healed: every slot closed on one owner with its keys.
	clean := withHeal(base, map[string]any{"healed": true, "slots_checked": 1, "problems": []any{}})
	if r := EndPhase().Check(ctx, NewHistory(clean)); r.Valid != Valid || typed[*EndPhaseFigures](t, r).SlotsChecked != 1 {
		t.Fatalf("healed end phase: %v %v", r.Valid, r.Figures)
	}
	if r := Handoff().Check(ctx, NewHistory(clean)); r.Valid != Valid || typed[*HandoffFigures](t, r).Misplaced != 0 {
		t.Fatalf("handoff after a healed end phase: %v %v", r.Valid, r.Figures)
	}
	// The issue 22 ending: the keys on the destination's promoted replica,
	// the slot owned by the source's side.
	stranded := withHeal(base, map[string]any{"healed": false, "slots_checked": 1, "problems": []any{
		map[string]any{"slot": sl, "kind": "stranded", "node": "n5", "keys": 3, "what": "slot: 3 keys on n5, which does not own the slot"}}})
	if r := EndPhase().Check(ctx, NewHistory(stranded)); r.Valid != Invalid || val(typed[*EndPhaseFigures](t, r).SlotProblems) != 1 || typed[*EndPhaseFigures](t, r).First == "" {
		t.Fatalf("stranded keys: %v %v, want invalid", r.Valid, r.Figures)
	}
	if r := Handoff().Check(ctx, NewHistory(stranded)); r.Valid != Invalid || typed[*HandoffFigures](t, r).Misplaced != 1 {
		t.Fatalf("handoff with the moved slot's keys stranded: %v %v, want invalid", r.Valid, r.Figures)
	}
	// A slot left open is redline's doing too.
	open := withHeal(base, map[string]any{"healed": false, "slots_checked": 1, "problems": []any{
		map[string]any{"slot": sl, "kind": "open", "what": "slot is IMPORTING on n2 from n1"}}})
	if r := EndPhase().Check(ctx, NewHistory(open)); r.Valid != Invalid {
		t.Fatalf("slot left open: %v %v, want invalid", r.Valid, r.Figures)
	}
	// A node that did not come back: nobody can vouch for the cluster.
	notBack := withHeal(base, map[string]any{"healed": false, "slots_checked": 1, "problems": []any{
		map[string]any{"kind": "heal-error", "what": "restart n3: exit status 1"}}})
	if r := EndPhase().Check(ctx, NewHistory(notBack)); r.Valid != Unknown || r.Values()["why"] == nil {
		t.Fatalf("node not back: %v %v, want unknown", r.Valid, r.Figures)
	}
	// A run that ended inside the end phase.
	if r := EndPhase().Check(ctx, NewHistory(withHeal(base, nil))); r.Valid != Unknown {
		t.Fatalf("heal without completion: %v %v, want unknown", r.Valid, r.Figures)
	}
	// The verdict of the run follows: never valid with a slot left wrong.
	s := Run(ctx, stranded, []Checker{EndPhase(), Handoff()}, nil)
	if s.Valid != Invalid {
		t.Fatalf("run verdict with stranded keys: %v", s.Valid)
	}
}

// withHealView is withHeal with the heal's final CLUSTER NODES (of n1).
func withHealView(ops []history.Op, end map[string]any, view string) []history.Op {
	b, _ := json.Marshal(map[string]any{"end_phase": end, "cluster_nodes_after": view, "cluster_nodes_of": "n1"})
	ops = append(ops, history.Op{Index: int64(len(ops)), Time: 60e6, Process: history.Nemesis, Type: history.Invoke, F: "heal"})
	return append(ops, history.Op{Index: int64(len(ops)), Time: 70e6, Process: history.Nemesis, Type: history.Info, F: "heal",
		Ext: history.NewExt(history.Ext{Detail: b})})
}

// clusterLine is one CLUSTER NODES line of node id (one hex digit repeated).
func clusterLine(id byte, port int, flags string, master byte, slots string) string {
	m := "-"
	if master != 0 {
		m = strings.Repeat(string(master), 40)
	}
	return fmt.Sprintf("%s 127.0.0.1:%d@%d %s %s 0 0 1 connected %s", strings.Repeat(string(id), 40), port, port+10000, flags, m, slots)
}

// TestEndPhaseReplicaChains judges the roles at the end: a replica of a
// replica (redis/redis#15472's end state) is invalid whether the record
// or the final view shows it; a final view that lies (a line that is not
// one, a master it does not list, a replica of no master, a node twice)
// never leaves a healed run valid.
func TestEndPhaseReplicaChains(t *testing.T) {
	ctx := context.Background()
	healed := map[string]any{"healed": true, "slots_checked": 0, "problems": []any{}}
	primaries := []string{
		clusterLine('a', 7000, "myself,master", 0, "0-5460"),
		clusterLine('b', 7001, "master", 0, "5461-10922"),
		clusterLine('c', 7002, "master", 0, "10923-16383"),
	}
	view := func(extra ...string) string {
		return strings.Join(append(slices.Clone(primaries), extra...), "\n") + "\n"
	}
	good := view(clusterLine('d', 7003, "slave", 'a', ""), clusterLine('e', 7004, "slave", 'b', ""), clusterLine('f', 7005, "slave", 'c', ""))
	if r := EndPhase().Check(ctx, NewHistory(withHealView(nil, healed, good))); r.Valid != Valid {
		t.Fatalf("every replica under a primary: %v %v, want valid", r.Valid, r.Figures)
	}
	// #15472: the manual failover made d the primary of a's shard, a its
	// replica, and the sibling g still replicates a.
	chained := strings.Replace(view(clusterLine('d', 7003, "master", 0, ""), clusterLine('1', 7006, "slave", 'a', "")),
		"myself,master - 0 0 1 connected 0-5460", "myself,slave "+strings.Repeat("d", 40)+" 0 0 1 connected", 1)
	r := EndPhase().Check(ctx, NewHistory(withHealView(nil, healed, chained)))
	f := typed[*EndPhaseFigures](t, r)
	if r.Valid != Invalid || val(f.ReplicaChains) != 1 || !strings.Contains(f.First, "127.0.0.1:7006") {
		t.Fatalf("a sibling left replicating the demoted primary: %v %v, want invalid naming 7006", r.Valid, r.Figures)
	}
	// A loop (two replicas of each other) is a chain too.
	loop := view(clusterLine('d', 7003, "slave", 'e', ""), clusterLine('e', 7004, "slave", 'd', ""))
	if r := EndPhase().Check(ctx, NewHistory(withHealView(nil, healed, loop))); r.Valid != Invalid {
		t.Fatalf("two replicas of each other: %v %v, want invalid", r.Valid, r.Figures)
	}
	// The record's own chain (seen on every node's own account) is
	// invalid even when the final view no longer shows it: the record
	// said it lasted.
	recorded := map[string]any{"healed": false, "slots_checked": 0, "problems": []any{map[string]any{"kind": "replica-of-replica",
		"what": "n7 replicates n1, which is itself a replica (of n4): chained replication in a cluster (redis/redis#15472)"}}}
	for _, ops := range [][]history.Op{withHeal(nil, recorded), withHealView(nil, recorded, good)} {
		if r := EndPhase().Check(ctx, NewHistory(ops)); r.Valid != Invalid || val(typed[*EndPhaseFigures](t, r).ReplicaChains) != 1 {
			t.Fatalf("the record's chain: %v %v, want invalid", r.Valid, r.Figures)
		}
	}
	// A contradiction: the record says healed, the view shows a chain.
	if r := EndPhase().Check(ctx, NewHistory(withHealView(nil, healed, chained))); r.Valid == Valid {
		t.Fatal("a healed record beside a chained view was valid")
	}
	// Lies: never valid.
	lies := map[string]string{
		"a master the view does not list": view(clusterLine('d', 7003, "slave", '9', "")),
		"a garbage master id":             view(strings.Replace(clusterLine('d', 7003, "slave", 'a', ""), strings.Repeat("a", 40), "not-a-node-id", 1)),
		"a replica of no master":          view(clusterLine('d', 7003, "slave", 0, "")),
		"a node listed twice":             view(clusterLine('d', 7003, "slave", 'a', ""), clusterLine('d', 7003, "master", 0, "")),
		"a torn line":                     view(clusterLine('d', 7003, "slave", 'a', "")[:50]),
		"no node at all":                  "\n",
		"an error for a view":             "error: dial tcp 127.0.0.1:7000: connection refused\n",
	}
	for name, v := range lies {
		r := EndPhase().Check(ctx, NewHistory(withHealView(nil, healed, v)))
		if r.Valid != Unknown || typed[*EndPhaseFigures](t, r).Roles == "" {
			t.Errorf("%s: %v %v, want unknown saying why the roles are not vouched for", name, r.Valid, r.Figures)
		}
	}
	// A garbage line beside a chain: the view is read whole or not at
	// all (as the epochs' samples), so unknown, never valid.
	if r := EndPhase().Check(ctx, NewHistory(withHealView(nil, healed, chained+"garbage\n"))); r.Valid == Valid {
		t.Fatalf("a chain beside a garbage line: %v %v, want not valid", r.Valid, r.Figures)
	}
	// A heal without a view (a redline before it) is judged as before.
	if r := EndPhase().Check(ctx, NewHistory(withHeal(nil, healed))); r.Valid != Valid {
		t.Fatalf("no final view: %v %v, want valid as before", r.Valid, r.Figures)
	}
}

// TestEndPhaseCorpusRoles: the stored runs' final views are all readable
// and none has a chain, so the roles change no stored verdict.
func TestEndPhaseCorpusRoles(t *testing.T) {
	views := 0
	for _, h := range corpusHistories(t) {
		rec, _, ok := endPhaseRecord(h.ops)
		if !ok {
			continue
		}
		chains, lie := endChains(rec)
		if len(chains) > 0 || lie != "" {
			t.Errorf("%s: chains %v, lie %q", h.name, chains, lie)
		}
		if rec.View != "" {
			views++
		}
	}
	if views == 0 {
		t.Fatal("no stored run carries a final view: the roles were not tried on real output")
	}
}
