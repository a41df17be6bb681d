package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/results"
)

// Attribute sets s.Attribution: what happened to each anomaly the checkers
// named, from the history (its key census and journal entries) and the
// servers' own logs in the run directory (run nil: none).
func Attribute(run *results.Run, ops []history.Op, s *checker.Summary) {
	var wall time.Time
	c := history.CensusOf(ops)
	if c != nil {
		wall = c.WallStart
	}
	s.Attribution = checker.AttributeWithTopology(ops, *s, results.ServerLogLines(run, wall), topologySamples(run))
	s.Census = checker.SummarizeCensus(c)
}

// WithCensusFile gives ops the census of the run's census.json when the
// history carries none that decodes (its line torn by a crash, or lost):
// an entry appended after the last one, so that the checkers and the
// attribution read where the keys are at the end from the file the runner
// wrote beside the history. from says where the census came from
// ("history", "census.json" or "" for none).
func WithCensusFile(run *results.Run, ops []history.Op) (out []history.Op, from string) {
	var idx, t int64
	for i := range ops {
		idx = max(idx, ops[i].Index+1)
		t = max(t, ops[i].Time)
	}
	return withCensusFileAt(run, ops, idx, t)
}

// withCensusFileAt is WithCensusFile of a history whose ops may be only a
// part (a spill's run-wide entries): next is one above its highest index,
// latest its latest time, where the census entry goes.
func withCensusFileAt(run *results.Run, ops []history.Op, next, latest int64) ([]history.Op, string) {
	if history.CensusOf(ops) != nil {
		return ops, "history"
	}
	if op, ok := censusFileOp(run, next, latest); ok {
		return append(slices.Clip(ops), op), history.CensusFile
	}
	return ops, ""
}

// attributeScanned is Attribute of a history not in memory, whose spill p
// found its run-wide entries (runWide: with census.json's census, as
// WithCensusFile gives the whole history) and its end: the attribution
// reads attr, its first pass made in the check's one pass, when that saw
// the whole history (and scans the file again only for the anomalies'
// ops), or else scans the history file for all of it
// (checker.AttributeScanned); each scan must find the entries and the
// tear the spill found. attr is closed.
func attributeScanned(run *results.Run, p *history.Partitions, runWide []history.Op, attr *checker.AttributionPass, s *checker.Summary) error {
	defer attr.Close()
	var wall time.Time
	c := history.CensusOf(runWide)
	if c != nil {
		wall = c.WallStart
	}
	scan := func(observe func(*history.Op)) error {
		read, err := history.Scan(history.Path(run.Dir), func(op *history.Op, _ []byte) error {
			observe(op)
			return nil
		})
		if err != nil {
			return err
		}
		if read.Entries != p.Read.Entries || read.TruncatedTail != p.Read.TruncatedTail {
			return fmt.Errorf("the history changed while it was checked: %d entries when spilled, %d read again", p.Read.Entries, read.Entries)
		}
		return nil
	}
	logs, topo := results.ServerLogLines(run, wall), topologySamples(run)
	var at []checker.Attribution
	var err error
	if attr != nil && attr.Ready(runWide) {
		at, err = attr.Attribute(scan, runWide, *s, logs, topo)
	} else {
		at, err = checker.AttributeScanned(scan, runWide, p.Latest, *s, logs, topo)
	}
	if err != nil {
		return err
	}
	s.Attribution = at
	s.Census = checker.SummarizeCensus(c)
	return nil
}

// censusFileOp is the entry WithCensusFile appends: the census of the
// run's census.json (ok false: none that decodes) at index idx and time t.
func censusFileOp(run *results.Run, idx, t int64) (history.Op, bool) {
	if run == nil {
		return history.Op{}, false
	}
	b, err := os.ReadFile(run.Path(history.CensusFile))
	if err != nil {
		return history.Op{}, false
	}
	var c history.Census
	if json.Unmarshal(b, &c) != nil {
		return history.Op{}, false
	}
	return history.Op{Index: idx, Time: t, Process: history.Nemesis, Type: history.Info, F: history.CensusEvent,
		Ext: history.NewExt(history.Ext{Detail: json.RawMessage(b)})}, true
}

