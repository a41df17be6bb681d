package suite

import (
	"strings"
	"testing"
	"time"
)

// The RPO study takes --client as an axis: each client gets every cell,
// and the entries stay apart by client.
func TestStudyClientAxis(t *testing.T) {
	st := Study{Targets: []string{"redis"}, Scenarios: []string{"kill-primary"}, Waits: []int{0},
		NodeTimeouts: []time.Duration{2 * time.Second}, Seeds: 1, Clients: []string{"go-redis", "rueidis"}}
	s, err := st.Suite("rpo")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Runs) != 2 || s.Runs[0].Params.Get("client") != "go-redis" || s.Runs[1].Params.Get("client") != "rueidis" ||
		!strings.HasSuffix(s.Runs[1].Name, "client=rueidis") {
		t.Fatalf("runs %+v", s.Runs)
	}
	sum := &Summary{}
	for i, r := range s.Runs {
		sum.Runs = append(sum.Runs, Result{Index: i, Name: r.Name, Params: r.Params, Verdict: Invalid,
			Checkers: map[string]CheckerResult{"rpo": {Valid: false, Figures: map[string]any{"lost": float64(3)}}}})
	}
	es := Aggregate(sum)
	if len(es) != 2 || es[0].Label() != "redis / go-redis" || es[1].Client != "rueidis" {
		t.Fatalf("entries %+v", es)
	}
}

// A suite that varies --client gets the comparison table; its figures
// come from the counter checker of each run.
func TestClientRows(t *testing.T) {
	run := func(client, fault string, lost, unexpected, resent float64, gap float64) Result {
		return Result{Params: Params{{Key: "client", Values: []string{client}}, {Key: "nemesis", Values: []string{fault}}},
			Verdict: Invalid, Checkers: map[string]CheckerResult{
				"counter": {Valid: false, Figures: map[string]any{"lost": lost, "unexpected": unexpected, "resent_adds": resent, "longest_write_gap_ms": gap}},
				"rpo":     {Valid: false, Figures: map[string]any{"lost": lost}}, // the same loss: not counted twice
			}}
	}
	s := &Summary{Name: "clients", Runs: []Result{run("go-redis", "kill", 0, 4, 2, 1500), run("rueidis", "kill", 7, 0, 0, 2500)}}
	rows := s.ClientRows()
	if len(rows) != 2 || rows[0].DoubleApplied != 4 || rows[0].Resent != 2 || rows[1].Lost != 7 || rows[1].WriteGapMS != 2500 {
		t.Fatalf("rows %+v", rows)
	}
	md := ClientsMarkdown("clients", rows)
	if !strings.Contains(md, "| go-redis |  | kill | invalid | 0 | 4 | 2 | 0 / 0 | 1.5 s |") {
		t.Fatalf("markdown:\n%s", md)
	}
	if (&Summary{Runs: []Result{run("go-redis", "kill", 0, 0, 0, 0)}}).ClientRows() != nil {
		t.Fatal("one client is no comparison")
	}
}
