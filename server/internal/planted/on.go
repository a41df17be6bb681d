//go:build plantedbugs

package planted

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// Enabled is whether this build can plant defects.
const Enabled = true

// Directive is the server directive (and command-line option) that selects
// a defect in this build; Env is the environment variable that does too.
const (
	Directive = "planted-bug"
	Env       = "REDLINE_PLANTED_BUG"
)

// names are the defects' names as the directive takes them.
var names = map[string]Bug{
	"repl-skip-incrby":       ReplSkipIncrby,
	"replica-reorder":        ReplicaReorder,
	"psync-wrong-offset":     PsyncWrongOffset,
	"wait-early-ack":         WaitEarlyAck,
	"promote-no-epoch":       PromoteNoEpoch,
	"primary-ignores-update": PrimaryIgnoresUpdate,
	"vote-twice":             VoteTwice,
	"failover-no-pause":      FailoverNoPause,
	"migrate-lose-last-key":  MigrateLoseLastKey,
	"setslot-flush-imported": SetslotFlushImported,
	"exec-ignores-watch":     ExecIgnoresWatch,
	"rdb-drop-sets":          RDBDropSets,
}

// active is set once at start-up (Select), before any server goroutine
// runs, and read without a lock afterwards; tests set it with Set.
var active [NumBugs]bool

func init() {
	if v := os.Getenv(Env); v != "" {
		if err := Select(v); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

// On reports whether b is planted.
func On(b Bug) bool { return active[b] }

// Names lists every defect's name, sorted.
func Names() []string {
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Select plants the defects of a comma-separated list of names ("none"
// plants nothing: the study's control).
func Select(list string) error {
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(strings.ToLower(n))
		if n == "" || n == "none" {
			continue
		}
		b, ok := names[n]
		if !ok {
			return fmt.Errorf("unknown planted bug %q: one of none, %s", n, strings.Join(Names(), ", "))
		}
		active[b] = true
	}
	return nil
}

// Set plants or removes b (tests).
func Set(b Bug, on bool) { active[b] = on }

// Active lists the planted defects' names.
func Active() []string {
	var out []string
	for _, n := range Names() {
		if active[names[n]] {
			out = append(out, n)
		}
	}
	return out
}

// Args removes every "--planted-bug NAME" from a redis-server style
// command line and plants what it names.
func Args(args []string) ([]string, error) {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		if strings.EqualFold(strings.TrimLeft(args[i], "-"), Directive) && strings.HasPrefix(args[i], "--") {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("--%s needs a name: one of none, %s", Directive, strings.Join(Names(), ", "))
			}
			if err := Select(args[i+1]); err != nil {
				return nil, err
			}
			i++
			continue
		}
		out = append(out, args[i])
	}
	if a := Active(); len(a) > 0 {
		fmt.Fprintf(os.Stderr, "PLANTED BUG ON: %s (a -tags plantedbugs build for the planted-bug study, never a release)\n", strings.Join(a, ","))
	}
	return out, nil
}
