package checker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/redline-dev/redline/history"
)

// Register operations as the porcupine model sees them.
const (
	regRead = iota
	regWrite
	regCAS         // cas that swapped (ok) or may have (indeterminate)
	regCASMismatch // cas that certainly compared and did not swap
)

type regInput struct {
	kind  uint8
	a, b  int64 // write: a; cas: a=old b=new
	index int64 // history index of the invocation, for the visualization
}

type regOutput struct {
	known  bool // a read's result is known / a cas certainly swapped
	exists bool // read: the key existed
	v      int64
}

// regState is the register: a value, or no key at all.
type regState struct {
	exists bool
	v      int64
}

func (s regState) String() string {
	if !s.exists {
		return "nil"
	}
	return fmt.Sprint(s.v)
}

var registerModel = porcupine.Model{
	Init: func() any { return regState{} },
	Step: func(st, in, out any) (bool, any) {
		s := st.(regState)
		i := in.(regInput)
		o := out.(regOutput)
		switch i.kind {
		case regRead:
			if !o.known {
				return true, s
			}
			return s.exists == o.exists && (!s.exists || s.v == o.v), s
		case regWrite:
			return true, regState{true, i.a}
		case regCAS:
			match := s.exists && s.v == i.a
			if o.known {
				// Swapped: the old value must have matched.
				return match, regState{true, i.b}
			}
			// Indeterminate: if it took effect here it swapped when the
			// value matched; "never took effect" is the same as taking
			// effect last, after every other operation, which porcupine
			// can choose since an indeterminate op returns at infinity.
			if match {
				return true, regState{true, i.b}
			}
			return true, s
		case regCASMismatch:
			return !(s.exists && s.v == i.a), s
		}
		return false, s
	},
	Hash: func(st any) uint64 {
		s := st.(regState)
		h := uint64(s.v) * 0x9E3779B97F4A7C15
		if s.exists {
			h ^= 1
		}
		return h
	},
	DescribeOperation: func(in, out any) string {
		i := in.(regInput)
		o := out.(regOutput)
		switch i.kind {
		case regRead:
			if !o.known {
				return "read -> ?"
			}
			if !o.exists {
				return "read -> nil"
			}
			return fmt.Sprintf("read -> %d", o.v)
		case regWrite:
			return fmt.Sprintf("write(%d)", i.a)
		case regCAS:
			if o.known {
				return fmt.Sprintf("cas(%d, %d) -> ok", i.a, i.b)
			}
			return fmt.Sprintf("cas(%d, %d) -> ?", i.a, i.b)
		case regCASMismatch:
			return fmt.Sprintf("cas(%d, %d) -> mismatch", i.a, i.b)
		}
		return "?"
	},
	DescribeState:             func(st any) string { return st.(regState).String() },
	DescribeOperationMetadata: describeMeta,
}

// LinearizableOptions tune the linearizability checker.
type LinearizableOptions struct {
	Scope
	// Timeout bounds the search as a whole [60s]. Keys not decided in time
	// are reported as unknown_keys.
	Timeout time.Duration
	// NoVisualization turns off the porcupine HTML pages for anomalous keys.
	NoVisualization bool
}

type linearizable struct{ o LinearizableOptions }

// Linearizable checks register histories (read / write / cas) per key with
// porcupine. See the package documentation for the history conventions.
func Linearizable(opts ...LinearizableOptions) Checker {
	o := optional(opts)
	o.Scope = o.Scope.withDefaults()
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	return linearizable{o}
}

func (l linearizable) Name() string { return l.o.name("linearizable") }

// regOp is one register operation prepared for porcupine.
//
// It points at its call (in the calls shared by a Run's checkers: never
// write through it) rather than copying it: 56 bytes rather than 80, for
// each of a long history's register ops.
type regOp struct {
	*call
	in  regInput
	out regOutput
}

// replicaReads counts the ok reads a replica served.
func replicaReads(calls []call) int {
	n := 0
	for i := range calls {
		if c := &calls[i]; c.inv.Name() == OpRead && c.ok() && c.comp.FromReplica() {
			n++
		}
	}
	return n
}

