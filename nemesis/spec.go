package nemesis

import (
	"fmt"
	"slices"
	"strings"
)

// Spec is a --nemesis list as Parse read it: the one reading of the names
// that both the command line (before anything starts) and New (which
// builds from it) use, so a name the command accepts is a name New
// accepts, with the same words when it is not.
type Spec struct {
	// None: the list was "none" (no faults).
	None bool
	// All: "all" was named (every fault the target supports).
	All bool
	// Want are the faults named explicitly, in the order named (a
	// fault:mode names its fault).
	Want []string
	// Only are the modes named as fault:mode, by fault.
	Only map[string][]string
}

// Parse reads a --nemesis list: fault names, "all", "none", or
// fault:mode for one of a fault's modes. "none" stands alone.
func Parse(names []string) (Spec, error) {
	if len(names) == 0 {
		return Spec{}, fmt.Errorf("empty: choose from %s", strings.Join(Names(), ", "))
	}
	s := Spec{Only: map[string][]string{}}
	for _, n := range names {
		if f, mode, ok := strings.Cut(n, ":"); ok && slices.Contains(Names(), f) {
			if !slices.Contains(AllModes(f), mode) {
				return Spec{}, fmt.Errorf("unknown mode %q of fault %s: choose from %s", mode, f, strings.Join(AllModes(f), ", "))
			}
			s.Only[f] = append(s.Only[f], mode)
			n = f
		}
		switch {
		case n == "none":
			s.None = true
		case n == "all":
			s.All = true
		case slices.Contains(Faults(), n):
			s.Want = append(s.Want, n)
		default:
			return Spec{}, fmt.Errorf("unknown fault %q: choose from %s", n, strings.Join(Names(), ", "))
		}
	}
	if len(names) > 1 && s.None {
		return Spec{}, fmt.Errorf("\"none\" cannot be combined with other faults")
	}
	return s, nil
}
