package suite

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// knownFlags stands in for `redline run`'s flag set.
func knownFlags(key string, values []string) error {
	switch key {
	case "target", "workload", "nemesis", "time-limit", "wait", "seed", "server-config", "server-binary":
	default:
		return fmt.Errorf("unknown key %q", key)
	}
	if key == "wait" && !slices.ContainsFunc(values, func(v string) bool { return v >= "0" && v <= "9" }) {
		return fmt.Errorf("--wait wants a number, got %v", values)
	}
	return nil
}

const releaseCheck = `name: release-check
defaults: {target: redis, time-limit: 60s, server-binary: ./src/redis-server}
matrix:
  workload: [register, set, txn]
  nemesis: [partition, kill]
runs:
  - {workload: counter, nemesis: partition, wait: 1}
  - {server-config: ['min-replicas-to-write 1', 'appendonly yes']}
`

func TestParseCrossesTheMatrixOverDefaults(t *testing.T) {
	s, err := Parse([]byte(releaseCheck), nil, knownFlags, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "release-check" || len(s.Runs) != 3*2+2 {
		t.Fatalf("name %q, %d runs", s.Name, len(s.Runs))
	}
	var names []string
	for _, r := range s.Runs {
		names = append(names, r.Name)
	}
	want := []string{
		"workload=register nemesis=partition", "workload=register nemesis=kill",
		"workload=set nemesis=partition", "workload=set nemesis=kill",
		"workload=txn nemesis=partition", "workload=txn nemesis=kill",
		"workload=counter nemesis=partition wait=1",
		"server-config=min-replicas-to-write 1,appendonly yes",
	}
	if !slices.Equal(names, want) {
		t.Fatalf("runs:\n%s\nwant:\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
	r := s.Runs[3]
	if r.Params.Get("target") != "redis" || r.Params.Get("time-limit") != "60s" || r.Params.Get("workload") != "set" || r.Params.Get("nemesis") != "kill" {
		t.Fatalf("run 4 params %v", r.Params)
	}
	last := s.Runs[7]
	if got := last.Params[len(last.Params)-1]; got.Key != "server-config" || len(got.Values) != 2 {
		t.Fatalf("a repeatable flag keeps its values apart: %v", got)
	}
	if last.Line != 8 {
		t.Fatalf("last run from line %d, want 8", last.Line)
	}
	// Overrides (--set) win over defaults and the run's own keys.
	s, err = Parse([]byte(releaseCheck), Params{{Key: "target", Values: []string{"reference"}}, {Key: "workload", Values: []string{"set"}}}, knownFlags, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Runs {
		if r.Params.Get("target") != "reference" || r.Params.Get("workload") != "set" {
			t.Fatalf("override lost in %s: %v", r.Name, r.Params)
		}
	}
}

func TestParseBadFilesNameLineAndKey(t *testing.T) {
	cases := []struct {
		file      string
		line      int
		key, want string
	}{
		{"name: x\ndefaults:\n  target: redis\n  workloadd: set\nruns: [{}]\n", 4, "workloadd", "unknown key"},
		{"name: x\nmatrix:\n  wait: [1, many]\n", 3, "wait", "wants a number"},
		{"name: x\nmatrix:\n  nemesis: kill\n", 3, "nemesis", "non-empty list"},
		{"name: x\nruns:\n  - {workload: set}\n  - {target: redis, target: reference}\n", 4, "target", "given twice"},
		{"name: x\nrun:\n  - {workload: set}\n", 2, "run", "unknown key"},
		{"defaults: {target: redis}\nruns: [{}]\n", 1, "name", "needs a name"},
		{"name: x\ndefaults: {target: redis}\n", 1, "", "no runs"},
		{"name: x\nruns:\n  - {workload: [set\n", 2, "", "not valid YAML"},
		{"name: x\nruns:\n  - {workload: {a: b}}\n", 3, "workload", "a value or a list"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.file), nil, knownFlags, nil)
		var fe *FileError
		if !errors.As(err, &fe) {
			t.Errorf("%q: want a FileError, got %v", c.file, err)
			continue
		}
		if fe.Line != c.line || fe.Key != c.key || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got line %d key %q: %v; want line %d key %q, %q", c.file, fe.Line, fe.Key, err, c.line, c.key, c.want)
		}
	}
	// A run the run validator refuses names the run and its line.
	_, err := Parse([]byte("name: x\nruns:\n  - {workload: set}\n  - {workload: set, nemesis: clock}\n"), nil, knownFlags,
		func(ps Params) error {
			if ps.Get("nemesis") == "clock" {
				return errors.New("clock skew needs the clock shim")
			}
			return nil
		})
	var fe *FileError
	if !errors.As(err, &fe) || fe.Line != 4 || !strings.Contains(err.Error(), "workload=set nemesis=clock: clock skew") {
		t.Fatalf("got %v", err)
	}
}

// suite.yaml is the expanded suite, itself a valid suite file with the
// same runs.
func TestMarshalRoundTrips(t *testing.T) {
	s, err := Parse([]byte(releaseCheck), nil, knownFlags, nil)
	if err != nil {
		t.Fatal(err)
	}
	y, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(y, nil, knownFlags, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, y)
	}
	if len(back.Runs) != len(s.Runs) {
		t.Fatalf("%d runs back, want %d", len(back.Runs), len(s.Runs))
	}
	for i := range s.Runs {
		a, _ := json.Marshal(s.Runs[i].Params)
		b, _ := json.Marshal(back.Runs[i].Params)
		if string(a) != string(b) {
			t.Fatalf("run %d: %s != %s", i, a, b)
		}
	}
}

// fakeRun pretends to be the runner: it writes a results.json whose
// verdict follows the run's workload.
func fakeRun(root string, calls *[]string) RunFunc {
	return func(ctx context.Context, r Run) Outcome {
		*calls = append(*calls, r.Name)
		dir := filepath.Join(root, strings.ReplaceAll(r.Name, " ", "_"))
		os.MkdirAll(dir, 0o755)
		rj := `{"valid":true,"checkers":{"set":{"valid":true,"lost":0},"perf":{"valid":true,"ops":10}}}`
		code := 0
		switch r.Params.Get("workload") {
		case "bad":
			rj, code = `{"valid":false,"checkers":{"set":{"valid":false,"lost":3,"new_figure":7,"lost_elements":[1,2,3],"latency_ms":{"count":3,"p50":1,"max":2}},"perf":{"valid":true}}}`, 1
		case "unsure":
			rj, code = `{"valid":"unknown","checkers":{"linearizable":{"valid":"unknown","error":"search timed out"}}}`, 2
		case "crash":
			return Outcome{Code: 255, Err: "docker: cannot reach the Docker engine"}
		}
		os.WriteFile(filepath.Join(dir, "results.json"), []byte(rj), 0o644)
		return Outcome{Code: code, Dir: dir}
	}
}

func suiteOf(t *testing.T, workloads ...string) *Suite {
	t.Helper()
	s, err := Parse([]byte("name: t\nmatrix:\n  workload: ["+strings.Join(workloads, ", ")+"]\n"), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestExitCodeIsTheWorstVerdict(t *testing.T) {
	cases := []struct {
		workloads []string
		code      int
		verdict   string
	}{
		{[]string{"set", "set2"}, 0, Valid},
		{[]string{"set", "unsure"}, 2, Unknown},
		{[]string{"unsure", "bad", "set"}, 1, Invalid},
		{[]string{"crash", "set"}, 2, Unknown},
		{[]string{"bad", "crash"}, 1, Invalid},
	}
	for _, c := range cases {
		dir := t.TempDir()
		var calls []string
		sum, err := Execute(context.Background(), suiteOf(t, c.workloads...), Options{Dir: dir, Run: fakeRun(dir, &calls)})
		if err != nil {
			t.Fatal(err)
		}
		if sum.ExitCode() != c.code || sum.Verdict() != c.verdict {
			t.Errorf("%v: exit %d %s, want %d %s", c.workloads, sum.ExitCode(), sum.Verdict(), c.code, c.verdict)
		}
		for _, f := range []string{"suite.yaml", "summary.json", "junit.xml", "summary.html"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("%v: %v", c.workloads, err)
			}
		}
	}
}

func TestSummaryAndJUnit(t *testing.T) {
	dir := t.TempDir()
	var calls []string
	sum, err := Execute(context.Background(), suiteOf(t, "set", "bad", "unsure", "crash"), Options{Dir: dir, Run: fakeRun(dir, &calls)})
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Overall != Invalid || loaded.Exit != 1 || len(loaded.Runs) != 4 || loaded.PerVerdict[Error] != 1 {
		t.Fatalf("summary.json: %+v", loaded)
	}
	bad := loaded.Runs[1]
	set := bad.Checkers["set"].Figures
	if bad.Verdict != Invalid || set["lost"] != 3.0 || set["new_figure"] != 7.0 || set["latency_ms"] == nil {
		t.Fatalf("run 2 figures (new scalar fields and quantiles must be kept): %+v", bad)
	}
	if set["lost_elements"] != nil {
		t.Fatalf("a summary keeps key figures, not example lists: %+v", set)
	}
	if loaded.Runs[3].Verdict != Error || !strings.Contains(loaded.Runs[3].Error, "Docker") {
		t.Fatalf("crashed run: %+v", loaded.Runs[3])
	}

	// junit.xml parses as JUnit and says what failed.
	b, err := os.ReadFile(filepath.Join(dir, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		XMLName xml.Name `xml:"testsuites"`
		Tests   int      `xml:"tests,attr"`
		Suites  []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Errors   int    `xml:"errors,attr"`
			Cases    []struct {
				Name    string `xml:"name,attr"`
				Class   string `xml:"classname,attr"`
				Time    string `xml:"time,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
				Error *struct {
					Message string `xml:"message,attr"`
				} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &j); err != nil {
		t.Fatalf("junit.xml: %v\n%s", err, b)
	}
	if j.Tests != 4 || len(j.Suites) != 1 || j.Suites[0].Failures != 1 || j.Suites[0].Errors != 2 || len(j.Suites[0].Cases) != 4 {
		t.Fatalf("junit counts: %+v", j)
	}
	cs := j.Suites[0].Cases
	if cs[0].Failure != nil || cs[0].Error != nil || cs[0].Name != "workload=set" || cs[0].Class != "redline.suite.t" {
		t.Fatalf("valid case: %+v", cs[0])
	}
	if cs[1].Failure == nil || !strings.Contains(cs[1].Failure.Message, "set invalid: lost=3") {
		t.Fatalf("invalid case: %+v", cs[1])
	}
	if cs[2].Error == nil || !strings.Contains(cs[2].Error.Message, "search timed out") {
		t.Fatalf("unknown case: %+v", cs[2])
	}

	h, err := os.ReadFile(filepath.Join(dir, "summary.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`class="invalid"`, `class="valid"`, `workload=bad/report.html`, "set invalid: lost=3"} {
		if !strings.Contains(string(h), want) {
			t.Errorf("summary.html lacks %q", want)
		}
	}
	_ = sum

	// A two-key matrix is also drawn as a grid.
	dir = t.TempDir()
	m, err := Parse([]byte("name: g\nmatrix:\n  workload: [set, bad]\n  nemesis: [kill, pause]\n"), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Execute(context.Background(), m, Options{Dir: dir, Run: fakeRun(dir, &calls)}); err != nil {
		t.Fatal(err)
	}
	h, _ = os.ReadFile(filepath.Join(dir, "summary.html"))
	if !strings.Contains(string(h), "<h2>workload x nemesis</h2>") || strings.Count(string(h), `<td class="invalid"`) != 4 {
		t.Fatalf("no grid:\n%s", h)
	}
}

// An interrupted suite leaves a summary that says so (never a pass);
// resuming runs only what has no verdict yet.
func TestInterruptAndResume(t *testing.T) {
	dir := t.TempDir()
	s := suiteOf(t, "set", "bad", "set3", "set4")
	ctx, cancel := context.WithCancel(context.Background())
	var calls []string
	inner := fakeRun(dir, &calls)
	run := func(ctx context.Context, r Run) Outcome {
		if len(calls) == 2 { // Ctrl-C during the third run
			cancel()
			calls = append(calls, r.Name)
			return Outcome{Code: 255, Err: "interrupted"}
		}
		return inner(ctx, r)
	}
	sum, err := Execute(ctx, s, Options{Dir: dir, Run: run})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Interrupted || sum.ExitCode() != 1 || sum.Counts()[Pending] != 2 {
		t.Fatalf("interrupted summary: %+v %v", sum, sum.Counts())
	}
	prior, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	calls = nil
	sum, err = Execute(context.Background(), prior.Suite(), Options{Dir: dir, Run: fakeRun(dir, &calls), Prior: prior})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(calls, []string{"workload=set3", "workload=set4"}) {
		t.Fatalf("resumed runs %v, want only the two not run", calls)
	}
	if sum.Interrupted || sum.Counts()[Valid] != 3 || sum.Counts()[Invalid] != 1 || sum.ExitCode() != 1 {
		t.Fatalf("resumed summary: %v", sum.Counts())
	}
}
