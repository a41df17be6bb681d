package nemesis

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/redline-dev/redline/cluster"
)

// registry lists every fault, in the order Names reports them and plans
// draw from. Adding a fault is a file with its type and one line here;
// append it at the end, or older seeds' schedules change.
var registry = []func() fault{
	func() fault { return &partitionFault{} },
	func() fault { return &killFault{} },
	func() fault { return &pauseFault{} },
	func() fault { return &clockFault{} },
	func() fault { return &migrateFault{} },
	func() fault { return &failoverFault{} },
	func() fault { return &memberFault{} },
	func() fault { return &delayFault{} },
	func() fault { return &lossFault{} },
	func() fault { return &slowLinkFault{} },
	func() fault { return &slowFault{} },
	func() fault { return &powerFault{} },
	func() fault { return &diskFault{} },
}

// catalog holds one value of every registered fault, for names and modes.
var catalog = func() []fault {
	fs := make([]fault, len(registry))
	for i, mk := range registry {
		fs[i] = mk()
	}
	return fs
}()

func lookup(name string) fault {
	for _, f := range catalog {
		if f.name() == name {
			return f
		}
	}
	return nil
}

// Names returns every name --nemesis accepts.
func Names() []string {
	return append(append([]string{"none"}, Faults()...), "all")
}

// Faults returns the fault names without "none" and "all".
func Faults() []string {
	var fs []string
	for _, f := range catalog {
		fs = append(fs, f.name())
	}
	return fs
}

// Modes returns the modes of a fault a schedule picks from (nil for an
// unknown fault).
func Modes(name string) []string {
	if f := lookup(name); f != nil {
		return slices.Clone(f.modes())
	}
	return nil
}

// AllModes is Modes plus the modes only "fault:mode" names choose.
func AllModes(name string) []string {
	if f := lookup(name); f != nil {
		return append(Modes(name), f.studyModes()...)
	}
	return nil
}

// hookNames are the faults a --nemesis-hook can supply, sorted.
func hookNames() []string {
	var out []string
	for _, f := range catalog {
		if f.hookable() {
			out = append(out, f.name())
		}
	}
	sort.Slice(out, func(i, j int) bool { return cluster.CompareNames(out[i], out[j]) < 0 })
	return out
}

// canonical keeps the known faults of names in registry order, once each.
func canonical(names []string) []string {
	var fs []string
	for _, f := range catalog {
		if slices.Contains(names, f.name()) {
			fs = append(fs, f.name())
		}
	}
	return fs
}

// CheckHost asks p (a runtime, before any cluster starts) whether this
// host can cause the faults names asks for by name (fault or fault:mode)
// where they need more of the host than an interface (cluster.Prober): a
// delay needs the kernel's sch_netem, loss nftables' numgen, slow-link
// tbf, the one-way modes one-way filtering. The error names the fault,
// what it needs and the host's reason. "all" is not checked: it leaves
// out what the target cannot cause.
func CheckHost(ctx context.Context, names []string, p cluster.Prober) error {
	named := map[string][]string{}
	var order []string
	for _, raw := range names {
		name, mode, _ := strings.Cut(strings.TrimSpace(strings.ToLower(raw)), ":")
		if lookup(name) == nil {
			continue // none, all, or a name New refuses with its own words
		}
		if _, seen := named[name]; !seen {
			order = append(order, name)
			named[name] = nil
		}
		if mode != "" {
			named[name] = append(named[name], mode)
		}
	}
	for _, name := range order {
		f := lookup(name)
		kind := f.probe(named[name])
		if kind == "" {
			continue
		}
		if err := p.Probe(ctx, kind); err != nil {
			return fmt.Errorf("fault %s: this host cannot %s (%v); drop it from --nemesis", name, needsWords(f), err)
		}
	}
	return nil
}
