package main

import (
	"fmt"
	"io"
	"net"
	"os"

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
	c.AddCommand(newServeCmd(stdout, "serve", "Browse the results store in a web browser (runs, reports, suites, comparisons)", &root))
	return c
}

// defaultStore is where runs are stored without --results.
const defaultStore = "results"

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
