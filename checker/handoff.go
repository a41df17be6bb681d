package checker

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/redline-dev/redline/history"
)

type handoff struct{ o Scope }

// Handoff checks the placement of keys after each slot handoff the migrate
// fault made (atomic CLUSTER MIGRATION task or classic SETSLOT/MIGRATE
// move): once the move has ended, whether done, failed or canceled, every
// key of a moved slot must be on exactly one of the two primaries. The
// nemesis records, per moved slot, the keys the source held before the move
// ("before") and the keys of source and destination after it ("src",
// "dst", read with CLUSTER GETKEYSINSLOT once both sides have ended the
// task). A key on both sides is an anomaly ("both": two copies that will
// diverge); a key that existed before the move (in "before", or written
// and acknowledged before the move began) and is on neither side is an
// anomaly ("neither": the data is gone). Keys a client deleted are never
// counted as gone. A moved slot that the end phase's census finds with keys
// on a primary that does not own it, unowned, claimed twice or left open is
// an anomaly too ("misplaced": the slot does not end where its keys are).
// A slot whose lists could not be read or were truncated
// is unmeasured, and a history with no placement record at all is not
// applicable (no handoff happened to judge: never "valid").
func Handoff(opts ...Scope) Checker { return handoff{firstScope(opts)} }

func (h handoff) Name() string { return h.o.name("handoff") }

// handoffRecord is one start-migrate completion with placement records.
type handoffRecord struct {
	index, start int64 // the invocation's index and time
	places       []history.Placement
}

func handoffRecords(ops []history.Op) []handoffRecord {
	var out []handoffRecord
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
			Placement []history.Placement `json:"placement"`
		}
		_ = json.Unmarshal(op.DetailRaw(), &d)
		if len(d.Placement) > 0 {
			out = append(out, handoffRecord{index: open.Index, start: open.Time, places: d.Placement})
		}
		open = nil
	}
	return out
}

func (h handoff) Check(ctx context.Context, in *History) Result {
	calls, err := h.o.calls(in)
	if err != nil {
		return invalidHistory(err)
	}
	s := h.newStream()
	for i := range calls {
		s.Call(&calls[i], i)
	}
	return h.judge(in, s)
}

// NewStream: the handoff checker streams (StreamChecker); its state is
// two figures per key.
func (h handoff) NewStream(t *Tail) Stream {
	s := h.newStream()
	s.t = t
	return s
}

func (h handoff) newStream() *handoffStream {
	return &handoffStream{h: h, firstAck: map[string]int64{}, deleted: map[string]bool{}}
}

// handoffStream is what the handoff checker needs of the client ops: per
// key, the first acknowledged write's completion time, and whether a
// client ever (maybe) deleted it.
type handoffStream struct {
	h        handoff
	t        *Tail
	firstAck map[string]int64
	deleted  map[string]bool
}

func (s *handoffStream) Call(c *call, _ int) {
	if !s.h.o.keep(c.inv) {
		return
	}
	k := c.inv.Key
	if k == "" {
		return
	}
	if strings.Contains(c.inv.F, "del") && !c.failed() {
		s.deleted[strings.Clone(k)] = true
	}
	if c.ok() && isWrite(c.inv.F) {
		if t, seen := s.firstAck[k]; !seen || c.end < t {
			s.firstAck[strings.Clone(k)] = c.end
		}
	}
}

func (s *handoffStream) End(context.Context) Result {
	if r, bad := s.t.pairErr(); bad {
		return r
	}
	return s.h.judge(s.t.History, s)
}

