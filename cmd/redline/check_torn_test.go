package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A history torn mid-line (the run crashed writing it) is a prefix:
// `redline check` says so in results.json, in the verdict line and in
// the exit code (unknown, 2), not only on stderr (issue 36, class 6).
// Before, the prefix was checked VALID with exit 0.
func TestCheckSaysATornHistory(t *testing.T) {
	whole := `{"index":0,"time":0,"process":0,"type":"invoke","f":"add","key":"p:counter:0","value":1}
{"index":1,"time":10,"process":0,"type":"ok","f":"add","key":"p:counter:0","value":1}
{"index":2,"time":20,"process":"nemesis","type":"info","f":"final-reads"}
{"index":3,"time":30,"process":0,"type":"invoke","f":"read","key":"p:counter:0"}
{"index":4,"time":40,"process":0,"type":"ok","f":"read","key":"p:counter:0","value":1}
`
	torn := whole + `{"index":5,"time":50,"process":1,"type":"inv`
	for _, tc := range []struct {
		name, history string
		code          int
	}{{"whole", whole, exitValid}, {"torn", torn, exitUnknown}} {
		dir := counterRunDir(t, tc.history)
		var out, errb bytes.Buffer
		code := run([]string{"check", dir}, &out, &errb)
		if code != tc.code {
			t.Fatalf("%s: exit %d, want %d\n%s%s", tc.name, code, tc.code, out.String(), errb.String())
		}
		var res struct {
			Valid    any                       `json:"valid"`
			Checkers map[string]map[string]any `json:"checkers"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "results.json"))
		if err != nil || json.Unmarshal(b, &res) != nil {
			t.Fatalf("%s: results.json: %v", tc.name, err)
		}
		if tc.name == "whole" {
			if res.Valid != true {
				t.Fatalf("whole history: results.json valid %v", res.Valid)
			}
			continue
		}
		rf := res.Checkers["run-files"]
		if res.Valid != "unknown" || rf == nil || rf["torn"] != true || rf["torn_line"] != 6.0 {
			t.Fatalf("torn history: results.json valid %v, run-files %v", res.Valid, rf)
		}
		var verdict string
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, "verdict:") {
				verdict = l
			}
		}
		if !strings.Contains(verdict, "UNKNOWN") || !strings.Contains(verdict, "torn at line 6") {
			t.Fatalf("verdict line %q does not say the history is torn\n%s", verdict, out.String())
		}
	}
}
