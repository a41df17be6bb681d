package checker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/redline-dev/redline/history"
)

// Scope is what every checker is given alike: its name in results.json,
// the keys it judges and how long its lists of examples grow. A checker
// with knobs of its own takes them in its own options type beside a Scope
// (LinearizableOptions, RPOOptions, PerfOptions); the others have nothing
// else to tune and take a Scope alone. The zero value judges every key
// under the checker's own name and keeps 50 examples a list.
type Scope struct {
	// Name overrides the checker's name (its key in results.json).
	Name string
	// KeyPrefix keeps only client ops whose key starts with it (each
	// workload sets its own, see workloads.Workload.Checkers). Nemesis
	// events are always kept.
	KeyPrefix string
	// MaxExamples caps every list of examples in the figures [50].
	MaxExamples int
	// CensusExpected, when set, says why the run must carry a key census
	// (its recorder takes one at the end of every run): a checker that
	// cross-examines the census and finds none says unknown with it,
	// instead of judging without the witness. Empty: a history without a
	// census (hand-made, or of a redline before the census) is judged
	// without it.
	CensusExpected string
}

func (s Scope) withDefaults() Scope {
	if s.MaxExamples <= 0 {
		s.MaxExamples = 50
	}
	return s
}

// optional is a constructor's optional options: the first given, else the
// zero value.
func optional[T any](opts []T) T {
	var o T
	if len(opts) > 0 {
		o = opts[0]
	}
	return o
}

// firstScope is the Scope of a checker that has no other knob.
func firstScope(opts []Scope) Scope { return optional(opts).withDefaults() }

func (s Scope) name(def string) string {
	if s.Name != "" {
		return s.Name
	}
	return def
}

// filter is what a partition load keeps of the scope's ops: its keys.
func (s Scope) filter() *history.Filter { return &history.Filter{KeyPrefix: s.KeyPrefix} }

// filterFs is filter keeping only the ops of fs.
func (s Scope) filterFs(fs ...string) *history.Filter {
	return &history.Filter{KeyPrefix: s.KeyPrefix, Fs: fs}
}

func (s Scope) keep(op *history.Op) bool {
	if s.KeyPrefix != "" && !strings.HasPrefix(op.Key, s.KeyPrefix) {
		return false
	}
	return true
}

// inf is the return time of an operation whose outcome is unknown: later
// than anything in any history.
const inf = int64(math.MaxInt64)

// call is one client operation: invocation plus completion.
type call struct {
	inv  *history.Op
	comp *history.Op // nil when the history ended first
	// start and end are invocation and completion times; end is inf when
	// the op never completed.
	start, end int64
	// index is the invocation's index: read it here, never as inv.Index.
	// A compact partition's calls share their inv and comp among calls
	// alike (compactPartition): of those, only what a call is (its f,
	// key, values, node, outcome) is the call's own; its index and times
	// are here.
	index int64
}

func (c *call) outcome() history.Type {
	if c.comp == nil {
		return history.Info
	}
	return c.comp.Type
}

// ok, failed and indeterminate classify the outcome.
func (c *call) ok() bool     { return c.outcome() == history.OK }
func (c *call) failed() bool { return c.outcome() == history.Fail }

// servedErrors are fail outcomes that still mean the cluster answered for
// the key: the op ran (or was judged) and its own condition said no. They
// are not unavailability.
// A workload in its own folder adds its own (ServedErrors: lock's
// lock-held and not-owner).
var servedErrors = []string{"cas-mismatch", "insufficient-funds", "watch-conflict", "CROSSSLOT"}

// served reports whether the cluster served the op: ok, or a fail that is
// the op's own answer rather than an error of availability.
func (c *call) served() bool {
	if c.ok() {
		return true
	}
	if !c.failed() || c.comp == nil {
		return false
	}
	return ServedError(c.comp.ErrorText())
}

// ServedError says a fail's error is the op's own answer (cas-mismatch,
// insufficient-funds, watch-conflict, CROSSSLOT, lock-held, not-owner),
// not unavailability.
func ServedError(err string) bool {
	for _, p := range servedErrors {
		if strings.HasPrefix(err, p) {
			return true
		}
	}
	return false
}
func (c *call) indeterminate() bool {
	t := c.outcome()
	return t == history.Info || t == history.Invoke
}

