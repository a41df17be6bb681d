package results

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/redline-dev/redline/checker"
)

// attributionView is one attributed anomaly as the report shows it.
type attributionView struct {
	Title, Verdict, VerdictClass, Why string
	Facts                             []fact
	Logs                              []string
}

// attributionCards renders results.json's attribution as the report's
// cards: per anomaly what acknowledged it, what missed it, where the key
// is at the end and what came in between, and the verdict in words.
func attributionCards(as []checker.Attribution) []attributionView {
	var out []attributionView
	for _, a := range as {
		v := attributionView{
			Title:   fmt.Sprintf("%s: %s of key %s (slot %d)", a.Checker, a.Kind, a.Key, a.Slot),
			Verdict: checker.VerdictWords(a.Verdict), Why: a.Why, Logs: a.Logs,
			VerdictClass: map[string]string{checker.ServerLost: "invalid", checker.AdminStranded: "unknown", checker.AdminOverwritten: "unknown", checker.AdminStaleRead: "unknown", checker.AdminSetAside: "unknown"}[a.Verdict],
		}
		if v.VerdictClass == "" {
			v.VerdictClass = "unknown"
		}
		if u := a.Unserved; u != nil {
			out = append(out, unservedView(v, a, u))
			continue
		}
		op := func(o *checker.AttrOp) string {
			if o == nil {
				return "none found in the history"
			}
			s := fmt.Sprintf("op %d %s at %ss", o.Index, o.F, trimFloat(o.TimeS))
			if o.Value != "" {
				s += " value " + valueWords(o.Value)
			}
			if o.Node != "" {
				s += " on " + o.Node
			}
			return s
		}
		v.Facts = append(v.Facts, fact{"acknowledged", op(a.Ack)}, fact{"missed by", op(a.Miss)})
		if a.Owner != "" {
			v.Facts = append(v.Facts, fact{"slot owner at the end", a.Owner})
		}
		var copies []string
		for _, c := range a.Copy {
			s := fmt.Sprintf("%s (%s", c.Node, c.Role)
			if c.Aside != "" {
				s = fmt.Sprintf("set-aside copy %s (%s's) on %s (%s", c.Aside, c.From, c.Node, c.Role)
			}
			if !c.Owner {
				s += ", not the slot's shard"
			}
			s += ")"
			if c.Value != "" {
				s += " " + valueWords(c.Value)
			}
			s += ", holds the write: " + c.Holds
			copies = append(copies, s)
		}
		if len(copies) == 0 {
			copies = []string{"on no node"}
		}
		v.Facts = append(v.Facts, fact{"key census", strings.Join(copies, "; ")})
		if len(a.Faults) > 0 {
			v.Facts = append(v.Facts, fact{"faults in between", strings.Join(a.Faults, "; ")})
		}
		if steps := stepsText(a.Steps, "the key's slot"); steps != "" {
			v.Facts = append(v.Facts, fact{"journalled admin steps in between", steps})
		}
		out = append(out, v)
	}
	return out
}

// valueWords is a value as a card shows it: whole when short, else its
// start and its length (a set's SMEMBERS reply runs to pages; results.json
// has it whole).
func valueWords(v string) string {
	const n = 60
	if len(v) <= n {
		return v
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d characters, whole in results.json)", v[:cut], len(v))
}

// censusSentences says what the key census found as a whole.
func (d *runData) censusSentences() []string {
	c := d.sum.Census
	if c == nil {
		return nil
	}
	out := []string{fmt.Sprintf("Key census at the end: %d copies of the run's keys on %d nodes (primaries and replicas).", c.Copies, c.Nodes)}
	if len(c.Unanswered) > 0 {
		out = append(out, fmt.Sprintf("Not answered by %s: what they hold is unknown.", strings.Join(c.Unanswered, ", ")))
	}
	if c.Stranded > 0 {
		out = append(out, fmt.Sprintf("%d copies are on nodes whose shard does not serve their slot (stranded: clients are sent elsewhere), e.g. %s.", c.Stranded, strings.Join(c.Examples, "; ")))
	}
	if c.InOpenSlots > 0 {
		out = append(out, fmt.Sprintf("%d copies are outside their slot's shard on nodes that have the slot MIGRATING or IMPORTING (a migration left half-way; clients reach them by ASK, if at all), e.g. %s.", c.InOpenSlots, strings.Join(c.OpenExamples, "; ")))
	}
	if c.SetAside > 0 {
		out = append(out, fmt.Sprintf("%d set-aside copies of the run's keys (both sides of a move held different copies of the key: the destination's kept under its name, the other beside it, not lost), e.g. %s.", c.SetAside, strings.Join(c.SetAsideExample, "; ")))
	}
	if c.Stranded == 0 && c.InOpenSlots == 0 {
		out = append(out, "No copy is on a node whose shard does not serve its slot.")
	}
	return out
}

// unservedView is a shard-window that went unserved as the report shows
// it: the shard, the span, what clients were told, what came in between.
func unservedView(v attributionView, a checker.Attribution, u *checker.Unserved) attributionView {
	v.Title = fmt.Sprintf("unserved: shard of %s", u.Shard)
	if u.Window >= 0 {
		v.Title += fmt.Sprintf(" in fault window %d", u.Window)
	} else {
		v.Title += " outside every fault window"
	}
	v.VerdictClass = map[string]string{checker.FaultOutage: "valid", checker.AdminOutage: "unknown", checker.NotRecovered: "invalid"}[a.Verdict]
	if v.VerdictClass == "" {
		v.VerdictClass = "unknown"
	}
	span := fmt.Sprintf("%ss (first failed call) to %ss", trimFloat(u.FromS), trimFloat(u.ToS))
	if u.Recovered {
		span += " (first served call)"
	} else {
		span += " (last failure's end: not served again)"
	}
	var errs []string
	for _, k := range sortedKeys(u.Errors) {
		errs = append(errs, fmt.Sprintf("%s x%d", k, u.Errors[k]))
	}
	v.Facts = append(v.Facts, fact{"span", span}, fact{"first key", fmt.Sprintf("%s (slot %d)", a.Key, a.Slot)},
		fact{"errors seen", strings.Join(errs, ", ")})
	if len(u.Topology) > 0 {
		v.Facts = append(v.Facts, fact{"topology", strings.Join(u.Topology, "; ")})
	}
	if len(a.Faults) > 0 {
		v.Facts = append(v.Facts, fact{"faults overlapping", strings.Join(a.Faults, "; ")})
	}
	if steps := stepsText(a.Steps, "the shard's slots or nodes"); steps != "" {
		v.Facts = append(v.Facts, fact{"journalled admin steps overlapping", steps})
	}
	return v
}

// stepsText is an attribution's journalled steps in one line, each marked
// when it touches what the attribution is about (touches says what).
func stepsText(steps []checker.AttrStep, touches string) string {
	var out []string
	for _, s := range steps {
		t := fmt.Sprintf("#%d %s %s slots %s %s -> %s at %ss", s.Seq, s.Kind, s.State, s.Slots, s.From, s.To, trimFloat(s.TimeS))
		if s.Touches {
			t += " (touches " + touches + ")"
		}
		if s.Error != "" {
			t += ": " + s.Error
		}
		out = append(out, t)
	}
	return strings.Join(out, "; ")
}
