package adversary

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"

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
	// not zero or false once the anomaly is planted (its class); a path
	// "anomalies/garbage" looks inside a figure that is a map.
	Figure string
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
		if m.Figure != "" && !nonZero(figure(res.Values(), m.Figure)) {
			return false, "checker " + m.Checker + " is invalid but its figure " + m.Figure + " is not set: " + res.Why()
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

// figure is the figure at path ("a/b": key b of the map a).
func figure(figs map[string]any, path string) any {
	var v any = figs
	for _, part := range strings.Split(path, "/") {
		rv := reflect.ValueOf(v)
		if rv.Kind() != reflect.Map || rv.Type().Key().Kind() != reflect.String {
			return nil
		}
		e := rv.MapIndex(reflect.ValueOf(part).Convert(rv.Type().Key()))
		if !e.IsValid() {
			return nil
		}
		v = e.Interface()
	}
	return v
}

func nonZero(v any) bool {
	if v == nil {
		return false
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Map, reflect.Array, reflect.String:
		return rv.Len() > 0
	}
	return !rv.IsZero()
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
