package shrink

import (
	"fmt"
	"strings"
)

// Markdown is shrink.md: what was shrunk, to what, by which reruns, and
// the command that reruns the smallest run.
func Markdown(r Result, baseDir, command string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Shrinking %s\n\n", baseDir)
	fmt.Fprintf(&b, "Anomaly kept: some of %s invalid in the rerun.\n\n", strings.Join(r.Checkers, ", "))
	fmt.Fprintf(&b, "| | fault steps | time limit | workers | keys |\n|---|---|---|---|---|\n")
	row := func(name string, s Size) {
		keys := fmt.Sprint(s.Keys)
		if s.Keys == 0 {
			keys = "default"
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %d | %s |\n", name, s.Steps, s.TimeLimit, s.Concurrency, keys)
	}
	row("original", r.Original)
	row("smallest", r.Smallest)
	fmt.Fprintf(&b, "\nStopped: %s. The smallest run showing the anomaly: %s\n\n", r.Stopped, r.SmallestDir)
	if len(r.Schedule) > 0 {
		b.WriteString("Its fault schedule (slot k starts (k+1/2) intervals after traffic starts):\n\n")
		for _, st := range r.Schedule {
			fmt.Fprintf(&b, "- slot %d: %s %s (seed %d, hold %.2f of an interval)", st.K, st.Fault, st.Mode, st.Seed, st.Hold)
			if len(st.Nodes) > 0 {
				fmt.Fprintf(&b, ", struck %s", strings.Join(st.Nodes, ","))
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	} else {
		b.WriteString("It needs no fault at all.\n\n")
	}
	fmt.Fprintf(&b, "Rerun it:\n\n    %s\n\n## Reruns\n\n| # | change | reproduced | invalid | took | run | error |\n|---|---|---|---|---|---|---|\n", command)
	for _, a := range r.Attempts {
		fmt.Fprintf(&b, "| %d | %s | %v | %s | %.1f s | %s | %s |\n", a.N, a.Change, a.Reproduced, strings.Join(a.Invalid, ", "), a.TookS, a.Dir, a.Error)
	}
	return b.String()
}
