package nemesis

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParsePlan(t *testing.T) {
	got, err := ParsePlan("at=30s reshard 500; at=10s scale-out;at=50s failover ; at=1m scale-in")
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{{10 * time.Second, "scale-out", 0}, {30 * time.Second, "reshard", 500}, {50 * time.Second, "failover", 0}, {time.Minute, "scale-in", 0}}
	if len(got) != len(want) {
		t.Fatalf("plan %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d = %+v, want %+v (sorted by time)", i, got[i], want[i])
		}
	}
	f := filepath.Join(t.TempDir(), "plan")
	if err := os.WriteFile(f, []byte("# grow, then move\nat=5s scale-out\nat=20s reshard 100 # a few\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ParsePlan("@" + f); err != nil || len(got) != 2 || got[1].Slots != 100 {
		t.Errorf("plan file: %+v %v", got, err)
	}
	for bad, says := range map[string]string{
		"":                     "empty",
		"scale-out":            "expected 'at=DURATION KIND",
		"at=10 scale-out":      "not a duration",
		"at=10s grow":          "unknown change",
		"at=10s reshard":       "number of slots",
		"at=10s reshard 0":     "between 1 and 16384",
		"at=10s failover n2":   "takes no argument",
		"@/nonexistent/plan-x": "plan file",
	} {
		if _, err := ParsePlan(bad); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("ParsePlan(%q) = %v, want an error saying %q", bad, err, says)
		}
	}
}
