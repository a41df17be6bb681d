package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The history's census line is torn (the run crashed writing it) but
// census.json is whole: `redline check` reads census.json, and the
// attribution still knows where the key is at the end (issue 36, class
// 3). Before, it said "no key census in the history".
func TestCheckReadsCensusFileWhenTheHistoryLostIt(t *testing.T) {
	hist := `{"index":0,"time":0,"process":0,"type":"invoke","f":"add","key":"p:counter:0","value":1}
{"index":1,"time":10,"process":0,"type":"ok","f":"add","key":"p:counter:0","value":1,"node":"10.0.0.1:6379"}
{"index":2,"time":20,"process":"nemesis","type":"info","f":"final-reads"}
{"index":3,"time":30,"process":0,"type":"invoke","f":"read","key":"p:counter:0"}
{"index":4,"time":40,"process":0,"type":"ok","f":"read","key":"p:counter:0","value":0,"node":"10.0.0.1:6379"}
{"index":5,"time":50,"process":"nemesis","type":"info","f":"census","detail":{"prefix":"p:","nod`
	census := `{"prefix":"p:","nodes":[{"name":"n1","addr":"10.0.0.1:6379","id":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1","role":"primary",
"view":[{"id":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1","addr":"10.0.0.1:6379","primary":true,"ranges":[[0,16383]],"myself":true}],
"keys":{"p:counter:0":{"type":"string","value":"0"}}}]}`
	dir := filepath.Join(t.TempDir(), "t", "20260101T000000.000")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"config.json": `{"workloads":["counter"],"key_prefix":"p:","nemesis":["none"]}`,
		"history.jsonl": hist, "census.json": census} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	code := run([]string{"check", dir}, &out, &errb)
	if code != exitInvalid {
		t.Fatalf("exit %d, want %d (a lost increment)\n%s%s", code, exitInvalid, out.String(), errb.String())
	}
	var res struct {
		Attribution []struct {
			Verdict string `json:"verdict"`
			Why     string `json:"why"`
		} `json:"attribution"`
		Census map[string]any `json:"census"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil || json.Unmarshal(b, &res) != nil {
		t.Fatalf("results.json: %v", err)
	}
	if len(res.Attribution) == 0 || res.Census == nil {
		t.Fatalf("no attribution or census summary: %s", b)
	}
	for _, a := range res.Attribution {
		if strings.Contains(a.Why, "no key census") {
			t.Fatalf("census.json not read: %s: %s", a.Verdict, a.Why)
		}
	}
}
