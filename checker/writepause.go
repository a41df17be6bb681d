package checker

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/redline-dev/redline/history"
)

type writePause struct{ o Scope }

// WritePause measures, for each slot migration the migrate fault made, the
// longest gap between successful writes on the migrated slots, seen from
// the clients: from the last write acknowledged before the migration began
// to the first one after it ended, the largest interval with no write
// acknowledged on those slots that overlaps the migration. It is reported
// per method ("atomic" for Redis 8.4's CLUSTER MIGRATION, "classic" for
// SETSLOT/MIGRATE with its ASK window) beside the server's own
// write_pause_ms of atomic tasks, so the vendor's "short pause" claim and
// the classic ASK window are compared on the same workload. A migration
// with fewer than two acknowledged writes around it is counted as
// unmeasured, never as a zero gap. A gap is measured per atomic task (on
// the slots of its STATUS slots_range) and per classic slot (its own ASK
// window), both within the step's window, so a storm step of many tasks
// or slots gives one figure each. Its verdict is valid (it measures, as
// rto), or not applicable when no slot migrated.
func WritePause(opts ...Scope) Checker { return writePause{firstScope(opts)} }

func (w writePause) Name() string { return w.o.name("write-pause") }

// migration is one start-migrate of the history.
type migration struct {
	index        int64 // the invocation's index
	start, end   int64
	method       string
	slots        map[int]bool
	serverPauses []int64 // write_pause_ms of atomic tasks
	// units are what one gap is measured on: each atomic task (its slots,
	// from STATUS's slots_range) or each classic slot (its own ASK
	// window), all within the step's window.
	units []pauseUnit
}

type pauseUnit struct {
	task        string // atomic task id, "" for a classic slot
	slots       []int
	serverPause int64 // the source's write_pause_ms, -1 unknown
}

// parseSlotsRange reads STATUS's slots_range ("0-99 200-200").
func parseSlotsRange(s string) []int {
	var out []int
	for _, f := range strings.Fields(s) {
		a, b, ok := strings.Cut(f, "-")
		lo, err1 := strconv.Atoi(a)
		hi, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || lo > hi || hi-lo > 16384 {
			return nil
		}
		for sl := lo; sl <= hi; sl++ {
			out = append(out, sl)
		}
	}
	return out
}

// migrations reads the completed start-migrate pairs with moved slots.
func migrations(ops []history.Op) []migration {
	var out []migration
	var open *history.Op
	for i := range ops {
		op := &ops[i]
		if op.Process != history.Nemesis || op.F != history.StartOf("migrate") {
			continue
		}
		if op.Type == history.Invoke {
			open = op
			continue
		}
		if open == nil {
			continue
		}
		var d struct {
			Method string `json:"method"`
			Moved  []struct {
				Slot int `json:"slot"`
			} `json:"moved"`
			Tasks []struct {
				ID           string      `json:"id"`
				SlotsRange   string      `json:"slots_range"`
				WritePauseMs json.Number `json:"write_pause_ms"`
			} `json:"tasks"`
		}
		_ = json.Unmarshal(op.DetailRaw(), &d)
		m := migration{index: open.Index, start: open.Time, end: op.Time, method: "classic", slots: map[int]bool{}}
		if d.Method == "atomic" {
			m.method = "atomic"
		}
		for _, mv := range d.Moved {
			m.slots[mv.Slot] = true
		}
		for _, t := range d.Tasks {
			pause := int64(-1)
			if v, err := t.WritePauseMs.Int64(); err == nil {
				m.serverPauses = append(m.serverPauses, v)
				pause = v
			}
			var slots []int
			for _, sl := range parseSlotsRange(t.SlotsRange) {
				if m.slots[sl] {
					slots = append(slots, sl)
				}
			}
			if m.method == "atomic" && len(slots) > 0 {
				m.units = append(m.units, pauseUnit{task: t.ID, slots: slots, serverPause: pause})
			}
		}
		if len(m.units) == 0 {
			if m.method == "atomic" {
				// Tasks without slots_range: the step as one unit.
				m.units = []pauseUnit{{slots: sortedSlots(m.slots), serverPause: -1}}
				if len(m.serverPauses) == 1 {
					m.units[0].serverPause = m.serverPauses[0]
				}
			} else {
				for _, sl := range sortedSlots(m.slots) {
					m.units = append(m.units, pauseUnit{slots: []int{sl}, serverPause: -1})
				}
			}
		}
		open = nil
		if len(m.slots) > 0 {
			out = append(out, m)
		}
	}
	return out
}

