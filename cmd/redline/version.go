package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// mainDependencies are the modules whose versions change what a run does
// or records (clients under test, the runtimes, the checker's search), in
// the order 'redline version' prints them; --all prints every module.
var mainDependencies = []string{
	"github.com/redis/go-redis/v9",
	"github.com/redis/rueidis",
	"github.com/anishathalye/porcupine",
	"github.com/testcontainers/testcontainers-go",
	"github.com/moby/moby/client",
	"k8s.io/client-go",
	"github.com/google/nftables",
	"github.com/spf13/cobra",
}

// versionInfo is what 'redline version' and 'redline --version' print:
// the commit, the Go toolchain and platform, and the versions of the main
// dependencies (all of them with all) from the build info Go embeds.
func versionInfo(all bool) string {
	var b strings.Builder
	commit := redlineVersion()
	if commit == "" {
		commit = "unknown commit (built without 'make build' and without VCS stamping)"
	}
	fmt.Fprintf(&b, "redline %s\n", commit)
	fmt.Fprintf(&b, "go: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		b.WriteString("dependencies: unknown (the binary carries no build info)\n")
		return b.String()
	}
	versions := map[string]string{}
	var order []string
	for _, d := range bi.Deps {
		v := d.Version
		if d.Replace != nil {
			v += " => " + d.Replace.Path + " " + d.Replace.Version
		}
		versions[d.Path] = v
		order = append(order, d.Path)
	}
	if !all {
		order = nil
		for _, p := range mainDependencies {
			if _, ok := versions[p]; ok {
				order = append(order, p)
			}
		}
	}
	if len(order) == 0 {
		b.WriteString("dependencies: none recorded in the build info\n")
		return b.String()
	}
	b.WriteString("dependencies:\n")
	for _, p := range order {
		fmt.Fprintf(&b, "  %s %s\n", p, versions[p])
	}
	return b.String()
}

func newVersionCmd(stdout io.Writer) *cobra.Command {
	var all bool
	c := &cobra.Command{
		Use:   "version",
		Short: "Print redline's commit, Go version and its main dependencies' versions",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := io.WriteString(stdout, versionInfo(all))
			return err
		},
	}
	c.Flags().BoolVar(&all, "all", false, "list every module in the build, not only the main dependencies")
	return c
}
