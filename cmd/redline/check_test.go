package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `redline check` as a new user runs it on hand-made histories: no
// evidence is unknown (exit 2), garbage is invalid (exit 1), and the table
// says why in words with op indexes (issue 10).
func TestCheckVerdictsOnHandMadeHistories(t *testing.T) {
	cases := []struct {
		name, history string
		code          int
		why           string
	}{
		{"empty", "", exitUnknown, "no acknowledged increment"},
		{"only-nemesis", `{"index":0,"time":0,"process":"nemesis","type":"info","f":"start-kill","nodes":["n1"]}` + "\n", exitUnknown, "nothing to judge"},
		{"garbage", `{"index":0,"time":0,"process":0,"type":"invoke","f":"add","key":"p:counter:0","value":1}
{"index":1,"time":10,"process":0,"type":"ok","f":"add","key":"p:counter:0","value":1}
{"index":2,"time":20,"process":"nemesis","type":"info","f":"final-reads"}
{"index":3,"time":30,"process":0,"type":"invoke","f":"read","key":"p:counter:0"}
{"index":4,"time":40,"process":0,"type":"ok","f":"read","key":"p:counter:0","value":"abc"}
`, exitInvalid, "key p:counter:0 op 3"},
	}
	for _, tc := range cases {
		dir := filepath.Join(t.TempDir(), "t", "20260101T000000.000")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cfg := `{"workloads":["counter"],"key_prefix":"p:","nemesis":["none"]}`
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "history.jsonl"), []byte(tc.history), 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		code := run([]string{"check", "--dry-run", dir}, &out, &errb)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", tc.name, code, tc.code, out.String(), errb.String())
		}
		if !strings.Contains(out.String(), "counter is ") || !strings.Contains(out.String(), tc.why) {
			t.Errorf("%s: the table does not say why (%q):\n%s", tc.name, tc.why, out.String())
		}
	}
}
