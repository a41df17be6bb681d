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

// secretDirectives carry a password as their value.
var secretDirectives = []string{"requirepass", "masterauth", "tls-key-file-pass", "tls-client-key-file-pass"}

// refuseSecret refuses a --server-config directive that carries a
// password: it would land in config.json, the dry run's plan, run.log and
// the report, where credentials never go (credentials.go: a password
// comes from a file or the environment, and only where it came from is
// stored). An ACL user is a secret only with a password ('>pass') or its
// hash ('#...'). The error names the directive, never its value.
func refuseSecret(directive string, args []string) error {
	const how = "give the ACL user with --user and its password in a file (--password-file FILE) or $" + passwordEnv +
		": every node redline creates gets that user, and its replicas authenticate as it; only where the password came from is stored"
	if slices.Contains(secretDirectives, directive) {
		return badArgs("--server-config %s: a password in a flag would be stored in config.json, the plan and the report; %s", directive, how)
	}
	if directive == "user" {
		for _, a := range args[1:] {
			if strings.HasPrefix(a, ">") || strings.HasPrefix(a, "#") {
				return badArgs("--server-config user %s: an ACL rule with a password (>...) or its hash (#...) would be stored in config.json, the plan and the report; %s", args[0], how)
			}
		}
	}
	return nil
}

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
		if err := refuseSecret(d, f[1:]); err != nil {
			return err
		}
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
