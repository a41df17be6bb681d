package nemesis

import "testing"

// --nemesis list reads these words: a fault or mode added to the registry
// without them would list blank.
func TestEveryModeIsDescribed(t *testing.T) {
	docs := Describe()
	if len(docs) != len(Faults()) {
		t.Fatalf("%d faults described, %d registered", len(docs), len(Faults()))
	}
	for _, d := range docs {
		if d.What == "" {
			t.Errorf("fault %s has no description", d.Name)
		}
		if len(d.Modes) != len(AllModes(d.Name)) {
			t.Errorf("fault %s: %d modes described, %d exist", d.Name, len(d.Modes), len(AllModes(d.Name)))
		}
		for _, m := range d.Modes {
			if m.What == "" {
				t.Errorf("mode %s:%s has no description", d.Name, m.Name)
			}
		}
	}
	if m := modeWords("migrate", "atomic-kill-src"); m != "one slot moved atomically (CLUSTER MIGRATION IMPORT); the source SIGKILLed during the move, held, restarted" {
		t.Errorf("handoff mode described as %q", m)
	}
}