func (c *call) wait() *history.Wait {
	if c.comp != nil {
		return c.comp.WaitInfo()
	}
	return nil
}

// calls pairs the history and keeps the client ops of the scope.
// The pairing and the calls of each key prefix are computed once per
// History and shared by the checkers that read it: treat the result as
// read-only.
func (o Scope) calls(h *History) ([]call, error) { return h.callsFor(o) }

// callsOfIdx is callsOf of pairs given as positions in ops.
func (o Scope) callsOfIdx(ops []history.Op, pairs []pairIdx) []call {
	n := 0
	for _, p := range pairs {
		if o.keep(&ops[p.inv]) {
			n++
		}
	}
	out := make([]call, 0, n)
	for _, p := range pairs {
		inv := &ops[p.inv]
		if !o.keep(inv) {
			continue
		}
		c := call{inv: inv, start: inv.Time, end: inf, index: inv.Index}
		if p.comp >= 0 {
			c.comp = &ops[p.comp]
			c.end = c.comp.Time
		}
		out = append(out, c)
	}
	return out
}

// callsOf keeps the pairs of the scope, as calls.
func (o Scope) callsOf(pairs []history.Pair) []call {
	n := 0
	for _, p := range pairs {
		if o.keep(p.Invoke) {
			n++
		}
	}
	out := make([]call, 0, n)
	for _, p := range pairs {
		if !o.keep(p.Invoke) {
			continue
		}
		c := call{inv: p.Invoke, comp: p.Completion, start: p.Invoke.Time, end: inf, index: p.Invoke.Index}
		if p.Completion != nil {
			c.end = p.Completion.Time
		}
		out = append(out, c)
	}
	return out
}

// WaitClass is what a write's WAIT said.
type WaitClass uint8

const (
	NoWait WaitClass = iota
	WaitSatisfied
	WaitUnsatisfied
)

// Figure names of the WAIT split.
func (w WaitClass) String() string {
	switch w {
	case WaitSatisfied:
		return "wait_satisfied"
	case WaitUnsatisfied:
		return "wait_unsatisfied"
	}
	return "no_wait"
}

// ClassifyWait puts a completed write into a WAIT class: no WAIT recorded,
// WAIT acknowledged by at least the wanted replicas, or fewer (including a
// WAIT that got no reply, acked = -1).
func ClassifyWait(w *history.Wait) WaitClass {
	switch {
	case w == nil:
		return NoWait
	case w.Acked >= w.Want:
		return WaitSatisfied
	}
	return WaitUnsatisfied
}

// waitSplit accumulates amounts per WAIT class.
type waitSplit [3]int64

func (s *waitSplit) add(c WaitClass, n int64) { s[c] += n }

// WaitSplit is lost writes split by what their WAIT said.
type WaitSplit struct {
	WaitSatisfied   int64 `json:"wait_satisfied"`
	WaitUnsatisfied int64 `json:"wait_unsatisfied"`
	NoWait          int64 `json:"no_wait"`
}

func (s waitSplit) figures() WaitSplit {
	return WaitSplit{WaitSatisfied: s[WaitSatisfied], WaitUnsatisfied: s[WaitUnsatisfied], NoWait: s[NoWait]}
}

func (s waitSplit) into(fig map[string]any) {
	fig["wait_satisfied"] = s[WaitSatisfied]
	fig["wait_unsatisfied"] = s[WaitUnsatisfied]
	fig["no_wait"] = s[NoWait]
}

// Window is a fault window: from a nemesis start-<fault> event to the
// matching stop-<fault>. Times are nanoseconds since the run started.
type Window struct {
	Fault string   `json:"fault"`
	Start int64    `json:"start"`
	End   int64    `json:"end"`
	Open  bool     `json:"open,omitempty"` // no stop seen: End is the end of the history
	Nodes []string `json:"nodes,omitempty"`
}

// Contains reports whether t lies in [Start-slack, End].
func (w Window) Contains(t int64, slack time.Duration) bool {
	return t >= w.Start-int64(slack) && t <= w.End
}

