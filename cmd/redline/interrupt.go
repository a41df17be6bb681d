package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/redline-dev/redline/harness"
)

// exitInterrupted is the exit code of a command the user interrupted
// (Ctrl-C, SIGTERM), as a shell reports one killed by SIGINT: 128+2.
const exitInterrupted = 130

// interrupted is the error of a command the user stopped: exit 130 with
// what was kept and how to go on.
func interrupted(format string, args ...any) error {
	return &exitError{exitInterrupted, fmt.Errorf(format, args...)}
}

// notifyInterrupts is onInterrupts fed by the process's SIGINT and
// SIGTERM; stop releases them.
func notifyInterrupts(ctx context.Context, stderr io.Writer) (context.Context, func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := onInterrupts(ctx, sigs, stderr)
	return ctx, func() {
		signal.Stop(sigs)
		cancel()
	}
}

// onInterrupts returns ctx ended by the first signal on sigs (the run
// stops its traffic, ends its faults, tears down and exits 130) and
// marked with the abort the second one closes (harness.WithAbort: the
// teardown stops waiting, which used to take up to 2 minutes).
func onInterrupts(ctx context.Context, sigs <-chan os.Signal, stderr io.Writer) (context.Context, context.CancelFunc) {
	abort := make(chan struct{})
	ctx, cancel := context.WithCancel(harness.WithAbort(ctx, abort))
	go func() {
		select {
		case <-sigs:
		case <-ctx.Done():
			return
		}
		fmt.Fprintln(stderr, "\nredline: interrupted: stopping traffic, ending faults and tearing down (Ctrl-C again to stop waiting)")
		cancel()
		<-sigs
		fmt.Fprintln(stderr, "\nredline: interrupted again: no longer waiting for the teardown; 'redline cluster down' removes what is left")
		close(abort)
	}()
	return ctx, cancel
}
