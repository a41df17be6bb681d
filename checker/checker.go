// Package checker holds pure functions from a history to a verdict. Each
// checker looks at the whole history (client ops and nemesis events), given
// as a History value that also carries what the checkers derive from it
// alike, and returns a Result; Run composes several, in parallel, turning a
// panic into an honest "unknown". The package owns the verdicts (Validity),
// their exit codes and their JSON, the checkers' figures as typed values
// and the one place stored figures are read back into them (figures.go),
// the explanations of the figures (describe.go) and the headline counts
// read alike from every checker (headline.go). Each checker takes its own options: a Scope (name,
// key prefix, examples), beside its own knobs where it has any. The
// history format itself is specified in history/.
package checker

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"sort"
	"sync"

	"github.com/redline-dev/redline/history"
)

// Validity is a checker's verdict: valid, invalid or unknown. In JSON it is
// true, false or "unknown", as results.json promises.
type Validity int

const (
	Valid Validity = iota
	Unknown
	Invalid
)

func (v Validity) String() string {
	switch v {
	case Valid:
		return "valid"
	case Invalid:
		return "invalid"
	}
	return "unknown"
}

func (v Validity) MarshalJSON() ([]byte, error) { return json.Marshal(v.JSONValue()) }

func (v *Validity) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "true":
		*v = Valid
	case "false":
		*v = Invalid
	case `"unknown"`:
		*v = Unknown
	default:
		return fmt.Errorf("validity must be true, false or \"unknown\", got %s", b)
	}
	return nil
}

// The exit codes of the verdicts, as Jepsen's: the one mapping between
// verdicts and exit codes, for every command that ends in a verdict (run,
// check, suite, rpo, bench). The other exit codes (bad arguments, the
// harness failed) are no verdict and belong to cmd.
const (
	ExitValid   = 0
	ExitInvalid = 1
	ExitUnknown = 2
)

// ExitCode is v's exit code.
func (v Validity) ExitCode() int {
	switch v {
	case Valid:
		return ExitValid
	case Invalid:
		return ExitInvalid
	}
	return ExitUnknown
}

// ValidityOfExit is the verdict an exit code says; ok is false for a code
// that says none (the run could not finish).
func ValidityOfExit(code int) (v Validity, ok bool) {
	switch code {
	case ExitValid:
		return Valid, true
	case ExitInvalid:
		return Invalid, true
	case ExitUnknown:
		return Unknown, true
	}
	return Unknown, false
}

// JSONValue is v as results.json writes it: true, false or "unknown".
func (v Validity) JSONValue() any {
	switch v {
	case Valid:
		return true
	case Invalid:
		return false
	}
	return "unknown"
}

// Merge combines verdicts as Jepsen does: invalid beats unknown beats valid.
func Merge(vs ...Validity) Validity {
	out := Valid
	for _, v := range vs {
		if v > out {
			out = v
		}
	}
	return out
}

// Result is one checker's verdict plus its figures. Figures are written
// into the checker's object in results.json next to "valid" (figures.go),
// so use the names DESIGN.md gives (lost, unexpected, recovered,
// stale_reads, anomalous_keys, wait_satisfied, wait_unsatisfied, no_wait)
// where they apply.
type Result struct {
	Valid Validity
	// Figures are the checker's figures, a typed value of its own (or a
	// Map for a checker not typed yet); nil for none.
	Figures Figures
	// Files are extra artefacts to store in the run directory, by relative
	// name (e.g. "linearizable/key-17.html").
	Files map[string][]byte `json:"-"`
	// NotApplicable, when set, says why the history gave this checker
	// nothing to judge or measure (no slot moved, no fault window): Run
	// leaves such a result out of the verdict and lists it with its reason
	// under Summary.NotApplicable, so that "valid" is never said of
	// nothing.
	NotApplicable string `json:"-"`
}

// NotApplicable is the result of a checker the history gave nothing to
// judge or measure; why says what was missing.
func NotApplicable(why string) Result { return Result{Valid: Valid, NotApplicable: why} }

// Why is the result's "why" figure: in words, what made a verdict that is
// not valid ("" when there is none).
func (r Result) Why() string {
	if r.Figures == nil {
		return ""
	}
	return r.Figures.Why()
}

func (r Result) MarshalJSON() ([]byte, error) {
	m, err := figureObject(r.Figures)
	if err != nil {
		return nil, err
	}
	valid, err := json.Marshal(r.Valid)
	if err != nil {
		return nil, err
	}
	m["valid"] = valid
	return json.Marshal(m)
}

// UnmarshalJSON reads a result whose checker is not known: its figures
// as a Map. Summary reads each by its checker's name, typed.
func (r *Result) UnmarshalJSON(b []byte) error { return r.decode("", b) }

