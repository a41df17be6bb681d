package bench

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
)

func TestSummaryJSONAndCSV(t *testing.T) {
	r := thresholdRun()
	r.Rate, r.DurationS, r.Workers, r.Pipeline = 1000, 10, 4, 1
	r.Counts.Moved = 3
	ts, _ := ParseThresholds("p99<=2ms,GET.ops>=1000")
	r.Thresholds = EvaluateThresholds(r, ts)
	s := r.Summarize("/res/bench-x/1", 99)

	var b bytes.Buffer
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\n"); n != 1 {
		t.Errorf("%d lines of JSON, want one", n)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema", "dir", "mode", "rate", "duration_s", "throughput", "ops", "unsent", "moved", "thresholds", "thresholds_passed", "exit_code"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON summary lacks %q: %s", k, b.String())
		}
	}
	if m["schema"] != SummarySchema || m["mode"] != "open-loop" || m["exit_code"] != 99.0 || m["thresholds_passed"] != false || m["moved"] != 3.0 {
		t.Errorf("JSON summary %s", b.String())
	}
	get := m["ops"].(map[string]any)["get"].(map[string]any)
	if get["ops_per_s"] != 900.0 || get["ok"] != 9000.0 || get["failed"] != 2.0 || get["kb_per_s"] != 120.0 ||
		get["latency_ms"].(map[string]any)["p99"] != 1.5 || get["latency_ms"].(map[string]any)["p99_9"] != 4.0 {
		t.Errorf("get figures %v", get)
	}
	th := m["thresholds"].([]any)
	if len(th) != 2 || th[1].(map[string]any)["text"] != "GET.ops>=1000" || th[1].(map[string]any)["value"] != 900.0 || th[1].(map[string]any)["pass"] != false {
		t.Errorf("thresholds %v", th)
	}

	page := Page("t", []Named{{Name: "a", R: r}})
	if !strings.Contains(page, `<section id="thresholds">`) || !strings.Contains(page, "<td class=l>GET.ops&gt;=1000</td><td>900 ops/s</td><td>&gt;= 1,000 ops/s</td><td class=l><b>FAIL</b>") {
		t.Errorf("the report lacks the thresholds table")
	}
	if f, _ := Headline(r); f.Thresholds == nil || *f.Thresholds != 2 || *f.ThresholdsFailed != 1 {
		t.Errorf("results.json figures %v", f)
	}

	b.Reset()
	if err := s.WriteCSV(&b, true); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteCSV(&b, false); err != nil { // a second run: rows only
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 7 || strings.Join(rows[0], ",") != strings.Join(CSVHeader, ",") {
		t.Fatalf("CSV %v", rows)
	}
	for i, want := range []string{"set", "get", "total", "set", "get", "total"} {
		if rows[i+1][0] != want || len(rows[i+1]) != len(CSVHeader) {
			t.Errorf("row %d %v, want %s with %d fields", i+1, rows[i+1], want, len(CSVHeader))
		}
	}
	if got := rows[2]; got[1] != "900" || got[4] != "120" || got[5] != "9000" || got[6] != "2" || got[10] != "1.5" {
		t.Errorf("get row %v", got)
	}
}
