package suite

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/results"
)

// Result is one run in summary.json.
type Result struct {
	Index     int                      `json:"index"`
	Name      string                   `json:"name"`
	Params    Params                   `json:"params"`
	Verdict   string                   `json:"verdict"`
	ExitCode  int                      `json:"exit_code"`
	Dir       string                   `json:"dir,omitempty"`
	Error     string                   `json:"error,omitempty"`
	Started   time.Time                `json:"started,omitzero"`
	DurationS float64                  `json:"duration_s,omitempty"`
	Checkers  map[string]CheckerResult `json:"checkers,omitempty"`
}

// Summary is summary.json of a suite directory.
type Summary struct {
	Name string `json:"name"`
	Dir  string `json:"dir"`
	// ResultsRoot is the results store the runs went to; a resumed suite
	// keeps using it.
	ResultsRoot string    `json:"results_root,omitempty"`
	Started     time.Time `json:"started"`
	Finished    time.Time `json:"finished,omitzero"`
	Interrupted bool      `json:"interrupted,omitempty"`
	// Study: an RPO study, whose invalid runs are measurements (lost
	// writes); its verdict is "measured" once every run has figures.
	Study bool `json:"study,omitempty"`
	// Written by Write from the runs, for readers of summary.json.
	Overall    string         `json:"verdict"`
	Exit       int            `json:"exit_code"`
	PerVerdict map[string]int `json:"counts"`
	Runs       []Result       `json:"runs"`
}

// Counts is the number of runs per verdict.
func (s *Summary) Counts() map[string]int {
	c := map[string]int{}
	for _, r := range s.Runs {
		c[r.Verdict]++
	}
	return c
}

// ExitCode is the suite's exit code, the worst verdict as Jepsen orders
// them: 1 (some run invalid) beats 2 (some run unknown, or could not
// finish: no verdict is not a pass) beats 0. Runs not yet run count as
// unknown, so an interrupted suite never passes.
func (s *Summary) ExitCode() int { return s.validity().ExitCode() }

// validity is the suite's verdict as a checker's (for a study: valid once
// every run has figures).
func (s *Summary) validity() checker.Validity {
	c := s.Counts()
	if s.Study {
		if c[Error] > 0 || c[Pending] > 0 {
			return checker.Unknown
		}
		return checker.Valid
	}
	switch {
	case c[Invalid] > 0:
		return checker.Invalid
	case c[Unknown] > 0 || c[Error] > 0 || c[Pending] > 0:
		return checker.Unknown
	}
	return checker.Valid
}

// Verdict is the suite's verdict in words.
func (s *Summary) Verdict() string {
	v := s.validity()
	if s.Study && v == checker.Valid {
		return Measured
	}
	return v.String()
}

// Measured is the verdict of a study whose every run gave figures.
const Measured = "measured"

// Load reads summary.json from a suite directory (for --resume).
func Load(dir string) (*Summary, error) {
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		return nil, fmt.Errorf("%s is not a suite directory (no summary.json): %w", dir, err)
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s/summary.json: %w", dir, err)
	}
	s.Dir = dir
	return &s, nil
}

// Suite returns the runs a summary lists, to resume them.
func (s *Summary) Suite() *Suite {
	out := &Suite{Name: s.Name, Study: s.Study}
	for _, r := range s.Runs {
		out.Runs = append(out.Runs, Run{Name: r.Name, Params: r.Params})
	}
	return out
}

// Write writes summary.json, junit.xml and summary.html into s.Dir.
func (s *Summary) Write() error {
	s.Overall = s.Verdict()
	s.Exit = s.ExitCode()
	s.PerVerdict = s.Counts()
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(s.Dir, "summary.json"), append(b, '\n')); err != nil {
		return err
	}
	j, err := s.JUnit()
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(s.Dir, "junit.xml"), j); err != nil {
		return err
	}
	if rows := s.ClientRows(); rows != nil {
		if err := writeFile(filepath.Join(s.Dir, "clients.md"), []byte(ClientsMarkdown(s.Name, rows))); err != nil {
			return err
		}
	}
	h, err := s.HTML()
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(s.Dir, "summary.html"), h)
}