// impossibleReplicaReads judges the reads a replica served, which the
// linearizability search leaves out: a replica may be stale, never
// inventive. A reply that is no integer is garbage; a value that no write or
// cas (ok or indeterminate) of the key invoked before the read ended could
// have produced is an impossible-replica-read. An empty key (the initial
// state) is always a possible stale value.
func impossibleReplicaReads(calls []call, an *anomalies) {
	// The earliest invocation of a possible producer of each value, per key.
	produced := map[string]map[int64]int64{}
	for i := range calls {
		c := &calls[i]
		var v int64
		switch c.inv.Name() {
		case OpWrite:
			x, ok := history.ParseInt(c.inv.Value)
			if !ok || c.failed() {
				continue
			}
			v = x
		case OpCAS:
			ab, ok := history.ParseInts(c.inv.Value)
			if !ok || len(ab) != 2 || c.failed() {
				continue
			}
			v = ab[1]
		default:
			continue
		}
		m := produced[c.inv.Key]
		if m == nil {
			m = map[int64]int64{}
			produced[c.inv.Key] = m
		}
		if t, ok := m[v]; !ok || c.start < t {
			m[v] = c.start
		}
	}
	for i := range calls {
		c := &calls[i]
		if c.inv.Name() != OpRead || !c.ok() || !c.comp.FromReplica() {
			continue
		}
		v, ok := history.ParseInt(c.comp.Value)
		switch {
		case !ok && c.comp.HasValue():
			an.garbage(c, "not an integer within int64 (served by a replica)")
		case !ok:
			// The empty key: the initial state, possibly stale.
		default:
			if t, ok := produced[c.inv.Key][v]; !ok || t > c.end {
				ex := map[string]any{"key": c.inv.Key, "index": c.index, "value": v, "node": nodeOf(*c)}
				if ok {
					ex["first_written_s"] = sec(t)
				}
				an.add("impossible-replica-read", ex)
			}
		}
	}
}

// registerOps turns calls into porcupine operations grouped by key.
// Failed ops and indeterminate reads constrain nothing and are dropped;
// so are replica reads.
// skipped counts malformed invocations (the harness's own bug); garbage
// lists the ok reads whose reply is no integer (the server's failure).
func registerOps(calls []call) (byKey map[string][]regOp, skipped int, garbage []call) {
	// Each key's slice is made once at (about) its size: grown by append,
	// a 10M-entry history's register ops took up to twice their room.
	size := map[string]int{}
	for i := range calls {
		switch calls[i].inv.Name() {
		case OpRead, OpWrite, OpCAS:
			size[calls[i].inv.Key]++
		}
	}
	byKey = make(map[string][]regOp, len(size))
	for k, n := range size {
		byKey[k] = make([]regOp, 0, n)
	}
	defer func() {
		for k, v := range byKey {
			if len(v) == 0 {
				delete(byKey, k) // a key of failed ops only, as before
			}
		}
	}()
	for i := range calls {
		c := &calls[i]
		var in regInput
		var out regOutput
		in.index = c.index
		switch c.inv.Name() {
		case OpRead:
			if !c.ok() || c.comp.FromReplica() {
				// A replica read may be stale by design: Check counts it,
				// linearizability does not hold it.
				continue
			}
			in.kind = regRead
			out.known = true
			out.v, out.exists = history.ParseInt(c.comp.Value)
			if !out.exists && c.comp.HasValue() {
				garbage = append(garbage, *c)
				continue
			}
		case OpWrite:
			if c.failed() {
				continue
			}
			v, ok := history.ParseInt(c.inv.Value)
			if !ok {
				skipped++
				continue
			}
			in.kind, in.a = regWrite, v
		case OpCAS:
			var ab []int64
			ab, ok := history.ParseInts(c.inv.Value)
			if !ok || len(ab) != 2 {
				skipped++
				continue
			}
			in.a, in.b = ab[0], ab[1]
			switch {
			case c.ok() && c.comp.HasValue() && !sameInts(c.comp.Value, ab):
				// The reply was garbage (the workload recorded it in
				// place of the value): flagged, and whether it swapped
				// is unknown.
				garbage = append(garbage, *c)
				in.kind = regCAS
				cc := *c                   // the shared call stays as it is
				cc.comp, cc.end = nil, inf // as if it never completed
				c = &cc
			case c.ok():
				in.kind, out.known = regCAS, true
			case c.failed() && strings.HasPrefix(c.comp.ErrorText(), "cas-mismatch"):
				in.kind = regCASMismatch
			case c.failed():
				continue
			default:
				in.kind = regCAS
			}
		default:
			continue
		}
		byKey[c.inv.Key] = append(byKey[c.inv.Key], regOp{call: c, in: in, out: out})
	}
	return byKey, skipped, garbage
}

