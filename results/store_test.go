package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

func TestStoreLayoutAndLatest(t *testing.T) {
	s := Store{Root: t.TempDir()}
	t1 := time.Date(2026, 11, 29, 14, 0, 0, 123e6, time.UTC)
	r1, err := s.NewRun("reference-register-none", t1)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(s.Root, "reference-register-none", "20261129T140000.123"); r1.Dir != want {
		t.Fatalf("dir %s, want %s", r1.Dir, want)
	}
	r2, err := s.NewRun("redis-counter-partition", t1.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	latest, err := filepath.EvalSymlinks(filepath.Join(s.Root, "latest"))
	if err != nil || latest != r2.Dir {
		t.Fatalf("latest -> %s (%v), want %s", latest, err, r2.Dir)
	}
	if err := r1.WriteJSON("results.json", checker.Summary{Valid: checker.Invalid, Checkers: map[string]checker.Result{}}); err != nil {
		t.Fatal(err)
	}
	list, err := s.List()
	if err != nil || len(list) != 2 {
		t.Fatalf("list %v %v", list, err)
	}
	if list[0].Dir != r2.Dir || list[0].Valid != "incomplete" || list[1].Valid != "false" {
		t.Fatalf("list order/validity wrong: %+v", list)
	}
	if _, err := s.NewRun("../escape", t1); err == nil {
		t.Fatal("a test name with a slash must be refused")
	}
	if err := r1.WriteFile("../../x", []byte("x")); err == nil {
		t.Fatal("writing outside the run must be refused")
	}
}

func TestReportRenders(t *testing.T) {
	s := Store{Root: t.TempDir()}
	r, err := s.NewRun("t", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Create(r.Path("history.jsonl"))
	for _, op := range []history.Op{
		{Index: 0, Time: 1e8, Process: 0, Type: history.Invoke, F: "add", Key: "k"},
		{Index: 1, Time: 2e8, Process: 0, Type: history.OK, F: "add", Key: "k"},
		{Index: 2, Time: 3e8, Process: history.Nemesis, Type: history.Info, F: "start-partition", Ext: &history.Ext{Nodes: []string{"n1"}, Detail: []byte(`{"mode":"halves","cluster_nodes_before":"long"}`)}},
		{Index: 3, Time: 2e9, Process: history.Nemesis, Type: history.Info, F: "stop-partition", Ext: &history.Ext{Nodes: []string{"n1"}}},
	} {
		_ = history.Encode(f, &op)
	}
	f.Close()
	_ = r.WriteFile("config.json", []byte(`{"seed":1}`))
	_ = r.WriteJSON("results.json", checker.Summary{Valid: checker.Invalid, Checkers: map[string]checker.Result{
		"set": {Valid: checker.Invalid, Figures: checker.Map{"lost": 3, "no_wait": 3}},
	}})
	if err := WriteReport(r); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(r.Path("report.html"))
	html := string(b)
	for _, want := range []string{"<svg", `<td class="nw">partition</td>`, "<td>halves</td>", "<td>lost 3, ", "v-invalid", "seed", "3 acknowledged writes lost"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(html, "cluster_nodes_before") {
		t.Error("bulky CLUSTER NODES snapshots belong in the history, not the fault table")
	}
}

func TestReportWithoutHistory(t *testing.T) {
	r, err := Store{Root: t.TempDir()}.NewRun("t", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	_ = r.WriteJSON("results.json", checker.Summary{Valid: checker.Unknown, Checkers: map[string]checker.Result{
		"set": {Valid: checker.Unknown, Figures: checker.Map{"error": "history cannot be paired"}},
	}})
	if err := WriteReport(r); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(r.Path("report.html"))
	for _, want := range []string{"No history: the plots are empty.", "UNKNOWN: set could not decide.", "undecided: history cannot be paired"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