// Windows extracts the fault windows from the nemesis events. A stop pairs
// with the open start of the same fault name on the same nodes, else with
// the latest open start of that fault. A fault
// recorded as an invocation plus a completion counts once: the window opens
// at the first entry of its start and closes at the last entry of its stop.
// A start whose completion is "fail", or whose detail says "skipped", did
// not happen and opens no window. A window never stopped (a one-shot fault
// such as a failover, or a run that ended first) is Open and runs to the
// next nemesis start, "heal" or "final-reads" entry, else to the end of the
// history.
func Windows(ops []history.Op) []Window { return windowsUntil(ops, runEnd(ops)) }

// WindowsUntil is Windows of a history that ends at end, of which ops are
// the nemesis entries at least (a report of a big history holds only
// some of its entries).
func WindowsUntil(ops []history.Op, end int64) []Window {
	return windowsUntil(ops, max(end, runEnd(ops)))
}

// windowsUntil is Windows of a run that ends at end (its latest time): a
// window still open at the end lasts until then. The nemesis entries are
// all it reads, so a streaming pass (stream.go) gives it only those.
func windowsUntil(ops []history.Op, end int64) []Window {
	type state struct {
		open         []int // indices into ws of open windows, FIFO
		startInvOpen int   // index of a window opened by a start invocation awaiting its completion, -1 if none
		stopInvWin   int   // index of a window closed by a stop invocation awaiting its completion, -1 if none
	}
	var ws []Window
	var bounds []int64 // times that end an unstopped window
	dropped := map[int]bool{}
	st := map[string]*state{}
	get := func(f string) *state {
		s := st[f]
		if s == nil {
			s = &state{startInvOpen: -1, stopInvWin: -1}
			st[f] = s
		}
		return s
	}
	for i := range ops {
		op := &ops[i]
		if op.Process != history.Nemesis {
			continue
		}
		started, isStart := history.StartedFault(op.F)
		stopped, isStop := history.StoppedFault(op.F)
		switch {
		case op.F == history.Heal || op.F == history.FinalReads:
			bounds = append(bounds, op.Time)
		case isStart:
			fault := started
			s := get(fault)
			skipped := skippedDetail(op.DetailRaw())
			if op.Type != history.Invoke && s.startInvOpen >= 0 {
				w := s.startInvOpen
				s.startInvOpen = -1
				if op.Type == history.Fail || skipped {
					dropped[w] = true
					s.open = slices.DeleteFunc(s.open, func(x int) bool { return x == w })
				} else if len(op.NodeList()) > 0 {
					ws[w].Nodes = op.NodeList()
				}
				continue
			}
			if op.Type == history.Fail || skipped {
				continue
			}
			bounds = append(bounds, op.Time)
			ws = append(ws, Window{Fault: fault, Start: op.Time, End: end, Open: true, Nodes: op.NodeList()})
			s.open = append(s.open, len(ws)-1)
			if op.Type == history.Invoke {
				s.startInvOpen = len(ws) - 1
			}
		case isStop:
			fault := stopped
			s := get(fault)
			if op.Type != history.Invoke && s.stopInvWin >= 0 {
				ws[s.stopInvWin].End = op.Time
				s.stopInvWin = -1
				continue
			}
			if len(s.open) == 0 {
				continue
			}
			// The open window of this fault on the same nodes, else the
			// latest one: an older window still open was a one-shot fault.
			k := len(s.open) - 1
			for j := len(s.open) - 1; j >= 0; j-- {
				if slices.Equal(ws[s.open[j]].Nodes, op.NodeList()) {
					k = j
					break
				}
			}
			w := s.open[k]
			s.open = slices.Delete(s.open, k, k+1)
			if s.startInvOpen == w {
				s.startInvOpen = -1
			}
			ws[w].End = op.Time
			ws[w].Open = false
			if op.Type == history.Invoke {
				s.stopInvWin = w
			}
		}
	}
	out := ws[:0]
	for i, w := range ws {
		if dropped[i] {
			continue
		}
		if w.Open {
			for _, b := range bounds {
				if b > w.Start && b < w.End {
					w.End = b
				}
			}
		}
		out = append(out, w)
	}
	return out
}

