package harness

import (
	"testing"
	"time"
)

// A run's config checks itself before anything starts, in the words of
// its flags, the workloads' part by the workloads' own check.
func TestConfigValidate(t *testing.T) {
	good := func() Config {
		return Config{TimeLimit: Duration(time.Minute), Concurrency: 1, NodeTimeout: Duration(time.Second),
			OpTimeout: Duration(time.Second), TestCount: 1, NemesisInterval: Duration(time.Second)}
	}
	for _, c := range []struct {
		bad  func(*Config)
		want string
	}{
		{func(*Config) {}, ""},
		{func(c *Config) { c.TimeLimit = 0 }, "--time-limit must be positive"},
		{func(c *Config) { c.Concurrency = 0 }, "--concurrency must be at least 1"},
		{func(c *Config) { c.Rate = -1 }, "--rate must not be negative"},
		{func(c *Config) { c.Keys = -1 }, "--keys must not be negative"},
		{func(c *Config) { c.WaitTimeout = Duration(-time.Second) }, "--wait-timeout must not be negative"},
		{func(c *Config) { c.NodeTimeout = Duration(50 * time.Millisecond) }, "--node-timeout 50ms is too short (at least 100ms)"},
		{func(c *Config) { c.OpTimeout = 0 }, "--op-timeout must be positive"},
		{func(c *Config) { c.TestCount = 0 }, "--test-count must be at least 1"},
		{func(c *Config) { c.NemesisInterval = 0 }, "--nemesis-interval must be positive"},
		// The first wrong figure is the one named, in the flags' order.
		{func(c *Config) { c.Keys, c.TestCount = -1, 0 }, "--keys must not be negative"},
	} {
		cfg := good()
		c.bad(&cfg)
		err := cfg.Validate()
		if c.want == "" && err != nil || c.want != "" && (err == nil || err.Error() != c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
}
