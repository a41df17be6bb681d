// Package results is the on-disk store of runs:
//
//	<root>/<test-name>/<YYYYMMDDTHHMMSS.mmm>/
//	    config.json history.jsonl.zst results.json report.html run.log
//	    (history.jsonl in runs of redline before the compressed history)
//	    nodes/<node>/ (server log, CLUSTER NODES before and after)
//	<root>/latest -> the newest run
//
// It also lists, shows and compares runs and renders the report. It is the
// one reader of results.json (ReadSummary): the report, the listing,
// compare, suites and shrink read a run's verdict through it.
package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

// TimeLayout names a run's directory.
const TimeLayout = "20060102T150405.000"

// Store is a results root directory.
type Store struct{ Root string }

// Run is one run's directory.
type Run struct {
	Dir  string
	Test string
	Time time.Time
}

// NewRun creates the directory of a run started at t and points latest at it.
func (s Store) NewRun(test string, t time.Time) (*Run, error) {
	if test == "" || strings.ContainsAny(test, `/\`) || test == "latest" {
		return nil, fmt.Errorf("invalid test name %q", test)
	}
	t = t.UTC()
	dir := filepath.Join(s.Root, test, t.Format(TimeLayout))
	if err := os.MkdirAll(filepath.Join(dir, "nodes"), 0o755); err != nil {
		return nil, fmt.Errorf("cannot create the results directory: %w", err)
	}
	r := &Run{Dir: dir, Test: test, Time: t}
	if err := s.pointLatest(r); err != nil {
		return nil, err
	}
	return r, nil
}

func (s Store) pointLatest(r *Run) error {
	rel, err := filepath.Rel(s.Root, r.Dir)
	if err != nil {
		return err
	}
	link := filepath.Join(s.Root, "latest")
	tmp := link + ".tmp"
	_ = os.Remove(tmp)
	if err := os.Symlink(rel, tmp); err != nil {
		return fmt.Errorf("cannot link latest in the results store: %w", err)
	}
	return os.Rename(tmp, link)
}

// Open opens an existing run directory.
func Open(dir string) (*Run, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("no run at %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a run directory", dir)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	r := &Run{Dir: real, Test: filepath.Base(filepath.Dir(real))}
	r.Time, _ = time.Parse(TimeLayout, filepath.Base(real))
	return r, nil
}

// Path is a file inside the run.
func (r *Run) Path(parts ...string) string {
	return filepath.Join(append([]string{r.Dir}, parts...)...)
}

// WriteFile writes a file inside the run, creating directories. It
// replaces the file whole or not at all: 'redline check' rewrites
// results.json and report.html of a run others may be reading (results
// serve, a CI step), and a crash or a full disk in the middle of a write
// in place left a torn file where a good one was.
func (r *Run) WriteFile(name string, data []byte) error {
	p := r.Path(name)
	if !strings.HasPrefix(p, r.Dir+string(filepath.Separator)) {
		return fmt.Errorf("refusing to write outside the run directory: %s", name)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return writeAtomic(p, data, 0o644)
}

// writeAtomic writes data to a temporary file beside path, syncs it,
// renames it over path and syncs the directory: a reader sees the old
// file or the new one, never a part of either, even across a crash.
func writeAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // the rename is durable once the directory is
		d.Close()
	}
	return nil
}

// WriteJSON writes v indented.
func (r *Run) WriteJSON(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return r.WriteFile(name, append(b, '\n'))
}

// ReadJSON reads a JSON file of the run into v.
func (r *Run) ReadJSON(name string, v any) error {
	b, err := os.ReadFile(r.Path(name))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", r.Path(name), err)
	}
	return nil
}

// ReadSummary reads the checkers' summary of the run in dir from its
// results.json ({"valid":..., "checkers":{"<name>":{"valid":...,
// <figures>}}, ...}), the one reader of that file.
func ReadSummary(dir string) (checker.Summary, error) {
	var s checker.Summary
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return s, fmt.Errorf("no results.json in %s", dir)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("%s/results.json: %w", dir, err)
	}
	if s.Checkers == nil {
		return s, errors.New(dir + "/results.json has no checkers")
	}
	return s, nil
}

// Summary is ReadSummary of the run's directory.
func (r *Run) Summary() (checker.Summary, error) { return ReadSummary(r.Dir) }

// Entry is one run in a listing.
type Entry struct {
	Test  string
	Time  time.Time
	Dir   string
	Valid string // "true", "false", "unknown", or "incomplete" without results.json
	// From config.json and results.json, empty when they are missing.
	Target, Workloads, Faults string
	KeyFigures                string // "lost 3, stale reads 2 ..." or ""
	// Bench marks a load test (redline bench): it measures, its verdict
	// only says whether anything was measured.
	Bench bool
}

// List returns every run, newest first.
func (s Store) List() ([]Entry, error) {
	tests, err := os.ReadDir(s.Root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, t := range tests {
		if !t.IsDir() || t.Name() == "latest" {
			continue
		}
		runs, err := os.ReadDir(filepath.Join(s.Root, t.Name()))
		if err != nil {
			continue
		}
		for _, r := range runs {
			ts, err := time.Parse(TimeLayout, r.Name())
			if err != nil || !r.IsDir() {
				continue
			}
			e := Entry{Test: t.Name(), Time: ts, Dir: filepath.Join(s.Root, t.Name(), r.Name()), Valid: "incomplete"}
			if !isRunDir(e.Dir) {
				continue // e.g. an RPO study's or a suite's directory
			}
			e.describe()
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	return out, nil
}

// isRunDir tells a run's directory from other timestamped directories of
// the store: NewRun creates nodes/ and the run writes its config at once.
func isRunDir(dir string) bool {
	for _, f := range []string{"config.json", history.FileName, history.JSONLinesName, "results.json", "nodes"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

// describe fills what the runs table shows from config.json and results.json.
func (e *Entry) describe() {
	var cfg map[string]any
	if b, err := os.ReadFile(filepath.Join(e.Dir, "config.json")); err == nil && json.Unmarshal(b, &cfg) == nil {
		e.Target, e.Workloads, e.Faults = cfgString(cfg, "target"), cfgString(cfg, "workloads"), cfgString(cfg, "nemesis")
		e.Bench, _ = cfg["bench"].(bool)
	}
	s, err := ReadSummary(e.Dir)
	if err != nil {
		return
	}
	e.Valid = fmt.Sprint(s.Valid.JSONValue())
	e.KeyFigures = keyFigures(s.Checkers)
	if _, ok := s.Checkers[checker.BenchName]; ok {
		e.Bench = true
	}
}
