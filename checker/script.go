package checker

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/redline-dev/redline/history"
)

// ScriptLoad is the f of a SCRIPT LOAD the script workload records
// (workloads/script.go).
const ScriptLoad = "load"

type scriptCache struct{ o Scope }

// Script judges the NOSCRIPT replies of a workload that calls a Lua script
// by its SHA only (EVALSHA, as a client that loaded it once with SCRIPT
// LOAD does). The history carries every SCRIPT LOAD as an op of f "load"
// with the node that answered it. Each NOSCRIPT is put in one class:
//
//   - not loaded: the node never acknowledged a SCRIPT LOAD of this run. A
//     replica promoted by a failover is such a node: Redis 7.0 does not
//     propagate SCRIPT LOAD to replicas (scripts are replicated as their
//     effects), so its script cache is empty. This is documented behaviour,
//     not a loss: the write certainly did not run (fail), and a client must
//     load the script again (or fall back to EVAL). Counted, and as
//     noscript_after_failover when the run had a failover.
//   - lost cache: the node did acknowledge a SCRIPT LOAD before the
//     EVALSHA was sent. A restart (a kill) empties the cache, so a kill of
//     that very node after it took the load and before the NOSCRIPT
//     explains it; a kill of another node, or one before the load or after
//     the NOSCRIPT, does not: the server forgot a script it had accepted,
//     an anomaly. A kill in between that does not say which nodes it
//     struck (by name with a known address, or by address) leaves it
//     unknown.
//
// The SHA an acknowledged SCRIPT LOAD answered must be the SHA1 of the
// script body sent (the load's invocation value; a history without the
// body recorded a reply only when it was not the script's SHA): anything
// else is garbage, recorded raw, and a node that answered it is not taken
// to hold the script.
//
// Invalid on garbage or an unexplained cache loss; unknown on a cache loss
// a kill of unknown nodes may explain, or when no SCRIPT LOAD was
// acknowledged or no EVALSHA was sent.
func Script(opts ...Scope) Checker { return scriptCache{firstScope(opts)} }

func (s scriptCache) Name() string { return s.o.name("script") }

// restart is a kill that may have emptied script caches: its window, or
// the instant of a composition's kill step, and the nodes it struck.
type restart struct {
	from, to int64
	struck   map[string]bool // the names it gives and their addresses
	// unnamed: some node it struck is not known by address (or it names
	// none): it may have struck any node.
	unnamed bool
	what    string // in words
}

// restarts are the run's kills: the kill and power faults' windows and the kill
// steps of compositions and handoffs, with the nodes they struck.
func restarts(in *History) []restart {
	addrs := in.nodeAddrsOf()
	mk := func(from, to int64, nodes []string, what string) restart {
		r := restart{from: from, to: to, struck: map[string]bool{}, unnamed: len(nodes) == 0, what: what}
		for _, n := range nodes {
			r.struck[n] = true
			if a, ok := addrs[n]; ok {
				r.struck[a] = true
			} else if !looksLikeAddr(n) {
				r.unnamed = true
			}
		}
		return r
	}
	var out []restart
	for _, w := range in.windowsOf() {
		if strings.HasPrefix(w.Fault, "kill") || strings.HasPrefix(w.Fault, "power") {
			what := fmt.Sprintf("%s %ss-%ss", w.Fault, trimS(sec(w.Start)), trimS(sec(w.End)))
			if len(w.Nodes) > 0 {
				what += " on " + strings.Join(w.Nodes, ",")
			}
			out = append(out, mk(w.Start, w.End, w.Nodes, what))
		}
	}
	for i := range in.Ops {
		op := &in.Ops[i]
		if op.Process != history.Nemesis || op.F != history.Compose && op.F != history.Handoff {
			continue
		}
		// Each field read on its own: one of another shape loses only
		// itself, never the step.
		var raw map[string]json.RawMessage
		if json.Unmarshal(op.DetailRaw(), &raw) != nil {
			continue
		}
		var step, fault, node, stepErr string
		var nodes []string
		_ = json.Unmarshal(raw["step"], &step)
		_ = json.Unmarshal(raw["fault"], &fault)
		_ = json.Unmarshal(raw["node"], &node)
		_ = json.Unmarshal(raw["nodes"], &nodes)
		_ = json.Unmarshal(raw["error"], &stepErr)
		if step != "kill" && !(step == "strike" && strings.HasPrefix(fault, "kill")) {
			continue
		}
		if node != "" {
			nodes = append(nodes, node)
		}
		if len(nodes) == 0 {
			nodes = op.NodeList()
		}
		r := mk(op.Time, op.Time, nodes, fmt.Sprintf("%s step %s at %ss on %s", op.F, step, trimS(sec(op.Time)), orNone(strings.Join(nodes, ","))))
		if stepErr != "" {
			// A kill that reported an error may not have happened: it
			// can leave a cache loss unknown, never explain it.
			r.unnamed, r.struck = true, map[string]bool{}
		}
		out = append(out, r)
	}
	return out
}

