package checker

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ElectionLogOptions tune the elections checker.
type ElectionLogOptions struct {
	Scope
	// Logs are the nodes' server logs, each whole and in file order
	// (nodes/<node>/server.log), by node name.
	Logs map[string][]byte
	// Expected, when set, says why the run must carry the servers' logs:
	// none is then unknown, not "not applicable".
	Expected string
	// Missing names nodes whose log was expected and is not there: an
	// election they took part in is unseen, so the verdict is at best
	// unknown.
	Missing []string
}

type electionLog struct{ o ElectionLogOptions }

// Elections holds the servers' own words about elections to Redis
// Cluster's rules for them, which every release logs in the same words
// (cluster.c of 7.0: clusterSendFailoverAuthIfNeeded,
// clusterHandleSlaveFailover):
//
//   - one vote per epoch: a primary that logged "Failover auth granted to
//     X for epoch N" never grants again for epoch N (lastVoteEpoch, saved
//     and fsynced before the vote leaves). A second grant in one epoch by
//     one server process is vote-twice, invalid: two replicas of one
//     primary can then both win the epoch and claim its slots with one
//     configEpoch.
//   - the winner takes the election's epoch: a replica that logged
//     "Starting a failover election for epoch N." and then "Failover
//     election won" logs "configEpoch set to N after successful
//     failover" (its configEpoch, below N until then, becomes N). A win
//     whose configEpoch line is missing or names another epoch is
//     election-epoch-not-taken, invalid: the new primary claims its
//     slots with a stale epoch, and the cluster settles who owns them by
//     collision handling instead of by the election. (Missing means: not
//     before the process's next election, nor before its log ends while
//     it went on logging after the win.)
//
// Grants are judged within one process (a log line's pid): a restart
// reloads lastVoteEpoch from nodes.conf, and judging across one would
// judge the disk. The logs are a witness: a line that names an election
// in other words than these (a number that is no number, a line cut
// short), a win with no election before it in its process, or a win that
// is its process's last line (it may have died between the two lines)
// make the verdict unknown, named,
// unless a violation already makes it invalid. No logs are not
// applicable, or unknown when Expected; logs without an election or a
// vote are not applicable.
func Elections(o ElectionLogOptions) Checker {
	o.Scope = o.Scope.withDefaults()
	return electionLog{o}
}

func (c electionLog) Name() string { return c.o.name("elections") }

// The elections checker's anomaly classes.
const (
	VoteTwice             = "vote-twice"
	ElectionEpochNotTaken = "election-epoch-not-taken"
)

var (
	// serverLogLine is "pid:role DD Mon YYYY HH:MM:SS.mmm level message".
	serverLogLine = regexp.MustCompile(`^(\d+):[A-Z] \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2}\.\d{3} [.\-*#] (.*)$`)
	// Redis 7.2 and later, and Valkey, name the candidate's human node
	// name in parentheses after its id ("... to <id> () for epoch 7" when
	// none is set); 7.0 does not.
	authGranted    = regexp.MustCompile(`^Failover auth granted to ([0-9a-f]{40})(?: \([^()]*\))? for epoch (\d+)$`)
	electionStart  = regexp.MustCompile(`^Starting a failover election for epoch (\d+)\.$`)
	electionEpoch  = regexp.MustCompile(`^configEpoch set to (\d+) after successful failover$`)
	electionWonMsg = "Failover election won: I'm the new master."
	// electionWonValkey is Valkey's words for the same line.
	electionWonValkey = "Failover election won: I'm the new primary."
)

// electionWords are the fragments that mark a line as speaking of an
// election or a vote: such a line that matches none of the exact forms
// above is garbage evidence.
var electionWords = []string{"Failover auth granted", "Starting a failover election", "Failover election won", "after successful failover"}

