package results

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// PruneRule says which runs prune removes: those beyond the newest Keep of
// their test (0: no such rule) and started more than OlderThan before Now
// (0: no such rule). With both rules a run goes only if both select it:
// each rule keeps what it keeps, as restic's forget does.
type PruneRule struct {
	Keep      int
	OlderThan time.Duration
	Now       time.Time
}

// Prunable is a run prune would remove, with its size on disk.
type Prunable struct {
	Entry
	Bytes int64
}

// Prunable lists the runs r selects, oldest first. The run latest points
// at is never among them, nor anything that is not a run directory
// (suites/, rpo/, a directory linked in from elsewhere).
func (s Store) Prunable(r PruneRule) ([]Prunable, error) {
	if r.Keep <= 0 && r.OlderThan <= 0 {
		return nil, fmt.Errorf("no rule: give a number of runs to keep per test, an age, or both")
	}
	runs, err := s.List() // newest first
	if err != nil {
		return nil, err
	}
	latest, _ := filepath.EvalSymlinks(filepath.Join(s.Root, "latest"))
	seen := map[string]int{}
	var out []Prunable
	for _, e := range runs {
		seen[e.Test]++
		if r.Keep > 0 && seen[e.Test] <= r.Keep {
			continue
		}
		if r.OlderThan > 0 && r.Now.Sub(e.Time) <= r.OlderThan {
			continue
		}
		if real, err := filepath.EvalSymlinks(e.Dir); err == nil && real == latest {
			continue
		}
		out = append(out, Prunable{Entry: e, Bytes: dirBytes(e.Dir)})
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// Remove deletes a run prune listed, and its test's directory once empty.
// It refuses anything but a run directory of this store (never a symlink).
func (s Store) Remove(p Prunable) error {
	rel, err := filepath.Rel(s.Root, p.Dir)
	if err != nil || strings.HasPrefix(rel, "..") || strings.Count(filepath.ToSlash(rel), "/") != 1 {
		return fmt.Errorf("%s is not a run directory of %s", p.Dir, s.Root)
	}
	st, err := os.Lstat(p.Dir)
	if err != nil {
		return err
	}
	if !st.IsDir() || !isRunDir(p.Dir) {
		return fmt.Errorf("%s is not a run directory", p.Dir)
	}
	if err := os.RemoveAll(p.Dir); err != nil {
		return err
	}
	_ = os.Remove(filepath.Dir(p.Dir)) // only succeeds when empty
	return nil
}

func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
