package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/redline-dev/redline/history"
)

func newHistoryCmd(stdout, stderr io.Writer) *cobra.Command {
	c := &cobra.Command{
		Use:   "history",
		Short: "Read a run's history",
	}
	c.AddCommand(&cobra.Command{
		Use:   "cat RUN_DIR|FILE",
		Short: "Print a history as JSON lines, one entry a line",
		Long: `Print a run's history as JSON lines, one entry a line, whatever format it is
stored in: the compressed frames of history.jsonl.zst that runs write, or the
history.jsonl of runs of older versions. RUN_DIR is a run directory (e.g.
redline-results/latest); FILE a history file.

Exit codes: 0 the whole history was printed; 2 its end is torn (the run
crashed mid-write): every whole entry before the tear was printed and stderr
says how many bytes were torn; 254 no history there, or a history that does
not decode (stderr names the frame or line; what came before it was printed).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return badArgs("history cat needs exactly one run directory or history file, e.g. 'redline history cat redline-results/latest'")
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			return historyCat(historyCatOptions{Path: args[0], Out: stdout, Err: stderr})
		},
	})
	return c
}

type historyCatOptions struct {
	Path     string // a run directory or a history file
	Out, Err io.Writer
}

func historyCat(o historyCatOptions) error {
	path := o.Path
	st, err := os.Stat(path)
	if err != nil {
		return badArgs("%v: give a run directory (e.g. redline-results/latest) or a history file", err)
	}
	if st.IsDir() {
		path = history.Path(path)
		if _, err := os.Stat(path); err != nil {
			return badArgs("%s holds no history (neither %s nor %s): give a run directory (e.g. redline-results/latest) or a history file",
				o.Path, history.FileName, history.JSONLinesName)
		}
	}
	l, err := history.OpenLines(path)
	if err != nil {
		return badArgs("%s: %v", path, err)
	}
	defer l.Close()
	buf := make([]byte, 1<<20)
	for {
		n, err := l.Read(buf)
		if n > 0 {
			if _, werr := o.Out.Write(buf[:n]); werr != nil {
				return harnessFailed(fmt.Errorf("cannot write the history out: %w", werr))
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return badArgs("%s does not decode past this point: %v (every entry before it was printed)", path, err)
		}
	}
	if torn := l.Torn(); torn != "" {
		fmt.Fprintf(o.Err, "redline: %s is torn: %s; every whole entry before it was printed\n", path, torn)
		return verdict{exitUnknown}
	}
	return nil
}
