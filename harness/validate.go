package harness

import (
	"errors"
	"fmt"
	"time"

	"github.com/redline-dev/redline/workloads"
)

// Validate checks what a run's config can say wrong by itself, before
// anything starts: its durations, counts and rates, and, by the workloads'
// own check, what every workload is built from. The words name the flags
// that set each figure.
func (c *Config) Validate() error {
	switch {
	case c.TimeLimit.D() <= 0:
		return errors.New("--time-limit must be positive")
	case c.Concurrency <= 0:
		return errors.New("--concurrency must be at least 1")
	case c.Rate < 0:
		return errors.New("--rate must not be negative")
	}
	if err := c.Workload().Validate(); err != nil {
		return err
	}
	switch {
	case c.NodeTimeout.D() < 100*time.Millisecond:
		return fmt.Errorf("--node-timeout %s is too short (at least 100ms)", c.NodeTimeout.D())
	case c.OpTimeout.D() <= 0:
		return errors.New("--op-timeout must be positive")
	case c.TestCount < 1:
		return errors.New("--test-count must be at least 1")
	case c.NemesisInterval.D() <= 0:
		return errors.New("--nemesis-interval must be positive")
	}
	return nil
}

// Workload is the config every workload of the run is built from.
func (c *Config) Workload() workloads.Config {
	return workloads.Config{Prefix: c.KeyPrefix, Keys: c.Keys, Wait: c.Wait, WaitTimeout: c.WaitTimeout.D()}
}
