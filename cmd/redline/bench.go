package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/redline-dev/redline/checker"
)

func newBenchCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &runOptions{stdout: stdout, stderr: stderr}
	c := &cobra.Command{
		Use:   "bench",
		Short: "Load test: throughput and latency quantiles over time, optionally under faults",
		Long: `A load test. It starts (or attaches to) a cluster like 'redline run', drives the
workloads as fast as --rate allows, optionally while a nemesis migrates slots or
fails nodes over, and reports throughput and latency quantiles per operation,
over time and per fault window, without checking correctness. Everything is
stored in the results store like a run; report.html plots it.

Typical questions: what does a reshard do to p99 (--nemesis migrate), how long
are slots unserved during a failover (--nemesis failover, see rto).`,
		Example: `  redline bench --workload counter --concurrency 50 --time-limit 60s
  redline bench --target redis --nemesis migrate --rate 20000 --keys 10000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.cfg.Command = os.Args
			o.cfg.Bench = true
			return runRun(cmd.Context(), o, cmd.Flags().Changed("target"))
		},
	}
	addRunFlags(c, o)
	_ = c.Flags().Set("keys", "10000")
	c.Flags().Lookup("keys").DefValue = "10000"
	return c
}

// printBench prints per-operation throughput and latency of a load test.
func printBench(w io.Writer, s checker.Summary) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nCHECKER\tOP\tOK/S\tOK\tFAIL\tINFO\tP50 MS\tP95 MS\tP99 MS\tMAX MS")
	names := make([]string, 0, len(s.Checkers))
	for n := range s.Checkers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		byF, ok := s.Checkers[n].Figures["by_f"].(map[string]any)
		if !ok {
			continue
		}
		fs := make([]string, 0, len(byF))
		for f := range byF {
			fs = append(fs, f)
		}
		sort.Strings(fs)
		for _, f := range fs {
			t, _ := byF[f].(map[string]any)
			lat, _ := t["latency_ms"].(map[string]any)
			fmt.Fprintf(tw, "%s\t%s\t%v\t%v\t%v\t%v\t%v\t%v\t%v\t%v\n", n, f, t["ok_per_s"], t["ok"], t["fail"], t["info"],
				lat["p50"], lat["p95"], lat["p99"], lat["max"])
		}
	}
	tw.Flush()
}
