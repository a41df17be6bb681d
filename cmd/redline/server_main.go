package main

import (
	"io"

	"github.com/redline-dev/redline/server"
)

// serverMain runs one reference-server node until it is shut down.
func serverMain(args []string, stdout, stderr io.Writer) int {
	return server.Main(args, stdout, stderr)
}