// porcupineOps prepares one key's ops for porcupine and picks the model:
// the pooled model when the key has indeterminate writes, else the plain
// one (see linpool.go).
func porcupineOps(ops []regOp) ([]porcupine.Operation, porcupine.Model) {
	if usePooled(ops) {
		return buildOps(ops, true), pooledRegisterModel
	}
	return buildOps(ops, false), registerModel
}

// usePooled: the pooled model costs about a sixth more on ordinary keys and
// keeps the search from exploding when indeterminate writes are observed
// late (BenchmarkLateObserved: 12 such writes take the plain model 0.5 s,
// 20 do not finish; the pooled one takes 0.1 ms). Use it past a handful.
func usePooled(ops []regOp) bool {
	const pooledFrom = 5
	n := 0
	for _, op := range ops {
		if op.in.kind == regWrite && !op.ok() {
			if n++; n >= pooledFrom {
				return true
			}
		}
	}
	return false
}

// buildOps turns one key's ops into porcupine ops for the plain model, the
// pooled model (pooled), or its quick form (casPooled as well).
func buildOps(ops []regOp, pooled bool, casPooled ...bool) []porcupine.Operation {
	quick := len(casPooled) > 0 && casPooled[0]
	clients := map[history.Process]int{}
	out := make([]porcupine.Operation, len(ops))
	for i, op := range ops {
		id, ok := clients[op.inv.Process]
		if !ok {
			id = len(clients)
			clients[op.inv.Process] = id
		}
		in, ret := op.in, op.end
		switch {
		case in.kind == regWrite && !op.ok() && pooled:
			in.kind, ret = regEnable, op.start // pending from its call on
		case in.kind == regCAS && !op.ok() && pooled && quick:
			in.kind, ret = regEnableCAS, op.start
		case in.kind != regCASMismatch && in.kind != regRead && !op.ok():
			ret = inf // indeterminate: may take effect any time after its call
		}
		out[i] = porcupine.Operation{ClientId: id, Input: in, Call: op.start, Output: op.out, Return: ret,
			Metadata: opMeta{op.inv, nodeOf(*op.call)}}
	}
	return out
}

// opMeta points a porcupine op back at its history entry; it is formatted
// only when a picture is drawn.
type opMeta struct {
	inv  *history.Op
	node string
}

func describeMeta(m any) string {
	om, ok := m.(opMeta)
	if !ok {
		return ""
	}
	return fmt.Sprintf("index %d, process %s, node %s", om.inv.Index, om.inv.Process, om.node)
}

func nodeOf(c call) string {
	if c.comp != nil && c.comp.Node != "" {
		return c.comp.Node
	}
	return c.inv.Node
}

func (l linearizable) Check(ctx context.Context, in *History) Result {
	return l.result(l.partial(ctx, in, time.Time{}, l.o.Timeout, false))
}