// loadSHA judges the SHA an acknowledged SCRIPT LOAD answered: the SHA1 of
// the script body sent (the invocation's value). A history without the
// body (the workload recorded the reply only when it was not the script's
// SHA) has every recorded reply wrong. ok false: garbage, with the SHA
// wanted in words; missing: the body was sent and no reply recorded.
func loadSHA(c *call) (ok, missing bool, want string) {
	var body string
	hasBody := c.inv.HasValue() && json.Unmarshal(c.inv.Value, &body) == nil
	if !hasBody {
		return !c.comp.HasValue(), false, "no reply recorded (the workload records a reply only when it is not the script's SHA)"
	}
	sum := sha1.Sum([]byte(body))
	want = hex.EncodeToString(sum[:])
	if !c.comp.HasValue() {
		return false, true, want
	}
	var got string
	return json.Unmarshal(c.comp.Value, &got) == nil && got == want, false, want
}

func (s scriptCache) Check(ctx context.Context, in *History) Result {
	calls, err := s.o.calls(in)
	if err != nil {
		return Result{Valid: Unknown, Figures: &Verdict{Error: err.Error()}}
	}
	st := &scriptStream{s: s}
	for i := range calls {
		st.Call(&calls[i], i)
	}
	return s.judge(in, st)
}

// NewStream: the script checker streams (StreamChecker). Its state is
// two counts and the calls its verdict reads: the acknowledged SCRIPT
// LOADs (one a key at the start, and one after each NOSCRIPT) and the
// EVALSHAs refused with NOSCRIPT, not the EVALSHAs that ran.
func (s scriptCache) NewStream(t *Tail) Stream { return &scriptStream{s: s, t: t} }

// scriptStream gathers what the script checker reads of the client ops.
type scriptStream struct {
	s           scriptCache
	t           *Tail
	evalsha, ok int
	// kept are the acknowledged loads and the NOSCRIPTs with their place
	// among the invocations: judge takes them in that order, as Check
	// takes its calls, since a NOSCRIPT is judged by the loads invoked
	// before it.
	kept []seqCall
}

type seqCall struct {
	c   call
	seq int
}

func (st *scriptStream) Call(c *call, seq int) {
	if !st.s.o.keep(c.inv) {
		return
	}
	switch c.inv.Name() {
	case ScriptLoad:
		if !c.ok() {
			return
		}
	case OpAdd:
		st.evalsha++
		if c.ok() {
			st.ok++
		}
		if !c.failed() || !strings.HasPrefix(c.comp.ErrorText(), "NOSCRIPT") {
			return
		}
	default:
		return
	}
	// A stream's call and its entries are reused after the call.
	st.kept = append(st.kept, seqCall{detachCall(*c), seq})
}

func (st *scriptStream) End(context.Context) Result {
	if st.t.PairErr != nil {
		return Result{Valid: Unknown, Figures: &Verdict{Error: st.t.PairErr.Error()}}
	}
	// A stream gives its calls as they complete.
	slices.SortStableFunc(st.kept, func(a, b seqCall) int { return a.seq - b.seq })
	return st.s.judge(st.t.History, st)
}

