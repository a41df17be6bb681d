package results

import (
	"cmp"
	"fmt"
	"html"
	"os"
	"slices"

	"github.com/redline-dev/redline/checker"
	"github.com/redline-dev/redline/history"
)

// A report of a big history does not read it whole (issue 42: the report
// of an hour's run at 20k ops/s, 150M entries, read them all into memory,
// some 15 GB, after a check that needed 3). One scan of the file keeps
// what the report reads of it: the run-wide entries (faults, views,
// census), every entry an anomaly or a group names by index with its
// invocation and completion, the acknowledged increments of each counter
// key that lost some (documentedCounter), the exact counts of completions
// and the latest time; and for the plots the calls whose index is a
// every `every`-th call to complete, a step that doubles whenever more than
// maxReportSamples are kept (the plots then draw 1 call in `every`, their
// rates scaled by it).
// The timeline, one box a call, is not drawn. The report says all of this
// in its notes.

// BoundedAbove is the size of a history file above which a report reads
// it this way (64 MB, about 4M entries: where `redline check` spills it
// into partitions, harness.PartitionAbove).
var BoundedAbove int64 = 64 << 20

// maxReportSamples bounds the calls a bounded report's plots draw.
var maxReportSamples = 1 << 21

// boundedRead is what a bounded report keeps of its history.
type boundedRead struct {
	entries int64
	end     int64 // the latest time of any entry
	counts  map[history.Type]int
	calls   int64 // the completed calls so far
	samples []sample
	every   int64 // the plots draw every every-th call to complete
	adds    map[string]*boundedAdds
}

// boundedAdds is keyAdds of one counter key, made in the scan.
type boundedAdds struct {
	adds []keyAdd
	ok   bool
	open map[history.Process]bool // an invocation of the key is open
}

// reportNeeds is what the report looks up in the history by index (every
// op its anomaly sections describe, the ops its groups examine) and the
// counter keys whose increments documentedCounter adds up.
func (d *runData) reportNeeds() (indexes map[int64]bool, counterKeys map[string]bool) {
	indexes, counterKeys = map[int64]bool{}, map[string]bool{}
	d.asked = indexes
	d.anomalies() // describes each op it names: d.op records the index
	d.asked = nil
	for _, a := range d.sum.Attribution {
		if a.Ack != nil {
			indexes[a.Ack.Index] = true
		}
		if a.Kind == "lost-increment" {
			if r, w, ok := d.counterReveal(a.Checker, a.Key); ok {
				indexes[r] = true
				if w >= 0 {
					indexes[w] = true
				}
			}
			counterKeys[a.Key] = true
		}
	}
	return indexes, counterKeys
}