func (c electionLog) Check(_ context.Context, _ *History) Result {
	if len(c.o.Logs) == 0 {
		if c.o.Expected != "" {
			return Result{Valid: Unknown, Figures: Map{"why": fmt.Sprintf("no server log although %s: no election was judged", c.o.Expected)}}
		}
		return NotApplicable("no server logs (nodes/<node>/server.log): no election to judge")
	}
	nodes := make([]string, 0, len(c.o.Logs))
	for n := range c.o.Logs {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	var unknown []string
	for _, n := range c.o.Missing {
		unknown = append(unknown, fmt.Sprintf("%s's log is missing: its votes and elections are unseen", n))
	}
	type violation struct {
		class, what string
		ex          map[string]any
	}
	var found []violation
	elections, wins, grants := 0, 0, 0
	for _, node := range nodes {
		// One process's state: a new pid starts it afresh.
		pid := ""
		votes := map[uint64]string{}     // epoch -> candidate granted
		var started uint64               // the epoch of the last election started
		hasStarted := false              // an election was started in this process
		var pendingWin *map[string]any   // a win waiting for its configEpoch line
		linesAfterWin := 0               // lines the process logged since that win
		endProcess := func(why string) { // the process's log ends (restart or file end)
			if pendingWin == nil {
				return
			}
			if linesAfterWin > 0 {
				// It lived on after the win (Redis logs the two lines
				// back to back, the reference from one call): the line
				// was never written.
				what := fmt.Sprintf("%s (process %s) won the election for epoch %d and never set its configEpoch to it (no \"configEpoch set to %d after successful failover\" in the %d lines it logged after the win, before %s)", node, pid, started, started, linesAfterWin, why)
				found = append(found, violation{ElectionEpochNotTaken, what, map[string]any{"node": node, "epoch": started, "line": (*pendingWin)["line"], "what": what}})
			} else {
				unknown = append(unknown, fmt.Sprintf("%s's process %s logged an election won (epoch %d) as its last line, with no configEpoch line after it before %s: it may have died between the two lines", node, pid, started, why))
			}
			pendingWin = nil
		}
		lineNo := 0
		for _, raw := range strings.Split(string(c.o.Logs[node]), "\n") {
			lineNo++
			raw = strings.TrimRight(raw, "\r")
			m := serverLogLine.FindStringSubmatch(raw)
			if m == nil {
				for _, w := range electionWords {
					if strings.Contains(raw, w) {
						unknown = append(unknown, fmt.Sprintf("line %d of %s's log speaks of an election but is no Redis log line: %q", lineNo, node, capRaw(raw)))
						break
					}
				}
				continue
			}
			if m[1] != pid {
				if pid != "" {
					endProcess("it restarted (pid " + m[1] + ")")
				}
				pid, votes, hasStarted, started = m[1], map[uint64]string{}, false, 0
			}
			msg := m[2]
			if pendingWin != nil {
				linesAfterWin++
			}
			named := false
			for _, w := range electionWords {
				if strings.Contains(msg, w) {
					named = true
					break
				}
			}
			if !named {
				continue
			}
			switch {
			case authGranted.MatchString(msg):
				g := authGranted.FindStringSubmatch(msg)
				epoch, err := strconv.ParseUint(g[2], 10, 64)
				if err != nil {
					unknown = append(unknown, fmt.Sprintf("line %d of %s's log grants a vote for an epoch that is no number: %q", lineNo, node, capRaw(msg)))
					continue
				}
				grants++
				if prev, ok := votes[epoch]; ok {
					what := fmt.Sprintf("%s (process %s) granted its vote for epoch %d twice: to %s, then to %s (line %d); a primary votes once per epoch", node, pid, epoch, short(prev), short(g[1]), lineNo)
					found = append(found, violation{VoteTwice, what, map[string]any{"node": node, "epoch": epoch, "first": prev, "second": g[1], "line": lineNo, "what": what}})
					continue
				}
				votes[epoch] = g[1]
			case electionStart.MatchString(msg):
				e, err := strconv.ParseUint(electionStart.FindStringSubmatch(msg)[1], 10, 64)
				if err != nil {
					unknown = append(unknown, fmt.Sprintf("line %d of %s's log starts an election for an epoch that is no number: %q", lineNo, node, capRaw(msg)))
					continue
				}
				if pendingWin != nil {
					what := fmt.Sprintf("%s (process %s) won the election for epoch %d and never set its configEpoch to it (no \"configEpoch set to %d after successful failover\" before its next election, line %d)", node, pid, started, started, lineNo)
					found = append(found, violation{ElectionEpochNotTaken, what, map[string]any{"node": node, "epoch": started, "line": lineNo, "what": what}})
					pendingWin = nil
				}
				elections++
				started, hasStarted = e, true
			case msg == electionWonMsg || msg == electionWonValkey:
				if !hasStarted {
					unknown = append(unknown, fmt.Sprintf("line %d of %s's log says an election was won with no election started before it in its process %s", lineNo, node, pid))
					continue
				}
				if pendingWin != nil {
					unknown = append(unknown, fmt.Sprintf("line %d of %s's log says election %d was won twice", lineNo, node, started))
					continue
				}
				wins++
				ex := map[string]any{"node": node, "epoch": started, "line": lineNo}
				pendingWin, linesAfterWin = &ex, 0
			case electionEpoch.MatchString(msg):
				e, err := strconv.ParseUint(electionEpoch.FindStringSubmatch(msg)[1], 10, 64)
				if err != nil {
					unknown = append(unknown, fmt.Sprintf("line %d of %s's log sets a configEpoch that is no number: %q", lineNo, node, capRaw(msg)))
					continue
				}
				if pendingWin == nil {
					unknown = append(unknown, fmt.Sprintf("line %d of %s's log sets its configEpoch after a failover no election win announced: %q", lineNo, node, capRaw(msg)))
					continue
				}
				if e != started {
					what := fmt.Sprintf("%s (process %s) won the election for epoch %d and set its configEpoch to %d (line %d)", node, pid, started, e, lineNo)
					found = append(found, violation{ElectionEpochNotTaken, what, map[string]any{"node": node, "epoch": started, "config_epoch": e, "line": lineNo, "what": what}})
				}
				pendingWin = nil
			default:
				unknown = append(unknown, fmt.Sprintf("line %d of %s's log speaks of an election in other words than Redis's: %q", lineNo, node, capRaw(msg)))
			}
		}
		endProcess("its log ends")
	}
	fig := map[string]any{"logs": len(nodes), "elections": elections, "wins": wins, "votes_granted": grants}
	if len(found) > 0 {
		counts := map[string]int{}
		examples := map[string][]map[string]any{}
		var types []string
		for _, v := range found {
			if counts[v.class] == 0 {
				types = append(types, v.class)
			}
			counts[v.class]++
			if len(examples[v.class]) < c.o.MaxExamples {
				examples[v.class] = append(examples[v.class], v.ex)
			}
		}
		an := map[string]any{}
		for _, t := range types {
			an[t] = map[string]any{"count": counts[t], "examples": examples[t]}
		}
		fig["anomalies"] = an
		fig["anomaly_types"] = types
		fig["violations"] = len(found)
		fig["why"] = found[0].what
		fig["first"] = found[0].what
		if len(unknown) > 0 {
			fig["unjudged"] = unknown
		}
		return Result{Valid: Invalid, Figures: Map(fig)}
	}
	if len(unknown) > 0 {
		fig["unjudged"] = unknown
		fig["why"] = "the servers' logs cannot all be believed: " + strings.Join(capList(unknown, 3), "; ")
		return Result{Valid: Unknown, Figures: Map(fig)}
	}
	if elections == 0 && grants == 0 {
		return NotApplicable(fmt.Sprintf("no election and no vote in the %d servers' logs", len(nodes)))
	}
	return Result{Valid: Valid, Figures: Map(fig)}
}

// short is a node ID's first 8 characters, as redis-cli prints them.
func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