// skippedDetail reports whether a nemesis entry's detail says the fault was
// skipped (it could not be resolved and nothing was done) or that its start
// failed ("error"): only a fault that took effect opens a window. (A
// partly applied fault is then not a window; losses it caused are still
// reported, outside any window.) A start that says "took_effect": true
// beside its error did strike (a composition whose failover promoted and
// whose interrupted move then failed, as the composition intends).
func skippedDetail(d json.RawMessage) bool {
	if len(d) == 0 || !(bytes.Contains(d, []byte(`"skipped"`)) || bytes.Contains(d, []byte(`"error"`))) {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(d, &m) != nil {
		return false
	}
	_, skipped := m["skipped"]
	_, failed := m["error"]
	if failed && string(m["took_effect"]) == "true" {
		failed = false
	}
	return skipped || failed
}

// finalReadsStart is the time of the nemesis "final-reads" marker, or -1.
func finalReadsStart(ops []history.Op) int64 {
	for i := range ops {
		if ops[i].Process == history.Nemesis && ops[i].F == history.FinalReads {
			return ops[i].Time
		}
	}
	return -1
}

// quantiles of a sample, in milliseconds, exact (nearest rank).
func quantilesMs(ns []int64) Quantiles {
	if len(ns) == 0 {
		return Quantiles{}
	}
	s := slices.Clone(ns)
	slices.Sort(s)
	q := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		i = max(0, min(i, len(s)-1))
		return ms(s[i])
	}
	return Quantiles{Count: int64(len(s)), P50: ptr(q(0.50)), P95: ptr(q(0.95)), P99: ptr(q(0.99)), Max: ptr(ms(s[len(s)-1]))}
}

// ptr is a figure that may be absent, present.
func ptr[T any](v T) *T { return &v }

// ms converts nanoseconds to milliseconds with microsecond precision.
func ms(ns int64) float64 { return math.Round(float64(ns)/1e3) / 1e3 }

// sec converts nanoseconds to seconds with millisecond precision.
func sec(ns int64) float64 { return math.Round(float64(ns)/1e6) / 1e3 }

func invalidHistory(err error) Result {
	msg := "history cannot be paired: " + err.Error()
	return Result{Valid: Unknown, Figures: &Verdict{Error: msg, Reason: msg}}
}

// capList truncates a list to n entries.
func capList[T any](xs []T, n int) []T {
	if len(xs) > n {
		return xs[:n]
	}
	return xs
}

// anomalies gathers the ops a checker flags, by class, each with its op
// index, so that a verdict can name its first instances in words.
type anomalies struct {
	max      int
	count    map[string]int
	examples map[string][]map[string]any
	order    []string // classes in the order first seen
}

func newAnomalies(max int) *anomalies {
	return &anomalies{max: max, count: map[string]int{}, examples: map[string][]map[string]any{}}
}

// add records one instance of class; ex should carry "index" (the op's
// invocation index) and "key" where they apply.
func (a *anomalies) add(class string, ex map[string]any) {
	if a.count[class] == 0 {
		a.order = append(a.order, class)
	}
	a.count[class]++
	if len(a.examples[class]) < a.max {
		a.examples[class] = append(a.examples[class], ex)
	}
}

func (a *anomalies) total() int {
	n := 0
	for _, c := range a.count {
		n += c
	}
	return n
}

// garbage flags a completion whose value cannot be what the workload wrote:
// the raw reply is kept as it was recorded.
func (a *anomalies) garbage(c *call, why string) { a.add("garbage", garbageExample(c, why)) }

// garbageExample is the example of a garbage completion: its op and the
// raw reply as it was recorded.
func garbageExample(c *call, why string) map[string]any {
	return map[string]any{"index": c.index, "key": c.inv.Key, "f": c.inv.F, "value": rawString(c.comp.Value), "why": why}
}

// into writes "anomalies" ({class: {count, examples}}) when there are any.
func (a *anomalies) into(fig map[string]any) {
	if len(a.order) == 0 {
		return
	}
	m := map[string]any{}
	for _, c := range a.order {
		m[c] = map[string]any{"count": a.count[c], "examples": a.examples[c]}
	}
	fig["anomalies"] = m
}

// classes is the anomalies by class, nil when there are none.
func (a *anomalies) classes() Anomalies {
	if len(a.order) == 0 {
		return nil
	}
	m := Anomalies{}
	for _, c := range a.order {
		m[c] = AnomalyClass{Count: a.count[c], Examples: a.examples[c]}
	}
	return m
}

