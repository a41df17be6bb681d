package results_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/results"
	"github.com/redline-dev/redline/results/resultstest"
)

// bounded writes dir's report again as of a big history (the bound at 0)
// and returns report.html and groups.json, before and after.
func bounded(t *testing.T, run *results.Run) (wholeHTML, boundedHTML, wholeGroups, boundedGroups string) {
	t.Helper()
	dir := run.Dir
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return string(b)
	}
	wholeHTML, wholeGroups = read("report.html"), read(results.GroupsFile)
	saved := results.BoundedAbove
	results.BoundedAbove = 0
	defer func() { results.BoundedAbove = saved }()
	if err := results.WriteReport(run); err != nil {
		t.Fatal(err)
	}
	return wholeHTML, read("report.html"), wholeGroups, read(results.GroupsFile)
}

var boundedNote = regexp.MustCompile(`<p class="why">The history has \d+ entries, a file above the 0 MB a report reads whole[^<]*</p>`)

// A report of a big history reads only what it names, and says so: the
// same anomaly sections (each op named, with its invocation and
// completion), the same groups, the same counts and plots when the calls
// fit in the plots' bound; the timeline not drawn, a note in the report.
func TestBoundedReportIsTheWholesReport(t *testing.T) {
	run, err := resultstest.WriteRun(t.TempDir(), resultstest.Spec{Ops: 20000, Lost: 30})
	if err != nil {
		t.Fatal(err)
	}
	wholeHTML, boundedHTML, wholeGroups, boundedGroups := bounded(t, run)
	if wholeGroups == "" || boundedGroups != wholeGroups {
		t.Errorf("groups differ:\nwhole   %s\nbounded %s", wholeGroups, boundedGroups)
	}
	if !boundedNote.MatchString(boundedHTML) {
		t.Fatalf("no note of the bounded read in the report")
	}
	if strings.Contains(boundedHTML, "1 call in") {
		t.Errorf("the plots say they are thinned; 20000 calls fit")
	}
	if got := boundedNote.ReplaceAllString(boundedHTML, ""); got != wholeHTML {
		t.Errorf("the bounded report differs from the whole's beyond its note")
		for i := range min(len(got), len(wholeHTML)) {
			if got[i] != wholeHTML[i] {
				t.Logf("first difference at byte %d:\nwhole   %q\nbounded %q", i, wholeHTML[max(0, i-200):min(len(wholeHTML), i+200)], got[max(0, i-200):min(len(got), i+200)])
				break
			}
		}
	}
	timeline, _ := os.ReadFile(filepath.Join(run.Dir, "timeline.html"))
	if !strings.Contains(string(timeline), "not drawn") {
		t.Errorf("timeline.html: %.200s", timeline)
	}
}

// Past the plots' bound the plots draw 1 call in a power of two, say so,
// and scale their rates; the counts of completions stay exact.
func TestBoundedReportThinsItsPlots(t *testing.T) {
	run, err := resultstest.WriteRun(t.TempDir(), resultstest.Spec{Ops: 20000, Invalid: true})
	if err != nil {
		t.Fatal(err)
	}
	saved := results.SetMaxReportSamples(3000)
	defer results.SetMaxReportSamples(saved)
	wholeHTML, boundedHTML, _, _ := bounded(t, run)
	if !strings.Contains(boundedHTML, "draw 1 call in 8 (") {
		t.Log(regexp.MustCompile(`The history has[^<]*`).FindString(boundedHTML))
		t.Errorf("no note of 1 call in 8 (20000 calls, at most 3000 drawn)")
	}
	ops := regexp.MustCompile(`\d+ completed: \d+ ok, \d+ fail, \d+ info`)
	if w, b := ops.FindString(wholeHTML), ops.FindString(boundedHTML); w == "" || w != b {
		t.Errorf("counts: whole %q, bounded %q", w, b)
	}
}

// sameBounded writes the report of the run in dir again as of a big
// history and requires the same report, but for the bounded read's note.
func sameBounded(t *testing.T, dir string) {
	t.Helper()
	run, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	wholeHTML, boundedHTML, wholeGroups, boundedGroups := bounded(t, run)
	if boundedGroups != wholeGroups {
		t.Errorf("groups differ:\nwhole   %s\nbounded %s", wholeGroups, boundedGroups)
	}
	if got := boundedNote.ReplaceAllString(boundedHTML, ""); got != wholeHTML {
		t.Errorf("the bounded report differs from the whole's beyond its note")
	}
}

// An anomaly may name a completion (its invocation is then found), or an
// index the history does not have (nothing is invented for it): the
// bounded report shows the same as the whole's.
func TestBoundedReportNamesCompletions(t *testing.T) {
	r, err := (&results.Store{Root: t.TempDir()}).NewRun("t", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	var idx int64
	emit := func(op history.Op) int64 {
		op.Index = idx
		idx++
		if err := history.Encode(&buf, &op); err != nil {
			t.Fatal(err)
		}
		return op.Index
	}
	var comps []int64
	for k := range 40 {
		p := history.Process(k % 3)
		at := int64(k) * int64(time.Millisecond)
		emit(history.Op{Time: at, Process: p, Type: history.Invoke, F: "write", Key: "k", Value: []byte("1")})
		other := emit(history.Op{Time: at + 1, Process: 9, Type: history.Invoke, F: "read", Key: "j"})
		comps = append(comps, emit(history.Op{Time: at + 2, Process: p, Type: history.OK, F: "write", Key: "k", Value: []byte("1"), Node: "10.0.0.2:6379"}))
		emit(history.Op{Time: at + 3, Process: 9, Type: history.OK, F: "read", Key: "j", Value: []byte("1")})
		_ = other
	}
	if err := r.WriteFile(history.FileName, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	s := checker.Summary{Valid: checker.Invalid, Checkers: map[string]checker.Result{"x": {Valid: checker.Invalid, Figures: checker.Map{
		"bad": []any{map[string]any{"index": comps[3], "key": "k"}, map[string]any{"index": comps[20], "key": "k"}, map[string]any{"index": idx + 50, "key": "k"}}}}}}
	if err := r.WriteJSON("results.json", s); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteReport(r); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(r.Dir, "report.html"))
	if !strings.Contains(string(b), ">"+strconv.FormatInt(comps[20]-2, 10)+"<") {
		t.Fatalf("the whole report does not show the invocation of a named completion")
	}
	sameBounded(t, r.Dir)
}
