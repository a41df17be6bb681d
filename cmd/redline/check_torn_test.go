package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redline-dev/redline/history"
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

// The same for the compressed history the recorder writes: a last frame
// cut mid-write leaves the whole frames before it checked, and `redline
// check` says the history is torn (how many bytes) in results.json, the
// verdict line and the exit code, never VALID on the prefix.
func TestCheckSaysATornCompressedHistory(t *testing.T) {
	first := `{"index":0,"time":0,"process":0,"type":"invoke","f":"add","key":"p:counter:0","value":1}
{"index":1,"time":10,"process":0,"type":"ok","f":"add","key":"p:counter:0","value":1}
{"index":2,"time":20,"process":"nemesis","type":"info","f":"final-reads"}
{"index":3,"time":30,"process":0,"type":"invoke","f":"read","key":"p:counter:0"}
{"index":4,"time":40,"process":0,"type":"ok","f":"read","key":"p:counter:0","value":1}
`
	second := `{"index":5,"time":50,"process":1,"type":"invoke","f":"read","key":"p:counter:0"}
{"index":6,"time":60,"process":1,"type":"ok","f":"read","key":"p:counter:0","value":1}
`
	var buf bytes.Buffer
	fw, err := history.NewFrameWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.WriteFrame([]byte(first), 5); err != nil {
		t.Fatal(err)
	}
	firstLen := buf.Len()
	if err := fw.WriteFrame([]byte(second), 2); err != nil {
		t.Fatal(err)
	}
	whole := buf.Bytes()
	cut := whole[:firstLen+(len(whole)-firstLen)/2]
	for _, tc := range []struct {
		name string
		b    []byte
		code int
	}{{"whole", whole, exitValid}, {"torn", cut, exitUnknown}} {
		dir := counterRunDir(t, "")
		if err := os.Remove(filepath.Join(dir, history.JSONLinesName)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, history.FileName), tc.b, 0o644); err != nil {
			t.Fatal(err)
		}
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
			if res.Valid != true || !strings.Contains(out.String(), "ops=3 ") {
				t.Fatalf("whole history: results.json valid %v\n%s", res.Valid, out.String())
			}
			continue
		}
		rf := res.Checkers["run-files"]
		torn := float64(len(cut) - firstLen)
		if res.Valid != "unknown" || rf == nil || rf["torn"] != true || rf["torn_line"] != 6.0 || rf["torn_bytes"] != torn {
			t.Fatalf("torn history: results.json valid %v, run-files %v (want %v torn bytes)", res.Valid, rf, torn)
		}
		if !strings.Contains(errb.String(), "frame cut mid-write") {
			t.Fatalf("stderr does not say the frame was cut:\n%s", errb.String())
		}
	}
}

// A compressed history with a frame that does not decode cannot be
// checked: exit 254 naming the frame, never a verdict on what came before.
func TestCheckRefusesACorruptCompressedHistory(t *testing.T) {
	var buf bytes.Buffer
	fw, err := history.NewFrameWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, lines := range []string{
		`{"index":0,"time":0,"process":0,"type":"invoke","f":"add","key":"p:counter:0","value":1}` + "\n",
		`{"index":1,"time":10,"process":0,"type":"ok","f":"add","key":"p:counter:0","value":1}` + "\n",
		`{"index":2,"time":20,"process":"nemesis","type":"info","f":"final-reads"}` + "\n",
	} {
		if err := fw.WriteFrame([]byte(lines), 1); err != nil {
			t.Fatal(err)
		}
	}
	b := buf.Bytes()
	b[len(b)/2] ^= 0xff
	dir := counterRunDir(t, "")
	if err := os.Remove(filepath.Join(dir, history.JSONLinesName)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, history.FileName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"check", dir}, &out, &errb); code != exitBadArgs || !strings.Contains(errb.String(), "frame 2") ||
		!strings.Contains(errb.String(), "redline history cat") || strings.Contains(out.String(), "verdict:") {
		t.Fatalf("exit %d, want %d naming frame 2\n%s%s", code, exitBadArgs, out.String(), errb.String())
	}
}
