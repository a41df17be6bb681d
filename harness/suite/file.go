// Package suite runs a matrix of tests one after another and sums them up:
// a YAML suite file (keys are `redline run`'s flag names) is expanded into
// runs, each run goes through the normal runner (handed in by the caller),
// and the suite directory gets suite.yaml, summary.json, junit.xml and
// summary.html. Presets (the release check, the RPO study) are suites too.
// A run's verdict is read with the results store's reader and its exit
// code mapped with checker's (Validity.ExitCode, ValidityOfExit); the suite
// adds only the states of a run without a verdict (error, pending).
package suite

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Param is one flag of a run: the key is the flag name of `redline run`;
// a repeatable flag (server-config) may have several values, any other flag
// one (a YAML list there is joined with commas, as --workload a,b is).
type Param struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

// Params are a run's flags in a stable order: defaults first, in file
// order, then keys the matrix or the run added.
type Params []Param

// Get returns a key's values joined with commas, "" when absent.
func (ps Params) Get(key string) string {
	for _, p := range ps {
		if p.Key == key {
			return strings.Join(p.Values, ",")
		}
	}
	return ""
}

// with returns ps with key set to values (replacing, or appended).
func (ps Params) with(key string, values []string) Params {
	out := slices.Clone(ps)
	for i := range out {
		if out[i].Key == key {
			out[i].Values = values
			return out
		}
	}
	return append(out, Param{Key: key, Values: values})
}

// Run is one expanded test of a suite.
type Run struct {
	// Name says what sets the run apart from the suite's defaults
	// ("workload=set nemesis=kill"); unique within a suite.
	Name   string `json:"name"`
	Params Params `json:"params"`
	Line   int    `json:"line"` // where in the file the run comes from
}

// Suite is a suite file expanded: every run with every parameter.
type Suite struct {
	Name string
	Runs []Run
	// Skipped are runs a validator dropped with ErrSkip, with why.
	Skipped []string
	// Study marks an RPO study: its runs' lost writes are what it
	// measures, so an invalid run is a measurement, not a failure.
	Study bool
}

// ErrSkip, wrapped in a RunValidator's error, drops the run instead of
// failing the file: a preset covering every fault skips those the target
// cannot suffer.
var ErrSkip = errors.New("skipped")

// Validator checks one key and its values (e.g. by setting the flag of the
// same name on a fresh `run` command); RunValidator a whole run.
type (
	Validator    func(key string, values []string) error
	RunValidator func(Params) error
)

// FileError is a bad suite file: what was wrong, with the line and key.
type FileError struct {
	Line int
	Key  string
	Msg  string
}

func (e *FileError) Error() string {
	where := fmt.Sprintf("line %d", e.Line)
	if e.Key != "" {
		where += fmt.Sprintf(", key %q", e.Key)
	}
	return fmt.Sprintf("suite file %s: %s", where, e.Msg)
}

func bad(n *yaml.Node, key, format string, args ...any) error {
	return &FileError{Line: n.Line, Key: key, Msg: fmt.Sprintf(format, args...)}
}