// writeFile replaces a file atomically: a reader (a CI job, a browser)
// never sees half a summary.
func writeFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Failures describes, in words, the checkers of a run that were not
// valid, with their headline figures: the junit failure message.
func (r Result) Failures() string {
	var names []string
	for n, c := range r.Checkers {
		if c.Valid != true {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		c := r.Checkers[n]
		v := "unknown"
		if c.Valid == false {
			v = "invalid"
		}
		p := n + " " + v
		res := c.Result(n)
		if f := results.HeadlineFigures(res); f != "" {
			p += ": " + f
		}
		if e := res.Err(); e != "" {
			p += " (" + e + ")"
		}
		parts = append(parts, p)
	}
	if r.Error != "" {
		parts = append(parts, r.Error)
	}
	return strings.Join(parts, "; ")
}

// JUnit XML, as GitLab, Jenkins and GitHub test reporters read it.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// JUnit renders junit.xml: one testcase per run; an invalid run is a
// failure, an unknown or unfinished one an error, one not yet run skipped.
func (s *Summary) JUnit() ([]byte, error) {
	js := junitSuite{Name: s.Name, Timestamp: s.Started.Format("2006-01-02T15:04:05")}
	var total float64
	for _, r := range s.Runs {
		c := junitCase{Name: r.Name, Classname: "redline.suite." + s.Name, Time: fmt.Sprintf("%.3f", r.DurationS)}
		total += r.DurationS
		if r.Dir != "" {
			c.SystemOut = "results: " + r.Dir + "\nparams: " + paramString(r.Params)
		}
		msg := r.Failures()
		switch r.Verdict {
		case Invalid:
			if s.Study {
				// Lost writes are what a study measures: a passing case
				// that says what it measured (the study exits 0).
				c.SystemOut = strings.TrimSpace(c.SystemOut + "\nmeasured: " + msg)
				break
			}
			c.Failure = &junitProblem{Message: msg, Type: "invalid", Text: msg}
			js.Failures++
		case Unknown, Error:
			c.Error = &junitProblem{Message: msg, Type: r.Verdict, Text: msg}
			js.Errors++
		case Pending:
			c.Skipped = &junitProblem{Message: "not run (suite interrupted; resume with redline suite --resume " + s.Dir + ")"}
			js.Skipped++
		}
		js.Cases = append(js.Cases, c)
		js.Tests++
	}
	js.Time = fmt.Sprintf("%.3f", total)
	all := junitSuites{Name: "redline", Tests: js.Tests, Failures: js.Failures, Errors: js.Errors, Skipped: js.Skipped, Time: js.Time, Suites: []junitSuite{js}}
	b, err := xml.MarshalIndent(all, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

func paramString(ps Params) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = "--" + p.Key + " " + strings.Join(p.Values, ",")
	}
	return strings.Join(parts, " ")
}

// varying lists the keys whose values differ between runs, in first-seen
// order: the columns of the summary table.
func (s *Summary) varying() []string {
	var keys []string
	vals := map[string]map[string]bool{}
	for _, r := range s.Runs {
		for _, p := range r.Params {
			if vals[p.Key] == nil {
				vals[p.Key] = map[string]bool{}
				keys = append(keys, p.Key)
			}
			vals[p.Key][strings.Join(p.Values, ",")] = true
		}
	}
	var out []string
	for _, k := range keys {
		n := len(vals[k])
		for _, r := range s.Runs {
			if r.Params.Get(k) == "" && !slices.ContainsFunc(r.Params, func(p Param) bool { return p.Key == k }) {
				n++ // absent in some run: it varies
				break
			}
		}
		if n > 1 {
			out = append(out, k)
		}
	}
	return out
}

type htmlRow struct {
	Index   int
	Cells   []string
	Verdict string
	Report  string
	Figures string
	Secs    string
}

// HTML renders summary.html: every run a row, coloured by verdict, with
// the parameters that vary as columns and a link to the run's report.
func (s *Summary) HTML() ([]byte, error) {
	cols := s.varying()
	var rows []htmlRow
	for _, r := range s.Runs {
		row := htmlRow{Index: r.Index + 1, Verdict: r.Verdict, Figures: r.Failures()}
		if r.Verdict != Pending {
			row.Secs = fmt.Sprintf("%.0f s", r.DurationS)
		}
		for _, k := range cols {
			row.Cells = append(row.Cells, r.Params.Get(k))
		}
		if r.Dir != "" {
			rel, err := filepath.Rel(s.Dir, filepath.Join(r.Dir, "report.html"))
			if err != nil || !filepath.IsAbs(s.Dir) && filepath.IsAbs(r.Dir) {
				rel = filepath.Join(r.Dir, "report.html")
				if a, err := filepath.Abs(rel); err == nil {
					rel = "file://" + a
				}
			}
			row.Report = rel
		}
		if row.Figures == "" && r.Verdict == Valid {
			row.Figures = "all checkers valid"
		}
		rows = append(rows, row)
	}
	var buf bytes.Buffer
	err := summaryPage.Execute(&buf, map[string]any{
		"S": s, "Cols": cols, "Rows": rows, "Counts": s.Counts(), "Verdict": s.Verdict(), "Grid": grid(cols, rows),
		"Clients": s.ClientRows(),
	})
	return buf.Bytes(), err
}

// matrixGrid is a two-key matrix drawn as a grid: one row per value of the
// first key, one column per value of the second.
type matrixGrid struct {
	RowKey, ColKey string
	ColValues      []string
	Rows           []gridRow
}

type gridRow struct {
	Value string
	Cells []*htmlRow // nil where no run has the pair
}

// grid returns the grid when exactly two keys vary and each pair of their
// values is one run; nil otherwise (the run table says it all).
func grid(cols []string, rows []htmlRow) *matrixGrid {
	if len(cols) != 2 {
		return nil
	}
	g := &matrixGrid{RowKey: cols[0], ColKey: cols[1]}
	var rowValues []string
	at := map[[2]string]*htmlRow{}
	for i := range rows {
		a, b := rows[i].Cells[0], rows[i].Cells[1]
		if _, dup := at[[2]string{a, b}]; dup {
			return nil
		}
		at[[2]string{a, b}] = &rows[i]
		if !slices.Contains(rowValues, a) {
			rowValues = append(rowValues, a)
		}
		if !slices.Contains(g.ColValues, b) {
			g.ColValues = append(g.ColValues, b)
		}
	}
	for _, a := range rowValues {
		r := gridRow{Value: a}
		for _, b := range g.ColValues {
			r.Cells = append(r.Cells, at[[2]string{a, b}])
		}
		g.Rows = append(g.Rows, r)
	}
	return g
}

var summaryPage = template.Must(template.New("summary").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>suite {{.S.Name}}: {{.Verdict}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em}
table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
.valid{background:#d9f2d9}.invalid{background:#f8c9c4}.unknown{background:#fbe7b5}
.error{background:#f1d0f5}.pending{background:#eee;color:#777}.measured{background:#d6e4f7}
{{if .S.Study}}.invalid{background:#fbf3d5}{{end}}
</style></head><body>
<h1>{{if .S.Study}}RPO study{{else}}suite {{.S.Name}}{{end}}: <span class="{{.Verdict}}">{{.Verdict}}</span></h1>
{{if .S.Study}}<p id="study-note">A study measures what faults lose: a run is "invalid" when acknowledged writes were lost, which is the measurement, not a failure of the study. The figures are in rpo.md and rpo.html beside this page.</p>{{end}}
<p>started {{.S.Started.Format "2006-01-02 15:04:05 UTC"}}{{if .S.Interrupted}}, interrupted{{end}};
{{range $v, $n := .Counts}}{{$v}} {{$n}} &nbsp;{{end}}</p>
{{with .Grid}}<h2>{{.RowKey}} x {{.ColKey}}</h2>
<table><tr><th></th>{{range .ColValues}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr><th>{{.Value}}</th>{{range .Cells}}{{if .}}<td class="{{.Verdict}}" title="{{.Figures}}">{{if .Report}}<a href="{{.Report}}">{{.Verdict}}</a>{{else}}{{.Verdict}}{{end}}</td>{{else}}<td></td>{{end}}{{end}}</tr>
{{end}}</table><h2>runs</h2>{{end}}
{{with .Clients}}<h2>clients</h2>
<p>lost: acknowledged writes missing at the end; double-applied: the counter's unexpected (a lower bound of increments applied
more than once); resent: adds the library sent again after an attempt of unknown outcome; stale: replica reads below what was
acknowledged before them; write gap: the longest time one key went without an acknowledged write while writes were wanted.</p>
<table><tr><th>client</th><th>library</th><th>fault</th><th>verdict</th><th>lost</th><th>double-applied</th><th>resent</th><th>stale / replica reads</th><th>longest write gap (ms)</th></tr>
{{range .}}<tr><td>{{.Client}}</td><td>{{.Library}}</td><td>{{.Fault}}</td><td class="{{.Verdict}}">{{.Verdict}}</td><td>{{.Lost}}</td><td>{{.DoubleApplied}}</td><td>{{.Resent}}</td><td>{{.StaleReads}} / {{.ReplicaReads}}</td><td>{{printf "%.0f" .WriteGapMS}}</td></tr>
{{end}}</table>{{end}}
<table><tr><th>#</th>{{range .Cols}}<th>{{.}}</th>{{end}}<th>verdict</th><th>what the checkers found</th><th>time</th></tr>
{{range .Rows}}<tr><td>{{.Index}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}
<td class="{{.Verdict}}">{{if .Report}}<a href="{{.Report}}">{{.Verdict}}</a>{{else}}{{.Verdict}}{{end}}</td>
<td>{{.Figures}}</td><td>{{.Secs}}</td></tr>
{{end}}</table></body></html>
`))
