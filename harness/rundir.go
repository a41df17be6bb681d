package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/clusteradmin"
	"github.com/redline-dev/redline/harness/bench"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/results"
)

// SaveLoad stores what the load driver (harness/bench) measured in the
// run's directory: bench's own files (bench.Save: bench.json, histograms,
// report.html) and results.json with its outcome as the "bench" checker's
// result (bench.Outcome), so that `results list/show/compare` read a load
// test as any other run.
func SaveLoad(run *results.Run, r *bench.Result) error {
	res := bench.Outcome(r)
	s := checker.Summary{Valid: res.Valid, Checkers: map[string]checker.Result{checker.BenchName: res}}
	if err := run.WriteJSON("results.json", s); err != nil {
		return err
	}
	title := "redline bench: " + run.Test + " " + run.Time.Format("2006-01-02 15:04:05")
	return bench.Save(run, run.Dir, title, run.Test+"/"+run.Time.Format(results.TimeLayout), r)
}

// SnapshotNodes stores each node's CLUSTER NODES view in the run's
// nodes/<node>/cluster-nodes-<when>.txt and, after the run, its server
// log (nodes/<node>/server.log) where the runtime has one. A node that
// does not answer gets its error as the view.
func SnapshotNodes(ctx context.Context, run *results.Run, c cluster.Cluster, creds cluster.Credentials, when string, log *Log) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for _, n := range c.Nodes() {
		text, err := clusteradmin.ClusterNodesText(ctx, creds, n.Addr)
		if err != nil {
			text = "error: " + err.Error() + "\n"
		}
		if err := run.WriteFile("nodes/"+n.Name+"/cluster-nodes-"+when+".txt", []byte(text)); err != nil {
			log.Printf("saving CLUSTER NODES of %s: %v", n.Name, err)
		}
		if when != "after" {
			continue
		}
		if ls, ok := c.(cluster.LogSource); ok {
			rc, err := ls.Logs(ctx, n.Name)
			if err != nil {
				log.Printf("server log of %s: %v", n.Name, err)
				continue
			}
			b, _ := io.ReadAll(io.LimitReader(rc, 64<<20))
			rc.Close()
			_ = run.WriteFile("nodes/"+n.Name+"/server.log", b)
		}
	}
}

// ResultsFile is results.json of a history run: the checkers' summary and,
// for clusters redline did not create, the foreign-data audit.
type ResultsFile struct {
	checker.Summary
	Audit *clusteradmin.AuditResult `json:"audit,omitempty"`
}

// UnmarshalJSON reads both parts. Without it, the embedded Summary's own
// UnmarshalJSON (the one place stored figures are read back typed) would
// be promoted and read the whole file, and the audit would be dropped
// without a word (TestRunGuestOnExistingCluster: "results.json has no
// audit" although the file had one).
func (r *ResultsFile) UnmarshalJSON(b []byte) error {
	if err := r.Summary.UnmarshalJSON(b); err != nil {
		return err
	}
	var a struct {
		Audit *clusteradmin.AuditResult `json:"audit"`
	}
	if err := json.Unmarshal(b, &a); err != nil {
		return err
	}
	r.Audit = a.Audit
	return nil
}

// SaveResults writes a history run's results.json, the checkers' files and
// report.html; hist, when not nil, is the run's history as read already
// (the report then does not read it again).
func SaveResults(run *results.Run, s checker.Summary, audit *clusteradmin.AuditResult, hist *history.ReadResult) error {
	if err := run.WriteJSON("results.json", ResultsFile{s, audit}); err != nil {
		return err
	}
	for name, r := range s.Checkers {
		for file, data := range r.Files {
			if err := run.WriteFile(filepath.Clean(file), data); err != nil {
				return fmt.Errorf("checker %s: %w", name, err)
			}
		}
	}
	return results.WriteReportOf(run, hist)
}