// Parse reads a suite file and expands it: each combination of the matrix
// (lists crossed, first key outermost), then each entry of runs, every one
// over the defaults. Overrides are applied last, to every run (they are how
// `--set target=redis` retargets a preset). Each key is checked with
// validate, each expanded run with validateRun.
func Parse(data []byte, overrides Params, validate Validator, validateRun RunValidator) (*Suite, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, &FileError{Line: yamlErrLine(err), Msg: "not valid YAML: " + err.Error()}
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, &FileError{Line: max(doc.Line, 1), Msg: "expected a mapping with name, defaults, matrix and runs"}
	}
	top := doc.Content[0]
	s := &Suite{}
	var defaults Params
	var matrix []matrixKey
	var matrixLine int
	type rawRun struct {
		node   *yaml.Node
		params Params
	}
	var runs []rawRun
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		switch k.Value {
		case "name":
			if v.Kind != yaml.ScalarNode || strings.TrimSpace(v.Value) == "" {
				return nil, bad(v, "name", "want a non-empty name")
			}
			s.Name = v.Value
		case "defaults":
			ps, err := flags(v, "defaults", validate)
			if err != nil {
				return nil, err
			}
			defaults = ps
		case "matrix":
			if v.Kind != yaml.MappingNode {
				return nil, bad(v, "matrix", "want a mapping of flag name to a list of values")
			}
			matrixLine = v.Line
			for j := 0; j+1 < len(v.Content); j += 2 {
				mk, mv := v.Content[j], v.Content[j+1]
				if mv.Kind != yaml.SequenceNode || len(mv.Content) == 0 {
					return nil, bad(mv, mk.Value, "a matrix entry needs a non-empty list of values")
				}
				m := matrixKey{key: mk.Value}
				for _, item := range mv.Content {
					if item.Kind != yaml.ScalarNode {
						return nil, bad(item, mk.Value, "matrix values must be scalars")
					}
					if err := check(validate, item, mk.Value, []string{item.Value}); err != nil {
						return nil, err
					}
					m.values = append(m.values, item.Value)
				}
				matrix = append(matrix, m)
			}
		case "runs":
			if v.Kind != yaml.SequenceNode {
				return nil, bad(v, "runs", "want a list of runs, each a mapping of flag name to value")
			}
			for _, item := range v.Content {
				ps, err := flags(item, "runs", validate)
				if err != nil {
					return nil, err
				}
				runs = append(runs, rawRun{item, ps})
			}
		default:
			return nil, bad(k, k.Value, "unknown key: a suite file has name, defaults, matrix and runs")
		}
	}
	if s.Name == "" {
		return nil, &FileError{Line: 1, Key: "name", Msg: "the suite needs a name (it names <results>/suites/<name>)"}
	}
	if strings.ContainsAny(s.Name, "/\\") || s.Name == "." || s.Name == ".." {
		return nil, &FileError{Line: 1, Key: "name", Msg: fmt.Sprintf("%q cannot name a directory", s.Name)}
	}
	add := func(line int, own Params) error {
		ps := slices.Clone(defaults)
		for _, p := range own {
			ps = ps.with(p.Key, p.Values)
		}
		for _, p := range overrides {
			ps = ps.with(p.Key, p.Values)
		}
		r := Run{Name: runName(own), Params: ps, Line: line}
		if validateRun != nil {
			if err := validateRun(ps); errors.Is(err, ErrSkip) {
				s.Skipped = append(s.Skipped, r.Name+": "+err.Error())
				return nil
			} else if err != nil {
				return &FileError{Line: line, Msg: fmt.Sprintf("run %s: %v", r.Name, err)}
			}
		}
		s.Runs = append(s.Runs, r)
		return nil
	}
	for _, combo := range cross(matrix) {
		if err := add(matrixLine, combo); err != nil {
			return nil, err
		}
	}
	for _, r := range runs {
		if err := add(r.node.Line, r.params); err != nil {
			return nil, err
		}
	}
	if len(s.Runs) == 0 && len(s.Skipped) > 0 {
		return nil, &FileError{Line: top.Line, Msg: "every run was skipped: " + strings.Join(s.Skipped, "; ")}
	}
	if len(s.Runs) == 0 {
		return nil, &FileError{Line: top.Line, Msg: "no runs: give a matrix, a list of runs, or both"}
	}
	uniqueNames(s.Runs)
	return s, nil
}

type matrixKey struct {
	key    string
	values []string
}

// cross is the product of the matrix lists, first key outermost.
func cross(m []matrixKey) []Params {
	if len(m) == 0 {
		return nil
	}
	out := []Params{nil}
	for _, k := range m {
		var next []Params
		for _, ps := range out {
			for _, v := range k.values {
				next = append(next, append(slices.Clone(ps), Param{Key: k.key, Values: []string{v}}))
			}
		}
		out = next
	}
	return out
}

