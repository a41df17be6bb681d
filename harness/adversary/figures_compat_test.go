package adversary

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redline-dev/redline/checker"
)

// The hashes of results.json as the checkers write it for every run of
// the corpus, taken with the code from before the checkers' figures became
// typed values (map[string]any, keys sorted at every level): a figure now
// written through a typed value must come out byte for byte the same.
const resultsHashesPath = "testdata/results-json.sha256"

var updateHashes = flag.Bool("update-results-hashes", false, "rewrite "+resultsHashesPath+" from this run")

// resultsJSON is a summary as results.json holds it (results.Run.WriteJSON).
func resultsJSON(t *testing.T, s checker.Summary) []byte {
	t.Helper()
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// results.json stays byte-compatible: the stored results.json of every
// corpus run, read back and written again, is the same bytes (old runs read
// by results list/show/compare keep their figures), and a fresh check of
// every run writes the bytes it wrote before (the hashes file).
func TestResultsJSONBytesUnchanged(t *testing.T) {
	want := map[string]string{}
	if b, err := os.ReadFile(resultsHashesPath); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if hash, name, ok := strings.Cut(line, "  "); ok {
				want[name] = hash
			}
		}
	} else if !*updateHashes {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range loadCorpus(t) {
		stored := r.Files[ResultsFile]
		if got := resultsJSON(t, r.Recorded); !bytes.Equal(got, stored) {
			t.Errorf("%s: the stored results.json read back and written again differs (%d bytes, stored %d)", r.Name, len(got), len(stored))
			dumpDiff(t, r.Name+"-stored", stored, got)
		}
		fresh := resultsJSON(t, recheck(t, r))
		sum := sha256.Sum256(fresh)
		hash := hex.EncodeToString(sum[:])
		lines = append(lines, hash+"  "+r.Name)
		if !*updateHashes && want[r.Name] != hash {
			t.Errorf("%s: results.json of a fresh check differs from the bytes the map figures wrote (hash %s, want %s)", r.Name, hash, want[r.Name])
			dumpDiff(t, r.Name+"-fresh", nil, fresh)
		}
	}
	if *updateHashes {
		if err := os.WriteFile(resultsHashesPath, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// dumpDiff keeps the bytes that differ where REDLINE_COMPAT_DUMP names, to
// diff by hand.
func dumpDiff(t *testing.T, name string, want, got []byte) {
	dir := os.Getenv("REDLINE_COMPAT_DUMP")
	if dir == "" {
		return
	}
	if want != nil {
		_ = os.WriteFile(filepath.Join(dir, name+".want.json"), want, 0o644)
	}
	_ = os.WriteFile(filepath.Join(dir, name+".got.json"), got, 0o644)
}
