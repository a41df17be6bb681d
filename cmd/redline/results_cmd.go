package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
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
	c.PersistentFlags().StringVar(&root, "results", "results", "directory of the results store")
	c.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List stored runs, newest first",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
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
	var listen string
	serve := &cobra.Command{
		Use:   "serve",
		Short: "Browse the results store in a web browser (runs, reports, suites, comparisons)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if _, err := os.Stat(root); err != nil {
				return badArgs("no results store at %s", root)
			}
			if host, _, err := net.SplitHostPort(listen); err != nil || !isLoopback(host) {
				return badArgs("--listen %s: the results browser serves on loopback only (127.0.0.1:PORT or [::1]:PORT); reach it from elsewhere through an SSH tunnel", listen)
			}
			l, err := net.Listen("tcp", listen)
			if err != nil {
				return badArgs("cannot listen on %s: %v", listen, err)
			}
			fmt.Fprintf(stdout, "serving %s at http://%s/ (Ctrl-C to stop)\n", root, l.Addr())
			return harnessFailed(http.Serve(l, results.Browser{Store: results.Store{Root: root}}.Handler()))
		},
	}
	serve.Flags().StringVar(&listen, "listen", "127.0.0.1:8080", "address to listen on")
	c.AddCommand(serve)
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
