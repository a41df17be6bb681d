package main

import "github.com/redline-dev/redline/checker"

// TEMPORARY until checker.ForWorkload lands.
func forWorkload(w string, o checker.Options) ([]checker.Checker, error) {
	return []checker.Checker{checker.Linearizable(o)}, nil
}
