package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

// The report explains an anomaly from what results.json holds, whatever the
// checker: sentences it gave (reason, reasons, error), the checker package's
// explanation of each figure it explains (checker.DescribeFigure), every list
// of instances as a table, the cycles of a transactional checker, and the
// history entries the instances name by op index. A figure without an
// explanation still shows, as a table or a value.

// anomalySection is one checker's anomalies, explained.
type anomalySection struct {
	Checker   string
	Valid     string
	Sentences []string
	Tables    []instanceTable
	Lists     []namedList
	Cycles    []cycleView
	Links     []string // porcupine pages and other files of this checker
	Ops       []opRow
}

type namedList struct {
	Name, Why string
	Items     []string
	More      int
}

type instanceTable struct {
	Name, Why string
	Columns   []string
	Rows      [][]string
	More      int // rows not shown
}

type cycleView struct {
	Class, Why string
	Count      string
	Steps      []string
}

// opRow is a history entry named by an anomaly: its invocation and outcome.
type opRow struct {
	Index, Process, Time, F, Key, Sent, Outcome, Got, Node, Latency, Error string
}

// anomalyMark circles an anomalous op in the latency scatter.
type anomalyMark struct {
	t, latMs float64
	title    string
}

const (
	maxInstanceRows = 8
	maxOpsShown     = 10
	maxMarks        = 5000
	maxCycleLines   = 16
)

// anomalies explains every checker that did not say valid.
func (d *runData) anomalies() ([]anomalySection, []anomalyMark) {
	var out []anomalySection
	var marks []anomalyMark
	htmlFiles := d.htmlFiles()
	for _, name := range d.checkerNames() {
		res := d.sum.Checkers[name]
		if res.Valid == checker.Valid {
			continue
		}
		s := anomalySection{Checker: name, Valid: res.Valid.String()}
		var indexes []int64
		keys := sortedKeys(res.Values())
		if m, untyped := res.Figures.(checker.Map); untyped {
			// Figures of a checker not typed (or of another tool): its
			// words under any of the names they go by.
			for _, k := range []string{"reason", "reasons", "why", "error", "note"} {
				s.Sentences = append(s.Sentences, sentences(m[k])...)
			}
		} else {
			s.Sentences = append(append(s.Sentences, sentences(res.Why())...), sentences(res.Err())...)
		}
		for _, k := range keys {
			v := res.Values()[k]
			if n, ok := num(v); ok && n > 0 && checker.DescribeFigure(k) != "" {
				if _, isList := v.([]any); !isList {
					s.Sentences = append(s.Sentences, fmt.Sprintf("%s %s: %s.", titleWords(k), trimFloat(n), checker.DescribeFigure(k)))
				}
			}
		}
		for _, k := range keys {
			switch k {
			case "reason", "reasons", "why", "error", "note", "detects", "does_not_detect":
				continue
			}
			switch v := res.Values()[k].(type) {
			case []any:
				d.instances(&s, k, v, &indexes)
			case map[string]any:
				// Instances by class: {class: {count, examples}} (Elle's
				// shape) or {class: [instance ...]}.
				if isClassMap(v) {
					s.Cycles = append(s.Cycles, cycles(v, &indexes)...)
					continue
				}
				for _, sub := range sortedKeys(v) {
					if xs, ok := v[sub].([]any); ok {
						d.instances(&s, k+": "+sub, xs, &indexes)
					}
				}
			}
		}
		s.Links = filesFor(name, htmlFiles)
		seen := map[int64]bool{}
		for _, ix := range indexes {
			if seen[ix] {
				continue
			}
			seen[ix] = true
			row, mark, ok := d.describeOp(ix, name)
			if !ok {
				continue
			}
			if len(s.Ops) < maxOpsShown {
				s.Ops = append(s.Ops, row)
			}
			if len(marks) < maxMarks {
				marks = append(marks, mark)
			}
		}
		if len(s.Sentences) == 0 && len(s.Tables) == 0 && len(s.Cycles) == 0 && len(s.Lists) == 0 {
			s.Sentences = append(s.Sentences, "The checker named no instance; its figures are in the Checkers section.")
		}
		out = append(out, s)
	}
	return out, marks
}

// instances adds a list figure: a table when its items are objects.
func (d *runData) instances(s *anomalySection, name string, v []any, indexes *[]int64) {
	if len(v) == 0 {
		return
	}
	if t, ok := table(name, v, indexes); ok {
		d.nameNodes(&t)
		s.Tables = append(s.Tables, t)
	} else {
		s.Lists = append(s.Lists, list(name, v, indexes))
	}
}

// isClassMap tells {class: {count, examples}} from other objects.
func isClassMap(m map[string]any) bool {
	if len(m) == 0 {
		return false
	}
	for _, v := range m {
		e, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if _, ok := e["examples"]; !ok {
			return false
		}
	}
	return true
}