// flags reads a mapping of flag name to a scalar or a list of scalars.
func flags(n *yaml.Node, where string, validate Validator) (Params, error) {
	if n.Kind != yaml.MappingNode {
		return nil, bad(n, where, "want a mapping of flag name to value")
	}
	var ps Params
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			return nil, bad(k, k.Value, "given twice")
		}
		seen[k.Value] = true
		var values []string
		switch v.Kind {
		case yaml.ScalarNode:
			values = []string{v.Value}
		case yaml.SequenceNode:
			for _, item := range v.Content {
				if item.Kind != yaml.ScalarNode {
					return nil, bad(item, k.Value, "values must be scalars")
				}
				values = append(values, item.Value)
			}
		default:
			return nil, bad(v, k.Value, "want a value or a list of values")
		}
		if err := check(validate, k, k.Value, values); err != nil {
			return nil, err
		}
		ps = append(ps, Param{Key: k.Value, Values: values})
	}
	return ps, nil
}

func check(validate Validator, n *yaml.Node, key string, values []string) error {
	if validate == nil {
		return nil
	}
	if err := validate(key, values); err != nil {
		return bad(n, key, "%v", err)
	}
	return nil
}

// runName names a run by its own parameters, in their order.
func runName(own Params) string {
	if len(own) == 0 {
		return "defaults"
	}
	parts := make([]string, len(own))
	for i, p := range own {
		parts[i] = p.Key + "=" + strings.Join(p.Values, ",")
	}
	return strings.Join(parts, " ")
}

// uniqueNames appends #2, #3 ... to repeated names (a run listed twice).
func uniqueNames(runs []Run) {
	count := map[string]int{}
	for i := range runs {
		n := runs[i].Name
		count[n]++
		if count[n] > 1 {
			runs[i].Name = fmt.Sprintf("%s #%d", n, count[n])
		}
	}
}

// yamlErrLine digs the line out of a yaml.v3 error ("yaml: line 3: ...").
func yamlErrLine(err error) int {
	var line int
	msg := err.Error()
	if i := strings.Index(msg, "line "); i >= 0 {
		fmt.Sscanf(msg[i+5:], "%d", &line)
	}
	return max(line, 1)
}

// Marshal writes the expanded suite as a suite file with one entry per run
// and no defaults or matrix: suite.yaml of a suite directory, which
// --resume reads back.
func (s *Suite) Marshal() ([]byte, error) {
	runs := &yaml.Node{Kind: yaml.SequenceNode}
	for _, r := range s.Runs {
		m := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
		for _, p := range r.Params {
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: p.Key})
			if len(p.Values) == 1 {
				m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: p.Values[0]})
				continue
			}
			seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
			for _, v := range p.Values {
				seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: v})
			}
			m.Content = append(m.Content, seq)
		}
		runs.Content = append(runs.Content, m)
	}
	doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: "name"}, {Kind: yaml.ScalarNode, Value: s.Name},
		{Kind: yaml.ScalarNode, Value: "runs"}, runs,
	}}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

//go:embed presets/*.yaml
var presets embed.FS

// Preset returns a bundled suite file by name ("release").
func Preset(name string) ([]byte, error) {
	b, err := presets.ReadFile("presets/" + name + ".yaml")
	if err != nil {
		var names []string
		entries, _ := presets.ReadDir("presets")
		for _, e := range entries {
			names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
		}
		return nil, fmt.Errorf("no preset %q: presets are %s", name, strings.Join(names, ", "))
	}
	return b, nil
}

// MarshalJSON writes params as an object in their order: a value for a
// single value, a list for a repeated flag.
func (ps Params) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p.Key)
		b.Write(k)
		b.WriteByte(':')
		var v []byte
		if len(p.Values) == 1 {
			v, _ = json.Marshal(p.Values[0])
		} else {
			v, _ = json.Marshal(p.Values)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON wrote, keeping the order.
func (ps *Params) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("params: want an object")
	}
	*ps = nil
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		var one string
		var many []string
		if err := json.Unmarshal(raw, &one); err == nil {
			many = []string{one}
		} else if err := json.Unmarshal(raw, &many); err != nil {
			return fmt.Errorf("params %s: want a string or a list of strings", key)
		}
		*ps = append(*ps, Param{Key: key, Values: many})
	}
	return nil
}
