package harness

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/results"
)

// A counter run as the runner records it: the client under test in
// config.json, then an acknowledged increment, the final-reads marker, a
// final read and the census.
const (
	runnerConfig = `{"test_name":"t","workloads":["counter"],"nemesis":["none"],"key_prefix":"p:",` +
		`"client_library":{"name":"redline","library":"redline workloads/client","version":"go-redis v9"}}`
	handMadeConfig = `{"workloads":["counter"],"nemesis":["none"],"key_prefix":"p:"}`
	counterOps     = `{"index":0,"time":0,"process":"nemesis","type":"info","f":"nodes","detail":{"addrs":{"n1":"10.0.0.1:6379"}}}
{"index":1,"time":10,"process":0,"type":"invoke","f":"add","key":"p:counter:0","value":1}
{"index":2,"time":20,"process":0,"type":"ok","f":"add","key":"p:counter:0","value":1,"node":"10.0.0.1:6379"}
{"index":3,"time":30,"process":0,"type":"invoke","f":"read","key":"p:counter:0"}
{"index":4,"time":40,"process":0,"type":"ok","f":"read","key":"p:counter:0","value":1,"node":"10.0.0.1:6379"}
`
	finalPhase = `{"index":5,"time":50,"process":"nemesis","type":"info","f":"final-reads"}
{"index":6,"time":60,"process":1048577,"type":"invoke","f":"read","key":"p:counter:0"}
{"index":7,"time":70,"process":1048577,"type":"ok","f":"read","key":"p:counter:0","value":1,"node":"10.0.0.1:6379"}
`
	censusLine = `{"index":8,"time":80,"process":"nemesis","type":"info","f":"census","detail":` + censusJSON + "}\n"
	censusJSON = `{"prefix":"p:","nodes":[{"name":"n1","addr":"10.0.0.1:6379","id":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1","role":"primary",` +
		`"view":[{"id":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1","addr":"10.0.0.1:6379","primary":true,"ranges":[[0,16383]],"myself":true}],` +
		`"keys":{"p:counter:0":{"type":"string","value":"1"}}}]}`
)

func recheck(t *testing.T, files map[string]string) checker.Summary {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "t", "20260101T000000.000")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stored, err := ReadStoredRun(&results.Run{Dir: dir, Test: "t"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := stored.Check(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func why(r checker.Result) string { s, _ := r.Values()["why"].(string); return s }

// The whole run checks valid; cut cleanly before its final reads (a run
// that stopped writing, or a history someone shortened) it was valid too:
// the counter took the last read as final. A run the runner recorded
// (client_library in config.json) that lacks the entries the runner
// writes at the end of every run did not finish: unknown, naming them,
// even with census.json beside it (issue 36, adversary gap).
func TestCheckRequiresTheRunnersLastEntries(t *testing.T) {
	whole := recheck(t, map[string]string{"config.json": runnerConfig, "history.jsonl": counterOps + finalPhase + censusLine, "census.json": censusJSON})
	if whole.Valid != checker.Valid {
		t.Fatalf("the whole run: %v, want valid: %+v", whole.Valid, whole.Checkers)
	}
	cut := recheck(t, map[string]string{"config.json": runnerConfig, "history.jsonl": counterOps, "census.json": censusJSON})
	rf := cut.Checkers[checker.RunFilesName]
	if cut.Valid != checker.Unknown || rf.Valid != checker.Unknown {
		t.Fatalf("cut before the final reads: %v (run-files %v), want unknown: %+v", cut.Valid, rf.Valid, cut.Checkers)
	}
	if w := why(rf); !strings.Contains(w, "final-reads and census") || !strings.Contains(w, "did not finish") {
		t.Fatalf("run-files does not name what is missing: %q", w)
	}
	// Only the census line lost: census.json stands in for the
	// attribution, but the history still did not reach its end.
	noLine := recheck(t, map[string]string{"config.json": runnerConfig, "history.jsonl": counterOps + finalPhase, "census.json": censusJSON})
	if r := noLine.Checkers[checker.RunFilesName]; r.Valid != checker.Unknown || !strings.Contains(why(r), "census") {
		t.Fatalf("no census line: run-files %v %q, want unknown naming the census", r.Valid, why(r))
	}
	// A hand-made history (no client_library: nothing says the runner
	// wrote it) is not held to the runner's entries.
	hand := recheck(t, map[string]string{"config.json": handMadeConfig, "history.jsonl": counterOps})
	if hand.Valid != checker.Valid {
		t.Fatalf("hand-made history: %v, want valid: %+v", hand.Valid, hand.Checkers)
	}
}

// A run the runner recorded whose census is gone (no history entry, no
// census.json) was valid: the census checker said not applicable. The
// census is a witness the checkers rely on: its absence is unknown,
// named by the census checker itself (issue 36, adversary gap).
func TestCheckSaysAMissingCensusOfARunnersRun(t *testing.T) {
	s := recheck(t, map[string]string{"config.json": runnerConfig, "history.jsonl": counterOps + finalPhase})
	c := s.Checkers["census"]
	if s.Valid != checker.Unknown || c.Valid != checker.Unknown {
		t.Fatalf("missing census: %v (census %v), want unknown", s.Valid, c.Valid)
	}
	if !strings.Contains(why(c), "census is missing") {
		t.Fatalf("the census checker does not say the census is missing: %q", why(c))
	}
	hand := recheck(t, map[string]string{"config.json": handMadeConfig, "history.jsonl": counterOps + finalPhase})
	if _, ok := hand.NotApplicable["census"]; !ok || hand.Valid != checker.Valid {
		t.Fatalf("hand-made history without a census: %v, census %+v, want valid with census not applicable", hand.Valid, hand.Checkers["census"])
	}
}