// judge is the verdict on the keys' figures s and the nemesis entries of
// in.
func (h handoff) judge(in *History, s *handoffStream) Result {
	ops := in.Ops
	recs := handoffRecords(ops)
	if len(recs) == 0 {
		return NotApplicable("no slot moved during the run: no placement record of a migrate or member fault")
	}
	firstAck, deleted := s.firstAck, s.deleted
	bySlot := map[int][]string{}
	for k := range firstAck {
		sl := history.Keyslot(k)
		bySlot[sl] = append(bySlot[sl], k)
	}
	mine := func(k string) bool { return h.o.KeyPrefix == "" || strings.HasPrefix(k, h.o.KeyPrefix) }

	type counts struct{ slots, measured, unmeasured, both, neither, withKeys int }
	per := map[string]*counts{}
	var examples []map[string]any
	first := ""
	for _, r := range recs {
		for _, p := range r.places {
			method := p.Method
			if method == "" {
				method = "classic"
			}
			c := per[method]
			if c == nil {
				c = &counts{}
				per[method] = c
			}
			c.slots++
			if p.Error != "" || p.Truncated {
				c.unmeasured++
				continue
			}
			c.measured++
			if slotHoldsMine(p, bySlot[p.Slot], firstAck, r.start, mine) {
				c.withKeys++
			}
			src := map[string]bool{}
			for _, k := range p.Src {
				src[k] = true
			}
			dst := map[string]bool{}
			for _, k := range p.Dst {
				dst[k] = true
			}
			note := func(kind, k string) {
				if first == "" {
					first = fmt.Sprintf("key %s of slot %d is on %s after the %s move %s->%s at op %d (state %q)",
						k, p.Slot, map[string]string{"both": "both primaries", "neither": "neither primary"}[kind],
						method, p.From, p.To, r.index, p.State)
				}
				if len(examples) < h.o.MaxExamples {
					examples = append(examples, map[string]any{"kind": kind, "key": k, "slot": p.Slot, "method": method,
						"from": p.From, "to": p.To, "state": p.State, "task": p.Task, "index": r.index})
				}
			}
			var both []string
			for k := range src {
				if dst[k] && mine(k) {
					both = append(both, k)
				}
			}
			slices.Sort(both)
			for _, k := range both {
				c.both++
				note("both", k)
			}
			expected := map[string]bool{}
			for _, k := range p.Before {
				if mine(k) {
					expected[k] = true
				}
			}
			for _, k := range bySlot[p.Slot] {
				if firstAck[k] < r.start {
					expected[k] = true
				}
			}
			var gone []string
			for k := range expected {
				if !src[k] && !dst[k] && !deleted[k] {
					gone = append(gone, k)
				}
			}
			slices.Sort(gone)
			for _, k := range gone {
				c.neither++
				note("neither", k)
			}
		}
	}
	// The slot must also end where its keys are: the end phase's census
	// of every slot redline moved (endPhaseRecord) names the moved slots
	// left with keys on a primary that does not own them, without an
	// owner, claimed twice or open.
	// The census is read too, not only the record: a moved slot it finds
	// claimed twice, unowned, open or with keys outside its owner's shard
	// is misplaced whatever the record says.
	misplaced := 0
	er, _, haveRec := endPhaseRecord(ops)
	cen := in.censusOf()
	if haveRec || cen != nil {
		wrong := map[int]EndProblem{}
		for _, p := range er.Problems {
			if _, seen := wrong[p.Slot]; p.slotKind() && !seen {
				wrong[p.Slot] = p
			}
		}
		if cen != nil {
			var slots []int
			for _, r := range recs {
				for _, p := range r.places {
					slots = append(slots, p.Slot)
				}
			}
			for _, p := range censusSlotProblems(cen, slots) {
				if _, seen := wrong[p.Slot]; !seen {
					p.What = "the census finds " + p.What
					wrong[p.Slot] = p
				}
			}
		}
		seen := map[int]bool{}
		for _, r := range recs {
			for _, p := range r.places {
				w, bad := wrong[p.Slot]
				if !bad || seen[p.Slot] {
					continue
				}
				seen[p.Slot] = true
				misplaced++
				if first == "" {
					first = fmt.Sprintf("slot %d, moved %s->%s at op %d, does not end where its keys are: %s", p.Slot, p.From, p.To, r.index, w.What)
				}
				if len(examples) < h.o.MaxExamples {
					examples = append(examples, map[string]any{"kind": "misplaced", "slot": p.Slot, "from": p.From, "to": p.To,
						"index": r.index, "what": w.What})
				}
			}
		}
	}
	fig := &HandoffFigures{Handoffs: len(recs), Misplaced: misplaced, ByMethod: map[string]HandoffCounts{}}
	bad := misplaced
	for method, c := range per {
		fig.ByMethod[method] = HandoffCounts{Slots: c.slots, Measured: c.measured, Unmeasured: c.unmeasured,
			Both: c.both, Neither: c.neither, SlotsWithKeys: c.withKeys}
		bad += c.both + c.neither
	}
	fig.AnomalousKeys = bad
	if len(examples) > 0 {
		fig.Examples = examples
	}
	if bad > 0 {
		fig.First = first
		return Result{Valid: Invalid, Figures: fig}
	}
	measured, withKeys := 0, 0
	for _, c := range per {
		measured += c.measured
		withKeys += c.withKeys
	}
	if len(recs) > 0 && measured == 0 {
		fig.Reason = "no moved slot's key lists could be read on both primaries after its move"
		return Result{Valid: Unknown, Figures: fig}
	}
	if withKeys == 0 {
		// Every slot that moved was empty of this workload's keys: the
		// handoff of none of them says anything about its data.
		return NotApplicable(fmt.Sprintf("%d moved slots read on both primaries, none holding a key of this workload", measured))
	}
	return Result{Valid: Valid, Figures: fig}
}

