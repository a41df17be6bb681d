// Command redline is a Jepsen-style correctness and load-testing harness for
// Redis Cluster. This package only parses flags and wires packages together.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/redline-dev/redline/checker"
)

// Exit codes: the verdicts' as Jepsen's (checker's mapping), plus 253 so
// that CI can tell a cluster it could not reach (or a Docker engine that
// is not there) from a bug of redline's own (255), and 99 (k6's code) for
// a bench that ran but missed one of its --threshold bounds.
const (
	exitValid       = checker.ExitValid
	exitInvalid     = checker.ExitInvalid
	exitUnknown     = checker.ExitUnknown
	exitThreshold   = 99
	exitEnvironment = 253
	exitBadArgs     = 254
	exitHarness     = 255
)

// exitError carries an exit code up to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// badArgs marks a user error in flags or arguments.
func badArgs(format string, args ...any) error {
	return &exitError{exitBadArgs, fmt.Errorf(format, args...)}
}

// harnessFailed marks a failure of redline itself or its environment.
func harnessFailed(err error) error {
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	return &exitError{exitHarness, err}
}

// environmentFailed marks a failure of what redline runs on: the cluster
// at --addrs cannot be reached, the Docker engine does not answer.
func environmentFailed(err error) error {
	return &exitError{exitEnvironment, fmt.Errorf("environment: %w (exit 253: not a verdict, and not a fault of redline's)", err)}
}

// verdict is not an error as such: it carries the exit code of a checked run.
type verdict struct{ code int }

func (v verdict) Error() string { return fmt.Sprintf("verdict exit %d", v.code) }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext is run with a context whose cancellation acts like Ctrl-C.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	defer startProfiles(stderr)()
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitValid
	}
	var v verdict
	if errors.As(err, &v) {
		return v.code
	}
	code := exitBadArgs
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	fmt.Fprintf(stderr, "redline: %v\n", err)
	return code
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "redline",
		Short: "Correctness and load testing for Redis Cluster, Jepsen-style",
		Long: `redline starts a Redis Cluster (the bundled reference server or real Redis 7, in
containers) or uses one you point it at, drives it with recorded client workloads
while nemeses inject faults, and checks the history for linearizability
violations, lost acknowledged writes and what WAIT did or did not save.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	// --version as every CLI has it; the text is the version command's.
	root.Version = "set"
	root.SetVersionTemplate(versionInfo(false))
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return badArgs("%v (see '%s --help')", err, c.CommandPath())
	})
	root.AddCommand(
		newRunCmd(stdout, stderr),
		newBenchCmd(stdout, stderr),
		newBenchGeneratorCmd(stdout, stderr),
		newCheckCmd(stdout, stderr),
		newHistoryCmd(stdout, stderr),
		newShrinkCmd(stdout, stderr),
		newClusterCmd(stdout, stderr),
		newKubeCmd(stdout, stderr),
		newResultsCmd(stdout, stderr),
		newServerCmd(stdout, stderr),
		newSuiteCmd(stdout, stderr),
		newRPOCmd(stdout, stderr),
		newVersionCmd(stdout),
		newServeCmd(stdout, "serve", "Browse the results store in a web browser (the same as 'redline results serve')", nil),
	)
	return root
}
