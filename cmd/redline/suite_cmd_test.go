package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redline-dev/redline/harness/suite"
	"github.com/redline-dev/redline/history"
)

func TestSuiteBadFileExits254WithLineAndKey(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(file, []byte("name: x\ndefaults:\n  target: reference\n  nemesis: partition,bogus\nruns: [{}]\n"), 0o644)
	var out, errb bytes.Buffer
	code := run([]string{"suite", file, "--results", t.TempDir()}, &out, &errb)
	if code != exitBadArgs || !strings.Contains(errb.String(), `line 5`) && !strings.Contains(errb.String(), "bogus") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, c := range []struct{ file, want string }{
		{"name: x\nruns:\n  - {workload: set, results: /tmp}\n", `line 3, key "results"`},
		{"name: x\nruns:\n  - {workload: set}\n  - {wait: lots}\n", `line 4, key "wait"`},
		{"name: x\nmatrix:\n  workload: [set, nosuch]\n", `run workload=nosuch`},
	} {
		os.WriteFile(file, []byte(c.file), 0o644)
		errb.Reset()
		code := run([]string{"suite", file}, &out, &errb)
		if code != exitBadArgs || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%q: exit %d, want 254 and %q: %s", c.file, code, c.want, errb.String())
		}
	}
	errb.Reset()
	if code := run([]string{"suite", "--preset", "nosuch"}, &out, &errb); code != exitBadArgs || !strings.Contains(errb.String(), "release") {
		t.Fatalf("unknown preset: exit %d: %s", code, errb.String())
	}
}

// The release preset expands to every workload under every fault.
func TestReleasePresetExpands(t *testing.T) {
	data, err := suite.Preset("release")
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Parse(data, nil, checkRunFlag, func(ps suite.Params) error { return validateSuiteRun(ps, true) })
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Runs) != 32 {
		t.Fatalf("%d runs, want 4 workloads x 8 faults", len(s.Runs))
	}
	// Retargeted at an image without the clock shim, the preset skips the
	// clock runs and says why, instead of failing.
	over, err := parseSets([]string{"target=redis", "image=some/redis:7"})
	if err != nil {
		t.Fatal(err)
	}
	s, err = suite.Parse(data, over, checkRunFlag, func(ps suite.Params) error { return validateSuiteRun(ps, true) })
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Runs) != 28 || len(s.Skipped) != 4 || !strings.Contains(s.Skipped[0], "no clock shim") {
		t.Fatalf("%d runs, skipped %v", len(s.Runs), s.Skipped)
	}
	// A suite file of the user's that asks for it fails instead.
	_, err = suite.Parse([]byte("name: x\nruns:\n  - {target: redis, image: a/b, nemesis: clock}\n"), nil, checkRunFlag,
		func(ps suite.Params) error { return validateSuiteRun(ps, false) })
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("got %v", err)
	}
}

// A short suite against containers: two runs, four files, a junit.xml a
// parser reads, and --resume runs again only what has no verdict.
func TestSuiteInDocker(t *testing.T) {
	requireDocker(t)
	res := t.TempDir()
	file := filepath.Join(t.TempDir(), "smoke.yaml")
	os.WriteFile(file, []byte("name: smoke\ndefaults: {target: reference, time-limit: 3s, node-timeout: 1s, seed: 9}\nmatrix:\n  workload: [register, set]\n"), 0o644)
	var out, errb bytes.Buffer
	code := run([]string{"suite", file, "--results", res}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(res, "suites", "smoke", "*"))
	if len(dirs) != 1 {
		t.Fatalf("suite directories: %v", dirs)
	}
	dir := dirs[0]
	for _, f := range []string{"suite.yaml", "summary.json", "junit.xml", "summary.html"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "junit.xml"))
	var j struct {
		Suites []struct {
			Tests int `xml:"tests,attr"`
			Cases []struct {
				Name string `xml:"name,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &j); err != nil || len(j.Suites) != 1 || len(j.Suites[0].Cases) != 2 || j.Suites[0].Tests != 2 {
		t.Fatalf("junit.xml (%v): %s", err, b)
	}
	sum, err := suite.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sum.Runs {
		if r.Verdict != suite.Valid || r.Dir == "" || r.Checkers["perf"].Valid == nil {
			t.Fatalf("run %s: %+v", r.Name, r)
		}
		if _, err := os.Stat(filepath.Join(r.Dir, history.FileName)); err != nil {
			t.Fatalf("run %s not stored as a normal run: %v", r.Name, err)
		}
		var cfg struct {
			Versions map[string]string `json:"versions"`
		}
		b, _ := os.ReadFile(filepath.Join(r.Dir, "config.json"))
		if err := json.Unmarshal(b, &cfg); err != nil || cfg.Versions["cluster"] == "" {
			t.Fatalf("run %s: config.json names no cluster (%v)", r.Name, err)
		}
		if l := leftovers(t, cfg.Versions["cluster"]); l != "" {
			t.Fatalf("left behind: %s", l)
		}
	}

	// Pretend the second run was cut short, then resume.
	sum.Runs[1].Verdict, sum.Runs[1].Dir, sum.Runs[1].Checkers = suite.Pending, "", nil
	jb, _ := json.Marshal(sum)
	os.WriteFile(filepath.Join(dir, "summary.json"), jb, 0o644)
	out.Reset()
	code = run([]string{"suite", "--resume", dir}, &out, &errb)
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "workload=register: valid (kept from before)") || strings.Count(out.String(), "workload=set ...") != 1 {
		t.Fatalf("resume output:\n%s", out.String())
	}
	after, _ := suite.Load(dir)
	if after.Runs[1].Verdict != suite.Valid || !strings.HasPrefix(after.Runs[1].Dir, res) || after.Runs[0].Dir != sum.Runs[0].Dir {
		t.Fatalf("after resume: %+v", after.Runs)
	}
}
