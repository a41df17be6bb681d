package harness

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/results"
)

// corpusRuns are the adversary's stored runs (their files by path in the
// run directory): real runs of every workload and fault.
func corpusRuns(t *testing.T) map[string]map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob("adversary/testdata/corpus/*.tar.gz")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	out := map[string]map[string][]byte{}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		tr := tar.NewReader(zr)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.Typeflag != tar.TypeReg || filepath.Clean(h.Name) == "results.json" {
				continue
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[filepath.Clean(h.Name)] = b
		}
		f.Close()
		out[strings.TrimSuffix(filepath.Base(p), ".tar.gz")] = files
	}
	return out
}

// historyLines are files' history as JSON lines.
func historyLines(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	if b, ok := files[history.JSONLinesName]; ok {
		return b
	}
	res, err := history.Decode(bytes.NewReader(files[history.FileName]), "history")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for i := range res.Ops {
		if err := history.Encode(&buf, &res.Ops[i]); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// withHistory is files with their history replaced by JSON lines.
func withHistory(files map[string][]byte, lines []byte) map[string][]byte {
	out := map[string][]byte{}
	for k, v := range files {
		if k != history.FileName && k != history.JSONLinesName {
			out[k] = v
		}
	}
	out[history.JSONLinesName] = lines
	return out
}

// `redline check` of a big history runs the streaming checkers (perf and
// the others that are checker.StreamCheckers) in one pass over the
// history file, and writes the results.json of the whole-history check,
// byte for byte: on every run of the adversary's corpus as recorded, and
// told lies: its last line torn, its census line lost (census.json stands
// in), a completion missing, entries swapped, a line of garbage.
func TestStreamedCheckCorpus(t *testing.T) {
	for name, files := range corpusRuns(t) {
		lines := historyLines(t, files)
		ls := bytes.SplitAfter(lines, []byte("\n"))
		if len(ls[len(ls)-1]) == 0 {
			ls = ls[:len(ls)-1]
		}
		join := func(ls [][]byte) []byte { return bytes.Join(ls, nil) }
		cases := map[string]map[string][]byte{"as recorded": files}
		// The lies on a few runs only: each check takes a while.
		if strings.HasPrefix(name, "reference-register") {
			var noCensus [][]byte
			for _, l := range ls {
				if !bytes.Contains(l, []byte(`"f":"census"`)) {
					noCensus = append(noCensus, l)
				}
			}
			mid := len(ls) / 2
			swapped := append([][]byte(nil), ls...)
			swapped[mid], swapped[mid+1] = swapped[mid+1], swapped[mid]
			var lastComp int
			for i, l := range ls {
				if bytes.Contains(l, []byte(`"type":"ok"`)) {
					lastComp = i
				}
			}
			missing := append(append([][]byte(nil), ls[:lastComp]...), ls[lastComp+1:]...)
			garbage := append(append(append([][]byte(nil), ls[:mid]...), []byte("{\"index\": garbage\n")), ls[mid:]...)
			torn := join(ls)
			torn = torn[:len(torn)-7]
			cases["torn"] = withHistory(files, torn)
			cases["census line lost"] = withHistory(files, join(noCensus))
			cases["entries swapped"] = withHistory(files, join(swapped))
			cases["a completion missing"] = withHistory(files, join(missing))
			cases["a line of garbage"] = withHistory(files, join(garbage))
		}
		for what, fs := range cases {
			spills := t.TempDir()
			t.Setenv("TMPDIR", spills)
			if _, ok := fs[history.JSONLinesName]; !ok {
				fs = withHistory(fs, lines)
			}
			whole, streamed := checkTreeOrErr(t, fs, 1<<62), checkTreeOrErr(t, fs, -1)
			if whole != streamed {
				t.Fatalf("%s, %s: results.json differs\nwhole    %s\nstreamed %s", name, what, whole, streamed)
			}
			var verdict struct{ Valid any }
			_ = json.Unmarshal([]byte(whole), &verdict)
			// The same bytes on both paths; a torn history is never valid
			// (a completion missing at the end is an op left open, which
			// the whole check may still call valid).
			if (what == "torn" || what == "a line of garbage") && verdict.Valid == true {
				t.Fatalf("%s, %s: valid: %s", name, what, whole)
			}
			if left, _ := os.ReadDir(spills); len(left) > 0 {
				t.Fatalf("%s, %s: the spill left %v behind", name, what, left)
			}
		}
	}
}

// checkTreeOrErr is checkTree's results.json, or the error that stopped
// the check (a history of garbage refused on both paths alike).
func checkTreeOrErr(t *testing.T, files map[string][]byte, above int64) (out string) {
	t.Helper()
	defer func(was int64) { PartitionAbove = was }(PartitionAbove)
	PartitionAbove = above
	dir := filepath.Join(t.TempDir(), "t", "20260101T000000.000")
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := &results.Run{Dir: dir, Test: "t"}
	stored, err := ReadStoredRun(run)
	if err != nil {
		return "error: " + strings.ReplaceAll(err.Error(), dir, "DIR")
	}
	s, err := stored.Check(context.Background(), nil, nil)
	if err != nil {
		return "error: " + strings.ReplaceAll(err.Error(), dir, "DIR")
	}
	if err := SaveResults(run, s, nil, &stored.History); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The partitioned path gives the streaming checkers to the pass and the
// partition checkers (the RTO checker of each workload among them) to the
// partitions, and none of them to the whole read.
func TestStreamedCheckersLeaveTheWholeRead(t *testing.T) {
	const gen = "../history/testdata/gen-6k/"
	defer func(was int64) { PartitionAbove = was }(PartitionAbove)
	PartitionAbove = -1
	t.Setenv("TMPDIR", t.TempDir())
	dir := filepath.Join(t.TempDir(), "t", "20260101T000000.000")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"config.json", history.FileName} {
		if err := os.WriteFile(filepath.Join(dir, name), readTestdata(t, gen+name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stored, err := ReadStoredRun(&results.Run{Dir: dir, Test: "t"})
	if err != nil {
		t.Fatal(err)
	}
	checkers, err := CheckersFor(stored.Config)
	if err != nil {
		t.Fatal(err)
	}
	left, err := stored.checkPartitions(context.Background(), checkers, nil)
	if err != nil {
		t.Fatal(err)
	}
	streamed, rtos := 0, 0
	for i, c := range checkers {
		_, streams := c.(checker.StreamChecker)
		_, parts := c.(checker.PartitionChecker)
		if _, done := left[i].(checked); (streams || parts) && !done {
			t.Fatalf("%s: a streaming or partition checker left to the whole read", c.Name())
		}
		if streams {
			streamed++
		}
		if parts && strings.HasSuffix(c.Name(), "rto") {
			rtos++
		}
	}
	if streamed == 0 || rtos == 0 {
		t.Fatalf("%d streaming checkers, %d rto checkers on the partitions among the run's", streamed, rtos)
	}
}
