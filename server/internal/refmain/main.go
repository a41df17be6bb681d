// Command refmain runs the reference server with redis-server style
// arguments. It exists for scripts/bench-server and tests; users run
// `redline server`.
package main

import (
	"os"

	"github.com/redline-dev/redline/server"
)

func main() {
	os.Exit(server.Main(os.Args[1:], os.Stdout, os.Stderr))
}