// partial judges the register keys of in: all of a history's, or those of
// one partition of it (linpartition.go). The search stops at deadline, or
// budget after it begins when deadline is zero; budget is the time it has
// for these keys (the first pass gives each key its share of it).
func (l linearizable) partial(ctx context.Context, in *History, deadline time.Time, budget time.Duration, deferRetry bool) *regPartial {
	p := &regPartial{garbage: newAnomalies(l.o.MaxExamples), replica: newAnomalies(l.o.MaxExamples)}
	calls, err := l.o.calls(in)
	if err != nil {
		p.err = err
		return p
	}
	// A replica flag the writes contradict is a lie: the read is judged
	// as its primary's (replicaflag.go).
	if flagLies := contradictedReplicaFlags(calls); len(flagLies) > 0 {
		first := calls[flagLies[0]]
		p.flagLies, p.flagLieIndex, p.flagLie = len(flagLies), first.index, describeContradictedFlag(first)
		calls = withoutContradictedFlags(calls, flagLies)
	}
	byKey, skipped, garbage := registerOps(calls)
	p.skipped = skipped
	for i := range garbage {
		p.garbage.garbage(&garbage[i], "not an integer within int64")
	}
	impossibleReplicaReads(calls, p.replica)
	p.replicaReads = replicaReads(calls)
	keys := make([]string, 0, len(byKey))
	for k, v := range byKey {
		keys = append(keys, k)
		p.ops += len(v)
	}
	p.keys = len(keys)
	// Biggest keys first, so that the deadline cuts the small tail.
	sort.Slice(keys, func(i, j int) bool {
		if len(byKey[keys[i]]) != len(byKey[keys[j]]) {
			return len(byKey[keys[i]]) > len(byKey[keys[j]])
		}
		return keys[i] < keys[j]
	})

	began := time.Now()
	defer func() { p.searched = time.Since(began) }()
	if deadline.IsZero() {
		deadline = began.Add(budget)
	}
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	verdict := make([]porcupine.CheckResult, len(keys))
	// A read of a value no write could have produced needs no search.
	var all []int
	for i, k := range keys {
		if garbageRead(byKey[k]) {
			verdict[i] = porcupine.Illegal
			continue
		}
		all = append(all, i)
	}
	// Two passes so that a few hard keys cannot starve the rest: first
	// every key gets a fair slice of the timeout, then the keys still
	// undecided share what is left (retryShare). The second pass of a
	// partition waits for all partitions' first (deferRetry).
	workers := runtime.GOMAXPROCS(0)
	first := max(budget*time.Duration(workers)/time.Duration(2*max(1, len(keys))), 100*time.Millisecond)
	searchPass(ctx, deadline, keys, byKey, all, verdict, func(left time.Duration, _ int) time.Duration { return min(left, first) })
	var retry []int
	for i := range keys {
		if verdict[i] == porcupine.Unknown {
			retry = append(retry, i)
		}
	}
	if deferRetry {
		p.undecided = map[string][]regOp{}
		for _, i := range retry {
			p.undecided[keys[i]] = detach(byKey[keys[i]])
			verdict[i] = porcupine.Ok // judged later, with the other partitions' (linpartition.go)
		}
	} else {
		searchPass(ctx, deadline, keys, byKey, retry, verdict, retryShare)
	}

	for i, k := range keys {
		switch verdict[i] {
		case porcupine.Illegal:
			p.anomalous = append(p.anomalous, k)
		case porcupine.Unknown:
			p.unknown = append(p.unknown, k)
		}
	}
	sort.Strings(p.anomalous)
	sort.Strings(p.unknown)
	p.stale, p.staleEx = staleReads(byKey, l.o.MaxExamples)
	for _, k := range keys {
		for _, op := range byKey[k] {
			if (op.in.kind == regWrite || op.in.kind == regCAS) && !op.ok() {
				p.indeterminate++
			}
			switch {
			case op.in.kind == regRead:
				p.okReads++
			case op.ok():
				p.okWrites++
			}
		}
		if usePooled(byKey[k]) {
			p.pooledKeys++
		}
	}
	if len(p.anomalous) > 0 && !l.o.NoVisualization {
		p.files = l.visualize(p.anomalous, byKey, in.windowsOf())
	}
	return p
}

// searchPass decides the keys of todo (indexes into keys) with porcupine,
// workers at a time, each given share(time left, keys waiting) when it
// starts, until deadline: a key not decided by then is Unknown.
func searchPass(ctx context.Context, deadline time.Time, keys []string, byKey map[string][]regOp, todo []int, verdict []porcupine.CheckResult, share func(left time.Duration, waiting int) time.Duration) {
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				n := next
				next++
				mu.Unlock()
				if n >= len(todo) {
					return
				}
				i := todo[n]
				left := time.Until(deadline)
				if left <= 0 || ctx.Err() != nil {
					verdict[i] = porcupine.Unknown
					continue
				}
				verdict[i] = checkKey(byKey[keys[i]], share(left, len(todo)-n))
			}
		}()
	}
	wg.Wait()
}

// retryShare is the time a key still undecided after the first pass gets:
// its fair share of what is left, all of it for the last few.
func retryShare(left time.Duration, waiting int) time.Duration {
	workers := runtime.GOMAXPROCS(0)
	if waiting <= workers {
		return left
	}
	return max(left*time.Duration(workers)/time.Duration(waiting), time.Second)
}

