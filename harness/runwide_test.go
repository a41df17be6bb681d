package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/results"
)

// judgedApart are the config's checkers that judge a spilled history on
// its partitions or in one pass: the others (rto, until it converts)
// are left out, so that the run-wide steps are all that could read the
// history whole.
func judgedApart(cfg Config) ([]checker.Checker, error) {
	all, err := CheckersFor(cfg)
	var out []checker.Checker
	for _, c := range all {
		_, pc := c.(checker.PartitionChecker)
		_, sc := c.(checker.StreamChecker)
		if pc || sc {
			out = append(out, c)
		}
	}
	return out, err
}

// checkRunWide is `redline check` of files with the checkers judgedApart:
// results.json (or the error), the verdict lines the log and the summary
// give, and how often the history was read whole.
func checkRunWideTree(t *testing.T, files map[string][]byte, above int64) (res string, wholeReads int) {
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
		return "error: " + strings.ReplaceAll(err.Error(), dir, "DIR"), 0
	}
	stored.checkersFor = judgedApart
	read := 0
	stored.OnHistoryRead = func() { read++ }
	var logBuf bytes.Buffer
	s, err := stored.Check(context.Background(), nil, NewLog(nil, &logBuf))
	if err != nil {
		return "error: " + strings.ReplaceAll(err.Error(), dir, "DIR"), stored.wholeReads
	}
	if above < 0 && read != stored.wholeReads {
		t.Fatalf("OnHistoryRead called %d times, the history read whole %d times", read, stored.wholeReads)
	}
	if err := SaveResults(run, s, nil, &stored.History); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The log's lines that say the verdict, the census and the
	// attribution (not how the check went: the paths differ there).
	var lines []string
	for _, l := range strings.Split(logBuf.String(), "\n") {
		if _, rest, ok := strings.Cut(l, " "); ok && strings.Count(l[:min(len(l), 9)], ":") == 2 {
			l = rest // the time the line was logged
		}
		if strings.Contains(l, "torn") || strings.Contains(l, "census") || strings.HasPrefix(l, "checking ") && strings.Contains(l, " entries with ") {
			lines = append(lines, l)
		}
	}
	att, _ := json.Marshal(s.Attribution)
	return string(b) + "\nlog:\n" + strings.Join(lines, "\n") + "\nattribution: " + string(att), stored.wholeReads
}

// `redline check` of a big history whose checkers were all judged on the
// partitions or in the pass takes the run-wide steps (run files, the
// runner's last entries, census.json, the attribution) from the spill and
// scans of the file, never reading it whole, and writes the whole check's
// results.json and verdict lines, byte for byte: on every corpus run and
// on lies told of some: torn, the census line lost, the runner's last
// entries missing, an index given twice, entries swapped, a completion
// missing, a line of garbage. The lies that do not pair or repeat an
// index send the history down the whole path.
func TestRunWideFromTheSpill(t *testing.T) {
	scanned := 0
	for name, files := range corpusRuns(t) {
		lines := historyLines(t, files)
		ls := bytes.SplitAfter(lines, []byte("\n"))
		if len(ls[len(ls)-1]) == 0 {
			ls = ls[:len(ls)-1]
		}
		join := func(ls [][]byte) []byte { return bytes.Join(ls, nil) }
		without := func(drop func(l []byte) bool) []byte {
			var out [][]byte
			for _, l := range ls {
				if !drop(l) {
					out = append(out, l)
				}
			}
			return join(out)
		}
		cases := map[string]map[string][]byte{"as recorded": files}
		if strings.HasPrefix(name, "reference-register") || strings.HasPrefix(name, "reference-counter") || strings.HasPrefix(name, "reference-set") {
			mid := len(ls) / 2
			swapped := append([][]byte(nil), ls...)
			swapped[mid], swapped[mid+1] = swapped[mid+1], swapped[mid]
			twice := append([][]byte(nil), ls...)
			twice[mid+1] = bytes.Replace(twice[mid+1], []byte(`"index":`), []byte(`"index":1,"x":`), 1)
			var lastComp int
			for i, l := range ls {
				if bytes.Contains(l, []byte(`"type":"ok"`)) {
					lastComp = i
				}
			}
			missing := append(append([][]byte(nil), ls[:lastComp]...), ls[lastComp+1:]...)
			garbage := append(append(append([][]byte(nil), ls[:mid]...), []byte("{\"index\": garbage\n")), ls[mid:]...)
			torn := join(ls)
			cases["torn"] = withHistory(files, torn[:len(torn)-7])
			cases["census line lost"] = withHistory(files, without(func(l []byte) bool { return bytes.Contains(l, []byte(`"f":"census"`)) }))
			cases["the runner's last entries missing"] = withHistory(files, without(func(l []byte) bool {
				return bytes.Contains(l, []byte(`"f":"census"`)) || bytes.Contains(l, []byte(`"f":"final-reads"`)) || bytes.Contains(l, []byte(`"f":"heal"`))
			}))
			cases["an index given twice"] = withHistory(files, join(twice))
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
			whole, _ := checkRunWideTree(t, fs, 1<<62)
			spilled, reads := checkRunWideTree(t, fs, -1)
			if whole != spilled {
				t.Fatalf("%s, %s: differs\nwhole   %s\nspilled %s", name, what, whole, spilled)
			}
			if reads == 0 {
				scanned++
			}
			if what == "as recorded" && reads != 0 {
				t.Errorf("%s: the history was read whole %d times", name, reads)
			}
			var verdict struct{ Valid any }
			_ = json.Unmarshal([]byte(strings.SplitN(whole, "\nlog:", 2)[0]), &verdict)
			switch what {
			case "torn", "a line of garbage", "the runner's last entries missing", "an index given twice":
				if verdict.Valid == true {
					t.Fatalf("%s, %s: valid:\n%s", name, what, whole)
				}
			}
			if left, _ := os.ReadDir(spills); len(left) > 0 {
				t.Fatalf("%s, %s: the spill left %v behind", name, what, left)
			}
		}
	}
	if scanned == 0 {
		t.Fatal("no case took the scanned path")
	}
	t.Logf("%d cases judged without reading the history whole", scanned)
}
