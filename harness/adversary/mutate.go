package adversary

import (
	"errors"
	"math/rand/v2"
	"slices"

	"github.com/redline-dev/redline/checker"
)

// Kind says what a mutation plants and so what the verdict must become.
type Kind int

const (
	// Anomaly: what a buggy server would have answered. The checker the
	// mutation names must say invalid (with its figure, when one is
	// named).
	Anomaly Kind = iota
	// Lie: a witness (a run file, the census, a heal record, a flag on an
	// op) that contradicts the others. The verdict must be invalid or
	// unknown, never valid.
	Lie
	// Allowed: a behaviour the checkers document as allowed (a stale read
	// a replica served): the verdict must stay the recorded one. It keeps
	// the checkers from flagging everything.
	Allowed
)

func (k Kind) String() string {
	switch k {
	case Anomaly:
		return "anomaly"
	case Lie:
		return "lie"
	}
	return "allowed"
}

// Mutation plants one anomaly or lie into a run.
type Mutation struct {
	// Name is short and stable: it names the mutation in failure
	// messages, in the table and in -run patterns.
	Name string
	Kind Kind
	// Checker is the checker that must judge it (an Anomaly: invalid; a
	// Lie: the one expected to catch it, informative only).
	Checker string
	// Figure, when set, is a figure of Checker that must be present and
	// not zero once the anomaly is planted (a count, or its class among
	// the checker's anomalies).
	Figure Figure
	// Class says in words what is planted, for the table.
	Class string
	// Apply plants it into r (a clone: edit freely) with rng, and says
	// where, in words, for a failure message. ErrNotApplicable: r has
	// nothing to plant it in (no op of that kind).
	Apply func(r *Run, rng *rand.Rand) (string, error)
	// Prepares says Apply first brings the run's witnesses to what a
	// redline of today records (the corpus predates the witness Checker
	// reads: the replica census' replication record), so that Checker
	// not applicable in the unmutated run is no reason to skip the run;
	// an Allowed mutation doing only the preparation shows it changes no
	// verdict.
	Prepares bool
	// Gap, when set, is a known hole: the checkers do not catch this yet,
	// and Gap says why. The test then asserts the hole is still there (so
	// that closing it updates the table), never skips it silently.
	Gap string
}

// ErrNotApplicable says a run has nothing to plant a mutation in.
var ErrNotApplicable = errors.New("not applicable to this run")

// Judge says whether s is the verdict m requires of r's mutated history,
// and if not, why. recorded is the verdict of the unmutated run as
// re-checked (not the results.json of the recording, which an older
// redline may have written).
func (m Mutation) Judge(recorded, s checker.Summary) (ok bool, why string) {
	switch m.Kind {
	case Anomaly:
		res, found := s.Checkers[m.Checker]
		if !found {
			return false, "checker " + m.Checker + " did not run (not applicable: " + s.NotApplicable[m.Checker] + ")"
		}
		if res.Valid != checker.Invalid {
			return false, "checker " + m.Checker + " said " + res.Valid.String() + ": " + res.Why()
		}
		if m.Figure.Set != nil && !m.Figure.Set(res) {
			return false, "checker " + m.Checker + " is invalid but its figure " + m.Figure.Name + " is not set: " + res.Why()
		}
		return true, ""
	case Lie:
		if s.Valid == checker.Valid {
			return false, "the verdict is valid"
		}
		return true, ""
	}
	if s.Valid != recorded.Valid {
		return false, "the verdict changed from " + recorded.Valid.String() + " to " + s.Valid.String() + ": " + firstWhy(s)
	}
	return true, ""
}

// Caught names the checkers that were not valid in s but were valid (or
// absent) in recorded: who caught the mutation.
func Caught(recorded, s checker.Summary) []string {
	var out []string
	for _, name := range sortedKeys(s.Checkers) {
		res := s.Checkers[name]
		if res.Valid == checker.Valid {
			continue
		}
		if was, ok := recorded.Checkers[name]; ok && was.Valid == res.Valid {
			continue
		}
		out = append(out, name+" "+res.Valid.String())
	}
	return out
}

func firstWhy(s checker.Summary) string {
	for _, name := range sortedKeys(s.Checkers) {
		if w := s.Checkers[name].Why(); w != "" {
			return name + ": " + w
		}
	}
	return ""
}

// Catalogue is every mutation, in the table's order.
func Catalogue() []Mutation {
	var out []Mutation
	for _, ms := range [][]Mutation{registerMutations, counterMutations, setMutations, txnMutations, scriptMutations,
		witnessMutations, replicaMutations, topologyMutations, fileMutations, waitProbeMutations,
		queueMutations, lockMutations, ttlMutations} {
		out = append(out, ms...)
	}
	return out
}

// Figure is a figure a planted anomaly must set: its name in
// results.json, for the message, and how it is read, typed.
type Figure struct {
	Name string
	Set  func(checker.Result) bool
}

// count is a headline count that must not be zero.
func count(name string, of func(checker.Counts) *checker.Figure) Figure {
	return Figure{name, func(r checker.Result) bool { return of(r.Counts()).N() > 0 }}
}

// class is an anomaly class the checker must report.
func class(c string) Figure {
	return Figure{"anomalies/" + c, func(r checker.Result) bool { return slices.Contains(r.AnomalyClasses(), c) }}
}

// The figures the planted anomalies set.
var (
	lostFigure             = count("lost", func(c checker.Counts) *checker.Figure { return c.Lost })
	unexpectedFigure       = count("unexpected", func(c checker.Counts) *checker.Figure { return c.Unexpected })
	staleReadsFigure       = count("stale_reads", func(c checker.Counts) *checker.Figure { return c.StaleReads })
	anomalousKeysFigure    = count("anomalous_keys", func(c checker.Counts) *checker.Figure { return c.AnomalousKeys })
	badReadsFigure         = count("bad_reads", func(c checker.Counts) *checker.Figure { return c.BadReads })
	wrongTotalFigure       = count("wrong_total", func(c checker.Counts) *checker.Figure { return c.WrongTotal })
	negativeBalancesFigure = count("negative_balances", func(c checker.Counts) *checker.Figure { return c.NegativeBalances })
	badLoadSHAFigure       = Figure{"bad_load_sha", func(r checker.Result) bool {
		f, ok := checker.FiguresAs[*checker.ScriptFigures](r)
		return ok && f.BadLoadSHA > 0
	}}
)