// RunFilesOf is what the run-files checker reads of a stored run: hist as
// read (its torn last line, if any) and the run's topology samples in file
// order.
func RunFilesOf(run *results.Run, hist *history.ReadResult) checker.RunFilesOptions {
	o := checker.RunFilesOptions{Topology: topologySamples(run)}
	if hist != nil && hist.TruncatedTail {
		o.Torn = &checker.TornLine{Line: hist.TornLine, Text: hist.TornText, Bytes: hist.TornBytes}
	}
	return o
}

// ElectionsChecker judges the elections and votes the servers logged
// (checker.Elections) from the run's nodes/<node>/server.log. Every node
// has its nodes/<node>/cluster-nodes-after.txt (SnapshotNodes writes one
// for each); once one node's log is there, a node without one is named
// as missing. expected says why the run must carry logs ("": the runtime
// may keep none, as a guest run's cluster does not). nodeTimeout is the
// cluster's (the config's --node-timeout; for an existing cluster, what
// the user gave): the voters' window of the double-win rule.
func ElectionsChecker(run *results.Run, expected string, nodeTimeout time.Duration) checker.Checker {
	o := checker.ElectionLogOptions{Expected: expected, Logs: map[string][]byte{}, NodeTimeout: nodeTimeout}
	if run != nil {
		snaps, _ := filepath.Glob(run.Path(filepath.Join("nodes", "*", "cluster-nodes-after.txt")))
		var without []string
		for _, f := range snaps {
			node := filepath.Base(filepath.Dir(f))
			b, err := os.ReadFile(filepath.Join(filepath.Dir(f), "server.log"))
			if err != nil {
				without = append(without, node)
				continue
			}
			o.Logs[node] = b
		}
		if len(o.Logs) > 0 || expected != "" {
			o.Missing = without
		}
	}
	return checker.Elections(o)
}

// electionNodeTimeout is the node timeout the elections checker may hold
// the servers to: the one redline gave the clusters it created. An
// existing cluster's own may be shorter than the flag's default, and a
// window longer than the real one could call a legitimate second win a
// double-win: not judged there (0).
func electionNodeTimeout(cfg Config) time.Duration {
	if cfg.Target == "external" || len(cfg.Addrs) > 0 {
		return 0
	}
	return cfg.NodeTimeout.D()
}

// ConfigEpochChecker judges the configEpochs of the run's topology
// samples (checker.ConfigEpochs); expected says why the run must carry
// samples ("": a hand-made run need not).
func ConfigEpochChecker(samples []checker.TopologySample, expected string) checker.Checker {
	return checker.ConfigEpochs(checker.ConfigEpochOptions{Samples: samples, Expected: expected})
}

// topologyExpected says why run must hold topology samples: a run the
// runner recorded (recordedBy) whose topology.jsonl exists, since the
// sampler creates it and writes its first sample at once. A run without
// the file is of a runner before the sampler (bce9f74 is no ancestor of
// the client_library record that RecordedByRunner reads): "".
func topologyExpected(run *results.Run, recordedBy string) string {
	if run == nil || recordedBy == "" {
		return ""
	}
	if _, err := os.Stat(run.Path(TopologyFile)); err != nil {
		return ""
	}
	return recordedBy + "; its " + TopologyFile + " exists, and the sampler writes its first sample as it creates it"
}

// topologySamples reads the run's TopologyFile (none: nil; a torn last
// line of a crashed run is skipped).
func topologySamples(run *results.Run) []checker.TopologySample {
	if run == nil {
		return nil
	}
	b, err := os.ReadFile(run.Path(TopologyFile))
	if err != nil {
		return nil
	}
	var out []checker.TopologySample
	for _, line := range bytes.Split(b, []byte("\n")) {
		var smp checker.TopologySample
		if len(line) > 0 && json.Unmarshal(line, &smp) == nil {
			out = append(out, smp)
		}
	}
	return out
}