// HandoffFigures are the handoff checker's figures: the moved slots'
// keys found on both primaries or on neither after the move, by
// migration method, and the moved slots that do not end where their keys
// are (misplaced).
type HandoffFigures struct {
	Handoffs      int              `json:"handoffs"`
	Misplaced     int              `json:"misplaced"`
	AnomalousKeys int              `json:"anomalous_keys"`
	Examples      []map[string]any `json:"examples,omitempty"`
	// ByMethod is written as one figure per method ("atomic",
	// "classic"), beside the others.
	ByMethod map[string]HandoffCounts `json:"-"`
	Verdict
}

// HandoffCounts are the handoffs of one migration method.
type HandoffCounts struct {
	Slots         int `json:"slots"`
	Measured      int `json:"measured"`
	Unmeasured    int `json:"unmeasured"`
	Both          int `json:"both"`
	Neither       int `json:"neither"`
	SlotsWithKeys int `json:"slots_with_keys"`
}

// MarshalJSON writes each method's counts as a figure named after it.
func (f *HandoffFigures) MarshalJSON() ([]byte, error) {
	type plain HandoffFigures
	b, err := json.Marshal((*plain)(f))
	if err != nil {
		return nil, err
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for method, c := range f.ByMethod {
		if m[method], err = json.Marshal(c); err != nil {
			return nil, err
		}
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads each object-valued figure as a method's counts.
func (f *HandoffFigures) UnmarshalJSON(b []byte) error {
	type plain HandoffFigures
	if err := json.Unmarshal(b, (*plain)(f)); err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	f.ByMethod = map[string]HandoffCounts{}
	for k, raw := range m {
		if len(raw) > 0 && raw[0] == '{' {
			var c HandoffCounts
			if err := json.Unmarshal(raw, &c); err != nil {
				return err
			}
			f.ByMethod[k] = c
		}
	}
	return nil
}

// slotHoldsMine says a moved slot held a key of the workload: listed on
// either side before or after the move, or acknowledged before it.
func slotHoldsMine(p history.Placement, acked []string, firstAck map[string]int64, start int64, mine func(string) bool) bool {
	for _, ks := range [][]string{p.Before, p.Src, p.Dst} {
		for _, k := range ks {
			if mine(k) {
				return true
			}
		}
	}
	for _, k := range acked {
		if firstAck[k] < start {
			return true
		}
	}
	return false
}
