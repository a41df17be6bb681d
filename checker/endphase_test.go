package checker

import (
	"context"
	"encoding/json"
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
