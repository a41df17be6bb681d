package all

import (
	"slices"
	"testing"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/workloads"
)

// Importing this package registers every folder workload, with what each
// brings: its checkers, its library form (or why it has none) and its
// figures' explanations.
func TestFolderWorkloadsAreRegistered(t *testing.T) {
	for _, n := range []string{"lock", "queue", "ttl"} {
		if !slices.Contains(workloads.NamesOf(workloads.History), n) {
			t.Fatalf("%s not registered: %v", n, workloads.Names())
		}
		cs, err := workloads.Checkers(n, workloads.Config{Prefix: "p:"}, workloads.CheckOptions{}, false)
		if err != nil || len(cs) == 0 || cs[0].Name() != n {
			t.Fatalf("%s: checkers %v, %v", n, cs, err)
		}
	}
	if !workloads.LibSupports("ttl") || workloads.LibSupports("lock") || workloads.LibSupports("queue") {
		t.Fatal("library forms: ttl only")
	}
	for _, f := range []string{"double_holds", "acks_lost", "pairs_judged"} {
		if checker.DescribeFigure(f) == "" {
			t.Errorf("figure %s has no explanation", f)
		}
	}
}
