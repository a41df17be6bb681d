// Package adversary plants anomalies and lies into real recorded runs and
// checks that redline's checkers see them (DESIGN.md, checker principles:
// "the project's adversary test plants anomalies and lies into real
// recorded histories"). The corpus is a folder of runs recorded by
// scripts/record-adversary-corpus, one tar.gz each; a Mutation edits one
// run's history or files the way a buggy server (an anomaly) or a lying
// witness (a lie) would; Check judges the result exactly as `redline
// check` does (harness.ReadStoredRun, StoredRun.Check).
package adversary

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/results"
)

// Run is one recorded run: its files by relative name (history.jsonl,
// whichever format and name it was recorded in,
// census.json, topology.jsonl, config.json, results.json, nodes/...) and
// its history decoded. A mutation edits Ops (written back as history.jsonl
// unless it set Raw) or Files.
type Run struct {
	Name  string
	Files map[string][]byte
	Ops   []history.Op
	// Raw, when set, is written as history.jsonl instead of Ops (a torn
	// line is no Op).
	Raw []byte
	// Config is config.json decoded.
	Config harness.Config
	// Recorded is the verdict the run's own results.json gives.
	Recorded checker.Summary
}

// Files the checkers read; the rest of a run's files are kept as they are.
const (
	HistoryFile  = "history.jsonl"
	CensusFile   = history.CensusFile
	TopologyFile = harness.TopologyFile
	ConfigFile   = "config.json"
	ResultsFile  = "results.json"
)

// LoadCorpus reads every *.tar.gz of dir, sorted by name.
func LoadCorpus(dir string) ([]*Run, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.tar.gz"))
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no runs (*.tar.gz) in %s: record them with scripts/record-adversary-corpus", dir)
	}
	slices.Sort(names)
	var out []*Run
	for _, n := range names {
		r, err := loadRun(n)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func loadRun(path string) (*Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r := &Run{Name: strings.TrimSuffix(filepath.Base(path), ".tar.gz"), Files: map[string][]byte{}}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		r.Files[filepath.Clean(h.Name)] = b
	}
	// A run recorded since the compressed history holds FileName: it is
	// read (any format reads) and kept as HistoryFile, what WriteDir
	// writes back.
	if b, ok := r.Files[history.FileName]; ok {
		r.Files[HistoryFile] = b
		delete(r.Files, history.FileName)
	}
	for _, need := range []string{HistoryFile, ConfigFile, ResultsFile} {
		if r.Files[need] == nil {
			return nil, fmt.Errorf("%s: no %s (or %s) in the archive", path, need, history.FileName)
		}
	}
	hist, err := history.Decode(bytes.NewReader(r.Files[HistoryFile]), r.Name+"/"+HistoryFile)
	if err != nil {
		return nil, err
	}
	if hist.TruncatedTail {
		return nil, fmt.Errorf("%s: the recorded history is torn: re-record it", path)
	}
	r.Ops = hist.Ops
	if err := json.Unmarshal(r.Files[ConfigFile], &r.Config); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", path, ConfigFile, err)
	}
	if err := json.Unmarshal(r.Files[ResultsFile], &r.Recorded); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", path, ResultsFile, err)
	}
	return r, nil
}

// Clone is a deep enough copy of r for a mutation to edit: the op slice
// and the file map are new (an Op's Ext is replaced, never written
// through, so sharing it is safe), the file contents are shared (replace
// them, never write into them).
func (r *Run) Clone() *Run {
	c := *r
	c.Ops = slices.Clone(r.Ops)
	c.Files = make(map[string][]byte, len(r.Files))
	for k, v := range r.Files {
		c.Files[k] = v
	}
	return &c
}

// WriteDir writes the run into a fresh run directory under parent and
// returns it: history.jsonl from Ops (or Raw), every other file as is,
// results.json left out (the check writes no results; the recorded one
// is r.Recorded).
func (r *Run) WriteDir(parent string) (string, error) {
	dir := filepath.Join(parent, r.Name, "20260101T000000.000")
	for name, b := range r.Files {
		if name == ResultsFile || name == HistoryFile {
			continue
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return "", err
		}
	}
	h := r.Raw
	if h == nil {
		var buf bytes.Buffer
		for i := range r.Ops {
			if err := history.Encode(&buf, &r.Ops[i]); err != nil {
				return "", err
			}
		}
		h = buf.Bytes()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return dir, os.WriteFile(filepath.Join(dir, HistoryFile), h, 0o644)
}

// Check judges the run as `redline check` would, in a scratch directory
// under parent.
func (r *Run) Check(ctx context.Context, parent string) (checker.Summary, error) {
	dir, err := r.WriteDir(parent)
	if err != nil {
		return checker.Summary{}, err
	}
	run, err := results.Open(dir)
	if err != nil {
		return checker.Summary{}, err
	}
	stored, err := harness.ReadStoredRun(run)
	if err != nil {
		return checker.Summary{}, err
	}
	return stored.Check(ctx, nil, nil)
}
