package harness

import (
	"encoding/json"
	"testing"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/clusteradmin"
)

// results.json keeps its audit through a read and a write: the embedded
// Summary's UnmarshalJSON must not swallow the file (`redline check` keeps
// the audit of the run it re-checks by reading it back).
func TestResultsFileKeepsItsAudit(t *testing.T) {
	in := ResultsFile{
		Summary: checker.Summary{Valid: checker.Valid, Checkers: map[string]checker.Result{"set": {Valid: checker.Valid, Figures: checker.Map{"lost": 0}}}},
		Audit:   &clusteradmin.AuditResult{Clean: true, Summary: "no foreign data touched"},
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out ResultsFile
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Audit == nil || !out.Audit.Clean || out.Audit.Summary != "no foreign data touched" {
		t.Fatalf("the audit did not survive: %+v from %s", out.Audit, b)
	}
	if out.Valid != checker.Valid || out.Checkers["set"].Valid != checker.Valid {
		t.Fatalf("the summary did not survive: %+v", out.Summary)
	}
	b2, _ := json.Marshal(out)
	if string(b2) != string(b) {
		t.Fatalf("not the same bytes again:\n%s\n%s", b, b2)
	}
}
