// Package nemesis injects faults into a running Redis Cluster on a schedule
// and records each one in the history.
//
// It owns faults as values: each fault (partition.go, kill.go, pause.go,
// clock.go, migrate.go, failover.go, member.go, shape.go, slow.go) implements one interface
// (fault.go: name, modes, what it needs of the runtime, resolve a step
// against the live topology, heal, settle) and carries its own state (the
// nodes it killed, paused, skewed; a cut in force). registry.go lists them
// once; New, Plan, the hooks and Heal iterate that list, so a new fault is
// a file and a registry line. What faults share lives in env: the cluster,
// the admin connections (clusteradmin.Admin), the journal, and one
// clusteradmin.SlotMover through which migrate and member move slots and
// whose open migrations and moves the end phase repairs. It also owns the
// schedule (plan.go), target resolution (targets.go, against a
// clusteradmin.Topology snapshot) and the end phase (Heal).
//
// What is done to the cluster through admin connections (reading the
// topology, moving slots the redis-cli way or atomically, repairing,
// re-asserting, converging, journalling) is clusteradmin/'s; a fault
// here decides what to strike and when, calls it, and records the outcome.
//
// # Faults and modes
//
//	partition  isolate-one, isolate-primary, halves (random minority/majority),
//	           ring (each node keeps a majority around it), bridge (two halves
//	           joined by one node), primaries-replicas. Node-to-node links only;
//	           with Options.PartitionClients the minority side is cut from
//	           clients too. Needs cluster.Partitioner. Study modes (oneway.go,
//	           never drawn by a schedule: appended to its schedule modes they
//	           would change every old partition seed): one-way-unheard (a
//	           node's packets to every peer dropped), one-way-deaf (every
//	           peer's packets to a node dropped), one-way-primary-to-replicas,
//	           one-way-replicas-to-primary, and one-way, which draws one of
//	           them per step. They need cluster.OneWayPartitioner, checked
//	           by New when they are named.
//	kill       one, primary, majority-primaries, all: SIGKILL, restart on stop
//	           (data kept by the runtime). Needs cluster.Killer.
//	pause      one, primary, primary-long (held >= 3 node timeouts + 1 s, so a
//	           replica takes over and the old primary returns a zombie).
//	           Needs cluster.Pauser.
//	clock      bump (one node +-1..120 s), strobe (0 <-> +-1..10 s every
//	           50..300 ms); reset to 0 on stop. Needs cluster.Clock.
//	migrate    slot, storm (8..64 slots), abort-stable, abort-half. Slots move
//	           the way redis-cli moves them: SETSLOT IMPORTING on the target,
//	           MIGRATING on the source, GETKEYSINSLOT 10 + MIGRATE ... REPLACE
//	           KEYS until empty, SETSLOT NODE on target, source, other
//	           primaries (redis-cli's order: the target owns the slot before
//	           anyone lets go of it). A move a role change interrupts (the
//	           target turned replica, a node killed) is finished on the
//	           target shard's current primary or undone, where its keys are,
//	           as redis-cli --cluster fix decides (clusteradmin fix.go); what
//	           cannot be repaired yet is left to Heal. member moves
//	           thousands of slots: the same commands per slot, pipelined 64
//	           slots at a time. Before SETSLOT NODE the target
//	           must know the source's config epoch, else Redis 7.0 can end
//	           with a slot nobody claims; Heal gives such a slot, if redline
//	           moved it, back to its journalled target (SETSLOT IMPORTING +
//	           NODE there, as redis-cli finishes a migration). A slot someone
//	           else has open is never picked.
//	           abort-stable opens a slot and leaves it open while held; stop
//	           undoes it with SETSLOT STABLE (target first) if the target got no
//	           keys through ASK, else finishes it. abort-half moves one batch of
//	           keys and leaves it open; stop finishes it. Any target.
//	           Study modes (only --nemesis migrate:<mode> picks them): the
//	           handoff compositions of handoff.go, atomic|classic[-kill-src|
//	           -kill-dst|-pause-src|-pause-dst|-partition|-failover-dst|
//	           -failover-src], atomic-cancel, atomic-cancel-src,
//	           atomic-concurrent-classic:
//	           one slot moved with another fault striking during the move,
//	           using that fault's bound value (its heal undoes what is left).
//	           Every atomic task and classic move writes placement records
//	           (clusteradmin.Placement: keys before, on source and
//	           destination after) for checker.Handoff. cli-abort-failover-src
//	           is the two-step case of compose.go (a redis-cli-order move
//	           interrupted by a destination failover, then a source failover).
//	           classic-replica-full-sync (compose_upstream.go): the classic
//	           move's final SETSLOTs sent while the destination's replica,
//	           restarted, does a full sync; the destination's shard then
//	           fails over to it; its view of the slot recorded at each step.
//	failover   default, force, takeover: CLUSTER FAILOVER [mode] on a random
//	           replica, then wait until it reports itself primary. Any target.
//	           Study mode takeover-killed (compose.go): kill a majority of the
//	           primaries, TAKEOVER on a replica of each, restart them on stop.
//	           epoch-bump-unheard (compose_upstream.go): a replica killed,
//	           BUMPEPOCH on its primary, the primary killed, the replica
//	           restarted and told FAILOVER FORCE; the primary restarted on stop.
//	           two-replica-manual (compose_upstream.go): in a shard with two
//	           replicas, CLUSTER FAILOVER on one while the sibling is paused;
//	           the sibling resumed, what it replicates recorded at once and
//	           after convergence (a chain is left for the end phase).
//	member     add (Grower.AddNode, CLUSTER MEET, move 1/(m+1) of every
//	           primary's slots onto it), remove (drain a primary's slots to the
//	           others, re-home its replicas, CLUSTER FORGET on every node, CLUSTER
//	           RESET SOFT, Grower.RemoveNode). remove becomes add unless three
//	           primaries keep slots; add becomes remove once the cluster has
//	           grown by two nodes. Needs cluster.Grower. Study mode
//	           emptied-replica-kill (compose.go): empty a primary (its last slot
//	           to P), it replicates P, P is killed before the sync is done.
//	           orphan-migration-kill (compose_upstream.go): a primary's replicas
//	           killed and kept down until Redis migrates a replica of a
//	           two-replica shard to it, then the primary killed during that
//	           first sync; restarted on stop.
//	           kill-after-reconfigure (compose_upstream.go): a replica told
//	           CLUSTER REPLICATE another primary and killed as soon as it
//	           answers; restarted on stop, its primary and shard-id recorded,
//	           then put back under its old primary (journalled).
//	delay      one, primary: every packet the node sends (to peers and
//	           clients) held 20..400 ms, jitter a tenth; removed on stop.
//	           Needs cluster.Delayer: netem (Chaos Mesh on kubernetes, the
//	           kernel's sch_netem on docker, which this kind of machine lacks).
//	loss       one, primary: 5..50% of the packets the node sends dropped;
//	           removed on stop. Needs cluster.Dropper (docker: nftables).
//	power      one, shard (a primary and its replicas), all, shard-torn: at
//	           one instant the targets' data directories lose what was not
//	           fsynced (torn: every file keeps its unsynced writes but a
//	           prefix of its last) and the nodes are SIGKILLed; powered on
//	           (Killer.Restart) at stop, restart-opened slots adopted as
//	           kill does. The start's info carries "lost": per node, the
//	           files cut short and the bytes lost. Needs cluster.PowerCutter
//	           (docker with Spec.FaultFS: docker/faultfs).
//	disk       full (ENOSPC), eio (EIO): one primary's data directory
//	           answers the error on writes, truncates, creates and fsyncs;
//	           stop clears it and starts the node if it exited. Needs
//	           cluster.DiskFaulter (as power).
//	slow-link  one, primary: the rate the node sends at capped at
//	           128 kbit/s..4 Mbit/s, log-uniform; removed on stop. Needs
//	           cluster.Throttler (docker: tbf).
//	slow       one, primary: the node starved of CPU, 2..20% of one CPU:
//	           cluster.CPULimiter (docker: the CFS quota), else a pause/resume
//	           duty cycle of 250 ms with cluster.Pauser or a pause hook.
//	           Lifted on stop.
//
// Where the cluster implements cluster.Prober, a fault that needs what a
// host may lack (delay, loss, slow-link, slow, one-way modes) is probed
// when it is asked for: New refuses it before the run with the probe's
// reason, and "all" leaves it out.
//
// "all" means every fault the target supports. An explicitly named fault the
// target cannot cause is an error from New naming the fault and the target.
//
// # Schedule
//
// Plan(faults, seed, n) is the schedule: a pure function of the fault set
// (order and duplicates do not matter) and the seed. Each Step carries the
// fault, the mode, a hold fraction and a seed for its targets. Targets are
// specs resolved when the step fires, from the live topology (CLUSTER NODES
// of every node) with members sorted by node name and the step's own random
// source: the same seed on the same topology hits the same nodes in the same
// order. Migrated slots depend on the topology (the source's slots) too.
//
// Timing (Run): the first fault starts Interval/2 into the run; each is held
// for Step.Hold (0.5..0.75) of Interval, or the mode's minimum, then stopped;
// the next starts Interval after the previous start, or Interval/4 after the
// previous stop if later. One fault is in force at a time. Faults that are
// one action (migrate slot/storm, failover, member) have no stop.
//
// # History entries
//
// Every entry has process "nemesis". A fault start is an invoke/info pair
// with f "start-<fault>" (start-partition, start-kill, start-pause,
// start-clock, start-migrate, start-failover, start-member, start-delay,
// start-loss, start-power, start-disk, start-slow-link, start-slow): the invoke
// carries the targets in nodes and a detail with "mode", the resolved plan
// (cuts, roles, offsets, moves ...) and "cluster_nodes_before" (the CLUSTER
// NODES text of "cluster_nodes_of"); the info carries the outcome ("error"
// when it failed, keys moved, promoted ...). Stopping is the pair
// "stop-<fault>", its info with "cluster_nodes_after". A step that cannot be
// resolved (no replica, too few primaries) is a single info "start-<fault>"
// with "skipped". Heal records the pair "heal".
//
// Each start (the invoke, or the skipped info) also records "step": the
// scheduled step it fired (fault, mode, seed, hold, k: its slot on the
// timeline). ScheduleOf reads a run's schedule back from them, and
// Options.Script follows such a schedule instead of the seed's plan (`run
// --replay`, `shrink`): a scripted step whose targets resolve to other
// nodes than recorded says so in "replay_nodes_differ" {recorded, now}.
//
// Every topology change (slots moved or opened, a migration closed, a slot
// re-asserted, a failover, a node added or removed) is journalled before it
// is made (Options.Journal, a file in the run directory) and copied into the
// history as an info entry with f "journal" and the step as detail
// (seq, state begin/done/failed, kind, slots, from, to).
//
// # End phase
//
// Heal repairs only this nemesis' own open migrations. It first compares
// the live topology with them: a slot MIGRATING or IMPORTING that is not
// one of its own (the user's resharding) means a state it cannot account
// for; it then logs what it found and what it would have done, records
// both in the heal entry ("unaccounted", "would_have") and changes no slot.
// A state on any node of a move's source or destination shard (journalled
// when the move began) is its own: Valkey 8 replicates SETSLOT and
// re-points the states at a promoted primary. Each repair is recorded per
// slot ("repairs", "reassertions": the keeper, why, the commands sent, the
// keys moved). Last, every slot redline moved or opened is counted again
// on every primary: the heal entry's "end_phase" record (healed, the
// problems: a slot open, unowned, claimed twice, keys on a non-owner; a
// fault not undone, no convergence; a replica that replicates a replica
// once converged) and the final CLUSTER NODES beside it
// ("cluster_nodes_after") are what checker.EndPhase judges (a chain of
// replicas in either is invalid: redis/redis#15472's end state).
//
// # Hooks
//
// Options.Hooks supplies kill, pause, partition and clock for targets that
// cannot do them (an external cluster). The command runs with sh -c and:
//
//	REDLINE_FAULT   kill | pause | partition | clock
//	REDLINE_ACTION  kill, restart | pause, resume | cut, heal | clock
//	REDLINE_NODE, REDLINE_ADDR, REDLINE_HOST (alias REDLINE_NODE_HOST)  the node acted on (not for heal)
//	REDLINE_PEERS, REDLINE_PEER_ADDRS, REDLINE_PEER_HOSTS, REDLINE_CLIENTS  (cut)
//	REDLINE_OFFSET_MS  (clock)
//
// A non-zero exit is an error recorded with the fault.
//
// Admin commands go over clusteradmin.Admin: plain go-redis clients to each
// node's Addr with retries off and short timeouts: a command is sent once.
package nemesis