// judge is the verdict on the calls st kept, with the nemesis entries of
// in (the whole history, or a stream's Tail).
func (s scriptCache) judge(in *History, st *scriptStream) Result {
	ops := in.Ops
	// Failovers are counted from the topology journal's copies (every
	// failover redline causes is journalled, once done).
	failovers := 0
	for i := range ops {
		op := &ops[i]
		var d struct{ Kind, State string }
		if op.Process != history.Nemesis || op.F != history.Journal || json.Unmarshal(op.DetailRaw(), &d) != nil {
			continue
		}
		if d.Kind == "failover" && d.State == "done" {
			failovers++
		}
	}
	kills := restarts(in)
	// loads[node]: the acknowledged SCRIPT LOADs of each node whose SHA
	// was the script's, in history order.
	loads := map[string][]*call{}
	evalsha, ok := st.evalsha, st.ok
	notLoaded, lostCache, explained, unexplained, unverified := 0, 0, 0, 0, 0
	var notLoadedNodes, lostNodes, unverifiedNodes []string
	var firstNotLoaded, firstLost, firstUnverified, firstMissing []int64
	var badSHA []map[string]any
	nbad, nmissing := 0, 0
	for i := range st.kept {
		c := &st.kept[i].c
		switch c.inv.Name() {
		case ScriptLoad:
			good, missing, want := loadSHA(c)
			switch {
			case missing:
				// Not evidence that the node has the script, nor garbage.
				nmissing++
				if len(firstMissing) < s.o.MaxExamples {
					firstMissing = append(firstMissing, c.index)
				}
			case !good:
				nbad++
				if len(badSHA) < s.o.MaxExamples {
					badSHA = append(badSHA, map[string]any{"index": c.index, "key": c.inv.Key, "node": c.comp.Node,
						"value": rawString(c.comp.Value), "want": want})
				}
			case c.comp.Node != "":
				loads[c.comp.Node] = append(loads[c.comp.Node], c)
			}
		case OpAdd: // refused with NOSCRIPT (scriptStream.Call)
			node := c.comp.Node
			// The node's latest load acknowledged before the EVALSHA
			// was sent.
			var last *call
			for _, l := range loads[node] {
				if l.end < c.start {
					last = l
				}
			}
			if last == nil {
				notLoaded++
				if !slices.Contains(notLoadedNodes, node) {
					notLoadedNodes = append(notLoadedNodes, node)
				}
				if len(firstNotLoaded) < s.o.MaxExamples {
					firstNotLoaded = append(firstNotLoaded, c.index)
				}
				continue
			}
			// A restart of that node after it took the load (its
			// window still open once the load was sent) and begun
			// before the NOSCRIPT came back explains it; one that may
			// have struck it (its nodes unknown) leaves it unknown.
			lostCache++
			struck, maybe := false, false
			for _, k := range kills {
				if k.to < last.start || k.from >= c.end {
					continue
				}
				switch {
				case k.struck[node]:
					struck = true
				case k.unnamed:
					maybe = true
				}
			}
			switch {
			case struck:
				explained++
			case maybe:
				unverified++
				if !slices.Contains(unverifiedNodes, node) {
					unverifiedNodes = append(unverifiedNodes, node)
				}
				if len(firstUnverified) < s.o.MaxExamples {
					firstUnverified = append(firstUnverified, c.index)
				}
			default:
				unexplained++
				if !slices.Contains(lostNodes, node) {
					lostNodes = append(lostNodes, node)
				}
				if len(firstLost) < s.o.MaxExamples {
					firstLost = append(firstLost, c.index)
				}
			}
		}
	}
	slices.Sort(notLoadedNodes)
	slices.Sort(lostNodes)
	slices.Sort(unverifiedNodes)
	fig := &ScriptFigures{Evalsha: evalsha, EvalshaOK: ok, LoadedNodes: len(loads),
		Noscript: notLoaded + lostCache, NoscriptNotLoaded: notLoaded, NoscriptLostCache: lostCache,
		Failovers: failovers, Kills: len(kills), NoscriptAfterFailover: 0}
	fig.NoscriptLostCacheAfterKill = explained
	fig.NoscriptLostCacheUnexplained = unexplained
	fig.NoscriptLostCacheUnverified = unverified
	if failovers > 0 {
		fig.NoscriptAfterFailover = notLoaded
	}
	if len(notLoadedNodes) > 0 {
		fig.NotLoadedNodes, fig.FirstNotLoaded = notLoadedNodes, firstNotLoaded
	}
	if len(lostNodes) > 0 {
		fig.LostCacheNodes, fig.FirstLostCache = lostNodes, firstLost
	}
	if len(unverifiedNodes) > 0 {
		fig.UnverifiedCacheNodes, fig.FirstUnverifiedCache = unverifiedNodes, firstUnverified
	}
	if nbad > 0 {
		fig.BadLoadSHA, fig.BadLoadSHASamples = nbad, badSHA
	}
	if nmissing > 0 {
		fig.LoadSHAUnrecorded, fig.FirstLoadSHAUnrecorded = nmissing, firstMissing
	}
	var bad []string
	if nbad > 0 {
		b := badSHA[0]
		bad = append(bad, fmt.Sprintf("%d SCRIPT LOAD acknowledged with a SHA that is not the SHA1 of the script sent (first op %v on %v answered %v, want %v): garbage from the server",
			nbad, b["index"], orNone(fmt.Sprint(b["node"])), orNone(fmt.Sprint(b["value"])), b["want"]))
	}
	if unexplained > 0 {
		bad = append(bad, fmt.Sprintf("%d EVALSHA refused with NOSCRIPT by %s, which had acknowledged SCRIPT LOAD, with no kill of that node between the load and the NOSCRIPT "+
			"(first op %d): the server forgot a script it had accepted", unexplained, strings.Join(lostNodes, ", "), firstLost[0]))
	}
	if len(bad) > 0 {
		fig.Reason = strings.Join(bad, "; ")
		return Result{Valid: Invalid, Figures: fig}
	}
	switch {
	case unverified > 0:
		fig.Reason = fmt.Sprintf("%d EVALSHA refused with NOSCRIPT by %s, which had acknowledged SCRIPT LOAD, while a kill that does not name the nodes it struck "+
			"(or names one whose address the history does not give) came in between (first op %d): whether a restart of that node explains it is unknown",
			unverified, strings.Join(unverifiedNodes, ", "), firstUnverified[0])
		return Result{Valid: Unknown, Figures: fig}
	case evalsha == 0:
		fig.Reason = "no EVALSHA was sent: nothing tells whether the script cache held"
		return Result{Valid: Unknown, Figures: fig}
	case len(loads) == 0 && nmissing > 0:
		fig.Reason = fmt.Sprintf("no SCRIPT LOAD's reply was recorded (first op %d): no node is known to have had the script", firstMissing[0])
		return Result{Valid: Unknown, Figures: fig}
	case len(loads) == 0:
		fig.Reason = "no SCRIPT LOAD was acknowledged: no node is known to have had the script"
		return Result{Valid: Unknown, Figures: fig}
	}
	var why []string
	if notLoaded > 0 {
		w := fmt.Sprintf("%d EVALSHA refused with NOSCRIPT by %s, which never acknowledged SCRIPT LOAD (first op %d)",
			notLoaded, strings.Join(notLoadedNodes, ", "), firstNotLoaded[0])
		if failovers > 0 {
			w += fmt.Sprintf("; the run had %d failover steps: a promoted replica has an empty script cache (Redis 7.0 does not "+
				"replicate SCRIPT LOAD), so the writes failed (certainly not applied) until the client loaded the script again", failovers)
		}
		why = append(why, w)
	}
	if explained > 0 {
		why = append(why, fmt.Sprintf("%d NOSCRIPT from nodes killed after they loaded the script: the cache does not survive a restart", explained))
	}
	if len(why) == 0 {
		why = append(why, fmt.Sprintf("every EVALSHA found the script (%d nodes loaded it, %d failover steps)", len(loads), failovers))
	}
	fig.Reason = strings.Join(why, "; ")
	return Result{Valid: Valid, Figures: fig}
}

