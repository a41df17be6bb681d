package server

import (
	"strings"
	"testing"
)

// INFO errorstats counts error replies by code, and commandstats tells a
// rejected call (arity: the command never ran) from a failed one (it ran
// and replied an error), as Redis does.
func TestErrorStats(t *testing.T) {
	s := startServer(t)
	c := newClient(t, s, 2)
	c.Do(ctx, "asdf")
	c.Do(ctx, "set", "k")
	c.Set(ctx, "s", "x", 0)
	c.Do(ctx, "incr", "s")
	c.Do(ctx, "lpush", "s", "a")
	c.Set(ctx, "s2", "y", 0)
	errs := c.Info(ctx, "errorstats").Val()
	for _, want := range []string{"errorstat_ERR:count=3", "errorstat_WRONGTYPE:count=1"} {
		if !strings.Contains(errs, want) {
			t.Errorf("INFO errorstats lacks %q:\n%s", want, errs)
		}
	}
	cmds := c.Info(ctx, "commandstats").Val()
	for _, want := range []string{"rejected_calls=1,failed_calls=0", "cmdstat_incr:calls=1,", "cmdstat_lpush:calls=1,"} {
		if !strings.Contains(cmds, want) {
			t.Errorf("INFO commandstats lacks %q:\n%s", want, cmds)
		}
	}
	for _, l := range strings.Split(cmds, "\r\n") {
		switch {
		case strings.HasPrefix(l, "cmdstat_set:"):
			if !strings.HasPrefix(l, "cmdstat_set:calls=2,") || !strings.HasSuffix(l, "rejected_calls=1,failed_calls=0") {
				t.Errorf("set: %s", l)
			}
		case strings.HasPrefix(l, "cmdstat_incr:"), strings.HasPrefix(l, "cmdstat_lpush:"):
			if !strings.HasSuffix(l, "rejected_calls=0,failed_calls=1") {
				t.Errorf("%s", l)
			}
		}
	}
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if errs := c.Info(ctx, "errorstats").Val(); strings.Contains(errs, "errorstat_") {
		t.Errorf("after CONFIG RESETSTAT: %s", errs)
	}
}