// result is the verdict and figures of what the search found.
func (l linearizable) result(p *regPartial) Result {
	if p.err != nil {
		return invalidHistory(p.err)
	}
	staleEx := slices.Clone(p.staleEx)
	slices.SortFunc(staleEx, func(a, b map[string]any) int { return cmpInt(a["index"].(int64), b["index"].(int64)) })
	an := p.anomalies()
	fig := &LinearizableFigures{
		Indeterminate: p.indeterminate,
		PooledKeys:    p.pooledKeys,
		Ops:           p.ops,
		Keys:          p.keys,
		AnomalousKeys: nonNil(p.anomalous),
		UnknownKeys:   nonNil(p.unknown),
		StaleReads:    p.stale,
		TimeoutS:      l.o.Timeout.Seconds(),
		Anomalies:     an.classes(),
	}
	if p.replicaReads > 0 {
		fig.ReplicaReads = p.replicaReads
		fig.ReplicaReadsNote = "reads a replica served are left out of the linearizability search (stale by design); their staleness is not measured for registers, but a value no write invoked before the read ended could have produced is an impossible-replica-read"
	}
	if p.flagLies > 0 {
		fig.ReplicaFlagContradicted = p.flagLies
		fig.ReplicaFlagFirst = ptr(p.flagLie)
	}
	if p.skipped > 0 {
		fig.SkippedMalformed = p.skipped
	}
	if p.stale > 0 {
		fig.StaleReadSamples = ptr(staleEx)
	}
	res := Result{Valid: Valid, Figures: fig}
	switch anomalous, unknown, stale := p.anomalous, p.unknown, p.stale; {
	// A stale read is certain (see staleReads): it makes the run invalid
	// whatever the search says, even when the search timed out.
	case len(anomalous) > 0 || stale > 0 || an.total() > 0:
		res.Valid = Invalid
		if len(anomalous) > 0 {
			fig.because("%d keys not linearizable: %s", len(anomalous), firstKeys(anomalous))
		}
		if stale > 0 {
			fig.because("%d stale reads (%s)", stale, describeExamples(staleEx))
		}
		if an.total() > 0 {
			fig.because("%s", an.describe())
		}
	case len(unknown) > 0:
		res.Valid = Unknown
		fig.because("the linearizability search ran out of time on %d keys: %s", len(unknown), firstKeys(unknown))
	case p.okReads == 0:
		res.Valid = Unknown
		fig.because("no successful read: nothing to judge")
	case p.okWrites == 0:
		res.Valid = Unknown
		fig.because("no acknowledged write: nothing to judge")
	}
	malformedUnknown(&res, p.skipped)
	res.Files = p.files
	return res
}

// LinearizableFigures are the linearizable checker's figures: the keys
// no order explains (anomalous_keys), those the search ran out of time on
// (unknown_keys), and the stale reads.
type LinearizableFigures struct {
	Indeterminate int      `json:"indeterminate"`
	PooledKeys    int      `json:"pooled_keys"`
	Ops           int      `json:"ops"`
	Keys          int      `json:"keys"`
	AnomalousKeys []string `json:"anomalous_keys"`
	UnknownKeys   []string `json:"unknown_keys"`
	StaleReads    int      `json:"stale_reads"`
	TimeoutS      float64  `json:"timeout_s"`
	// The reads replicas served (left out of the search).
	ReplicaReads            int               `json:"replica_reads,omitempty"`
	ReplicaReadsNote        string            `json:"replica_reads_note,omitempty"`
	ReplicaFlagContradicted int               `json:"replica_flag_contradicted,omitempty"`
	ReplicaFlagFirst        *string           `json:"replica_flag_first,omitempty"`
	SkippedMalformed        int               `json:"skipped_malformed,omitempty"`
	StaleReadSamples        *[]map[string]any `json:"stale_read_samples,omitempty"`
	Anomalies               Anomalies         `json:"anomalies,omitempty"`
	Verdict
}

// maxPictures caps the keys visualize draws.
const maxPictures = 20

// visualize re-runs porcupine in verbose mode on the anomalous keys and
// renders its HTML page with the fault windows as annotations.
func (l linearizable) visualize(anomalous []string, byKey map[string][]regOp, windows []Window) map[string][]byte {
	files := map[string][]byte{}
	// The pictures get their own budget, apart from the main deadline (a
	// known anomaly should not lose its picture to a slow check): a quarter
	// of the timeout (at least a second) for at most maxPictures keys. A
	// search cut short still draws the longest partial linearizations.
	budget := time.Now().Add(max(l.o.Timeout/4, time.Second))
	for _, k := range capList(anomalous, min(l.o.MaxExamples, maxPictures)) {
		left := time.Until(budget)
		if left <= 0 {
			break
		}
		pops, model := porcupineOps(byKey[k])
		_, info := porcupine.CheckOperationsVerbose(model, pops, left)
		var ann []porcupine.Annotation
		for _, w := range windows {
			ann = append(ann, porcupine.Annotation{
				Tag:             "nemesis",
				Start:           w.Start,
				End:             w.End,
				Description:     w.Fault,
				Details:         fmt.Sprintf("%s %v from %.3fs to %.3fs", w.Fault, w.Nodes, sec(w.Start), sec(w.End)),
				BackgroundColor: "#fde2e2",
			})
		}
		info.AddAnnotations(ann)
		var buf bytes.Buffer
		if err := porcupine.Visualize(model, info, &buf); err != nil {
			continue
		}
		files[pictureName(k)] = buf.Bytes()
	}
	return files
}

