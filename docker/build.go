package docker

import (
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// ServerBuild describes a redis-server compatible binary on this host:
// what config.json records and test names are made of.
type ServerBuild struct {
	Path        string `json:"path"`         // absolute path on the host
	VersionLine string `json:"version_line"` // `PATH --version`, trimmed
	Version     string `json:"version"`      // the v= field, "unknown" if absent
	SHA256      string `json:"sha256"`       // of the file
	// Static is true for a binary without a dynamic loader: the clock
	// shim cannot be preloaded into it.
	Static bool `json:"static,omitempty"`
}

var versionField = regexp.MustCompile(`v=([0-9A-Za-z.\-]+)`)

// InspectServer checks that path is a Linux executable that answers
// `--version` like redis-server ("Redis server v=7.0.15 ...", Valkey and
// KeyDB say the same with their own name) and digests it. It runs the
// binary on the host only with --version; nothing is started.
func InspectServer(ctx context.Context, path string) (ServerBuild, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ServerBuild{}, err
	}
	f, err := os.Open(abs)
	if err != nil {
		return ServerBuild{}, fmt.Errorf("server binary: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ServerBuild{}, fmt.Errorf("server binary %s: %w", abs, err)
	}
	ef, err := elf.Open(abs)
	if err != nil {
		return ServerBuild{}, fmt.Errorf("server binary %s is not a Linux executable (%v): give the redis-server a build produced, e.g. src/redis-server after make", abs, err)
	}
	static := true
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			static = false
		}
	}
	ef.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, abs, "--version").CombinedOutput()
	line := strings.TrimSpace(string(out))
	if err != nil {
		return ServerBuild{}, fmt.Errorf("server binary %s is not a Redis server: `--version` failed: %v: %s", abs, err, firstLine(line))
	}
	if !strings.Contains(strings.ToLower(line), "server v=") {
		return ServerBuild{}, fmt.Errorf("server binary %s is not a Redis server: `--version` printed %q (a redis-server prints \"Redis server v=...\")", abs, firstLine(line))
	}
	b := ServerBuild{Path: abs, VersionLine: firstLine(line), Version: "unknown", SHA256: hex.EncodeToString(h.Sum(nil)), Static: static}
	if m := versionField.FindStringSubmatch(line); m != nil {
		b.Version = m[1]
	}
	return b, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// ClockUnsupported says why the clock fault cannot work on a cluster that
// spec would start, or "" when it can; it is cheap and starts nothing, so a
// run can refuse the fault before any container exists.
func ClockUnsupported(target, image string, build *ServerBuild) string {
	if target != "redis" {
		return ""
	}
	if image != "" {
		return "clock skew needs redline's own redis image (a custom --image has no clock shim)"
	}
	if build != nil && build.Static {
		return fmt.Sprintf("clock skew needs the clock shim preloaded, but %s is statically linked (no dynamic loader to preload it into)", build.Path)
	}
	if _, err := exec.LookPath(compiler()); err != nil {
		return fmt.Sprintf("clock skew unavailable: no C compiler (%s) to build the clock shim: run scripts/install-deps (apt-get install gcc libc6-dev)", compiler())
	}
	return ""
}

func compiler() string {
	if cc := os.Getenv("CC"); cc != "" {
		return cc
	}
	return "cc"
}
