package checker

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/redline-dev/redline/history"
)

// refCheck is the script checker's Check as it was before it streamed
// (commit 414be9f), kept to show that Check's results did not change
// (TestScriptStream).
func (s scriptCache) refCheck(ctx context.Context, in *History) Result {
	ops := in.Ops
	calls, err := s.o.calls(in)
	if err != nil {
		return Result{Valid: Unknown, Figures: &Verdict{Error: err.Error()}}
	}
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
	evalsha, ok := 0, 0
	notLoaded, lostCache, explained, unexplained, unverified := 0, 0, 0, 0, 0
	var notLoadedNodes, lostNodes, unverifiedNodes []string
	var firstNotLoaded, firstLost, firstUnverified, firstMissing []int64
	var badSHA []map[string]any
	nbad, nmissing := 0, 0
	for i := range calls {
		c := &calls[i]
		switch c.inv.Name() {
		case ScriptLoad:
			if !c.ok() {
				continue
			}
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
		case OpAdd:
			evalsha++
			if c.ok() {
				ok++
			}
			if !c.failed() || !strings.HasPrefix(c.comp.ErrorText(), "NOSCRIPT") {
				continue
			}
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
