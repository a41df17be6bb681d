package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/results"
)

func newResultsCmd(stdout, stderr io.Writer) *cobra.Command {
	var root string
	c := &cobra.Command{
		Use:   "results",
		Short: "List, show, compare and serve stored runs",
	}
	c.PersistentFlags().StringVar(&root, "results", defaultStore, "directory of the results store")
	c.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List stored runs, newest first",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := missingStore(root); err != nil {
				return err
			}
			runs, err := results.Store{Root: root}.List()
			if err != nil {
				return harnessFailed(err)
			}
			if len(runs) == 0 {
				fmt.Fprintf(stdout, "no runs in %s\n", root)
				return nil
			}
			return results.WriteList(stdout, runs)
		},
	})
	c.AddCommand(&cobra.Command{
		Use:   "show [DIR]",
		Short: "Print a run's verdict table (default: the latest run)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			dir := root + "/latest"
			if len(args) == 1 {
				dir = args[0]
			}
			s, run, err := loadSummary(dir)
			if err != nil {
				return err
			}
			printVerdict(stdout, s, run.Dir)
			return nil
		},
	})
	c.AddCommand(&cobra.Command{
		Use:   "compare DIR DIR...",
		Short: "Compare the figures of several runs side by side",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 2 {
				return badArgs("compare needs at least two run directories")
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			if done, err := compareBenchRuns(stdout, args); done {
				return err
			}
			c, err := results.Compare(args)
			if err != nil {
				return badArgs("%v", err)
			}
			return c.WriteText(stdout)
		},
	})
	c.AddCommand(newPruneCmd(stdout, &root))
	c.AddCommand(newServeCmd(stdout, "serve", "Browse the results store in a web browser (runs, reports, suites, comparisons)", &root))
	return c
}

// defaultStore is where runs are stored without --results: beside the
// source tree when run from a checkout, never in its results/ package.
const defaultStore = "redline-results"

// missingStore is the one answer of every results command to a store that
// does not exist: bad arguments (254), as the store is an argument
// (--results, or its default) that names nothing.
func missingStore(root string) error {
	if _, err := os.Stat(root); err != nil {
		return badArgs("no results store at %s: give the store's directory with --results DIR, or run a test first ('redline run' stores its runs under %s)", root, defaultStore)
	}
	return nil
}

// newServeCmd is 'results serve' and its alias 'serve': the same command
// under two names. root is the --results of 'results'; nil gives the
// command a --results of its own.
func newServeCmd(stdout io.Writer, use, short string, store *string) *cobra.Command {
	var listen string
	own := store == nil
	if own {
		store = new(string)
	}
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			root := *store
			if err := missingStore(root); err != nil {
				return err
			}
			if host, _, err := net.SplitHostPort(listen); err != nil || !isLoopback(host) {
				return badArgs("--listen %s: the results browser serves on loopback only (127.0.0.1:PORT or [::1]:PORT); reach it from elsewhere through an SSH tunnel", listen)
			}
			l, err := net.Listen("tcp", listen)
			if err != nil {
				return badArgs("cannot listen on %s: %v", listen, err)
			}
			fmt.Fprintf(stdout, "serving %s at http://%s/ (Ctrl-C to stop)\n", root, l.Addr())
			return harnessFailed(results.Browser{Store: results.Store{Root: root}}.Server().Serve(l))
		},
	}
	c.Flags().StringVar(&listen, "listen", "127.0.0.1:8080", "address to listen on")
	if own {
		c.Flags().StringVar(store, "results", defaultStore, "directory of the results store")
	}
	return c
}
func loadSummary(dir string) (checker.Summary, *results.Run, error) {
	s, run, err := results.LoadSummary(dir)
	if err != nil {
		return s, nil, badArgs("%v", err)
	}
	return s, run, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// newPruneCmd is 'results prune': which runs go is said first, and only
// --yes removes them (as git clean without -f, restic forget with
// --dry-run): deleting results is not undone.
func newPruneCmd(stdout io.Writer, store *string) *cobra.Command {
	var keep int
	var olderThan string
	var yes bool
	c := &cobra.Command{
		Use:   "prune",
		Short: "Remove old runs from the store: say which first, remove them with --yes",
		Long: `Remove stored runs by count and age: --keep N keeps the newest N runs of each
test, --older-than DUR keeps the runs started within DUR (30d, 12h, 90m);
with both a run goes only if neither keeps it. The run 'latest' points at
is always kept, and suites/ and rpo/ are never touched (their summaries
link to runs: a pruned run's link there goes dead). Without --yes, prune
only lists what it would remove and how much space that frees.`,
		Example: `  redline results prune --keep 5
  redline results prune --older-than 30d --yes
  redline results prune --keep 3 --older-than 7d --results /data/redline-results`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rule := results.PruneRule{Keep: keep, Now: time.Now()}
			if cmd.Flags().Changed("keep") && keep < 1 {
				return badArgs("--keep %d: keep at least 1 run of each test (to remove a whole test, delete its directory)", keep)
			}
			if olderThan != "" {
				d, err := parseAge(olderThan)
				if err != nil {
					return badArgs("--older-than %q: %v (e.g. 30d, 12h, 90m)", olderThan, err)
				}
				rule.OlderThan = d
			}
			if rule.Keep == 0 && rule.OlderThan == 0 {
				return badArgs("prune needs a rule: --keep N (the newest N runs of each test stay), --older-than DUR (runs started within DUR stay), or both")
			}
			if err := missingStore(*store); err != nil {
				return err
			}
			st := results.Store{Root: *store}
			runs, err := st.Prunable(rule)
			if err != nil {
				return harnessFailed(err)
			}
			if len(runs) == 0 {
				fmt.Fprintf(stdout, "nothing to prune in %s\n", *store)
				return nil
			}
			var total int64
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			for _, r := range runs {
				total += r.Bytes
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", r.Time.Format("2006-01-02 15:04:05"), r.Test, r.Verdict(), results.HumanBytes(r.Bytes), r.Dir)
			}
			if !yes {
				fmt.Fprintf(stdout, "would remove %d runs (%s) from %s:\n", len(runs), results.HumanBytes(total), *store)
				tw.Flush()
				fmt.Fprintln(stdout, "nothing was removed: add --yes to remove them")
				return nil
			}
			fmt.Fprintf(stdout, "removing %d runs (%s) from %s:\n", len(runs), results.HumanBytes(total), *store)
			tw.Flush()
			for _, r := range runs {
				if err := st.Remove(r); err != nil {
					return harnessFailed(fmt.Errorf("removing %s: %w", r.Dir, err))
				}
			}
			fmt.Fprintf(stdout, "removed %d runs (%s)\n", len(runs), results.HumanBytes(total))
			return nil
		},
	}
	f := c.Flags()
	f.IntVar(&keep, "keep", 0, "keep the newest N runs of each test")
	f.StringVar(&olderThan, "older-than", "", "remove only runs started more than DUR ago (30d, 12h, 90m)")
	f.BoolVarP(&yes, "yes", "y", false, "remove the runs (without it, prune only lists them)")
	return c
}

// parseAge is a Go duration, or a whole number of days ("30d"), the unit
// an age of results is thought of in.
func parseAge(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("not a positive number of days")
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err == nil && d <= 0 {
		err = fmt.Errorf("not a positive duration")
	}
	return d, err
}
