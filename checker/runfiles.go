package checker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/redline-dev/redline/history"
)

// RunFilesName is the run-files checker's name in results.json.
const RunFilesName = "run-files"

// TornLine is a history cut mid-write: the line number (1-based) of the
// first entry lost and, for JSON lines, that line's bytes as read
// (capped); for a compressed history, Bytes is the size of the frame cut
// short (its entries are lost whole, Text is empty).
type TornLine struct {
	Line  int    `json:"line"`
	Text  string `json:"text"`
	Bytes int64  `json:"bytes,omitempty"`
}

// RunFilesOptions are what the reader of a run's files saw of them beside
// the ops: a torn last line of the history, and the topology samples in
// the order topology.jsonl has them.
type RunFilesOptions struct {
	Torn     *TornLine
	Topology []TopologySample
	// Unfinished is what the history lacks of the entries its recorder
	// writes at the end of every run (the "heal" of a run with faults,
	// the "final-reads" marker, the "census"), in the order it writes
	// them; RecordedBy says what shows that recorder wrote it. A history
	// cut cleanly at a line boundary carries no other mark of it: without
	// them the counter takes the last read as final and the register
	// needs none.
	Unfinished []string
	RecordedBy string
	// Scanned, when set, is what the scans of a history too big for
	// memory found of it: Check then reads none of its ops.
	Scanned *ScannedHistory
}

// ScannedHistory is what a spill of the history found of it (history.
// Partitions) that the run-files checker reads: its entries (with a
// census appended from census.json, as the whole check's ops), and that
// each index was above the one before, so none is given twice.
type ScannedHistory struct {
	Entries int
}

type runFiles struct{ o RunFilesOptions }

// RunFiles cross-examines a run's files themselves, the witnesses every
// other checker believes: a history torn mid-line (the run did not finish
// writing it: the checkers judged a prefix), two entries sharing one op
// index (a checker's index then names two ops), a history that lacks the
// entries its recorder writes at the end of every run (it stopped before
// them), topology samples out of
// time order or contradicting each other at one instant. Each makes the
// verdict unknown, naming the first instances, with the garbage kept raw.
// Files that read whole have nothing to flag: not applicable (they are no
// verdict of their own).
func RunFiles(o RunFilesOptions) Checker { return runFiles{o} }

func (runFiles) Name() string { return RunFilesName }

// maxRaw bounds the raw text of an entry a figure keeps.
const maxRaw = 400

func capRaw(s string) string {
	if len(s) > maxRaw {
		return s[:maxRaw] + "..."
	}
	return s
}

func (r runFiles) Check(_ context.Context, in *History) Result {
	entries, ops := len(in.Ops), in.Ops
	if r.o.Scanned != nil {
		entries, ops = r.o.Scanned.Entries, nil
	}
	fig := &RunFilesFigures{}
	var why, caveats []string
	if t := r.o.Torn; t != nil {
		fig.Torn = true
		fig.TornLine = ptr(t.Line)
		fig.TornText = ptr(capRaw(t.Text))
		if t.Bytes > 0 {
			fig.TornBytes = t.Bytes
			why = append(why, fmt.Sprintf("the history is torn: its last %d bytes are a compressed frame cut mid-write, holding the entries from line %d on, so the run did not finish writing it and every verdict is about the %d entries before it; what came after is missing", t.Bytes, t.Line, entries))
		} else {
			why = append(why, fmt.Sprintf("the history is torn: line %d was cut mid-write (%q), so the run did not finish writing it and every verdict is about the %d entries before it; what came after is missing", t.Line, capRaw(t.Text), entries))
		}
		caveats = append(caveats, fmt.Sprintf("history torn at line %d: only the entries before it were checked", t.Line))
	}
	if len(r.o.Unfinished) > 0 {
		fig.Unfinished = true
		fig.MissingEntries = r.o.Unfinished
		why = append(why, fmt.Sprintf("the history lacks the %s entries its recorder writes at the end of every run (%s): the run did not finish, and every verdict is about the %d entries written before it stopped",
			joinWords(r.o.Unfinished), r.o.RecordedBy, entries))
		caveats = append(caveats, "the run did not finish: no "+joinWords(r.o.Unfinished)+" entry")
	}
	if dups := duplicateIndices(ops); len(dups) > 0 {
		fig.DuplicateIndices = len(dups)
		var ex []DuplicateIndex
		for _, d := range dups {
			if len(ex) >= 10 {
				break
			}
			raw := make([]string, len(d.at))
			for i, p := range d.at {
				b, _ := json.Marshal(&ops[p])
				raw[i] = capRaw(string(b))
			}
			ex = append(ex, DuplicateIndex{Index: d.index, Entries: plusOne(d.at), Raw: raw})
		}
		fig.DuplicateExamples = ex
		d := dups[0]
		why = append(why, fmt.Sprintf("op index %d names %d entries of the history (entries %s: %s): an index a checker names cannot say which op it means; %d indexes are given more than once",
			d.index, len(d.at), joinInts(plusOne(d.at)), strings.Join(ex[0].Raw, " and "), len(dups)))
		caveats = append(caveats, fmt.Sprintf("%d op indexes given to more than one entry", len(dups)))
	}
	if len(r.o.Topology) > 0 {
		out, contra := topologyDisorder(r.o.Topology)
		if len(out) > 0 {
			i := out[0]
			fig.TopologyOutOfOrder = len(out)
			why = append(why, fmt.Sprintf("topology.jsonl is out of time order: sample %d (at %ss) comes after one at %ss (%d such samples); the attribution reads them sorted by time", i+1, trimS(sec(r.o.Topology[i].Time)), trimS(sec(maxTimeBefore(r.o.Topology, i))), len(out)))
			caveats = append(caveats, "topology samples out of time order")
		}
		if len(contra) > 0 {
			c := contra[0]
			fig.TopologyContradictions = len(contra)
			why = append(why, fmt.Sprintf("topology.jsonl contradicts itself: samples %d and %d are both at %ss and say different things (%d such pairs)", c[0]+1, c[1]+1, trimS(sec(r.o.Topology[c[0]].Time)), len(contra)))
			caveats = append(caveats, "topology samples contradict each other")
		}
	}
	if len(why) == 0 {
		return NotApplicable("the run's files read whole: no torn line, no op index given twice, the topology samples in time order")
	}
	fig.Reason = strings.Join(why, "; ")
	fig.Caveat = strings.Join(caveats, "; ")
	return Result{Valid: Unknown, Figures: fig}
}

