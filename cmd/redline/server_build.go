package main

import (
	"context"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/redline-dev/redline/docker"
	"github.com/redline-dev/redline/harness"
)

// addServerFlags registers the flags that choose and configure the server
// build of the clusters redline creates (run, bench, cluster up).
func addServerFlags(f *pflag.FlagSet, cfg *harness.Config) {
	f.StringVar(&cfg.ServerBinary, "server-binary", "", "redis-server compatible binary to test (Redis, Valkey, KeyDB, your own build): packed with its libraries into a local image, target redis")
	f.StringArrayVar(&cfg.ServerConfig, "server-config", nil, "'directive value' every node gets, e.g. 'min-replicas-to-write 1' (repeatable)")
}

// managedDirectives are set by redline on every node; changing them would
// break the cluster it forms, so --server-config refuses them.
var managedDirectives = []string{"port", "cluster-enabled", "cluster-config-file", "cluster-announce-ip", "dir", "cluster-node-timeout"}

// validateServer checks --server-binary, --server-config and --image
// against the target and the faults before anything is started: a binary
// that is not a Redis server, or a fault this build cannot suffer, is a bad
// argument, not a half-started run.
func validateServer(cfg *harness.Config, targetChanged bool) error {
	for _, s := range cfg.ServerConfig {
		f := strings.Fields(s)
		if len(f) < 2 {
			return badArgs("--server-config %q: expected 'directive value', e.g. 'min-replicas-to-write 1'", s)
		}
		d := strings.ToLower(strings.TrimPrefix(f[0], "--"))
		if slices.Contains(managedDirectives, d) {
			return badArgs("--server-config %q: redline sets %s itself (use --node-timeout for cluster-node-timeout)", s, d)
		}
	}
	if cfg.Target == "external" && (len(cfg.ServerConfig) > 0 || cfg.ServerBinary != "" || cfg.Image != "") {
		return badArgs("--server-binary, --server-config and --image apply to clusters redline creates, not to --target external")
	}
	if cfg.ServerBinary != "" {
		if targetChanged && cfg.Target != "redis" {
			return badArgs("--server-binary is tested as target redis, not %q: drop --target or use --target redis", cfg.Target)
		}
		if cfg.Image != "" {
			return badArgs("--server-binary and --image exclude each other: an image brings its own server")
		}
		cfg.Target = "redis"
		b, err := docker.InspectServer(context.Background(), cfg.ServerBinary)
		if err != nil {
			return badArgs("--server-binary: %v", err)
		}
		cfg.ServerBinary, cfg.ServerVersion, cfg.ServerSHA256 = b.Path, b.VersionLine, b.SHA256
		if why := clockRefusal(cfg, &b); why != "" {
			return badArgs("--nemesis clock: %s; drop clock from --nemesis", why)
		}
		return nil
	}
	if why := clockRefusal(cfg, nil); why != "" {
		return badArgs("--nemesis clock: %s; drop clock from --nemesis", why)
	}
	return nil
}

// clockRefusal is why an explicitly asked clock fault cannot work here.
func clockRefusal(cfg *harness.Config, b *docker.ServerBuild) string {
	if !slices.Contains(cfg.Nemesis, "clock") {
		return ""
	}
	return docker.ClockUnsupported(cfg.Target, cfg.Image, b)
}

// buildName is the first part of a test name: the target, and for a build
// of the user's its version and digest (or the image), so two builds never
// share a results directory.
func buildName(cfg *harness.Config) string {
	switch {
	case cfg.ServerBinary != "":
		v := "unknown"
		if f := strings.Fields(cfg.ServerVersion); len(f) > 0 {
			for _, w := range f {
				if strings.HasPrefix(w, "v=") {
					v = strings.TrimPrefix(w, "v=")
				}
			}
		}
		return cfg.Target + "-" + v + "-" + cfg.ServerSHA256[:8]
	case cfg.Image != "":
		return cfg.Target + "-" + strings.Trim(imageNameChars.Replace(cfg.Image), "-")
	}
	return cfg.Target
}

var imageNameChars = strings.NewReplacer("/", "-", ":", "-", "@", "-")
