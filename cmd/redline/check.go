package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/history"
	"github.com/redline-dev/redline/results"
)

func newCheckCmd(stdout, stderr io.Writer) *cobra.Command {
	var keep bool
	c := &cobra.Command{
		Use:   "check DIR",
		Short: "Re-run the checkers on a stored run's history",
		Long: `Re-run the checkers on the history of a stored run (history.jsonl.zst, or the
history.jsonl of runs of older versions), using its config.json,
and rewrite results.json and report.html (unless --dry-run). DIR is a run
directory, e.g. redline-results/latest. Exit codes as for 'redline run'.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return badArgs("check needs exactly one run directory, e.g. 'redline check redline-results/latest'")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(cmd.Context(), args[0], !keep, stdout, stderr)
		},
	}
	c.Flags().BoolVar(&keep, "dry-run", false, "print the verdict without rewriting results.json")
	return c
}

func runCheck(ctx context.Context, dir string, write bool, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	run, err := results.Open(dir)
	if err != nil {
		return badArgs("%v", err)
	}
	stored, err := harness.ReadStoredRun(run)
	var perr *history.ParseError
	if errors.As(err, &perr) {
		return badArgs("%v: the history is corrupt there, so the run cannot be checked ('redline history cat %s' prints what it holds up to there)", err, dir)
	}
	if err != nil {
		return badArgs("%v", err)
	}
	// The heap is capped once the history is in memory whole: after the
	// read, or after the checkers that judge a big one partition by
	// partition (harness.PartitionAbove); never when every checker was
	// judged without reading it whole.
	stored.OnHistoryRead = boundHeap
	log := harness.NewLog(nil, stderr)
	tty := false
	if f, ok := stdout.(*os.File); ok {
		tty = harness.IsTerminal(f)
	}
	s, err := stored.Check(ctx, harness.NewProgress(stdout, tty, log), log)
	if err != nil {
		return badArgs("%v", err)
	}
	if write {
		// The audit belongs to the run, not to the checkers: keep it (the
		// one part of results.json results.ReadSummary does not read).
		var prev harness.ResultsFile
		_ = run.ReadJSON("results.json", &prev)
		hist := &stored.History
		if hist.Ops == nil && hist.Entries > 0 {
			// Judged without reading it whole (a big history spilled):
			// the report reads it itself.
			hist = nil
		}
		if err := harness.SaveResults(run, s, prev.Audit, hist); err != nil {
			return harnessFailed(fmt.Errorf("writing results: %w", err))
		}
	}
	printVerdict(stdout, s, run.Dir)
	if code := s.Valid.ExitCode(); code != exitValid {
		return verdict{code}
	}
	return nil
}

// boundHeap caps the heap of a check at the decoded history plus half as
// much again (at least 512 MB more), unless GOMEMLIMIT says otherwise. The
// entries are most of the heap and live to the end; the collector's default
// lets the heap grow to twice what is live, which on a history of millions
// of entries is gigabytes of garbage. The cap is soft: a check that needs
// more gets more, at the cost of more collections.
func boundHeap() {
	if harness.UserMemoryLimit() {
		return
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	harness.CapHeap(int64(ms.HeapAlloc))
}
