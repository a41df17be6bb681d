package nemesis

import (
	"fmt"
	"strings"

	"github.com/redline-dev/redline/cluster"
)

// FaultDoc says what a fault and each of its modes do, for `--nemesis
// list`; built from the registry, so a fault without words fails
// TestEveryModeIsDescribed rather than listing blank.
type FaultDoc struct {
	Name  string `json:"name"`
	What  string `json:"what"`
	Needs string `json:"needs,omitempty"` // what the runtime must offer, in words ("" = any target)
	// Capability is Needs as the runtimes list it (cluster.CapabilitiesOf).
	Capability cluster.Capability `json:"capability,omitempty"`
	Hook       bool               `json:"hook,omitempty"` // a --nemesis-hook can stand in for the runtime
	Modes      []ModeDoc          `json:"modes"`
}

// ModeDoc is one mode of a fault; Study marks modes a random schedule never
// picks (only --nemesis fault:mode chooses them).
type ModeDoc struct {
	Name  string `json:"name"`
	What  string `json:"what"`
	Study bool   `json:"study,omitempty"`
}

// Describe lists every registered fault in registry order.
func Describe() []FaultDoc {
	var out []FaultDoc
	for _, f := range catalog {
		d := FaultDoc{Name: f.name(), What: faultWords[f.name()], Needs: needsWords(f), Capability: f.needs(), Hook: f.hookable()}
		for _, m := range f.modes() {
			d.Modes = append(d.Modes, ModeDoc{Name: m, What: modeWords(f.name(), m)})
		}
		for _, m := range f.studyModes() {
			d.Modes = append(d.Modes, ModeDoc{Name: m, What: modeWords(f.name(), m), Study: true})
		}
		out = append(out, d)
	}
	return out
}

var faultWords = map[string]string{
	"partition": "cuts node-to-node links by packet filtering inside the nodes' network namespaces; healed on stop",
	"kill":      "SIGKILLs nodes and restarts them on stop (data kept as the runtime keeps it)",
	"pause":     "freezes node processes (SIGSTOP) and resumes them on stop",
	"clock":     "skews one node's clock; reset to 0 on stop",
	"migrate":   "moves slots between primaries the way redis-cli does (SETSLOT IMPORTING/MIGRATING, MIGRATE, SETSLOT NODE)",
	"failover":  "CLUSTER FAILOVER on a random replica, then waits until it reports itself primary",
	"member":    "adds a node and moves slots onto it, or drains a primary and removes it",
	"delay": "slows every packet a node sends (to peers and clients) by 20-400 ms, jitter a tenth of it (netem: " +
		"kubernetes, or docker on a kernel with sch_netem); removed on stop",
	"loss": "drops 5-50% of the packets a node sends, to peers and clients (docker: an nftables numgen rule in its " +
		"namespace; kubernetes: Chaos Mesh); TCP resends them: stalls, not lost bytes; removed on stop",
	"power": "cuts nodes' power at one instant: what they had not fsynced is lost (changes older than 30 s count as written back) " +
		"and they are SIGKILLed; powered on at stop. Needs their data directories through redline's FUSE layer (docker)",
	"disk": "makes one primary's data directory answer an error on writes, truncates, creates and fsyncs; " +
		"room again at stop, and the node started if it exited",
	"slow-link": "caps the rate a node sends at, to peers and clients, at 128 kbit/s-4 Mbit/s drawn log-uniformly " +
		"(docker: tbf on its interface; about 200 ms of queue, dropped past it); removed on stop",
	"slow": "starves a node of CPU: 2-20% of one CPU (docker: the container's CFS quota; elsewhere a pause/resume duty " +
		"cycle of 250 ms); slow, not dead; lifted on stop",
}

