package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/redline-dev/redline/cluster"
	"github.com/redline-dev/redline/harness"
	"github.com/redline-dev/redline/harness/bench"
)

// newBenchGeneratorCmd is one generator of a distributed bench (`bench
// --generators N` starts them: pods of a Job, containers, local
// processes): its share of the load from the coordinated start, its
// report on stdout (harness/bench/generator.go), its log on stderr.
func newBenchGeneratorCmd(stdout, stderr io.Writer) *cobra.Command {
	var config string
	var index int
	c := &cobra.Command{
		Use:    "bench-generator --config JSON",
		Short:  "One load generator of a distributed bench (started by 'redline bench --generators N')",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if index == 0 {
				// A pod of an Indexed Job: the controller numbers it from 0.
				if v, ok := os.LookupEnv("JOB_COMPLETION_INDEX"); ok {
					i, err := strconv.Atoi(v)
					if err != nil {
						return badArgs("JOB_COMPLETION_INDEX %q is not a number", v)
					}
					index = i + 1
				}
			}
			cfg, err := bench.ParseGeneratorConfig(config, index)
			if err != nil {
				return badArgs("%v", err)
			}
			logf := func(format string, args ...any) {
				fmt.Fprintf(stderr, "%s generator %d of %d: %s\n", time.Now().UTC().Format("15:04:05.000"), cfg.Index, cfg.Of, fmt.Sprintf(format, args...))
			}
			logf("%s ops/s, %d connections per primary, against %v", bench.Count(cfg.Rate), cfg.Concurrency, cfg.Seeds)
			if err := bench.RunGenerator(cmd.Context(), cfg, stdout, logf); err != nil {
				return harnessFailed(err)
			}
			logf("done")
			return nil
		},
	}
	c.Flags().IntVar(&index, "index", 0, "this generator's number, 1..N (default: JOB_COMPLETION_INDEX+1, as a pod of an Indexed Job)")
	c.Flags().StringVar(&config, "config", "", "the generator's share of the load, as JSON (written by the coordinator)")
	return c
}

// validateGenerators checks --generators before anything starts: the
// generators run the open loop of a healthy cluster at a rate (or a
// capacity search's steps), each round on its own.
func validateGenerators(o *runOptions, cfg *harness.Config) error {
	n := cfg.Generators
	switch {
	case n == 0:
		return nil
	case n < 0:
		return badArgs("--generators %d: the number of load generators, at least 1", n)
	case cfg.Rate <= 0 && o.capacity.slo == "":
		return badArgs("--generators runs each generator open loop at its share of --rate: give --rate N (or --slo)")
	case faultsAsked(o) || o.capacity.plan != "":
		return badArgs("--generators with --nemesis or --plan is not supported yet: the fault windows come from one process's clock")
	case cfg.RunCount > 1:
		return badArgs("--generators with --run-count is not supported: use --test-count for repeated distributed runs")
	case cfg.History:
		return badArgs("--generators with --history: the op logs stay in the generators; drop --history")
	case cfg.ConnPerWorker:
		return badArgs("--conn-per-worker is for the closed loop; the generators run open loop")
	case cfg.Runtime == "kubernetes" && cfg.Selector != "":
		return badArgs("--generators with --selector is not supported yet: the generator Job runs beside a cluster redline starts")
	case o.capacity.versus != "":
		return badArgs("--generators with --versus is not supported yet: run the two distributed benches one after another and compare them with 'redline results compare'")
	}
	return nil
}

// localGenerators runs a distributed bench's generators as processes of
// this machine (this binary, `redline bench-generator`), for a cluster
// whose runtime cannot run them beside it (an external one at --addrs).
type localGenerators struct {
	// binary is redline's executable (empty: this process's).
	binary string
}

// GeneratorLead: a local process starts at once.
func (l localGenerators) GeneratorLead() time.Duration { return 2 * time.Second }

func (l localGenerators) RunGenerators(ctx context.Context, runs []cluster.GeneratorRun) []cluster.GeneratorOutcome {
	outs := make([]cluster.GeneratorOutcome, len(runs))
	bin := l.binary
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			for i, r := range runs {
				outs[i] = cluster.GeneratorOutcome{Index: r.Index, Err: fmt.Errorf("cannot find redline's executable: %v", err)}
			}
			return outs
		}
		bin = exe
	}
	var wg sync.WaitGroup
	for i, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = l.run(ctx, bin, r)
		}()
	}
	wg.Wait()
	return outs
}

func (l localGenerators) run(ctx context.Context, bin string, r cluster.GeneratorRun) cluster.GeneratorOutcome {
	out := cluster.GeneratorOutcome{Index: r.Index, Name: "not started"}
	cmd := exec.Command(bin, append(append([]string(nil), r.Args...), "--index", strconv.Itoa(r.Index))...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		out.Err = fmt.Errorf("starting %s: %v", bin, err)
		return out
	}
	out.Name = "pid " + strconv.Itoa(cmd.Process.Pid)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var due <-chan time.Time
	if !r.Due.IsZero() {
		t := time.NewTimer(time.Until(r.Due))
		defer t.Stop()
		due = t.C
	}
	var err error
	select {
	case err = <-done:
	case <-due:
		// Hung: stopped, its output read as far as it got.
		_ = cmd.Process.Kill()
		err = <-done
		out.Reason = "killed: still running at its due time"
	case <-ctx.Done():
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			err = <-done
		}
		out.Reason = "interrupted"
	}
	out.Output, out.Log = stdout.Bytes(), stderr.Bytes()
	out.Exited = true
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		out.ExitCode = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			out.ExitCode = 128 + int(ws.Signal())
			if out.Reason == "" {
				out.Reason = fmt.Sprintf("killed by signal %d", int(ws.Signal()))
			}
		}
	default:
		out.Err = err
	}
	return out
}
