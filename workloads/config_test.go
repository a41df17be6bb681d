package workloads

import (
	"testing"
	"time"
)

// The workloads check what they are built from, in the words of the flags.
func TestConfigValidate(t *testing.T) {
	for cfg, want := range map[Config]string{
		{}: "",
		{Keys: 5, Wait: 1, WaitTimeout: time.Second}: "",
		{Keys: -1}:                  "--keys must not be negative",
		{Wait: -1}:                  "--wait must not be negative",
		{WaitTimeout: -time.Second}: "--wait-timeout must not be negative",
	} {
		err := cfg.Validate()
		if want == "" && err != nil || want != "" && (err == nil || err.Error() != want) {
			t.Errorf("%+v: %v, want %q", cfg, err, want)
		}
	}
}