// RunFilesFigures are the run-files checker's figures: what of the run's
// files cannot be trusted (a torn history, a run that did not finish, op
// indexes given twice, topology samples out of order or contradicting).
type RunFilesFigures struct {
	Torn                   bool             `json:"torn,omitempty"`
	TornLine               *int             `json:"torn_line,omitempty"`
	TornText               *string          `json:"torn_text,omitempty"`
	TornBytes              int64            `json:"torn_bytes,omitempty"`
	Unfinished             bool             `json:"unfinished,omitempty"`
	MissingEntries         []string         `json:"missing_entries,omitempty"`
	DuplicateIndices       int              `json:"duplicate_indices,omitempty"`
	DuplicateExamples      []DuplicateIndex `json:"duplicate_examples,omitempty"`
	TopologyOutOfOrder     int              `json:"topology_out_of_order,omitempty"`
	TopologyContradictions int              `json:"topology_contradictions,omitempty"`
	// Caveat says it short, for the verdict line.
	Caveat string `json:"caveat"`
	Verdict
}

// DuplicateIndex is an op index several entries of the history carry:
// their positions (1-based) and their text.
type DuplicateIndex struct {
	Index   int64    `json:"index"`
	Entries []int    `json:"entries"`
	Raw     []string `json:"raw"`
}

type dupIndex struct {
	index int64
	at    []int // positions in ops
}

// duplicateIndices lists the op indexes that more than one entry carries,
// in the order of their second entry.
func duplicateIndices(ops []history.Op) []dupIndex {
	first := make(map[int64]int, len(ops))
	var out []dupIndex
	where := map[int64]int{} // index -> position in out
	for i := range ops {
		idx := ops[i].Index
		p, seen := first[idx]
		if !seen {
			first[idx] = i
			continue
		}
		if j, ok := where[idx]; ok {
			out[j].at = append(out[j].at, i)
			continue
		}
		where[idx] = len(out)
		out = append(out, dupIndex{index: idx, at: []int{p, i}})
	}
	return out
}

// topologyDisorder finds, in file order, the samples earlier than one
// before them (out of order), and the pairs of samples of one instant that
// differ (contradictions), as positions.
func topologyDisorder(topo []TopologySample) (outOfOrder []int, contradictions [][2]int) {
	byTime := map[int64]int{}
	for i, s := range topo {
		if i > 0 && s.Time < maxTimeBefore(topo, i) {
			outOfOrder = append(outOfOrder, i)
		}
		if j, ok := byTime[s.Time]; ok {
			if topo[j].ClusterNodes != s.ClusterNodes {
				contradictions = append(contradictions, [2]int{j, i})
			}
			continue
		}
		byTime[s.Time] = i
	}
	return outOfOrder, contradictions
}

func maxTimeBefore(topo []TopologySample, i int) int64 {
	m := int64(-1 << 62)
	for _, s := range topo[:i] {
		m = max(m, s.Time)
	}
	return m
}

func plusOne(xs []int) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = x + 1
	}
	return out
}

// joinWords joins "a", "b" and "c" as "a, b and c".
func joinWords(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	if len(parts) == 2 {
		return parts[0] + " and " + parts[1]
	}
	return strings.Join(parts, ", ")
}

// runFilesCaveats is what the run-files checker says of the files, for
// the verdict line ("history torn at line 3: ...").
func runFilesCaveats(s Summary) []string {
	r, ok := s.Checkers[RunFilesName]
	if !ok || r.Valid == Valid {
		return nil
	}
	if f, ok := FiguresAs[*RunFilesFigures](r); ok && f.Caveat != "" {
		return []string{f.Caveat}
	}
	return []string{"the run's files cannot be trusted"}
}