func sentences(v any) []string {
	switch x := v.(type) {
	case string:
		if x != "" {
			return []string{x}
		}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			} else {
				out = append(out, cell(e))
			}
		}
		return out
	}
	return nil
}

// table renders a list of objects; it collects the op indexes they name.
func table(name string, rows []any, indexes *[]int64) (instanceTable, bool) {
	cols := map[string]bool{}
	for _, r := range rows {
		m, ok := r.(map[string]any)
		if !ok {
			return instanceTable{}, false
		}
		for k := range m {
			cols[k] = true
		}
		collectIndexes(m, indexes)
	}
	t := instanceTable{Name: name, Why: checker.DescribeFigure(name)}
	for _, c := range []string{"window", "fault", "nodes", "start_s", "end_s", "index", "key", "element", "value", "time_s", "ack_s", "node", "wait", "lost"} {
		if cols[c] {
			t.Columns = append(t.Columns, c)
			delete(cols, c)
		}
	}
	t.Columns = append(t.Columns, sortedKeys(cols)...)
	for i, r := range rows {
		if i >= maxInstanceRows {
			t.More = len(rows) - i
			break
		}
		m := r.(map[string]any)
		row := make([]string, len(t.Columns))
		for j, c := range t.Columns {
			if v, ok := m[c]; ok {
				row[j] = clip(words(v), 120)
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t, true
}

func list(name string, items []any, indexes *[]int64) namedList {
	l := namedList{Name: name, Why: checker.DescribeFigure(name)}
	for i, it := range items {
		if strings.HasSuffix(name, "indices") || strings.HasSuffix(name, "indexes") {
			if n, ok := it.(float64); ok {
				*indexes = append(*indexes, int64(n))
			}
		}
		if i >= 20 {
			l.More = len(items) - i
			break
		}
		l.Items = append(l.Items, cell(it))
	}
	return l
}

// collectIndexes finds op indexes in an instance: "index", or the index of
// a nested op reference (reader, writer, txn ...). Keys are visited in
// name order, so that the rows come in the same order on every rendering.
func collectIndexes(m map[string]any, indexes *[]int64) {
	for _, k := range sortedKeys(m) {
		switch x := m[k].(type) {
		case float64:
			if k == "index" || strings.HasSuffix(k, "_index") {
				*indexes = append(*indexes, int64(x))
			}
		case map[string]any:
			collectIndexes(x, indexes)
		case []any:
			if k == "indices" || k == "indexes" || k == "ops" {
				for _, e := range x {
					if n, ok := e.(float64); ok {
						*indexes = append(*indexes, int64(n))
					}
				}
			}
			for _, e := range x {
				if mm, ok := e.(map[string]any); ok {
					collectIndexes(mm, indexes)
				}
			}
		}
	}
}

// cycles renders Elle-style classes: {class: {count, examples: [[step...]]}}
// where a step is a transaction and the edge leaving it to the next one.
func cycles(m map[string]any, indexes *[]int64) []cycleView {
	var out []cycleView
	for _, class := range sortedKeys(m) {
		c := cycleView{Class: class, Why: checker.DescribeClass(class)}
		entry, _ := m[class].(map[string]any)
		if entry == nil {
			c.Steps = []string{cell(m[class])}
			out = append(out, c)
			continue
		}
		c.Count = cell(entry["count"])
		exs, _ := entry["examples"].([]any)
		for _, ex := range exs {
			switch e := ex.(type) {
			case []any: // a cycle
				var words []string
				realtimeRun := 0 // consecutive real-time steps, told as one
				for i, st := range e {
					sm, _ := st.(map[string]any)
					if sm == nil {
						continue
					}
					collectIndexes(sm, indexes)
					if sm["edge"] == "realtime" && i+1 < len(e) {
						if next, _ := e[i+1].(map[string]any); next != nil && next["edge"] == "realtime" {
							realtimeRun++
							continue
						}
					}
					if realtimeRun > 0 {
						words = append(words, fmt.Sprintf("… %d transactions, each completed before the next began …", realtimeRun))
						realtimeRun = 0
					}
					w := "T" + fmt.Sprint(i+1) + " " + txnRef(sm)
					if edge, ok := sm["edge"].(string); ok {
						next := "T1"
						if i+1 < len(e) {
							next = "T" + fmt.Sprint(i+2)
						}
						w += " " + edgeName(edge) + " " + next
						if k, ok := sm["key"]; ok {
							w += fmt.Sprintf(" (%s on %s, value %s)", edge, cell(k), cell(sm["value"]))
						} else {
							w += " (" + edge + ")"
						}
					}
					words = append(words, w)
				}
				if len(words) > maxCycleLines {
					// A long cycle (real-time edges through many transactions)
					// is told by its start and its closing steps.
					head, tail := words[:maxCycleLines-3], words[len(words)-2:]
					words = append(append(head, fmt.Sprintf("… %d more steps (results.json has them all) …", len(words)-len(head)-len(tail))), tail...)
				}
				c.Steps = append(c.Steps, strings.Join(words, ";\n"))
			case map[string]any:
				collectIndexes(e, indexes)
				c.Steps = append(c.Steps, cell(e))
			default:
				c.Steps = append(c.Steps, cell(e))
			}
			if len(c.Steps) >= 3 {
				break
			}
		}
		out = append(out, c)
	}
	return out
}

func edgeName(e string) string {
	if w := checker.DescribeEdge(e); w != "" {
		return w
	}
	return e
}

func txnRef(m map[string]any) string {
	var parts []string
	if ix, ok := m["index"]; ok {
		parts = append(parts, "op "+cell(ix))
	}
	if p, ok := m["process"]; ok {
		parts = append(parts, "process "+cell(p))
	}
	if s, ok := m["status"]; ok {
		parts = append(parts, cell(s))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// nameNodes shows node columns as n1, n2 ... instead of addresses.
func (d *runData) nameNodes(t *instanceTable) {
	for j, c := range t.Columns {
		if c != "node" {
			continue
		}
		for _, r := range t.Rows {
			r[j] = d.name(r[j])
		}
	}
}

// describeOp finds the op an anomaly names and its outcome.
func (d *runData) describeOp(index int64, checkerName string) (opRow, anomalyMark, bool) {
	op, ok := d.op(index)
	if !ok {
		return opRow{}, anomalyMark{}, false
	}
	inv := op
	if op.Type != history.Invoke {
		// An instance may name a completion; find its invocation.
		at, _ := d.pos(index)
		for j := at - 1; j >= 0; j-- {
			if d.ops[j].Process == op.Process && d.ops[j].Type == history.Invoke {
				inv = &d.ops[j]
				break
			}
		}
	}
	comp, _ := d.completion(inv.Index)
	r := opRow{
		Index: fmt.Sprint(inv.Index), Process: inv.Process.String(), Time: fmt.Sprintf("%.3f s", float64(inv.Time)/1e9),
		F: inv.F, Key: inv.Key, Sent: clip(string(inv.Value), 80), Node: d.name(inv.Node), Error: inv.ErrorText(),
	}
	m := anomalyMark{t: float64(inv.Time) / 1e9}
	if comp != nil && comp != inv {
		r.Outcome, r.Got = comp.Type.String(), clip(string(comp.Value), 80)
		if comp.Node != "" {
			r.Node = d.name(comp.Node)
		}
		if comp.ErrorText() != "" {
			r.Error = comp.ErrorText()
		}
		m.latMs = float64(comp.Time-inv.Time) / 1e6
		r.Latency = fmt.Sprintf("%.1f ms", m.latMs)
	} else {
		r.Outcome = "no completion"
	}
	m.title = fmt.Sprintf("%s: op %s %s %s at %s -> %s %s", checkerName, r.Index, r.F, r.Key, r.Time, r.Outcome, r.Got)
	return r, m, true
}

// htmlFiles lists the HTML artefacts of the run other than the report.
func (d *runData) htmlFiles() []string {
	var out []string
	_ = filepath.WalkDir(d.run.Dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(p, ".html") && filepath.Base(p) != "report.html" {
			rel, _ := filepath.Rel(d.run.Dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// filesFor picks the artefacts of a checker: files under a directory named
// as the checker (its last path element), first those of the keys it named.
func filesFor(name string, files []string) []string {
	base := name[strings.LastIndexByte(name, '/')+1:]
	var out []string
	for _, f := range files {
		if strings.HasPrefix(f, base+"/") || strings.HasPrefix(f, name+"/") {
			out = append(out, f)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// words renders a value for a sentence: lists joined by commas, objects as
// "key value" pairs, scalars as cell does.
func words(v any) string {
	switch x := v.(type) {
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			switch e.(type) {
			case []any:
				parts = append(parts, "["+words(e)+"]") // e.g. partition groups
			case map[string]any:
				parts = append(parts, "("+words(e)+")") // e.g. the moves of a migration
			default:
				parts = append(parts, words(e))
			}
		}
		return strings.Join(parts, ",")
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range sortedKeys(x) {
			parts = append(parts, k+" "+words(x[k]))
		}
		return strings.Join(parts, ", ")
	}
	return cell(v)
}

// cell renders a figure's value in a table cell, short.
func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return clip(x, 120)
	case float64:
		return trimFloat(x)
	case bool:
		return fmt.Sprint(x)
	case map[string]any:
		// A latency-like summary reads better as words than as JSON.
		if _, ok := x["max"]; ok {
			if _, ok := x["p50"]; ok {
				return fmt.Sprintf("p50 %s, max %s (n=%s)", cell(x["p50"]), cell(x["max"]), cell(x["count"]))
			}
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return clip(string(b), 120)
}
