package checker

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
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
	// NodeTimeout is the cluster's cluster-node-timeout: the voters'
	// window (two node timeouts) of the double-win rule. Zero: that rule
	// is not judged.
	NodeTimeout time.Duration
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
//   - one winner per primary per two node timeouts: a primary votes about
//     a failed primary's replicas at most once per two node timeouts
//     (clusterSendFailoverAuthIfNeeded's voted_time, "can't vote about
//     this master before N milliseconds"), and every win needs a
//     majority, so two replicas of one primary cannot both win within
//     that window. A double-win is a node A that won an election and,
//     within two node timeouts by its own clock and without a manual
//     failover asked of it in between, is "Reconfiguring myself as a
//     replica of B", where B also logged a win and had not become A's
//     replica before it (B's election was then about A's primary too:
//     the two were siblings). Invalid: the voters voted about one primary
//     twice (planted vote-twice, whose second vote is in another epoch
//     when the siblings' elections do not start in the same one).
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
	DoubleWin             = "double-win"
)

var (
	// serverLogLine is "pid:role DD Mon YYYY HH:MM:SS.mmm level message".
	// The role C is a forked child (an RDB save, an AOF rewrite): its
	// lines carry the child's pid between the server's own lines.
	serverLogLine = regexp.MustCompile(`^(\d+):([A-Z]) \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2}\.\d{3} [.\-*#] (.*)$`)
	// Redis 7.2 and later, and Valkey, name the candidate's human node
	// name in parentheses after its id ("... to <id> () for epoch 7" when
	// none is set); 7.0 does not.
	authGranted    = regexp.MustCompile(`^Failover auth granted to ([0-9a-f]{40})(?: \([^()]*\))? for epoch (\d+)$`)
	electionStart  = regexp.MustCompile(`^Starting a failover election for epoch (\d+)\.$`)
	electionEpoch  = regexp.MustCompile(`^configEpoch set to (\d+) after successful failover$`)
	electionWonMsg = "Failover election won: I'm the new master."
	// reconfigured is a node made the replica of another by a newer
	// claim on its slots (Valkey adds the human name in parentheses).
	reconfigured = regexp.MustCompile(`^Configuration change detected\. Reconfiguring myself as a replica of ([0-9a-f]{40})\b`)
	// selfID is the start-up line that names the node's own id.
	selfID = regexp.MustCompile(`(?:No cluster configuration found|Node configuration loaded), I'm ([0-9a-f]{40})\b`)
	// logTime is a log line's wall-clock time ("06 Dec 2026 01:39:25.842").
	logTime = regexp.MustCompile(`^\d+:[A-Z] (\d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2}\.\d{3}) `)
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
			return Result{Valid: Unknown, Figures: &Verdict{Reason: fmt.Sprintf("no server log although %s: no election was judged", c.o.Expected)}}
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
			if m[2] == "C" {
				// A forked child (RDB save, AOF rewrite) logs with its own
				// pid between its server's lines; it is no restart (an
				// election between a child's lines was taken for a win
				// with no election before it: U5 on Valkey 8.0.1 and
				// Redis 8.0-m01). A child never takes part in elections.
				for _, w := range electionWords {
					if strings.Contains(m[3], w) {
						unknown = append(unknown, fmt.Sprintf("line %d of %s's log speaks of an election from a forked child (role C), which never takes part in one: %q", lineNo, node, capRaw(raw)))
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
			msg := m[3]
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
	if c.o.NodeTimeout > 0 {
		dw, bad := doubleWins(nodes, c.o.Logs, 2*c.o.NodeTimeout)
		for _, d := range dw {
			found = append(found, violation{DoubleWin, d.what, d.ex})
		}
		unknown = append(unknown, bad...)
	}
	fig := &ElectionFigures{Logs: len(nodes), Elections: elections, Wins: wins, VotesGranted: grants}
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
		fig.Anomalies = Anomalies{}
		for _, t := range types {
			fig.Anomalies[t] = AnomalyClass{Count: counts[t], Examples: examples[t]}
		}
		fig.AnomalyTypes = types
		fig.Violations = ptr(len(found))
		fig.Reason, fig.First = found[0].what, found[0].what
		if len(unknown) > 0 {
			fig.Unjudged = unknown
		}
		return Result{Valid: Invalid, Figures: fig}
	}
	if len(unknown) > 0 {
		fig.Unjudged = unknown
		fig.Reason = "the servers' logs cannot all be believed: " + strings.Join(capList(unknown, 3), "; ")
		return Result{Valid: Unknown, Figures: fig}
	}
	if elections == 0 && grants == 0 {
		return NotApplicable(fmt.Sprintf("no election and no vote in the %d servers' logs", len(nodes)))
	}
	return Result{Valid: Valid, Figures: fig}
}

// ElectionFigures are the elections checker's figures: the elections,
// wins and votes the servers' logs show, and the protocol broken.
type ElectionFigures struct {
	Logs         int  `json:"logs"`
	Elections    int  `json:"elections"`
	Wins         int  `json:"wins"`
	VotesGranted int  `json:"votes_granted"`
	Violations   *int `json:"violations,omitempty"`
	OneClass
	Verdict
}

// short is a node ID's first 8 characters, as redis-cli prints them.
func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// logEvent is one line of a node's log that the double-win rule reads.
type logEvent struct {
	at    time.Time
	line  int
	kind  string // "start", "win", "reconfigured", "mf-request"
	id    string // start: the node's own id; reconfigured: its new primary
	epoch uint64 // win: the election's epoch
}

type doubleWin struct {
	what string
	ex   map[string]any
}

// doubleWins applies the one-winner-per-primary rule (see Elections) to
// the logs, window being two node timeouts. It returns the violations and
// the lines it could not read (a time that is no time).
func doubleWins(nodes []string, logs map[string][]byte, window time.Duration) ([]doubleWin, []string) {
	var unknown []string
	events := map[string][]logEvent{}
	byID := map[string]string{} // node id -> node name (its log)
	for _, node := range nodes {
		var started uint64
		lineNo := 0
		for _, raw := range strings.Split(string(logs[node]), "\n") {
			lineNo++
			m := serverLogLine.FindStringSubmatch(strings.TrimRight(raw, "\r"))
			if m == nil || m[2] == "C" { // a forked child: not the server's state
				continue
			}
			msg := m[3]
			ev := logEvent{line: lineNo}
			switch {
			case selfID.MatchString(msg):
				ev.kind, ev.id = "start", selfID.FindStringSubmatch(msg)[1]
				byID[ev.id] = node
			case electionStart.MatchString(msg):
				started, _ = strconv.ParseUint(electionStart.FindStringSubmatch(msg)[1], 10, 64)
				continue
			case msg == electionWonMsg || msg == electionWonValkey:
				ev.kind, ev.epoch = "win", started
			case reconfigured.MatchString(msg):
				ev.kind, ev.id = "reconfigured", reconfigured.FindStringSubmatch(msg)[1]
			case strings.HasPrefix(msg, "Manual failover requested by replica"):
				ev.kind = "mf-request"
			default:
				continue
			}
			t, err := time.Parse("02 Jan 2006 15:04:05.000", logTime.FindStringSubmatch(raw)[1])
			if err != nil {
				unknown = append(unknown, fmt.Sprintf("line %d of %s's log has a time that is no time: %q", lineNo, node, capRaw(raw)))
				continue
			}
			ev.at = t
			events[node] = append(events[node], ev)
		}
	}
	var out []doubleWin
	for _, a := range nodes {
		evs := events[a]
		for i, w := range evs {
			if w.kind != "win" {
				continue
			}
			// A's next change of role in the same process, within the
			// window, with no manual failover asked of it before it.
			var to *logEvent
			for _, e := range evs[i+1:] {
				if e.kind == "start" || e.kind == "mf-request" || e.kind == "win" || e.at.Sub(w.at) > window {
					break
				}
				if e.kind == "reconfigured" {
					to = &e
					break
				}
			}
			if to == nil {
				continue
			}
			b, ok := byID[to.id]
			if !ok || b == a {
				continue
			}
			aID := ""
			for _, e := range evs[:i] {
				if e.kind == "start" {
					aID = e.id
				}
			}
			// B's win near A's (another clock: the window both ways), B
			// not A's replica before it.
			for j, bw := range events[b] {
				if bw.kind != "win" || bw.at.Before(w.at.Add(-window)) || bw.at.After(to.at.Add(window)) {
					continue
				}
				followedA := false
				for _, e := range events[b][:j] {
					if e.kind == "start" {
						followedA = false
					}
					if e.kind == "reconfigured" && e.id == aID && aID != "" && !e.at.Before(bw.at.Add(-window)) {
						followedA = true
					}
				}
				if followedA {
					continue
				}
				what := fmt.Sprintf("%s won the election for epoch %d (line %d) and %s later was made a replica of %s (line %d), which had won the election for epoch %d (its line %d): two replicas of one primary both won within two node timeouts (%s), which voters that vote once per primary per two node timeouts cannot allow",
					a, w.epoch, w.line, to.at.Sub(w.at).Round(time.Millisecond), b, to.line, bw.epoch, bw.line, window)
				out = append(out, doubleWin{what, map[string]any{"node": a, "epoch": w.epoch, "line": w.line, "replaced_by": b, "their_epoch": bw.epoch, "their_line": bw.line, "what": what}})
				break
			}
		}
	}
	return out, unknown
}