// OneClass are the figures of a checker that flags one class of anomaly
// (epochs.go, replicacensus.go) when it flags some: its count and examples
// under "anomalies", the first in words (why and first), and the inputs it
// could not judge beside them.
type OneClass struct {
	Anomalies    Anomalies `json:"anomalies,omitempty"`
	AnomalyTypes []string  `json:"anomaly_types,omitempty"`
	Unjudged     []string  `json:"unjudged,omitempty"`
}

// invalidOne sets the one class's figures and v's why and first.
func invalidOne(o *OneClass, v *Verdict, class string, count int, examples []map[string]any, first string, unjudged []string) {
	o.Anomalies = Anomalies{class: {Count: count, Examples: examples}}
	o.AnomalyTypes = []string{class}
	v.Reason, v.First = first, first
	if len(unjudged) > 0 {
		o.Unjudged = unjudged
	}
}

// describe says in words what the anomalies are: the first few of each
// class with their op indexes.
func (a *anomalies) describe() string {
	var parts []string
	for _, c := range a.order {
		parts = append(parts, fmt.Sprintf("%d %s (%s)", a.count[c], c, describeExamples(a.examples[c])))
	}
	return strings.Join(parts, "; ")
}

// describeExamples names up to three examples by key and op index.
func describeExamples(ex []map[string]any) string {
	var parts []string
	for _, e := range capList(ex, 3) {
		var s []string
		if k, ok := e["key"]; ok && k != "" {
			s = append(s, fmt.Sprintf("key %v", k))
		}
		if i, ok := e["index"]; ok {
			s = append(s, fmt.Sprintf("op %v", i))
		}
		if len(s) == 0 {
			s = append(s, fmt.Sprint(e))
		}
		parts = append(parts, strings.Join(s, " "))
	}
	if len(ex) > 3 {
		parts = append(parts, "...")
	}
	return strings.Join(parts, ", ")
}

// rawString keeps a recorded value readable in the figures.
func rawString(v json.RawMessage) string {
	if len(v) == 0 {
		return ""
	}
	return string(v)
}

// why sets the "why" figure: what made a verdict invalid or unknown, in
// words, naming the first keys or ops (with their indexes).
func why(fig map[string]any, format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if prev, ok := fig["why"].(string); ok && prev != "" {
		s = prev + "; " + s
	}
	fig["why"] = s
}

// malformedUnknown turns a valid verdict unknown when some invocations
// could not be read (a harness bug or a hand-edited history): what they did
// cannot be judged.
func malformedUnknown(res *Result, n int) {
	if n == 0 || res.Valid != Valid {
		return
	}
	res.Valid = Unknown
	if fig, ok := res.Figures.(Map); ok { // a checker not typed yet
		why(fig, "%d ops have invocations that cannot be read (skipped_malformed): what they wrote is unknown", n)
		fig["error"] = fig["why"]
		return
	}
	f, ok := res.Figures.(interface{ verdict() *Verdict })
	if !ok {
		panic("malformedUnknown: figures without a Verdict")
	}
	v := f.verdict()
	v.because("%d ops have invocations that cannot be read (skipped_malformed): what they wrote is unknown", n)
	v.Error = v.Reason
}

// firstKeys names the first few keys of a list.
func firstKeys(keys []string) string {
	if len(keys) > 3 {
		return strings.Join(keys[:3], ", ") + fmt.Sprintf(" and %d more", len(keys)-3)
	}
	return strings.Join(keys, ", ")
}

// decodeJSON decodes an op's raw value as T; ok is false for an empty or
// undecodable value (the lock and queue checkers' values).
func decodeJSON[T any](raw json.RawMessage) (T, bool) {
	var v T
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return v, false
	}
	return v, true
}

// misordered says why call c cannot be believed as ordered ("" when it
// can): a completion before its invocation, an index given twice, or a
// completion's index not after its invocation's. It records c's index in
// indexes.
func misordered(c *call, indexes map[int64]bool) string {
	if c.end != inf && c.end < c.start {
		return "completed before it was invoked"
	}
	if indexes[c.index] || c.comp != nil && c.comp.Index <= c.index {
		return "its index is used twice, or its completion's is not after its invocation's"
	}
	indexes[c.index] = true
	return ""
}
