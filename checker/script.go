package checker

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/redline-dev/redline/harness/history"
)

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
//   - lost cache: the node did acknowledge a SCRIPT LOAD earlier. A restart
//     (a kill) empties the cache, so with a kill in the run it is
//     explained; without one it is an anomaly: the server forgot a script
//     it had accepted.
//
// Valid unless an unexplained cache loss occurred; unknown when no SCRIPT
// LOAD was acknowledged or no EVALSHA was sent.
func Script(opts ...Scope) Checker { return scriptCache{firstScope(opts)} }

func (s scriptCache) Name() string { return s.o.name("script") }

func (s scriptCache) Check(ctx context.Context, in *History) Result {
	ops := in.Ops
	calls, err := s.o.calls(in)
	if err != nil {
		return Result{Valid: Unknown, Figures: map[string]any{"error": err.Error()}}
	}
	// Failovers are counted from the topology journal's copies (every
	// failover redline causes is journalled, once done); kills from the
	// kill fault and the compositions that kill.
	failovers, kills := 0, 0
	for i := range ops {
		op := &ops[i]
		if op.Process != history.Nemesis {
			continue
		}
		if op.F == history.StartOf("kill") && op.Type == history.Invoke {
			kills++
			continue
		}
		var d struct{ Kind, State, Step, Fault string }
		if op.F != history.Journal && op.F != history.Compose && op.F != history.Handoff || json.Unmarshal(op.DetailRaw(), &d) != nil {
			continue
		}
		if op.F == history.Journal && d.Kind == "failover" && d.State == "done" {
			failovers++
		}
		if d.Step == "kill" || d.Step == "strike" && strings.HasPrefix(d.Fault, "kill") {
			kills++
		}
	}
	loaded := map[string]int64{} // node -> index of its first acknowledged SCRIPT LOAD
	evalsha, ok := 0, 0
	notLoaded, lostCache := 0, 0
	var notLoadedNodes, lostNodes []string
	var firstNotLoaded, firstLost []int64
	for i := range calls {
		c := &calls[i]
		switch c.inv.F {
		case "load":
			if c.ok() && c.comp.Node != "" {
				if _, seen := loaded[c.comp.Node]; !seen {
					loaded[c.comp.Node] = c.comp.Index
				}
			}
		case "add":
			evalsha++
			if c.ok() {
				ok++
			}
			if !c.failed() || !strings.HasPrefix(c.comp.ErrorText(), "NOSCRIPT") {
				continue
			}
			node := c.comp.Node
			if at, seen := loaded[node]; seen && at < c.comp.Index {
				lostCache++
				if !slices.Contains(lostNodes, node) {
					lostNodes = append(lostNodes, node)
				}
				if len(firstLost) < s.o.MaxExamples {
					firstLost = append(firstLost, c.comp.Index)
				}
				continue
			}
			notLoaded++
			if !slices.Contains(notLoadedNodes, node) {
				notLoadedNodes = append(notLoadedNodes, node)
			}
			if len(firstNotLoaded) < s.o.MaxExamples {
				firstNotLoaded = append(firstNotLoaded, c.comp.Index)
			}
		}
	}
	slices.Sort(notLoadedNodes)
	slices.Sort(lostNodes)
	fig := map[string]any{"evalsha": evalsha, "evalsha_ok": ok, "loaded_nodes": len(loaded),
		"noscript": notLoaded + lostCache, "noscript_not_loaded": notLoaded, "noscript_lost_cache": lostCache,
		"failovers": failovers, "kills": kills, "noscript_after_failover": 0}
	if failovers > 0 {
		fig["noscript_after_failover"] = notLoaded
	}
	if len(notLoadedNodes) > 0 {
		fig["not_loaded_nodes"], fig["first_not_loaded"] = notLoadedNodes, firstNotLoaded
	}
	if len(lostNodes) > 0 {
		fig["lost_cache_nodes"], fig["first_lost_cache"] = lostNodes, firstLost
	}
	switch {
	case evalsha == 0:
		fig["why"] = "no EVALSHA was sent: nothing tells whether the script cache held"
		return Result{Valid: Unknown, Figures: fig}
	case len(loaded) == 0:
		fig["why"] = "no SCRIPT LOAD was acknowledged: no node is known to have had the script"
		return Result{Valid: Unknown, Figures: fig}
	case lostCache > 0 && kills == 0:
		fig["why"] = fmt.Sprintf("%d EVALSHA refused with NOSCRIPT by %s, which had acknowledged SCRIPT LOAD, with no restart in the run "+
			"(first op %d): the server forgot a script it had accepted", lostCache, strings.Join(lostNodes, ", "), firstLost[0])
		return Result{Valid: Invalid, Figures: fig}
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
	if lostCache > 0 {
		why = append(why, fmt.Sprintf("%d NOSCRIPT from %s after a restart (the run killed nodes): the cache does not survive a restart",
			lostCache, strings.Join(lostNodes, ", ")))
	}
	if len(why) == 0 {
		why = append(why, fmt.Sprintf("every EVALSHA found the script (%d nodes loaded it, %d failover steps)", len(loaded), failovers))
	}
	fig["why"] = strings.Join(why, "; ")
	return Result{Valid: Valid, Figures: fig}
}