var modes = map[string]string{
	"partition:isolate-one":        "one random node cut from every other node",
	"partition:isolate-primary":    "one primary cut from every other node (clients still reach it)",
	"partition:halves":             "a random minority and majority, cut from each other",
	"partition:ring":               "each node keeps a majority of neighbours around a ring",
	"partition:bridge":             "two halves joined by one node that sees both",
	"partition:primaries-replicas": "every primary cut from every replica",
	"partition:primary-minority":   "a primary on the minority side of a split",
	"kill:one":                     "one random node",
	"kill:primary":                 "one primary",
	"kill:majority-primaries":      "a majority of the primaries at once",
	"kill:all":                     "every node at once",
	"pause:one":                    "one random node",
	"pause:primary":                "one primary",
	"pause:primary-long":           "one primary for at least 3 node timeouts + 1 s: a replica takes over, the old primary comes back a zombie",
	"clock:bump":                   "one node's clock jumps by 1..120 s either way",
	"clock:strobe":                 "one node's clock flips between 0 and 1..10 s every 50..300 ms",
	"migrate:slot":                 "one slot moved",
	"migrate:storm":                "8..64 slots moved one after another",
	"migrate:abort-stable":         "one slot left open while held; stop undoes it (SETSLOT STABLE) if no key moved, else finishes it",
	"migrate:abort-half":           "one batch of a slot's keys moved, the slot left open while held; stop finishes it",
	"failover:default":             "CLUSTER FAILOVER (the primary agrees and hands over)",
	"failover:force":               "CLUSTER FAILOVER FORCE (no handshake with the primary)",
	"failover:takeover":            "CLUSTER FAILOVER TAKEOVER (no election: the replica bumps the epoch itself)",
	"member:add":                   "a new node joins (CLUSTER MEET) and gets 1/(m+1) of every primary's slots",
	"member:remove":                "a primary is drained, its replicas re-homed, then CLUSTER FORGET and removed",
	"delay:one":                    "one random node",
	"delay:primary":                "one primary",
	"loss:one":                     "one random node",
	"loss:primary":                 "one primary",
	"power:one":                    "one random node",
	"power:shard":                  "a primary and its replicas at once",
	"power:all":                    "every node at once",
	"power:shard-torn":             "a primary and its replicas at once; each file keeps its unsynced writes but a prefix of its last one (torn)",
	"disk:full":                    "ENOSPC: the disk is full",
	"disk:eio":                     "EIO: the disk fails",
	"slow-link:one":                "one random node",
	"slow-link:primary":            "one primary",
	"slow:one":                     "one random node",
	"slow:primary":                 "one primary",
	"partition:one-way":            "one of the four one-way modes below, drawn from the step's seed",
	"partition:one-way-unheard":    "one node's packets to every peer dropped: it hears its peers, they do not hear it",
	"partition:one-way-deaf":       "every peer's packets to one node dropped: it is heard, it hears none",
	"partition:one-way-primary-to-replicas": "a primary's packets to its replicas dropped; theirs to it pass " +
		"(the replicas stop hearing it and its replication stream)",
	"partition:one-way-replicas-to-primary": "a primary's replicas' packets to it dropped; its to them pass " +
		"(it stops hearing their acks: WAIT and the bus see them gone)",
	"migrate:cli-abort-failover-src": "a move in redis-cli's order interrupted by a failover of the destination (NODE refused), " +
		"then a failover of the source before any fix (redis/redis#6339); never on a cluster redline did not create",
	"migrate:classic-replica-full-sync": "a classic move whose final SETSLOT NODEs reach the destination while its replica, " +
		"restarted, does a full sync; the destination's shard then fails over to that replica: records whether it owns the slot " +
		"and whether it keeps the slot IMPORTING (valkey-io/valkey#998)",
	"failover:takeover-killed": "a majority of primaries SIGKILLed, CLUSTER FAILOVER TAKEOVER on a replica of each, " +
		"the old primaries restarted after the hold (epoch collisions: valkey-io/valkey#974)",
	"failover:epoch-bump-unheard": "a replica SIGKILLed, CLUSTER BUMPEPOCH on its primary, the primary SIGKILLed, the replica " +
		"restarted with the old epoch and told CLUSTER FAILOVER FORCE: records whether the voters refuse it (redis/redis#9548)",
	"failover:two-replica-manual": "in a shard with two replicas, CLUSTER FAILOVER on one while the other (the sibling) is paused; " +
		"records what the sibling replicates, on its own CLUSTER NODES and ROLE, once resumed and after convergence " +
		"(a replica of a replica: redis/redis#15472); needs a shard with two replicas (e.g. --nodes 7 --replicas 1)",
	"member:emptied-replica-kill": "a primary emptied of its slots replicates another primary, which is SIGKILLed " +
		"while the full sync runs (stale-offset election: valkey-io/valkey#885); needs 4 primaries",
	"member:orphan-migration-kill": "a primary's replicas SIGKILLed and kept down until Redis migrates a replica of a " +
		"two-replica shard to it, then the primary SIGKILLed during that first full sync; all restarted after the hold " +
		"(F005 without an admin step: valkey-io/valkey#885); needs a shard with two replicas (e.g. --nodes 7 --replicas 1)",
	"member:kill-after-reconfigure": "a replica told CLUSTER REPLICATE another primary and SIGKILLed as soon as it answers, " +
		"restarted after the hold: records the primary and shard-id it came back with (redis/redis#12761); put back on stop",
}

// strikeWords say what strikes a moving slot in a handoff composition.
var strikeWords = map[string]string{
	"kill-src":           "the source SIGKILLed during the move, held, restarted",
	"kill-dst":           "the destination SIGKILLed during the move, held, restarted",
	"pause-src":          "the source frozen during the move, held, resumed",
	"pause-dst":          "the destination frozen during the move, held, resumed",
	"partition":          "source and destination cut from each other during the move, held, healed",
	"failover-dst":       "CLUSTER FAILOVER on a replica of the destination during the move",
	"failover-src":       "CLUSTER FAILOVER on a replica of the source during the move",
	"cancel":             "CLUSTER MIGRATION CANCEL on the destination (for good)",
	"cancel-src":         "CLUSTER MIGRATION CANCEL on the source only (the destination retries)",
	"concurrent-classic": "a classic move of the same slot at the same time",
}

// modeWords describes a mode; handoff compositions are described from
// their method and strike.
func modeWords(fault, mode string) string {
	if s, ok := modes[fault+":"+mode]; ok {
		return s
	}
	if fault != "migrate" {
		return ""
	}
	method, strike, _ := strings.Cut(mode, "-")
	how := map[string]string{"atomic": "one slot moved atomically (CLUSTER MIGRATION IMPORT)", "classic": "one slot moved the classic way (SETSLOT/MIGRATE)"}[method]
	if how == "" {
		return ""
	}
	if strike == "" {
		return how + ", no fault: the baseline"
	}
	if w := strikeWords[strike]; w != "" {
		return fmt.Sprintf("%s; %s", how, w)
	}
	return ""
}
