//go:build !plantedbugs

package planted

// Enabled is whether this build can plant defects: never in the shipped one.
const Enabled = false

// On reports whether b is planted: in the shipped build, never, and the
// hook's branch compiles away.
func On(Bug) bool { return false }

// Args returns args unchanged: the shipped build knows no planted-bug
// option, so config.ParseArgs refuses one as any unknown directive.
func Args(args []string) ([]string, error) { return args, nil }
