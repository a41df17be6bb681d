package harness

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/results"
)

// checkStored writes files as a stored run and checks it as `redline
// check` does, saving results.json; it returns the summary and the file.
// above is PartitionAbove for this check: whether it spills.
func checkStored(t *testing.T, files map[string][]byte, above int64) (checker.Summary, []byte) {
	t.Helper()
	defer func(was int64) { PartitionAbove = was }(PartitionAbove)
	PartitionAbove = above
	dir := filepath.Join(t.TempDir(), "t", "20260101T000000.000")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := &results.Run{Dir: dir, Test: "t"}
	stored, err := ReadStoredRun(run)
	if err != nil {
		t.Fatal(err)
	}
	s, err := stored.Check(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := SaveResults(run, s, nil, &stored.History); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	return s, b
}

// framedHistory is ops as the recorder writes them (compressed frames of
// perFrame entries).
func framedHistory(t *testing.T, ops []history.Op, perFrame int) []byte {
	t.Helper()
	var buf bytes.Buffer
	fw, err := history.NewFrameWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(ops); i += perFrame {
		var lines bytes.Buffer
		for j := i; j < min(i+perFrame, len(ops)); j++ {
			if err := history.Encode(&lines, &ops[j]); err != nil {
				t.Fatal(err)
			}
		}
		if err := fw.WriteFrame(lines.Bytes(), min(perFrame, len(ops)-i)); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func readTestdata(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// `redline check` of a big history (spilled, the linearizable checker
// run partition by partition, the rest on the whole history) writes the
// results.json the whole-history check writes, byte for byte (issue 42):
// on the stored histories as they are, with an anomaly planted, torn
// mid-frame (reported, never a silent prefix), and with indexes given
// twice (then every checker reads it whole). The spill leaves nothing
// behind.
func TestBigHistoryChecksAsWhole(t *testing.T) {
	const gen = "../history/testdata/gen-6k/"
	genConfig := readTestdata(t, gen+"config.json")
	genHistory := readTestdata(t, gen+history.FileName)
	res, err := history.ReadFile(gen + history.FileName)
	if err != nil {
		t.Fatal(err)
	}
	planted := append([]history.Op(nil), res.Ops...)
	for i := range planted {
		if op := &planted[i]; op.Type == history.OK && op.F == "read" && op.Key != "" && op.Key[:len("gen:register:")] == "gen:register:" {
			op.Value = []byte("99") // a value no write produced
			break
		}
	}
	// A counter's final read short of its increments, a set's missing
	// its first element: the counter and set checkers' partitions.
	lost := append([]history.Op(nil), res.Ops...)
	var census []byte // census.json: the lost element kept in a set-aside copy of its key
	for _, prefix := range []string{"gen:counter:", "gen:set:"} {
		for i := len(lost) - 1; i >= 0; i-- {
			if op := &lost[i]; op.Type == history.OK && op.F == "read" && strings.HasPrefix(op.Key, prefix) {
				if vals, ok := op.Ints(); ok && len(vals) > 1 {
					op.SetValue(vals[1:])
					census = fmt.Appendf(nil, `{"prefix":"gen:","nodes":[{"name":"n1","addr":"10.0.0.2:6379","role":"primary",`+
						`"asides":{%q:[{"name":"aside","from":"n2","type":"set","members":["%d"]}]}}]}`, op.Key, vals[0])
				} else {
					op.Value = []byte("1")
				}
				break
			}
		}
	}
	dupIndex := append([]history.Op(nil), res.Ops...)
	dupIndex[100].Index = dupIndex[99].Index
	torn := framedHistory(t, res.Ops, 500)
	torn = torn[:len(torn)-200]

	for _, tc := range []struct {
		name  string
		files map[string][]byte
		want  checker.Validity
	}{
		{"generated run", map[string][]byte{"config.json": genConfig, history.FileName: genHistory}, checker.Valid},
		{"an impossible read", map[string][]byte{"config.json": genConfig, history.FileName: framedHistory(t, planted, 500)}, checker.Invalid},
		{"lost adds", map[string][]byte{"config.json": genConfig, history.FileName: framedHistory(t, lost, 500)}, checker.Invalid},
		{"lost adds, one set aside (census.json)", map[string][]byte{"config.json": genConfig, history.FileName: framedHistory(t, lost, 500), history.CensusFile: census}, checker.Invalid},
		{"torn mid-frame", map[string][]byte{"config.json": genConfig, history.FileName: torn}, checker.Unknown},
		{"an index given twice", map[string][]byte{"config.json": genConfig, history.FileName: framedHistory(t, dupIndex, 500)}, checker.Unknown},
		{"an old run's JSON lines", map[string][]byte{
			"config.json":         []byte(`{"workloads":["counter","register"],"nemesis":["partition"],"key_prefix":"r:"}`),
			history.JSONLinesName: readTestdata(t, "../history/testdata/old-run-history.jsonl"),
		}, checker.Unknown},
	} {
		spills := t.TempDir()
		t.Setenv("TMPDIR", spills)
		whole, wholeJSON := checkStored(t, tc.files, 1<<62)
		_, partJSON := checkStored(t, tc.files, -1)
		if !bytes.Equal(wholeJSON, partJSON) {
			t.Fatalf("%s: results.json differs\nwhole       %s\npartitioned %s", tc.name, wholeJSON, partJSON)
		}
		if whole.Valid != tc.want {
			t.Fatalf("%s: %v, want %v: %s", tc.name, whole.Valid, tc.want, wholeJSON)
		}
		if tc.name == "lost adds, one set aside (census.json)" && !bytes.Contains(wholeJSON, []byte("kept in set-aside copies")) {
			t.Fatalf("%s: no set-aside element: %s", tc.name, wholeJSON)
		}
		if tc.name == "lost adds" && (!bytes.Contains(wholeJSON, []byte("acknowledged increments lost")) || !bytes.Contains(wholeJSON, []byte("acknowledged adds lost"))) {
			t.Fatalf("%s: no counter or set loss: %s", tc.name, wholeJSON)
		}
		if left, _ := os.ReadDir(spills); len(left) > 0 {
			t.Fatalf("%s: the spill left %v behind", tc.name, left)
		}
	}
}