// isWrite: every client op but a read changes the dataset.
func isWrite(f string) bool {
	n := history.OpName(f)
	return n != OpRead && !writesNothing[n]
}

// writesNothing are ops besides reads that write nothing to their key (a
// workload's probe of the server), registered by the workload that sends
// them (ReadOnlyOps): a write-pause or a handoff judged on them would
// look for data that was never there.
var writesNothing = map[history.OpName]bool{}

// ReadOnlyOps registers ops that write nothing to their key, at init:
//
//	var _ = checker.ReadOnlyOps(Probe)
func ReadOnlyOps(ops ...history.OpName) struct{} {
	for _, op := range ops {
		writesNothing[op] = true
	}
	return struct{}{}
}

func (w writePause) Check(ctx context.Context, in *History) Result {
	calls, err := w.o.calls(in)
	if err != nil {
		return invalidHistory(err)
	}
	s := w.newStream(in)
	for i := range calls {
		s.Call(&calls[i], i)
	}
	return s.result()
}

// NewStream: the write-pause checker streams (StreamChecker).
func (w writePause) NewStream(t *Tail) Stream {
	s := w.newStream(t.History)
	s.t = t
	return s
}

// writePauseStream is what the write-pause checker needs of the client
// ops: per unit of a migration (known before the pass from the nemesis
// entries), the writes acknowledged on its slots around it. Its state
// grows with the migrations and the writes acknowledged during them, not
// with the run.
type writePauseStream struct {
	w     writePause
	t     *Tail
	migs  []migration
	units []pauseAcks   // every migration's units, in order
	unit  map[int][]int // slot -> the units on it
	mig   []*migration  // unit -> its migration
}

// pauseAcks are the acknowledgement times of writes on a unit's slots
// that bound its migration: the last before its start, those during it,
// the first after its end.
type pauseAcks struct {
	before, after       int64
	hasBefore, hasAfter bool
	during              []int64
}

func (w writePause) newStream(in *History) *writePauseStream {
	s := &writePauseStream{w: w, migs: migrations(in.Ops), unit: map[int][]int{}}
	for mi := range s.migs {
		for _, u := range s.migs[mi].units {
			for _, sl := range u.slots {
				s.unit[sl] = append(s.unit[sl], len(s.units))
			}
			s.units = append(s.units, pauseAcks{})
			s.mig = append(s.mig, &s.migs[mi])
		}
	}
	return s
}

func (s *writePauseStream) Call(c *call, _ int) {
	if len(s.units) == 0 || !s.w.o.keep(c.inv) || !c.ok() || !isWrite(c.inv.F) || c.inv.Key == "" {
		return
	}
	for _, ui := range s.unit[history.Keyslot(c.inv.Key)] {
		u, m, t := &s.units[ui], s.mig[ui], c.end
		switch {
		case t < m.start:
			if !u.hasBefore || t > u.before {
				u.before, u.hasBefore = t, true
			}
		case t > m.end:
			if !u.hasAfter || t < u.after {
				u.after, u.hasAfter = t, true
			}
		default:
			u.during = append(u.during, t)
		}
	}
}

// longestGap is the largest interval between the unit's acknowledgements
// from the last before its migration to the first after it (ok false:
// either is missing).
func (u *pauseAcks) longestGap() (longest int64, ok bool) {
	if !u.hasBefore || !u.hasAfter {
		return 0, false
	}
	times := append(append([]int64{u.before}, u.during...), u.after)
	slices.Sort(times)
	for i := 1; i < len(times); i++ {
		longest = max(longest, times[i]-times[i-1])
	}
	return longest, true
}