// ScriptFigures are the script checker's figures: the EVALSHAs refused
// with NOSCRIPT, by what explains them.
type ScriptFigures struct {
	Evalsha                      int              `json:"evalsha"`
	EvalshaOK                    int              `json:"evalsha_ok"`
	LoadedNodes                  int              `json:"loaded_nodes"`
	Noscript                     int              `json:"noscript"`
	NoscriptNotLoaded            int              `json:"noscript_not_loaded"`
	NoscriptLostCache            int              `json:"noscript_lost_cache"`
	Failovers                    int              `json:"failovers"`
	Kills                        int              `json:"kills"`
	NoscriptAfterFailover        int              `json:"noscript_after_failover"`
	NoscriptLostCacheAfterKill   int              `json:"noscript_lost_cache_after_kill"`
	NoscriptLostCacheUnexplained int              `json:"noscript_lost_cache_unexplained"`
	NoscriptLostCacheUnverified  int              `json:"noscript_lost_cache_unverified"`
	NotLoadedNodes               []string         `json:"not_loaded_nodes,omitempty"`
	FirstNotLoaded               []int64          `json:"first_not_loaded,omitempty"`
	LostCacheNodes               []string         `json:"lost_cache_nodes,omitempty"`
	FirstLostCache               []int64          `json:"first_lost_cache,omitempty"`
	UnverifiedCacheNodes         []string         `json:"unverified_cache_nodes,omitempty"`
	FirstUnverifiedCache         []int64          `json:"first_unverified_cache,omitempty"`
	BadLoadSHA                   int              `json:"bad_load_sha,omitempty"`
	BadLoadSHASamples            []map[string]any `json:"bad_load_sha_samples,omitempty"`
	LoadSHAUnrecorded            int              `json:"load_sha_unrecorded,omitempty"`
	FirstLoadSHAUnrecorded       []int64          `json:"first_load_sha_unrecorded,omitempty"`
	Verdict
}
