package main

import (
	"fmt"
	"io"
)

// serverMain is replaced by server.Main once the engine lands.
func serverMain(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "redline server: not built yet")
	return 1
}