// readBounded scans the history file at path for what the report reads
// (above), into d.
func (d *runData) readBounded(path string) error {
	indexes, counterKeys := d.reportNeeds()
	b := &boundedRead{counts: map[history.Type]int{}, every: 1, adds: map[string]*boundedAdds{}}
	for k := range counterKeys {
		b.adds[k] = &boundedAdds{ok: true, open: map[history.Process]bool{}}
	}
	// Each process's open invocation, copied into a slot of its own that
	// its next invocation overwrites (not an allocation a call).
	slot := map[history.Process]*history.Op{}
	isOpen := map[history.Process]bool{}
	keepComp := map[history.Process]bool{} // its completion is kept
	workloadOf := d.workloadOfKey()
	names := map[[2]string]string{}
	var ops []history.Op
	res, err := history.Scan(path, func(op *history.Op, _ []byte) error {
		b.entries++
		b.end = max(b.end, op.Time)
		if op.NemesisOp() {
			ops = append(ops, *op)
			return nil
		}
		var inv *history.Op
		if op.Type != history.Invoke && isOpen[op.Process] {
			inv = slot[op.Process]
			isOpen[op.Process] = false
		}
		if op.Type != history.Invoke || b.adds[op.Key] != nil {
			b.counterEntry(op, inv, d)
		}
		if op.Type == history.Invoke {
			s := slot[op.Process]
			if s == nil {
				s = new(history.Op)
				slot[op.Process] = s
			}
			*s = *op
			isOpen[op.Process] = true
			delete(keepComp, op.Process) // an earlier kept invocation's completion never came
			if indexes[op.Index] {
				ops = append(ops, *op)
				keepComp[op.Process] = true
			}
			return nil
		}
		switch {
		case keepComp[op.Process]:
			ops = append(ops, *op)
			delete(keepComp, op.Process)
		case indexes[op.Index] && inv != nil:
			ops = append(ops, *inv, *op)
		case indexes[op.Index]:
			ops = append(ops, *op)
		}
		if inv != nil {
			b.calls++
			b.counts[op.Type]++
			if b.calls%b.every == 0 {
				s := d.sampleOf(inv, op, workloadOf, names)
				s.idx = b.calls
				b.sample(s)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, ka := range b.adds {
		ka.open = nil
	}
	w := float64(b.every)
	for i := range b.samples {
		b.samples[i].w = w
	}
	slices.SortStableFunc(ops, func(x, y history.Op) int { return cmp.Compare(x.Index, y.Index) })
	d.ops, d.torn, d.big = ops, res.TruncatedTail, b
	return nil
}

// counterEntry is keyAdds's step for a client entry of a key it adds up
// (an invocation of it, or any completion: inv is its process's open
// invocation).
func (b *boundedRead) counterEntry(op, inv *history.Op, d *runData) {
	if op.Type == history.Invoke {
		ka := b.adds[op.Key]
		if ka.open[op.Process] {
			ka.ok = false
		}
		ka.open[op.Process] = true
		return
	}
	if inv == nil {
		return
	}
	ka := b.adds[inv.Key]
	if ka == nil || !ka.open[op.Process] {
		return
	}
	delete(ka.open, op.Process)
	if !ka.ok {
		return
	}
	add, ok, counts := addOf(inv, op, d)
	if !ok {
		ka.ok, ka.adds = false, nil
		return
	}
	if counts {
		ka.adds = append(ka.adds, add)
	}
}

// sample keeps s for the plots, doubling the step when too many are kept.
func (b *boundedRead) sample(s sample) {
	b.samples = append(b.samples, s)
	if len(b.samples) <= maxReportSamples {
		return
	}
	b.every *= 2
	b.samples = slices.DeleteFunc(b.samples, func(s sample) bool { return s.idx%b.every != 0 })
}

// boundedNotes are what a bounded report says it did not read.
func (d *runData) boundedNotes() []string {
	b := d.big
	if b == nil {
		return nil
	}
	s := fmt.Sprintf("The history has %d entries, a file above the %d MB a report reads whole: the report read the entries its anomalies and groups name, the faults and the counts of completions.", b.entries, BoundedAbove>>20)
	if b.every > 1 {
		s += fmt.Sprintf(" The latency, throughput and RPO plots draw 1 call in %d (every %d-th to complete), the rates scaled by as much; the figures in results.json are the checkers' own, of every call.", b.every, b.every)
	}
	return []string{s + " The timeline is not drawn."}
}

// writeBoundedTimeline writes timeline.html saying why it draws nothing.
func (d *runData) writeBoundedTimeline(r *Run) error {
	page := fmt.Sprintf("<!doctype html><html><head><meta charset=\"utf-8\"><title>%s: timeline</title></head><body><p>%s</p></body></html>\n",
		html.EscapeString(d.run.Test), html.EscapeString(fmt.Sprintf("The timeline draws one box a call; this history has %d entries (a file above %d MB), so it is not drawn. The report's plots and anomalies are in report.html.", d.big.entries, BoundedAbove>>20)))
	return r.WriteFile("timeline.html", []byte(page))
}

// bigHistory says the history file at path is one a report reads bounded.
func bigHistory(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Size() > BoundedAbove
}

// checkerWindows are the checker's fault windows of the history, ending at
// its latest time (a bounded report holds only some of its entries).
func (d *runData) checkerWindows() []checker.Window {
	if d.big != nil {
		return checker.WindowsUntil(d.ops, d.big.end)
	}
	return checker.Windows(d.ops)
}