func (s *writePauseStream) End(context.Context) Result {
	if r, bad := s.t.pairErr(); bad {
		return r
	}
	return s.result()
}

func (s *writePauseStream) result() Result {
	migs := s.migs
	if len(migs) == 0 {
		return NotApplicable("no slot migration during the run: no migrate or member fault moved a slot")
	}
	gaps := map[string][]int64{}
	unmeasured := map[string]int{}
	var detail []map[string]any
	var serverPauses []int64 // ns, of the measured atomic units
	ui := 0
	for _, m := range migs {
		for _, u := range m.units {
			longest, ok := s.units[ui].longestGap()
			ui++
			if !ok {
				unmeasured[m.method]++
				continue
			}
			gaps[m.method] = append(gaps[m.method], longest)
			if len(detail) < 50 {
				e := map[string]any{"index": m.index, "method": m.method, "slots": len(u.slots), "longest_gap_ms": ms(longest)}
				if u.task != "" {
					e["task"] = u.task
				}
				if u.serverPause >= 0 {
					e["server_write_pause_ms"] = u.serverPause
					serverPauses = append(serverPauses, u.serverPause*int64(1e6))
				}
				detail = append(detail, e)
			}
		}
	}
	if len(gaps["atomic"])+len(gaps["classic"]) == 0 {
		// No migrated slot had this workload's acknowledged writes on both
		// sides of its move: there is no pause to measure.
		return NotApplicable(fmt.Sprintf("%d migrations, none with acknowledged writes of this workload on its slots before and after the move", len(migs)))
	}
	fig := &WritePauseFigures{Measurement: true, Migrations: len(migs)}
	for _, method := range []string{"atomic", "classic"} {
		g := gaps[method]
		if len(g) == 0 && unmeasured[method] == 0 {
			continue
		}
		f := &MigrationPauses{Measured: len(g), Unmeasured: unmeasured[method]}
		if len(g) > 0 {
			f.LongestGapMs = ptr(quantilesMs(g))
		}
		f.Unit = map[string]string{"atomic": "task", "classic": "slot"}[method]
		if method == "atomic" && len(serverPauses) > 0 {
			f.ServerWritePauseMs = ptr(quantilesMs(serverPauses))
		}
		if method == "atomic" {
			fig.Atomic = f
		} else {
			fig.Classic = f
		}
	}
	if len(detail) > 0 {
		fig.PerMigration = detail
	}
	return Result{Valid: Valid, Figures: fig}
}

// WritePauseFigures are the write-pause checker's figures: the longest
// gap between acknowledged writes across each migration, by method.
type WritePauseFigures struct {
	Measurement  bool             `json:"measurement"`
	Migrations   int              `json:"migrations"`
	Atomic       *MigrationPauses `json:"atomic,omitempty"`
	Classic      *MigrationPauses `json:"classic,omitempty"`
	PerMigration []map[string]any `json:"per_migration,omitempty"`
}

// Why: the write-pause checker measures, and says no verdict in words.
func (f *WritePauseFigures) Why() string { return "" }

// Measures: the write-pause checker measures.
func (f *WritePauseFigures) Measures() bool { return true }

// MigrationPauses are the pauses of one migration method's units (a
// task for atomic, a slot for classic).
type MigrationPauses struct {
	Measured           int        `json:"measured"`
	Unmeasured         int        `json:"unmeasured"`
	LongestGapMs       *Quantiles `json:"longest_gap_ms,omitempty"`
	Unit               string     `json:"unit"`
	ServerWritePauseMs *Quantiles `json:"server_write_pause_ms,omitempty"`
}

func sortedSlots(set map[int]bool) []int {
	out := make([]int, 0, len(set))
	for sl := range set {
		out = append(out, sl)
	}
	slices.Sort(out)
	return out
}