// decode reads the result of checker name: its verdict and its figures,
// typed where the checker's are (decodeFigures).
func (r *Result) decode(name string, b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	if raw, ok := m["valid"]; ok {
		if err := json.Unmarshal(raw, &r.Valid); err != nil {
			return err
		}
		delete(m, "valid")
	}
	rest, err := json.Marshal(m)
	if err != nil {
		return err
	}
	r.Figures, err = decodeFigures(name, rest)
	return err
}

// Checker checks a whole history. Its input is explicit: in carries the
// ops and the derivations the checkers share (History); ctx only bounds
// the time a checker may take.
type Checker interface {
	Name() string
	Check(ctx context.Context, in *History) Result
}

// NoCheckerName is the entry results.json carries when no checker ran.
const NoCheckerName = "no-checker"

// Summary is the content of results.json.
type Summary struct {
	Valid    Validity          `json:"valid"`
	Checkers map[string]Result `json:"checkers"`
	// NotApplicable names the checkers the history gave nothing to judge
	// or measure, with the reason; they are not part of the verdict.
	NotApplicable map[string]string `json:"not_applicable,omitempty"`
	// Attribution says, for the first instances of every anomaly, what
	// happened to each (attribution.go): set by the caller, which has the
	// servers' logs, after Run.
	Attribution []Attribution `json:"attribution,omitempty"`
	// Census summarizes the end phase's key census (nil: none taken).
	Census *CensusSummary `json:"census,omitempty"`
}

// UnmarshalJSON reads results.json: the one place stored figures are read
// back, each checker's into its type by the checker's name.
func (s *Summary) UnmarshalJSON(b []byte) error {
	type plain Summary
	var raw struct {
		plain
		Checkers map[string]json.RawMessage `json:"checkers"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*s = Summary(raw.plain)
	s.Checkers = nil
	if raw.Checkers != nil {
		s.Checkers = make(map[string]Result, len(raw.Checkers))
	}
	for name, rb := range raw.Checkers {
		var r Result
		if err := r.decode(name, rb); err != nil {
			return fmt.Errorf("checker %s: %w", name, err)
		}
		s.Checkers[name] = r
	}
	return nil
}

// Run runs the checkers in parallel (as many at a time as CPUs) and merges
// their verdicts. They all read one History of ops, so what they derive
// from it alike (the pairing, the calls of each key prefix, the fault
// windows: shared.go) is computed once. A checker that panics yields Unknown with the panic as its
// "error" figure. progress, if not nil, is called with each checker's name
// as it finishes.
func Run(ctx context.Context, ops []history.Op, checkers []Checker, progress func(name string)) Summary {
	results := make([]Result, len(checkers))
	h := NewHistory(ops)
	// As many checkers at a time as there are CPUs: more only adds their
	// working sets up (a dozen at once on a 10M-entry history) and takes
	// CPU from a search that has a time budget (linearizable).
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for i, c := range checkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			defer func() {
				if p := recover(); p != nil {
					results[i] = Result{Valid: Unknown, Figures: &Verdict{
						Error: fmt.Sprintf("checker panicked: %v\n%s", p, debug.Stack()),
					}}
				}
				if progress != nil {
					progress(c.Name())
				}
			}()
			results[i] = c.Check(ctx, h)
		}()
	}
	wg.Wait()
	s := Summary{Valid: Valid, Checkers: make(map[string]Result, len(checkers))}
	if len(checkers) == 0 {
		// No checker looked at the history: nothing was judged, so the run
		// cannot be valid (a config naming no workload, say).
		s.Valid = Unknown
		s.Checkers[NoCheckerName] = Result{Valid: Unknown, Figures: &Verdict{
			Error: "no checker ran: the run names no workload whose checkers could judge its history",
		}}
		return s
	}
	names := make([]string, 0, len(checkers))
	for i, c := range checkers {
		if why := results[i].NotApplicable; why != "" {
			if s.NotApplicable == nil {
				s.NotApplicable = map[string]string{}
			}
			s.NotApplicable[c.Name()] = why
			continue
		}
		s.Checkers[c.Name()] = results[i]
		names = append(names, c.Name())
	}
	if len(names) == 0 {
		// Every checker found nothing to judge: nothing was judged.
		s.Valid = Unknown
		s.Checkers[NoCheckerName] = Result{Valid: Unknown, Figures: &Verdict{
			Error: "no checker had anything to judge in this history (see not_applicable)",
		}}
		return s
	}
	sort.Strings(names)
	for _, n := range names {
		s.Valid = Merge(s.Valid, s.Checkers[n].Valid)
	}
	return s
}