// garbageRead reports whether some ok read, or the old value of some ok
// cas, is a value that no write or cas (ok or indeterminate) of the key
// ever wrote.
func garbageRead(ops []regOp) bool {
	written := map[int64]bool{}
	for _, op := range ops {
		switch op.in.kind {
		case regWrite:
			written[op.in.a] = true
		case regCAS:
			written[op.in.b] = true
		}
	}
	for _, op := range ops {
		switch {
		case op.in.kind == regRead && op.out.exists && !written[op.out.v]:
			return true
		case op.in.kind == regCAS && op.out.known && !written[op.in.a]:
			return true
		}
	}
	return false
}

// sameInts reports whether raw is the JSON list of integers want.
func sameInts(raw json.RawMessage, want []int64) bool {
	got, ok := history.ParseInts(raw)
	return ok && slices.Equal(got, want)
}

// safeFileName keeps a key usable as a file name and as a link: characters
// other than letters, digits, '.', '-' and '_' become '_', and then a short
// hash of the key keeps distinct keys apart.
func safeFileName(k string) string {
	var b strings.Builder
	changed := k == ""
	for _, r := range k {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
			changed = true
		}
	}
	if changed {
		h := fnv.New32a()
		h.Write([]byte(k))
		fmt.Fprintf(&b, "-%08x", h.Sum32())
	}
	return b.String()
}

// staleReads counts ok reads that returned a value certainly overwritten
// before the read began: some ok write or cas of another value completed
// before the read's invocation and was invoked after every operation that
// could have produced the value read had completed (an indeterminate
// producer never completes). Cheap and sound, not complete: every stale read
// is also a linearizability violation, not every violation is a stale read.
// The examples are the first maxExamples in key order (the keys sorted),
// so that the partials of key partitions merge into the whole's
// (linpartition.go); the caller sorts them by index.
func staleReads(byKey map[string][]regOp, maxExamples int) (int, []map[string]any) {
	total := 0
	var examples []map[string]any
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the same samples on every check
	for _, k := range keys {
		ops := byKey[k]
		// Latest completion of any producer of each value (nil: no key).
		lastProducer := map[regState]int64{{}: -1 << 62}
		type w struct{ inv, end int64 }
		var writes []w
		for _, op := range ops {
			var v int64
			switch op.in.kind {
			case regWrite:
				v = op.in.a
			case regCAS:
				v = op.in.b
			default:
				continue
			}
			end := op.end
			if !op.ok() {
				end = inf
			}
			s := regState{true, v}
			if cur, ok := lastProducer[s]; !ok || end > cur {
				lastProducer[s] = end
			}
			if op.ok() {
				writes = append(writes, w{op.start, op.end})
			}
		}
		if len(writes) == 0 {
			continue
		}
		slices.SortFunc(writes, func(a, b w) int { return cmpInt(a.end, b.end) })
		// prefixMaxInv[i]: latest invocation among writes[0..i].
		prefixMaxInv := make([]int64, len(writes))
		m := int64(-1 << 62)
		for i, x := range writes {
			m = max(m, x.inv)
			prefixMaxInv[i] = m
		}
		for _, op := range ops {
			if op.in.kind != regRead {
				continue
			}
			// Writes completed strictly before the read began.
			n := sort.Search(len(writes), func(i int) bool { return writes[i].end >= op.start })
			if n == 0 {
				continue
			}
			prod, ok := lastProducer[regState{op.out.exists, op.out.v}]
			if !ok {
				continue // a value nobody wrote: porcupine reports it
			}
			if prefixMaxInv[n-1] > prod {
				total++
				if len(examples) < maxExamples {
					examples = append(examples, map[string]any{"key": op.inv.Key, "index": op.index, "value": regState{op.out.exists, op.out.v}.String()})
				}
			}
		}
	}
	return total, examples
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// The figures this checker explains (describe.go).
var _ = ExplainFigures(map[string]string{
	"unknown_keys": "the search for an order ran out of time on these keys: no verdict on them",
})
