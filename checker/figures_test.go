package checker

import (
	"encoding/json"
	"testing"
)

// A stored result is read back typed by its checker's name, and written
// back as it was stored: an older shape (a figure the type lacks, one it
// adds) keeps its bytes, and figures without what the type needs (an error
// result) stay a Map, never a typed value that says figures nobody
// measured.
func TestStoredFiguresReadBackByName(t *testing.T) {
	stored := `{"valid":false,"checkers":{` +
		`"bench":{"p99_ms":1.7,"throughput":41234,"valid":true},` +
		`"set/rpo":{"error":"no successful read among 3 ops","valid":"unknown"},` +
		`"set/rto":{"per_window":[],"rto_ms":{"count":0},"some_old_figure":3,"valid":true},` +
		`"set/set":{"lost":2,"valid":false}}}`
	var s Summary
	if err := json.Unmarshal([]byte(stored), &s); err != nil {
		t.Fatal(err)
	}
	if f, ok := FiguresAs[*BenchFigures](s.Checkers["bench"]); !ok || f.Throughput != 41234 || f.P99Ms != 1.7 {
		t.Errorf("bench figures %T %+v", s.Checkers["bench"].Figures, f)
	}
	if _, ok := FiguresAs[*RPOFigures](s.Checkers["set/rpo"]); ok {
		t.Errorf("an error result read as RPO figures: %+v", s.Checkers["set/rpo"].Figures)
	}
	if f, ok := FiguresAs[*RTOFigures](s.Checkers["set/rto"]); !ok || f.RTOMs.Count != 0 {
		t.Errorf("rto figures %T %+v", s.Checkers["set/rto"].Figures, f)
	}
	if _, ok := s.Checkers["set/set"].Figures.(Map); !ok {
		t.Errorf("set figures %T, want a Map", s.Checkers["set/set"].Figures)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != stored {
		t.Errorf("written back:\n%s\nstored:\n%s", b, stored)
	}
}
