package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

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
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tTEST\tVALID\tDIR")
			for _, r := range runs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Time.Format("2006-01-02 15:04:05"), r.Test, r.Valid, r.Dir)
			}
			return tw.Flush()
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
			return compareRuns(stdout, args)
		},
	})
	var listen string
	serve := &cobra.Command{
		Use:   "serve",
		Short: "Serve the results store over HTTP on loopback",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if _, err := os.Stat(root); err != nil {
				return badArgs("no results store at %s", root)
			}
			l, err := net.Listen("tcp", listen)
			if err != nil {
				return badArgs("cannot listen on %s: %v", listen, err)
			}
			fmt.Fprintf(stdout, "serving %s at http://%s/ (Ctrl-C to stop)\n", root, l.Addr())
			return harnessFailed(http.Serve(l, http.FileServer(http.Dir(root))))
		},
	}
	serve.Flags().StringVar(&listen, "listen", "127.0.0.1:8080", "address to listen on")
	c.AddCommand(serve)
	return c
}

func loadSummary(dir string) (checker.Summary, *results.Run, error) {
	var s checker.Summary
	run, err := results.Open(dir)
	if err != nil {
		return s, nil, badArgs("%v", err)
	}
	if err := run.ReadJSON("results.json", &s); err != nil {
		return s, nil, badArgs("run %s has no readable results.json (%v); 'redline check %s' can produce it", dir, err, dir)
	}
	return s, run, nil
}

func compareRuns(w io.Writer, dirs []string) error {
	type col struct {
		name string
		s    checker.Summary
	}
	var cols []col
	rows := map[string]bool{}
	for _, d := range dirs {
		s, run, err := loadSummary(d)
		if err != nil {
			return err
		}
		cols = append(cols, col{run.Test + "/" + run.Time.Format("150405"), s})
		for cn, r := range s.Checkers {
			rows[cn+".valid"] = true
			for k, v := range r.Figures {
				switch v.(type) {
				case float64, bool, string:
					rows[cn+"."+k] = true
				}
			}
		}
	}
	keys := make([]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := []string{"FIGURE"}
	for _, c := range cols {
		header = append(header, c.name)
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	fmt.Fprintf(tw, "valid")
	for _, c := range cols {
		fmt.Fprintf(tw, "\t%s", c.s.Valid)
	}
	fmt.Fprintln(tw)
	for _, k := range keys {
		cn, fig, _ := strings.Cut(k, ".")
		fmt.Fprint(tw, k)
		for _, c := range cols {
			r, ok := c.s.Checkers[cn]
			switch {
			case !ok:
				fmt.Fprint(tw, "\t-")
			case fig == "valid":
				fmt.Fprintf(tw, "\t%s", r.Valid)
			default:
				b, _ := json.Marshal(r.Figures[fig])
				fmt.Fprintf(tw, "\t%s", b)
			}
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
